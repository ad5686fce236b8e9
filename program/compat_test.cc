// What earlier ptxdiff versions wrote is read by this one (issue 63, item
// 5): program/testdata/c87fd0f holds a pending journal of programs and
// program fuzz inputs written by main's c87fd0f (README.md there says how).

#include <dirent.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "program/program.h"
#include "program/program_campaign.h"
#include "program/program_encoding.h"
#include "triage/pending_journal.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

constexpr char kOld[] = PTXDIFF_SOURCE_DIR "/program/testdata/c87fd0f/";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Its two findings the run could not file (an entry's name in the way):
// value mismatches of programs with their inputs as immediates on ptxas.
TEST(OlderVersionsTest, APendingJournalOfProgramsOfC87fd0fIsRead) {
  const std::vector<std::string> records =
      OpenRecords(ReadAll(absl::StrCat(kOld, "999999996.programs.journal")));
  ASSERT_EQ(records.size(), 2u);
  for (const std::string& record : records) {
    const std::optional<PendingProgram> pending =
        ParseProgramJournalRecord(record);
    ASSERT_TRUE(pending.has_value()) << record.substr(0, 80);
    EXPECT_THAT(pending->identity, HasSubstr("ptxas sm_90"));
    EXPECT_EQ(pending->form, ProgramInputs::kImmediate);
    EXPECT_EQ(pending->fault, CaseFault::kNone);
    EXPECT_GT(CountSteps(pending->program), 0);
  }
}

// Program fuzz inputs of its `program_fuzzer` corpus decode to the program
// its `ptxdiff repro FILE` printed (FILE.ptxprog beside each).
TEST(OlderVersionsTest, AProgramCorpusOfC87fd0fDecodesAsItDid) {
  const std::string dir = absl::StrCat(kOld, "corpus/");
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  int inputs = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() != 40) continue;  // a SHA-1: an input
    auto program = DecodeProgramInput(ReadAll(dir + name));
    ASSERT_TRUE(program.ok()) << name << ": " << program.status();
    EXPECT_EQ(FormatProgram(*program), ReadAll(dir + name + ".ptxprog"))
        << name;
    ++inputs;
  }
  closedir(d);
  EXPECT_EQ(inputs, 12);
}

}  // namespace
}  // namespace ptxdiff
