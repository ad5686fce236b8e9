// The hardware reading (errata.h) against the spec reading and the docs.

#include "oracle/errata.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << spelling << ": " << v.status();
  return v.value_or(Variant{});
}

std::string Where(const Variant& v, const Operands& o) {
  return ReplayLine(v, o, Evaluate(v, o));
}

TEST(ErrataTest, ReadingNamesRoundTrip) {
  for (Reading r : kAllReadings) {
    EXPECT_EQ(ParseReading(ReadingName(r)), r);
  }
  EXPECT_EQ(ReadingName(Reading::kSpec), "spec");
  EXPECT_EQ(ReadingName(Reading::kHardware), "hardware");
  EXPECT_EQ(ParseReading("Hardware"), std::nullopt);
  EXPECT_EQ(ParseReading(""), std::nullopt);
}

TEST(ErrataTest, TableIsWellFormed) {
  std::set<absl::string_view> ids;
  for (const Erratum& e : AllErrata()) {
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
    EXPECT_FALSE(e.scope.empty()) << e.id;
    EXPECT_FALSE(e.hardware_result.empty()) << e.id;
    EXPECT_FALSE(e.evidence.empty()) << e.id;
    EXPECT_FALSE(e.confidence.empty()) << e.id;
    EXPECT_FALSE(e.sources[0].empty()) << e.id;
    EXPECT_NE(e.covers, nullptr);
    EXPECT_NE(e.triggers, nullptr);
    EXPECT_NE(e.hardware_value, nullptr);
    EXPECT_EQ(FindErratum(e.id), &e);
    for (char c : e.id) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')
          << e.id;
    }
  }
  EXPECT_EQ(FindErratum("no-such-erratum"), nullptr);
}

// One tuple under both readings: `spec` as spelled ("0x0 division-by-zero"),
// the hardware value defined, and the erratum that gives it.
struct KnownAnswer {
  absl::string_view spelling;
  std::vector<uint64_t> operands;
  uint64_t spec_bits;
  Undefined spec_undefined;
  uint64_t hardware_bits;
  absl::string_view erratum;
};

const std::vector<KnownAnswer>& KnownAnswers() {
  static const auto* answers = new std::vector<KnownAnswer>{
      // bfe-bfi-64-unmasked. The two checked-in ptxas triage entries: the
      // backend's values there are the hardware reading's.
      {"bfe.u64",
       {0x0401010100000000, 24, 256},
       0,
       Undefined::kDefined,
       0x0000000401010100,
       "bfe-bfi-64-unmasked"},
      {"bfi.b64",
       {0x10000, 0x0000000100000020, 0x100, 0x40},
       0x10000,
       Undefined::kDefined,
       0x0000000100000020,
       "bfe-bfi-64-unmasked"},
      // The example: length 1 at position 256 is position 0 in the
      // spec, beyond the msb on the hardware.
      {"bfe.u64",
       {1, 256, 1},
       1,
       Undefined::kDefined,
       0,
       "bfe-bfi-64-unmasked"},
      // Position beyond the msb: .s64 fills with a[63].
      {"bfe.s64",
       {0x8000000000000000, 256, 1},
       0,
       Undefined::kDefined,
       0xffffffffffffffff,
       "bfe-bfi-64-unmasked"},
      {"bfe.s64",
       {0x8000000000000000, 0x100000, 8},
       0,
       Undefined::kDefined,
       0xffffffffffffffff,
       "bfe-bfi-64-unmasked"},
      // Length 260 is 4 in the spec, the whole word on the hardware.
      {"bfe.u64",
       {0xffffffffffffffff, 0, 0x104},
       0xf,
       Undefined::kDefined,
       0xffffffffffffffff,
       "bfe-bfi-64-unmasked"},
      {"bfe.s64",
       {0x00000000f0000000, 28, 0x104},
       0xffffffffffffffff,
       Undefined::kDefined,
       0xf,
       "bfe-bfi-64-unmasked"},
      // bfi: length 0x101 (1 in the spec's low byte) at position 8.
      {"bfi.b64",
       {0xffffffffffffffff, 0, 8, 0x101},
       0x100,
       Undefined::kDefined,
       0xffffffffffffff00,
       "bfe-bfi-64-unmasked"},
      // div-rem-by-zero-32.
      {"div.u32",
       {7, 0},
       0,
       Undefined::kDivisionByZero,
       0xffffffff,
       "div-rem-by-zero-32"},
      {"div.s32",
       {0x80000000, 0},
       0,
       Undefined::kDivisionByZero,
       0xffffffff,
       "div-rem-by-zero-32"},
      {"div.s32",
       {0, 0},
       0,
       Undefined::kDivisionByZero,
       0xffffffff,
       "div-rem-by-zero-32"},
      {"rem.u32",
       {0x12345678, 0},
       0,
       Undefined::kDivisionByZero,
       0xffffffff,
       "div-rem-by-zero-32"},
      {"rem.s32",
       {0xfffffff9, 0},
       0,
       Undefined::kDivisionByZero,
       0xffffffff,
       "div-rem-by-zero-32"},
      // rem-truncates: same bits, now defined.
      {"rem.s32",
       {0xfffffff9, 2},
       0xffffffff,
       Undefined::kRemainderSign,
       0xffffffff,
       "rem-truncates"},
      {"rem.s32",
       {7, 0xfffffffe},
       1,
       Undefined::kRemainderSign,
       1,
       "rem-truncates"},
      {"rem.s64",
       {0x8000000000000001, 3},
       0xffffffffffffffff,
       Undefined::kRemainderSign,
       0xffffffffffffffff,
       "rem-truncates"},
  };
  return *answers;
}

TEST(ErrataTest, KnownAnswersUnderBothReadings) {
  for (const KnownAnswer& ka : KnownAnswers()) {
    const Variant v = V(ka.spelling);
    Operands o;
    for (size_t i = 0; i < ka.operands.size(); ++i) o.v[i] = ka.operands[i];
    const std::string where = Where(v, o);

    const ReadResult spec = Read(Reading::kSpec, v, o);
    EXPECT_EQ(spec.result.bits, ka.spec_bits) << where;
    EXPECT_EQ(spec.result.undefined, ka.spec_undefined) << where;
    EXPECT_EQ(spec.erratum, nullptr) << where;

    const ReadResult hw = Read(Reading::kHardware, v, o);
    EXPECT_EQ(hw.result.bits, ka.hardware_bits) << where;
    EXPECT_TRUE(hw.result.defined()) << where;
    ASSERT_NE(hw.erratum, nullptr) << where;
    EXPECT_EQ(hw.erratum->id, ka.erratum) << where;
    EXPECT_EQ(ErratumFor(v, o), hw.erratum) << where;
    EXPECT_EQ(EvaluateWithReading(Reading::kHardware, v, o), hw.result);
    EXPECT_NE(hw.result, spec.result) << where;
  }
}

// Every erratum has at least one known answer where the readings differ.
TEST(ErrataTest, EveryErratumHasAKnownAnswer) {
  for (const Erratum& e : AllErrata()) {
    bool found = false;
    for (const KnownAnswer& ka : KnownAnswers()) found |= ka.erratum == e.id;
    EXPECT_TRUE(found) << e.id;
  }
}

// Outside the errata the hardware reading is the spec's: the 32-bit forms
// keep the masking, 16- and 64-bit division by zero stays open.
TEST(ErrataTest, NoErratumOutsideTheTable) {
  const struct {
    absl::string_view spelling;
    std::vector<uint64_t> operands;
  } cases[] = {
      {"bfe.u32", {0xffffffff, 0, 0x104}},
      {"bfe.s32", {0x80000000, 32, 8}},
      {"bfe.s32", {0x80000000, 200, 8}},
      {"bfi.b32", {0xffffffff, 0, 8, 0x101}},
      {"bfe.u64", {0xffffffffffffffff, 255, 255}},
      {"div.u16", {7, 0}},
      {"div.s64", {7, 0}},
      {"rem.u64", {7, 0}},
      {"rem.s16", {0xfff9, 2}},
      {"rem.s32", {0xfffffffc, 2}},
  };
  for (const auto& c : cases) {
    const Variant v = V(c.spelling);
    Operands o;
    for (size_t i = 0; i < c.operands.size(); ++i) o.v[i] = c.operands[i];
    EXPECT_EQ(ErratumFor(v, o), nullptr) << Where(v, o);
    EXPECT_EQ(EvaluateWithReading(Reading::kHardware, v, o), Evaluate(v, o))
        << Where(v, o);
  }
}

TEST(ErrataTest, SpecReadingIsEvaluateOnEveryVariant) {
  std::mt19937_64 rng(13);
  std::vector<Operands> tuples(64);
  std::vector<Result> batch(tuples.size());
  for (const Variant& v : AllVariants()) {
    FillEdgeTuples(v, rng, tuples);
    EvaluateBatchWithReading(Reading::kSpec, v, tuples, batch);
    for (size_t i = 0; i < tuples.size(); ++i) {
      const Result expected = Evaluate(v, tuples[i]);
      const ReadResult spec = Read(Reading::kSpec, v, tuples[i]);
      ASSERT_EQ(spec.result, expected) << Where(v, tuples[i]);
      ASSERT_EQ(spec.erratum, nullptr) << Where(v, tuples[i]);
      ASSERT_EQ(EvaluateWithReading(Reading::kSpec, v, tuples[i]), expected);
      ASSERT_EQ(batch[i], expected) << Where(v, tuples[i]);
    }
  }
}

// The hardware reading differs from the spec's only where an erratum
// applies; there it is that erratum's value, defined, as wide as the result;
// at most one erratum applies; operand bits above a source's width change
// nothing; and the batch path agrees.
TEST(ErrataTest, HardwareDiffersOnlyWhereAnErratumApplies) {
  std::mt19937_64 rng(14);
  std::vector<Operands> tuples;
  std::vector<Result> batch;
  std::set<absl::string_view> reached;
  for (const Variant& v : AllVariants()) {
    // Many more tuples where an erratum may apply, so that each is reached.
    bool covered = false;
    for (const Erratum& e : AllErrata()) covered |= e.covers(v);
    tuples.resize(covered ? 4096 : 64);
    batch.resize(tuples.size());
    FillEdgeTuples(v, rng, tuples);
    EvaluateBatchWithReading(Reading::kHardware, v, tuples, batch);
    for (size_t i = 0; i < tuples.size(); ++i) {
      const Operands& o = tuples[i];
      const std::string where = Where(v, o);
      const Result spec = Evaluate(v, o);
      const ReadResult hw = Read(Reading::kHardware, v, o);
      int applying = 0;
      for (const Erratum& e : AllErrata()) applying += e.Applies(v, o);
      ASSERT_LE(applying, 1) << where;
      const Erratum* e = ErratumFor(v, o);
      ASSERT_EQ(hw.erratum, e) << where;
      ASSERT_EQ(batch[i], hw.result) << where;
      if (e == nullptr) {
        ASSERT_EQ(hw.result, spec) << where;
        continue;
      }
      reached.insert(e->id);
      ASSERT_TRUE(e->covers(v)) << where;
      ASSERT_TRUE(hw.result.defined()) << where;
      ASSERT_EQ(hw.result.bits, e->hardware_value(v, o)) << where;
      ASSERT_EQ(hw.result.bits, Low(hw.result.bits, ResultWidth(v))) << where;
      Operands noisy = o;
      for (int k = 0; k < NumSources(v); ++k) {
        noisy.v[k] |= ~LowMask(SourceWidth(v, k)) & 0x5a5a5a5a5a5a5a5aull;
      }
      for (int k = NumSources(v); k < kMaxSources; ++k) noisy.v[k] = rng();
      ASSERT_EQ(Read(Reading::kHardware, v, noisy).result, hw.result) << where;
    }
  }
  // Edge tuples reach every erratum.
  for (const Erratum& e : AllErrata()) EXPECT_TRUE(reached.count(e.id)) << e.id;
}

// ptx_tests' host references (src/testcase/bfe.rs bfe_host, bfi.rs bfi_host)
// for the 64-bit types, transcribed loop for loop: the closed form in
// errata.cc must give the same bits.
uint64_t PtxTestsBfeHost(uint64_t value, uint64_t pos, uint64_t len,
                         bool is_signed) {
  const uint64_t msb = 63;
  auto get_bit = [](uint64_t x, uint64_t n) { return ((x >> n) & 1) != 0; };
  const bool sbit = !is_signed || len == 0
                        ? false
                        : get_bit(value, std::min(pos + len - 1, msb));
  uint64_t d = 0;
  for (uint64_t i = 0; i <= msb; ++i) {
    const bool bit = i < len && pos + i <= msb ? get_bit(value, pos + i) : sbit;
    if (bit) d |= uint64_t{1} << i;
  }
  return d;
}

uint64_t PtxTestsBfiHost(uint64_t a, uint64_t b, uint64_t pos, uint64_t len) {
  const uint64_t msb = 63;
  uint64_t f = b;
  for (uint64_t i = 0; i < len; ++i) {
    if (pos + i > msb) break;
    const uint64_t bit = (a >> i) & 1;
    f = (f & ~(uint64_t{1} << (pos + i))) | (bit << (pos + i));
  }
  return f;
}

TEST(ErrataTest, Bfe64MatchesPtxTestsReference) {
  const Erratum* e = FindErratum("bfe-bfi-64-unmasked");
  ASSERT_NE(e, nullptr);
  std::mt19937_64 rng(15);
  // Positions and lengths around every boundary, and some large ones.
  std::vector<uint64_t> counts = {
      0,   1,   31,  32,      33,         62,         63,        64,
      65,  127, 128, 255,     256,        257,        300,       319,
      320, 511, 512, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff};
  const std::vector<uint64_t>& values = EdgeValues(64);
  for (absl::string_view spelling : {"bfe.u64", "bfe.s64", "bfi.b64"}) {
    const Variant v = V(spelling);
    const bool bfi = v.family == Family::kBfi;
    for (int round = 0; round < 20000; ++round) {
      const uint64_t pos =
          round % 3 == 0 ? rng() % 1024 : counts[rng() % counts.size()];
      const uint64_t len =
          round % 5 == 0 ? rng() % 1024 : counts[rng() % counts.size()];
      const uint64_t a = rng() % 2 ? values[rng() % values.size()] : rng();
      const uint64_t b = rng();
      const Operands o =
          bfi ? Operands{{a, b, pos, len}} : Operands{{a, pos, len, 0}};
      const uint64_t expected =
          bfi ? PtxTestsBfiHost(a, b, pos, len)
              : PtxTestsBfeHost(a, pos, len, v.type == Type::kS64);
      if (pos <= 0xff && len <= 0xff) {
        // Where nothing is masked the spec and ptx_tests agree.
        ASSERT_EQ(Evaluate(v, o).bits, expected) << Where(v, o);
        ASSERT_EQ(ErratumFor(v, o), nullptr) << Where(v, o);
        continue;
      }
      ASSERT_EQ(ErratumFor(v, o), e) << Where(v, o);
      ASSERT_EQ(e->hardware_value(v, o), expected) << Where(v, o);
    }
  }
}

TEST(ErrataTest, ErratumExplainingClassifiesMismatches) {
  const Variant bfe = V("bfe.u64");
  const Operands triage_bfe = {{0x0401010100000000, 24, 256, 0}};
  const Erratum* e = ErratumExplaining(bfe, triage_bfe, 0x0000000401010100);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->id, "bfe-bfi-64-unmasked");
  // The spec's own value, or a value neither reading gives: not explained.
  EXPECT_EQ(ErratumExplaining(bfe, triage_bfe, 0), nullptr);
  EXPECT_EQ(ErratumExplaining(bfe, triage_bfe, 0x401010101), nullptr);

  const Variant bfi = V("bfi.b64");
  const Operands triage_bfi = {{0x10000, 0x0000000100000020, 0x100, 0x40}};
  EXPECT_NE(ErratumExplaining(bfi, triage_bfi, 0x0000000100000020), nullptr);

  // Where the spec leaves the result open, the hardware's value is explained
  // (it is no mismatch under the spec reading, but it is the known value).
  const Variant div = V("div.u32");
  EXPECT_NE(ErratumExplaining(div, {{5, 0, 0, 0}}, 0xffffffff), nullptr);
  EXPECT_EQ(ErratumExplaining(div, {{5, 0, 0, 0}}, 0), nullptr);
  // No erratum at all.
  EXPECT_EQ(ErratumExplaining(div, {{5, 1, 0, 0}}, 6), nullptr);
  // The fns finding is a ptxas deviation, not a hardware erratum.
  EXPECT_EQ(ErratumExplaining(V("fns.b32"), {{0, 0, 0x80000000, 0}}, 0),
            nullptr);
}

// docs/spec-notes.md has a section "Errata: the hardware reading" with one
// entry per erratum ("### `id`"), no entry that the table lacks, and each
// entry names the erratum's sources.
std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ErrataDocTest, SpecNotesListTheTable) {
  const std::string path =
      std::string(PTXDIFF_SOURCE_DIR) + "/docs/spec-notes.md";
  const std::string doc = ReadFile(path);
  ASSERT_FALSE(doc.empty()) << "cannot read " << path;
  const std::string heading = "\n## Errata: the hardware reading\n";
  const size_t start = doc.find(heading);
  ASSERT_NE(start, std::string::npos) << path << " has no '" << heading << "'";
  size_t end = doc.find("\n## ", start + heading.size());
  if (end == std::string::npos) end = doc.size();
  const absl::string_view section =
      absl::string_view(doc).substr(start, end - start);

  // The entries: "### `id`" up to the next "### " or the section's end.
  std::set<std::string> documented;
  const std::string entry_mark = "\n### `";
  for (size_t at = section.find(entry_mark); at != absl::string_view::npos;) {
    const size_t id_start = at + entry_mark.size();
    const size_t id_end = section.find('`', id_start);
    ASSERT_NE(id_end, absl::string_view::npos);
    const std::string id(section.substr(id_start, id_end - id_start));
    const size_t next = section.find("\n### ", id_end);
    const absl::string_view entry = section.substr(
        at,
        next == absl::string_view::npos ? absl::string_view::npos : next - at);
    documented.insert(id);
    const Erratum* e = FindErratum(id);
    EXPECT_NE(e, nullptr) << "spec-notes.md documents `" << id
                          << "`, which oracle/errata.cc does not have";
    if (e != nullptr) {
      for (absl::string_view source : e->sources) {
        if (source.empty()) continue;
        EXPECT_NE(entry.find(source), absl::string_view::npos)
            << "the spec-notes.md entry for `" << id << "` does not cite '"
            << source << "'";
      }
    }
    at = section.find(entry_mark, id_end);
  }
  for (const Erratum& e : AllErrata()) {
    EXPECT_TRUE(documented.count(std::string(e.id)))
        << "docs/spec-notes.md has no entry \"### `" << e.id << "`\"";
  }
}

// The ptxas triage entries (`value-mismatch~ptxas~ge256~bfe.u64`) named in
// `text`: up to the first character no entry name has.
std::vector<std::string> PtxasEntryNames(absl::string_view text) {
  std::vector<std::string> out;
  const absl::string_view mark = "~ptxas~";
  for (size_t at = text.find(mark); at != absl::string_view::npos;
       at = text.find(mark, at + mark.size())) {
    size_t begin = at;
    while (begin > 0 &&
           (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
            text[begin - 1] == '-'))
      --begin;
    const size_t end = text.find_first_of(" `'\"),\n", at);
    out.emplace_back(text.substr(begin, end - begin));
  }
  return out;
}

// Issue 67: the evidence cites checked-in entries by their current names
// (they were renamed when the operand classes were; a stale name is
// evidence a reader cannot follow).
TEST(ErrataDocTest, CitedTriageEntriesAreCheckedIn) {
  const std::string root = std::string(PTXDIFF_SOURCE_DIR);
  std::vector<std::pair<std::string, std::string>> cited;  // where, name
  for (const Erratum& e : AllErrata()) {
    for (const std::string& name : PtxasEntryNames(e.evidence)) {
      cited.push_back({absl::StrCat("erratum ", e.id), name});
    }
  }
  const std::string notes = ReadFile(root + "/docs/spec-notes.md");
  ASSERT_FALSE(notes.empty());
  for (const std::string& name : PtxasEntryNames(notes)) {
    cited.push_back({"docs/spec-notes.md", name});
  }
  EXPECT_GE(cited.size(), 4u) << "the bfe and bfi entries, twice each";
  for (const auto& [where, name] : cited) {
    const std::string dir = root + "/triage/entries/" + name;
    EXPECT_FALSE(ReadFile(dir + "/case.txt").empty())
        << where << " cites " << name << ", which triage/entries lacks";
  }
}

}  // namespace
}  // namespace ptxdiff
