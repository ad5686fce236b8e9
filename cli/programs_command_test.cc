// `ptxdiff programs`: a campaign over programs from the command line.

#include <sstream>
#include <string>
#include <vector>

#include "cli/program_command.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "triage/triage_store.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

struct ProgramsRun {
  int code;
  std::string out, err;
};

ProgramsRun Programs(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = RunPrograms(args, out, err);
  return {code, out.str(), err.str()};
}

// A short run checks programs, says how many and what it filed where, and
// whatever it filed is in the triage directory as program entries.
TEST(ProgramsCommandTest, AShortRunChecksProgramsAndSaysWhatItFiled) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  auto dir = TempDir::Create("programs-command");
  ASSERT_TRUE(dir.ok());
  const std::string triage = (*dir)->File("triage");
  ProgramsRun r = Programs({"--max-time", "4", "--dir", triage, "--threads", "1", "--seed", "3"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, testing::ContainsRegex("programs: ptxas sm_90, 1 thread, [0-9]+ s: "
                                            "[1-9][0-9]* programs checked"));
  EXPECT_THAT(r.out, HasSubstr(" disagreements, filed as "));
  auto store = TriageStore::Open(triage, false);
  ASSERT_TRUE(store.ok()) << store.status();
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  for (const EntryInfo& e : *entries) {
    EXPECT_TRUE(NamesAProgram(e.signature)) << e.name;
    EXPECT_THAT(r.out, HasSubstr(e.name));
    EXPECT_THAT(e.damage, testing::IsEmpty()) << e.name;
  }
}

TEST(ProgramsCommandTest, BadFlagsSayWhatIsWrong) {
  ProgramsRun r = Programs({"--suppress", "add.u32,nosuch.op"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--suppress nosuch.op: not an instruction variant"));
  r = Programs({"--max-time", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("max-time"));
  r = Programs({"somefile"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("takes no FILE"));
  r = Programs({"--arch", "sm_1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("sm_1"));
}

}  // namespace
}  // namespace ptxdiff
