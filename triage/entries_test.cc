// Replays every checked-in triage entry (triage/entries/): its name parses
// into its fields, its case parses, and the oracle still gives the result the
// entry recorded, so a change to the oracle that would silently re-judge a
// filed finding fails here and must be argued in docs/spec-notes.md.

#include <dirent.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "triage/finding.h"
#include "triage/text_case.h"

namespace ptxdiff {
namespace {

std::vector<std::string> EntryNames(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      struct stat st;
      const std::string path = dir + "/" + e->d_name;
      if (e->d_name[0] != '.' && stat(path.c_str(), &st) == 0 &&
          S_ISDIR(st.st_mode)) {
        names.push_back(e->d_name);
      }
    }
    closedir(d);
  }
  return names;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The value of a `key: value` line of a case.
std::string Field(const std::string& text, const std::string& key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, key + ": ")) return std::string(line);
  }
  return "";
}

TEST(CheckedInEntriesTest, ParseAndTheOracleStillAgreesWithThem) {
  const std::string dir = std::string(PTXDIFF_SOURCE_DIR) + "/triage/entries";
  // A loop over no entries would pass whatever the oracle did.
  ASSERT_EQ(EntryNames(dir).size(), 5u)
      << "triage/entries/README.md lists what is checked in";
  for (const std::string& name : EntryNames(dir)) {
    SCOPED_TRACE(name);
    auto signature = ParseEntryName(name);
    ASSERT_TRUE(signature.ok()) << signature.status();
    const std::string text = Read(dir + "/" + name + "/case.txt");
    auto tuple = ParseTextCase(text);
    ASSERT_TRUE(tuple.ok()) << tuple.status();
    const Result r = Evaluate(tuple->variant, tuple->operands);
    const std::string recorded = Field(text, "oracle");
    EXPECT_EQ(recorded, HexOperand(r.bits, ResultWidth(tuple->variant)) + " " +
                            std::string(Token(r.undefined)));
    // Filed under today's signature: the name's class is the one its case
    // would be signed with now (an entry under an old class name would never
    // meet the repeats of its cause).
    EXPECT_EQ(signature->disagreement_class, TriggerClassOf(*tuple, r));
  }
}

// An entry explained as known hardware behaviour names its erratum, and the
// judge agrees: the backend's recorded value is exactly the hardware
// reading's, so it is `other-reading`, not a mismatch. The others stay
// mismatches under both readings.
TEST(CheckedInEntriesTest, EntriesExplainedByAnErratumAreOtherReadingVerdicts) {
  const std::string dir = std::string(PTXDIFF_SOURCE_DIR) + "/triage/entries";
  int explained_by_erratum = 0;
  for (const std::string& name : EntryNames(dir)) {
    SCOPED_TRACE(name);
    const std::string text = Read(dir + "/" + name + "/case.txt");
    auto tuple = ParseTextCase(text);
    ASSERT_TRUE(tuple.ok()) << tuple.status();
    uint64_t backend_bits = 0;
    ASSERT_TRUE(
        absl::SimpleHexAtoi(Field(text, "backend-result"), &backend_bits));
    const std::string why =
        Field(Read(dir + "/" + name + "/meta.txt"), "explained");
    const Judgement j =
        JudgeTuple(*tuple, {.bits = backend_bits}, Reading::kSpec);
    if (why.find("erratum ") != std::string::npos) {
      ++explained_by_erratum;
      EXPECT_EQ(j.verdict, Verdict::kOtherReading);
      ASSERT_NE(j.erratum, nullptr);
      EXPECT_NE(why.find(std::string(j.erratum->id)), std::string::npos) << why;
    } else {
      EXPECT_EQ(j.verdict, Verdict::kMismatch);
      EXPECT_EQ(JudgeTuple(*tuple, {.bits = backend_bits}, Reading::kHardware)
                    .verdict,
                Verdict::kMismatch);
    }
  }
  EXPECT_EQ(explained_by_erratum, 2);  // the 64-bit bfe and bfi entries
}

}  // namespace
}  // namespace ptxdiff
