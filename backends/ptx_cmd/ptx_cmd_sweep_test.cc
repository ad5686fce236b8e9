// `ptxdiff sweep` and `ptxdiff eval` with `--backend 'ptx-cmd:...'`, the
// commands a user runs, through the test interpreter.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/ptx_cmd/testing/interpreter_tool.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  ProcessOutcome outcome;
  std::string output;
};

CliRun Ptxdiff(const std::vector<std::string>& args) {
  auto dir = TempDir::Create("ptx-cmd-cli-test");
  EXPECT_TRUE(dir.ok());
  std::vector<std::string> argv = {PTXDIFF_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  auto outcome = RunProcess(argv, {.output_path = (*dir)->File("output"),
                                   .timeout = absl::Minutes(5)});
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  return {outcome.value_or(ProcessOutcome{}),
          ReadFile((*dir)->File("output")).value_or("")};
}

// One run of the tool per variant, all in one batch under the backend's
// 45 s budget: 49 variants, as many as before add's four .cc variants ran
// (szext left out for them), keep a loaded machine within it.
const std::vector<std::string> kSweepFamilies = {
    "--family", "add", "--family", "bfe", "--family", "bfi",
    "--family", "shf", "--family", "min", "--family", "mul"};

TEST(PtxCmdSweepTest, NoMismatchThroughTheInterpreter) {
  std::vector<std::string> args = {
      "sweep", "--backend", "ptx-cmd:" + kRunInterpreter, "--tuples", "64"};
  args.insert(args.end(), kSweepFamilies.begin(), kSweepFamilies.end());
  const CliRun run = Ptxdiff(args);
  EXPECT_EQ(run.outcome.exit_status, 0) << run.output;
  // 13 + 4 + 2 + 4 + 10 + 16 variants, add's four .cc variants among them
  // (their carries read back from the kernels).
  EXPECT_THAT(run.output, HasSubstr("49 variants x 64 tuples = 3136 tuples"));
  EXPECT_THAT(run.output, HasSubstr("agreed          3136\n"));
  EXPECT_THAT(run.output, HasSubstr("mismatched      0\n"));
  EXPECT_THAT(run.output, HasSubstr("declined        0\n"));
  EXPECT_THAT(run.output, HasSubstr("faulty batches  0  (worker restarts: 0)"));
}

// A sweep's mismatch line, "... # oracle 0x00000000 cf=1, ptx-cmd
// 0x00000000 cf=0", whose bits agree and whose carries do not.
bool IsCarryOnlyMismatch(absl::string_view line) {
  const size_t oracle = line.find("# oracle ");
  const size_t comma = line.find(", ", oracle);
  if (oracle == absl::string_view::npos || comma == absl::string_view::npos) {
    return false;
  }
  std::vector<absl::string_view> expected = absl::StrSplit(
      line.substr(oracle + 9, comma - oracle - 9), ' ', absl::SkipEmpty());
  std::vector<absl::string_view> got =
      absl::StrSplit(line.substr(comma + 2), ' ', absl::SkipEmpty());
  // got: the backend's name, its bits, its carry.
  return expected.size() == 2 && got.size() == 3 && expected[0] == got[1] &&
         absl::StartsWith(expected[1], "cf=") &&
         absl::StartsWith(got[2], "cf=") && expected[1] != got[2];
}

// The 32 variants that read CC.CF (16 of them write it too): the flag set
// before and read after the instruction, in the interpreter's CC.CF, agrees
// with the oracle everywhere. (add.cc's carry out is in the sweep above;
// every carry variant's kernel in ptx_cmd_kernel_abi_test.) One sweep per
// family keeps each batch, one run of the tool per variant, well within the
// backend's 45 s budget on a loaded machine.
TEST(PtxCmdSweepTest, CarriesAgreeThroughTheInterpreter) {
  for (const auto& [family, variants] :
       std::vector<std::pair<std::string, int>>{
           {"addc", 8}, {"subc", 8}, {"madc", 16}}) {
    const CliRun run =
        Ptxdiff({"sweep", "--backend", "ptx-cmd:" + kRunInterpreter, "--tuples",
                 "32", "--family", family});
    EXPECT_EQ(run.outcome.exit_status, 0) << run.output;
    EXPECT_THAT(run.output,
                HasSubstr(absl::StrCat(variants, " variants x 32 tuples = ",
                                       variants * 32, " tuples")));
    EXPECT_THAT(run.output, HasSubstr(absl::StrCat("agreed          ",
                                                   variants * 32, "\n")));
    EXPECT_THAT(run.output, HasSubstr("mismatched      0\n"));
  }
}

// A tool whose addc.cc.u32 writes no CC.CF (the flag keeps its carry in):
// its result bits are right, so every mismatch is in the carry alone.
TEST(PtxCmdSweepTest, TheWrongCarryModeIsACarryMismatchOnAddcCcU32Only) {
  std::vector<std::string> args = {
      "sweep",
      "--backend",
      "ptx-cmd:" + kInterpreter + " --wrong=addc.cc.u32 {ptx} {in} {out}",
      "--tuples",
      "128",
      "--family",
      "add",
      "--family",
      "addc"};
  const CliRun run = Ptxdiff(args);
  EXPECT_EQ(run.outcome.exit_status, 1) << run.output;
  const size_t listed = run.output.find("mismatches (first");
  ASSERT_NE(listed, std::string::npos) << run.output;
  int mismatches = 0;
  for (absl::string_view line :
       absl::StrSplit(run.output.substr(listed), '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "  ptxdiff eval")) {
      EXPECT_THAT(std::string(line), HasSubstr("ptxdiff eval 'addc.cc.u32' "));
      EXPECT_TRUE(IsCarryOnlyMismatch(line)) << line;
      ++mismatches;
    }
  }
  EXPECT_GT(mismatches, 0);
}

TEST(PtxCmdSweepTest, TheWrongModeIsAMismatchOnAddSatS32Only) {
  std::vector<std::string> args = {
      "sweep",
      "--backend",
      "ptx-cmd:" + kInterpreter + " --wrong=add.sat.s32 {ptx} {in} {out}",
      "--tuples",
      "64",
      "--family",
      "add",
      "--family",
      "sub",
      "--family",
      "bfe"};
  const CliRun run = Ptxdiff(args);
  EXPECT_EQ(run.outcome.exit_status, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("28 variants x 64 tuples"));
  const size_t listed = run.output.find("mismatches (first");
  ASSERT_NE(listed, std::string::npos) << run.output;
  int mismatches = 0;
  for (absl::string_view line :
       absl::StrSplit(run.output.substr(listed), '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "  ptxdiff eval")) continue;
    EXPECT_THAT(std::string(line), HasSubstr("ptxdiff eval 'add.sat.s32' "));
    ++mismatches;
  }
  EXPECT_GT(mismatches, 0);
  EXPECT_THAT(run.output, Not(HasSubstr("mismatched      0\n")));
}

// A flag word no correct CC.CF reader leaves (7 for addc.u32 0, 0) is
// declined with what was read, never guessed into a carry.
TEST(PtxCmdSweepTest, AnUnreadableFlagWordIsDeclined) {
  const CliRun run =
      Ptxdiff({"eval", "--backend",
               "ptx-cmd:printf "
               "'\\0\\0\\0\\0\\0\\0\\0\\0\\7\\0\\0\\0\\0\\0\\0\\0' > {out}; : "
               "{ptx} {in}",
               "addc.cc.u32", "1", "2", "0"});
  EXPECT_EQ(run.outcome.exit_status, 3) << run.output;  // not judged
  EXPECT_THAT(run.output,
              HasSubstr("declined: the CC.CF reader (addc.u32 r, 0, 0) left "
                        "0x7, which is neither 0 nor 0x1: the carry out was "
                        "not read"));
}

TEST(PtxCmdSweepTest, AFailingToolIsExplainedByEval) {
  const CliRun run =
      Ptxdiff({"eval", "--backend",
               "ptx-cmd:echo cannot parse >&2; exit 2; {ptx} {in} {out}",
               "add.s32", "1", "2"});
  EXPECT_EQ(run.outcome.exit_status, 3) << run.output;  // not judged
  EXPECT_THAT(
      run.output,
      HasSubstr(
          "declined: ptx-cmd: command 'echo cannot parse >&2; "
          "exit 2; {ptx} {in} {out}' failed on add.s32 with immediates (1 "
          "tuple): exit status 2; its output ends:\ncannot "
          "parse\nverdict: declined"));
}

}  // namespace
}  // namespace ptxdiff
