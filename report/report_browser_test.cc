// The report as a person sees it: the page loaded in headless Chromium
// (Debian's package; scripts/setup.sh installs it), its DOM after the
// page's script ran, and a screenshot's pixels.

#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <regex>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "common/testing/text.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "report/report_data.h"
#include "report/report_html.h"
#include "triage/testing/findings.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

std::string Chromium() {
  if (const char* env = std::getenv("PTXDIFF_CHROMIUM"); env && *env)
    return env;
  return "/usr/bin/chromium";
}

// Two campaigns side by side: "faulty 1" differs on every vadd variant in
// both forms and agrees on the rest; "oracle 1" agrees everywhere. The
// faulty one has a triage entry, a crash with what the tool printed, and a
// program campaign with a program entry.
std::string WriteFixture(const std::string& root) {
  const std::vector<bool> all(AllVariants().size(), true);
  OutcomeTable faulty, oracle;
  const auto vadd = VariantsOf(Family::kVadd);
  for (size_t v = 0; v < AllVariants().size(); ++v) {
    const bool is_vadd = AllVariants()[v].family == Family::kVadd;
    for (OutcomeForm form : {OutcomeForm::kImmediate, OutcomeForm::kRuntime}) {
      faulty.Count(v, form, is_vadd ? Outcome::kMismatch : Outcome::kAgree);
      oracle.Count(v, form, Outcome::kAgree);
    }
  }
  EXPECT_GT(vadd.size(), 1000u);
  // The faulty one's program lane: programs that held two variants.
  faulty.Count(VariantIndex(vadd[0]), OutcomeForm::kProgramImmediate,
               Outcome::kAgree, 40);
  faulty.Count(0, OutcomeForm::kProgramRuntime, Outcome::kMismatch, 3);
  for (const auto& [out, backend, table] :
       {std::tuple{root + "/faulty", "faulty 1", &faulty},
        std::tuple{root + "/oracle", "oracle 1", &oracle}}) {
    const std::string run = out + "/stats/run-1000-1";
    EXPECT_TRUE(MakeDirs(run).ok());
    EXPECT_TRUE(WriteFile(run + "/1.outcomes", table->Format(backend, all)).ok());
    EXPECT_TRUE(WriteFile(absl::StrCat(run, "/", kTimelineFile),
                          TimelineHeader(RunKind::kTuples) +
                              FormatTimelinePoint(RunKind::kTuples,
                                                  {.seconds = 5,
                                                   .checked = 50000,
                                                   .variants_reached = 40000}) +
                              FormatTimelinePoint(RunKind::kTuples,
                                                  {.seconds = 10,
                                                   .checked = 120000,
                                                   .variants_reached = 81740}))
                    .ok());
  }
  auto store = TriageStore::Open(root + "/faulty/triage", /*create=*/true);
  EXPECT_TRUE(store.ok() &&
              store->File(AValueMismatch("vadd.u32.u32.u32", 1, 2)).ok());
  EXPECT_TRUE(store.ok() &&
              store->File(ACrashWithOutput("Floating point exception")).ok());
  EXPECT_TRUE(store.ok() && store->File(AProgramMismatch()).ok());
  const std::string programs = root + "/faulty/stats/run-1100-2";
  EXPECT_TRUE(MakeDirs(programs).ok());
  OutcomeTable held;  // the program campaign's programs held two variants
  held.Count(VariantIndex(vadd[1]), OutcomeForm::kProgramImmediate,
             Outcome::kMismatch, 5);
  held.Count(0, OutcomeForm::kProgramRuntime, Outcome::kAgree, 9);
  EXPECT_TRUE(
      WriteFile(programs + "/2.outcomes", held.Format("faulty 1", {})).ok());
  EXPECT_TRUE(
      WriteFile(
          absl::StrCat(programs, "/", kTimelineFile),
          TimelineHeader(RunKind::kPrograms, "faulty 1") +
              FormatTimelinePoint(
                  RunKind::kPrograms,
                  {.seconds = 5, .checked = 200, .judged_immediate = 190}) +
              FormatTimelinePoint(RunKind::kPrograms, {.seconds = 10,
                                                       .checked = 450,
                                                       .judged_immediate = 420,
                                                       .new_entries = 1}))
          .ok());
  const absl::StatusOr<ReportData> data = ReadReport(
      {{.out_dir = root + "/faulty", .triage_dir = root + "/faulty/triage"},
       {.out_dir = root + "/oracle", .triage_dir = root + "/oracle/triage"}});
  EXPECT_TRUE(data.ok()) << data.status();
  const std::string page = root + "/report.html";
  EXPECT_TRUE(WriteFile(page, ReportHtml(ReportJson(*data))).ok());
  return page;
}

// Runs Chromium headless on `page` with `flags`; its output (stdout and
// stderr together).
std::string RunChromium(const std::string& page,
                        std::vector<std::string> flags) {
  const std::string output = page + ".chromium-output";
  std::vector<std::string> argv = {Chromium(), "--headless", "--no-sandbox",
                                   "--disable-gpu", "--hide-scrollbars"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("file://" + page);
  const absl::StatusOr<ProcessOutcome> run = RunProcess(
      argv, {.output_path = output, .timeout = absl::Seconds(120)});
  EXPECT_TRUE(run.ok() && run->ok())
      << (run.ok() ? run->Describe(absl::Seconds(120))
                   : std::string(run.status().message()));
  return ReadFile(output).value_or("");
}

// 7840 as the page writes it: "7,840".
std::string WithCommas(size_t n) {
  std::string digits = absl::StrCat(n);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(at, ",");
  return digits;
}

// An 8-bit RGB or RGBA PNG, not interlaced (what Chromium writes), decoded
// to RGB; empty when it is not one.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};
uint32_t BigEndian(const std::string& s, size_t at) {
  return (uint8_t(s[at]) << 24) | (uint8_t(s[at + 1]) << 16) |
         (uint8_t(s[at + 2]) << 8) | uint8_t(s[at + 3]);
}
Image DecodePng(const std::string& png) {
  Image image;
  if (png.size() < 33 || png.compare(1, 3, "PNG") != 0) return image;
  const int width = BigEndian(png, 16), height = BigEndian(png, 20);
  const int depth = uint8_t(png[24]), color = uint8_t(png[25]);
  if (depth != 8 || (color != 2 && color != 6) || png[28] != 0) return image;
  const int channels = color == 6 ? 4 : 3;
  std::string idat;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t length = BigEndian(png, at);
    if (png.compare(at + 4, 4, "IDAT") == 0) idat += png.substr(at + 8, length);
    at += 12 + length;
  }
  const size_t stride = size_t(width) * channels;
  std::vector<uint8_t> raw((stride + 1) * height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size,
                 reinterpret_cast<const Bytef*>(idat.data()), idat.size()) !=
      Z_OK)
    return image;
  std::vector<uint8_t> pixels(stride * height), zero(stride);
  for (int y = 0; y < height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* row = &pixels[y * stride];
    const uint8_t* up = y > 0 ? &pixels[(y - 1) * stride] : zero.data();
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(channels) ? row[x - channels] : 0;
      const int b = up[x];
      const int c = x >= size_t(channels) ? up[x - channels] : 0;
      int predicted = 0;
      switch (filter) {
        case 1: predicted = a; break;
        case 2: predicted = b; break;
        case 3: predicted = (a + b) / 2; break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b),
                    pc = std::abs(p - c);
          predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
      }
      row[x] = uint8_t(in[x] + predicted);
    }
  }
  image.width = width;
  image.height = height;
  for (size_t p = 0; p < pixels.size(); p += channels)
    image.rgb.insert(image.rgb.end(), &pixels[p], &pixels[p] + 3);
  return image;
}
int PixelsOf(const Image& image, uint8_t r, uint8_t g, uint8_t b) {
  int n = 0;
  for (size_t p = 0; p + 2 < image.rgb.size(); p += 3)
    n += image.rgb[p] == r && image.rgb[p + 1] == g && image.rgb[p + 2] == b;
  return n;
}

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(Chromium().c_str(), X_OK) != 0) {
      GTEST_SKIP() << Chromium()
                   << " is not installed (scripts/setup.sh installs "
                      "Debian's chromium; PTXDIFF_CHROMIUM names another)";
    }
    root_ = absl::StrCat(::testing::TempDir(), "/report_browser_", getpid());
    RemoveTree(root_);
    page_ = WriteFixture(root_);
  }
  void TearDown() override { RemoveTree(root_); }
  std::string root_, page_;
};

TEST_F(ReportBrowserTest, ThePageShowsTheGridTheFindingsAndThePlots) {
  const std::string dom =
      RunChromium(page_, {"--virtual-time-budget=20000", "--dump-dom"});
  // The script ran to its end, timing each part.
  ASSERT_THAT(dom, HasSubstr("data-rendered=\"yes\"")) << dom.substr(0, 3000);
  EXPECT_THAT(dom, testing::ContainsRegex(
                       "data-phases=\"renderHeader:[0-9]+ .*renderPlots:[0-9]+\""));
  // Both implementations side by side: a summary row each, a map of each
  // family's variants for each.
  EXPECT_THAT(dom, HasSubstr(">faulty<"));
  EXPECT_THAT(dom, HasSubstr(">oracle<"));
  // Where a program lane ran, the variants its programs held.
  EXPECT_THAT(dom, HasSubstr("<th>in programs</th>"));
  int families = 0;
  for (int f = 0; f < kNumFamilies; ++f)
    families += !VariantsOf(static_cast<Family>(f)).empty();
  EXPECT_EQ(Occurrences(dom, "class=\"variant-map\""), 2 * families);
  // The faulty implementation's differing variants, counted as such.
  EXPECT_THAT(dom, HasSubstr(absl::StrCat(
                       "<td class=\"n\">",
                       WithCommas(VariantsOf(Family::kVadd).size()), "</td>")));
  // The finding, with the command that replays it.
  EXPECT_THAT(dom, HasSubstr("<code>vadd.u32.u32.u32</code>"));
  EXPECT_THAT(dom, HasSubstr("ptxdiff repro '" + root_ + "/faulty/triage/"));
  // A crash says how it ended and what the tool printed last.
  EXPECT_THAT(dom, HasSubstr("how it ended: killed by signal 8 (SIGFPE)"));
  EXPECT_THAT(dom, HasSubstr("<pre class=\"output\">Floating point exception"));
  // The program campaign: its totals, its finding, its plots.
  EXPECT_THAT(dom, HasSubstr("faulty: 1 run(s), 450 programs checked"));
  EXPECT_THAT(dom, HasSubstr("<code>program: add.u32</code>"));
  EXPECT_THAT(dom, HasSubstr(absl::StrCat(
                       "its programs held 2 variants; the most checked: ",
                       Spell(AllVariants()[0]), " (9), ",
                       Spell(VariantsOf(Family::kVadd)[1]),
                       " (5); in programs that disagreed: ",
                       Spell(VariantsOf(Family::kVadd)[1]), " (5)")));
  // The plots: a line drawn in each. Each implementation's three plots draw
  // four lines between them, and so do the program campaign's.
  EXPECT_EQ(Occurrences(dom, "class=\"series\""), 3 * 4);
  EXPECT_TRUE(std::regex_search(
      dom, std::regex("class=\"series\" points=\"[0-9.]+,[0-9.]+ ")))
      << "a plot without two points";
}

TEST_F(ReportBrowserTest, TheScreenshotShowsTheMapsDrawn) {
  const std::string png = root_ + "/shot.png";
  RunChromium(page_, {"--virtual-time-budget=20000", "--window-size=1400,4000",
                      "--screenshot=" + png});
  const Image image = DecodePng(ReadFile(png).value_or(""));
  ASSERT_EQ(image.width, 1400) << "no screenshot, or not a PNG this decodes";
  ASSERT_EQ(image.height, 4000);
  // vadd's thousands of variants differ in the faulty column: its map is a
  // block of red cells (#d7301f), far more than the legend's swatch and the
  // family bars could make.
  const int red = PixelsOf(image, 0xd7, 0x30, 0x1f);
  EXPECT_GT(red, 8 * static_cast<int>(VariantsOf(Family::kVadd).size()))
      << "the variant maps were not drawn";
  // And the agreeing variants in green (#31a354) in both columns.
  EXPECT_GT(PixelsOf(image, 0x31, 0xa3, 0x54), red);
}

}  // namespace
}  // namespace ptxdiff
