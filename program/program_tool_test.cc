#include "program/program_tool.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "program/composed_oracle.h"
#include "program/program_generator.h"
#include "program/testing/programs.h"

#ifdef PTXDIFF_INTERPRETER_PATH

namespace ptxdiff {
namespace {

class ProgramToolTest : public testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("program-tool");
    ASSERT_TRUE(dir.ok());
    dir_ = std::move(*dir);
    tool_.files_root = dir_->path();
    tool_.target = *TargetForDevice(90);
    Use("");
  }
  // The interpreter, with `flags`, as the tool.
  void Use(const std::string& flags) {
    tool_.command =
        absl::StrCat(PTXDIFF_INTERPRETER_PATH, " ", flags, " {ptx} {in} {out}");
  }
  std::unique_ptr<TempDir> dir_;
  ProgramTool tool_;
};

// A tool that runs PTX right gives the composed oracle's outputs for
// generated programs (loops, if/else, squares, narrowing), in both input
// forms, many programs in one run.
TEST_F(ProgramToolTest, AToolThatIsRightGivesTheOraclesOutputs) {
  std::mt19937_64 rng(5);
  std::vector<Program> programs;
  for (int k = 0; k < 40; ++k) programs.push_back(RandomProgram(rng));
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto runs = RunProgramsOnTool(tool_, programs, form);
    ASSERT_TRUE(runs.ok()) << runs.status();
    ASSERT_EQ(runs->size(), programs.size());
    for (size_t k = 0; k < programs.size(); ++k) {
      ASSERT_EQ((*runs)[k].end, ToolRun::kOk) << (*runs)[k].what << "\n"
                                              << FormatProgram(programs[k]);
      EXPECT_FALSE(
          Disagrees(EvaluateAtWitness(programs[k]), (*runs)[k].outputs))
          << FormatProgram(programs[k]);
    }
  }
}

// A program with more inputs than the kernel ABI's buffer holds is
// refused without a run, in words that fit a GPU as well as a tool (the
// cuda backend runs programs the same way).
TEST_F(ProgramToolTest, AProgramPastTheInputsAModuleTakesIsRefusedUnrun) {
  std::string text;
  for (int k = 0; k <= kMaxToolProgramInputs; ++k)
    absl::StrAppend(&text, "input %i", k, " .b32 ", k, "\n");
  absl::StrAppend(&text, "add.u32 %r, %i0, %i1;\noutput %r\n");
  const Program p = ProgramOf(text);
  auto runs = RunProgramsOnTool(tool_, {&p, 1}, ProgramInputs::kRuntime);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ((*runs)[0].end, ToolRun::kRefused);
  EXPECT_EQ((*runs)[0].what,
            absl::StrCat("a program run as a module (a tool's or a GPU's, "
                         "docs/kernel-abi.md) takes at most ",
                         kMaxToolProgramInputs, " inputs; it has ",
                         kMaxToolProgramInputs + 1));
}

// if/else programs compute right on a tool that runs PTX: each branch at
// a witness that takes it, nested in a loop and around one, two programs in
// one module whose labels do not collide.
TEST_F(ProgramToolTest, IfElseProgramsTakeTheirBranches) {
  const std::string text =
      "input %a .b32 3\ninput %n .b32 7\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "if %p {\n shl.b32 %r, %n, 24;\n loop 2 {\n  add.u32 %r, %r, 1;\n }\n"
      "} else {\n mov.b32 %r, 0x80000000;\n}\n"
      "loop 3 {\n if !%p {\n  add.u32 %r, %r, %n;\n }\n}\n"
      "output %r\n";
  Program then_branch = ProgramOf(text), else_branch = ProgramOf(text);
  else_branch.inputs[0].witness = 16;
  const std::vector<Program> programs = {then_branch, else_branch};
  const std::string module =
      ProgramToolModule(programs, tool_.target, ProgramInputs::kRuntime);
  for (const char* label :
       {"$ptxdiff_else0:", "$ptxdiff_fi0:", "$ptxdiff_else1:",
        "$ptxdiff_else2:", "$ptxdiff_fi2:", "$ptxdiff_else3:"}) {
    EXPECT_EQ(
        std::vector<absl::string_view>(absl::StrSplit(module, label)).size(),
        2u)  // exactly once
        << label << "\n"
        << module;
  }
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto runs = RunProgramsOnTool(tool_, programs, form);
    ASSERT_TRUE(runs.ok()) << runs.status();
    ASSERT_EQ((*runs)[0].end, ToolRun::kOk) << (*runs)[0].what;
    ASSERT_EQ((*runs)[1].end, ToolRun::kOk) << (*runs)[1].what;
    EXPECT_EQ((*runs)[0].outputs, std::vector<uint64_t>{0x07000002});
    EXPECT_EQ((*runs)[1].outputs, std::vector<uint64_t>{0x80000000 + 3 * 7});
    EXPECT_EQ(EvaluateAtWitness(programs[0])[0].bits, 0x07000002u);
    EXPECT_EQ(EvaluateAtWitness(programs[1])[0].bits, 0x80000000u + 3 * 7);
  }
}

// Forward branches and exits run right on a tool: the same program at a
// witness that branches and one that falls through, then one that exits
// (whose stores its exit skips), all in one module: the exit ends only its
// own program, and the one after it still runs.
TEST_F(ProgramToolTest, BranchesAndExitsRunOnATool) {
  const std::string text =
      "input %a .b32 3\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "mov.b32 %r, 1;\n"
      "@%p bra SKIP;\n"
      "add.u32 %r, %r, 2;\n"
      "SKIP:\n"
      "setp.eq.u32 %gone, %a, 99;\n"
      "@%gone exit;\n"
      "add.u32 %r, %r, 10;\n"
      "output %r\n";
  std::vector<Program> programs(4, ProgramOf(text));
  programs[1].inputs[0].witness = 16;
  programs[2].inputs[0].witness = 99;
  programs[3].inputs[0].witness = 20;
  const std::string module =
      ProgramToolModule(programs, tool_.target, ProgramInputs::kRuntime);
  EXPECT_THAT(module, ::testing::HasSubstr("bra $ptxdiff_L_p1_SKIP;"));
  EXPECT_THAT(module, ::testing::HasSubstr("bra $ptxdiff_exit2;"));
  EXPECT_THAT(module, ::testing::Not(::testing::HasSubstr("exit;")));
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto runs = RunProgramsOnTool(tool_, programs, form);
    ASSERT_TRUE(runs.ok()) << runs.status();
    for (size_t k = 0; k < programs.size(); ++k) {
      ASSERT_EQ((*runs)[k].end, ToolRun::kOk) << (*runs)[k].what;
    }
    EXPECT_EQ((*runs)[0].outputs, std::vector<uint64_t>{11});
    EXPECT_EQ((*runs)[1].outputs, std::vector<uint64_t>{13});
    EXPECT_EQ((*runs)[3].outputs, std::vector<uint64_t>{13});
    EXPECT_TRUE(EvaluateAtWitness(programs[2])[0].exits);
    for (size_t k = 0; k < programs.size(); ++k) {
      EXPECT_FALSE(Disagrees(EvaluateAtWitness(programs[k]), (*runs)[k].outputs))
          << k;
    }
  }
}

// Inputs loaded from memory run on a tool: each from the tool's input
// buffer at an address computed from %tid.x (the thread that runs is the
// first: its own slot), 16, 32 and 64 bits wide; the outputs are the
// oracle's in both forms.
TEST_F(ProgramToolTest, LoadedInputsRunOnATool) {
  auto p = TestdataProgram("loaded-inputs.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<Program> programs(2, *p);
  programs[1].inputs[2].witness = 0xffffffffffffffffull;
  const std::string module =
      ProgramToolModule(programs, tool_.target, ProgramInputs::kRuntime);
  EXPECT_THAT(module, ::testing::HasSubstr("mov.u32 %ptxdiff_lane, %tid.x;"));
  EXPECT_THAT(module, ::testing::HasSubstr("ld.global.u16 %p1_h, "));
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto runs = RunProgramsOnTool(tool_, programs, form);
    ASSERT_TRUE(runs.ok()) << runs.status();
    for (size_t k = 0; k < programs.size(); ++k) {
      ASSERT_EQ((*runs)[k].end, ToolRun::kOk) << (*runs)[k].what;
      EXPECT_FALSE(
          Disagrees(EvaluateAtWitness(programs[k]), (*runs)[k].outputs))
          << k;
    }
  }
}

// A wrong instruction shows in the programs that use it, and only there; a
// crash is pinned on the one program that has it, the others still run.
TEST_F(ProgramToolTest, WrongValuesAndCrashesArePinnedOnTheirPrograms) {
  const std::vector<Program> programs = {
      ProgramOf("input %a .b32 0x7fffffff\nadd.sat.s32 %r, %a, 1;\nshr.u32 %s, "
                "%r, 28;\noutput %s\n"),
      ProgramOf("input %a .b32 5\nmul.lo.u32 %r, %a, %a;\noutput %r\n"),
      ProgramOf(
          "input %a .b32 9\ninput %b .b32 0\ndiv.u32 %r, %a, %b;\noutput %r\n"),
  };
  Use("--wrong=add.sat.s32 --crash-on=div.u32");
  auto runs = RunProgramsOnTool(tool_, programs, ProgramInputs::kRuntime);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ((*runs)[0].end, ToolRun::kOk) << (*runs)[0].what;
  EXPECT_EQ((*runs)[0].outputs,
            std::vector<uint64_t>{0x8});  // wrapped: 0x80000000 >> 28
  EXPECT_EQ(EvaluateAtWitness(programs[0])[0].bits, 0x7u);  // saturated
  ASSERT_EQ((*runs)[1].end, ToolRun::kOk) << (*runs)[1].what;
  EXPECT_EQ((*runs)[1].outputs, std::vector<uint64_t>{25});
  EXPECT_EQ((*runs)[2].end, ToolRun::kCrashed);
  EXPECT_THAT((*runs)[2].what, testing::HasSubstr("SIGSEGV"));
}

// Past the caller's deadline the run is cut: every program of it is cut
// (not halved into runs that would be cut too), and a backend's check says
// so, so that a campaign does not count them as checked.
TEST_F(ProgramToolTest, RunsPastTheDeadlineAreCutNotChecked) {
  std::mt19937_64 rng(3);
  std::vector<Program> programs;
  for (int k = 0; k < 8; ++k) programs.push_back(RandomProgram(rng));
  tool_.deadline = absl::Now() - absl::Seconds(1);
  auto runs = RunProgramsOnTool(tool_, programs, ProgramInputs::kRuntime);
  ASSERT_TRUE(runs.ok()) << runs.status();
  for (const ProgramToolRun& run : *runs) EXPECT_EQ(run.end, ToolRun::kCut);
  auto backend = MakeToolProgramBackend(tool_);
  auto checks = backend->Check(programs, ProgramInputs::kImmediate,
                               Reading::kSpec, absl::InfinitePast());
  ASSERT_TRUE(checks.ok()) << checks.status();
  for (const ProgramCheck& check : *checks) {
    EXPECT_TRUE(check.cut);
    EXPECT_FALSE(check.judged);
  }
}

// Counts the runs of the runner it wraps.
class CountingRunner : public ProgramModuleRunner {
 public:
  explicit CountingRunner(std::unique_ptr<ProgramModuleRunner> runner)
      : runner_(std::move(runner)) {}
  ToolRun Run(const std::string& module, const std::string& in, size_t n,
              absl::Time deadline) const override {
    ++runs;
    return runner_->Run(module, in, n, deadline);
  }
  const PtxTarget& target() const override { return runner_->target(); }
  std::string Name() const override { return runner_->Name(); }
  std::string Identity() const override { return runner_->Identity(); }
  std::string ReplayFlags() const override { return runner_->ReplayFlags(); }
  std::string Who() const override { return runner_->Who(); }
  std::string HowToRun(size_t slots) const override {
    return runner_->HowToRun(slots);
  }
  bool RunsLanes() const override { return runner_->RunsLanes(); }
  mutable int runs = 0;

 private:
  std::unique_ptr<ProgramModuleRunner> runner_;
};

// A minimizer of a crash keeps the first candidate that still crashes: the
// runs stop there, where isolating every crashing program takes more.
TEST_F(ProgramToolTest, RunsUpToTheFirstCrashTakeFewerRuns) {
  std::vector<Program> programs;
  for (int k = 0; k < 16; ++k) {
    programs.push_back(ProgramOf(
        k == 5 || k == 11
            ? "input %a .b32 9\ninput %b .b32 3\ndiv.u32 %r, %a, %b;\n"
              "output %r\n"
            : "input %a .b32 5\nmul.lo.u32 %r, %a, %a;\noutput %r\n"));
  }
  Use("--crash-on=div.u32");
  CountingRunner all(MakeToolModuleRunner(tool_));
  auto every = RunPrograms(all, programs, ProgramInputs::kImmediate,
                           absl::InfiniteFuture());
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ((*every)[5].end, ToolRun::kCrashed);
  EXPECT_EQ((*every)[11].end, ToolRun::kCrashed);
  CountingRunner first(MakeToolModuleRunner(tool_));
  auto until = RunPrograms(first, programs, ProgramInputs::kImmediate,
                           absl::InfiniteFuture(), /*stop_at_fault=*/true);
  ASSERT_TRUE(until.ok()) << until.status();
  for (int k = 0; k < 5; ++k) EXPECT_EQ((*until)[k].end, ToolRun::kOk);
  EXPECT_EQ((*until)[5].end, ToolRun::kCrashed);
  for (int k = 6; k < 16; ++k) EXPECT_EQ((*until)[k].end, ToolRun::kCut);
  EXPECT_LT(first.runs, all.runs);
}

// The same for a hang (issue 41, item 5): the runs stop at the first
// program that hangs, each hung run costing the tool's timeout.
TEST_F(ProgramToolTest, RunsStopAtTheFirstHangToo) {
  std::vector<Program> programs;
  for (int k = 0; k < 8; ++k) {
    programs.push_back(ProgramOf(
        k == 2 || k == 6
            ? "input %a .b32 9\ninput %b .b32 3\ndiv.u32 %r, %a, %b;\n"
              "output %r\n"
            : "input %a .b32 5\nmul.lo.u32 %r, %a, %a;\noutput %r\n"));
  }
  Use("--hang-on=div.u32");
  tool_.timeout = absl::Seconds(2);
  CountingRunner first(MakeToolModuleRunner(tool_));
  auto until = RunPrograms(first, programs, ProgramInputs::kImmediate,
                           absl::InfiniteFuture(), /*stop_at_fault=*/true);
  ASSERT_TRUE(until.ok()) << until.status();
  for (int k = 0; k < 2; ++k) EXPECT_EQ((*until)[k].end, ToolRun::kOk);
  EXPECT_EQ((*until)[2].end, ToolRun::kHung);
  for (int k = 3; k < 8; ++k) EXPECT_EQ((*until)[k].end, ToolRun::kCut) << k;
}

// Fault run of issue 65: `program P` on a tool that hangs ran 81 s at the
// default --timeout 10: its runtime form's module holds P at four input
// vectors, halved to each (7 runs, each the timeout) before the hang was
// called. The copies are of one program: the module's hang is P's, in one
// run a form.
TEST_F(ProgramToolTest, AHangOfOneProgramsCopiesIsCalledInOneRun) {
  const Program p = ProgramOf(
      "input %a .b32 9\ninput %b .b32 3\ndiv.u32 %r, %a, %b;\noutput %r\n");
  Use("--hang-on=div.u32");
  tool_.timeout = absl::Milliseconds(500);
  auto counting =
      std::make_unique<CountingRunner>(MakeToolModuleRunner(tool_));
  const CountingRunner* runner = counting.get();
  auto backend = MakeRunnerProgramBackend(std::move(counting));
  auto checks = backend->Check({&p, 1}, ProgramInputs::kRuntime,
                               Reading::kSpec, absl::InfiniteFuture());
  ASSERT_TRUE(checks.ok()) << checks.status();
  ASSERT_TRUE((*checks)[0].fault.has_value());
  EXPECT_EQ((*checks)[0].fault->kind, CaseFault::kHang);
  EXPECT_EQ(runner->runs, 1);
  // Copies of two programs are still told apart: each is run alone.
  const Program q = ProgramOf(
      "input %a .b32 5\nmul.lo.u32 %r, %a, %a;\noutput %r\n");
  const std::vector<Program> two = {q, p};
  auto more = MakeToolProgramBackend(tool_)->Check(
      two, ProgramInputs::kRuntime, Reading::kSpec, absl::InfiniteFuture());
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_FALSE((*more)[0].fault.has_value());
  EXPECT_TRUE((*more)[0].judged);
  ASSERT_TRUE((*more)[1].fault.has_value());
  EXPECT_EQ((*more)[1].fault->kind, CaseFault::kHang);
}

// Answers each run with the next end of its script (a whole {out} for
// kOk), counting the slots of each run.
class ScriptedRunner : public ProgramModuleRunner {
 public:
  ScriptedRunner(PtxTarget target, std::vector<ToolRun::End> script)
      : target_(target), script_(std::move(script)) {}
  ToolRun Run(const std::string&, const std::string&, size_t n,
              absl::Time) const override {
    ToolRun run;
    run.end = script_.at(slots.size());
    slots.push_back(n);
    if (run.end == ToolRun::kOk) run.out.assign(n * kBatchResultBytes, '\0');
    if (run.end == ToolRun::kHung) run.what = "timed out after 2s (killed)";
    if (run.end == ToolRun::kCut) run.what = "the run ended first";
    return run;
  }
  const PtxTarget& target() const override { return target_; }
  std::string Name() const override { return "scripted"; }
  std::string Identity() const override { return "scripted"; }
  std::string ReplayFlags() const override { return ""; }
  std::string Who() const override { return "the tool"; }
  std::string HowToRun(size_t) const override { return ""; }
  mutable std::vector<size_t> slots;

 private:
  PtxTarget target_;
  std::vector<ToolRun::End> script_;
};

// A module that hung is run again by halves; those the deadline then cut
// are said to be in a module that hung (not isolated), those a half ran
// are not, and a cut part is not halved further.
TEST_F(ProgramToolTest, ProgramsCutWhileAHungModuleIsHalvedSaySo) {
  const Program p =
      ProgramOf("input %a .b32 5\nmul.lo.u32 %r, %a, %a;\noutput %r\n");
  const std::vector<Program> four = {p, p, p, p};
  ScriptedRunner runner(tool_.target,
                        {ToolRun::kHung, ToolRun::kOk, ToolRun::kCut});
  auto runs = RunPrograms(runner, four, ProgramInputs::kRuntime,
                          absl::InfiniteFuture());
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_THAT(runner.slots, testing::ElementsAre(8, 4, 4));  // 2 a program
  for (int k : {0, 1}) {
    EXPECT_EQ((*runs)[k].end, ToolRun::kOk) << k;
    EXPECT_EQ((*runs)[k].hung_in_module, "") << k;
  }
  for (int k : {2, 3}) {
    EXPECT_EQ((*runs)[k].end, ToolRun::kCut) << k;
    EXPECT_THAT((*runs)[k].hung_in_module, testing::HasSubstr("timed out"))
        << k;
  }
  // A run that stops at its first fault wants that fault alone: the
  // programs after it are not run, and not said to be in a hung module.
  ScriptedRunner stopping(tool_.target,
                          {ToolRun::kHung, ToolRun::kHung, ToolRun::kHung});
  auto until = RunPrograms(stopping, four, ProgramInputs::kRuntime,
                           absl::InfiniteFuture(), /*stop_at_fault=*/true);
  ASSERT_TRUE(until.ok()) << until.status();
  EXPECT_THAT(stopping.slots, testing::ElementsAre(8, 4, 2));
  EXPECT_EQ((*until)[0].end, ToolRun::kHung);
  for (int k : {1, 2, 3}) {
    EXPECT_EQ((*until)[k].end, ToolRun::kCut) << k;
    EXPECT_THAT((*until)[k].what, testing::HasSubstr("not run")) << k;
    EXPECT_EQ((*until)[k].hung_in_module, "") << k;
  }
}

// A program with more inputs than the buffer holds is refused unrun.
TEST_F(ProgramToolTest, TooManyInputsAreRefused) {
  const Program wide = ProgramOf(
      "input %a .b32 1\ninput %b .b32 2\ninput %c .b32 3\ninput %d .b32 "
      "4\ninput %e .b32 5\n"
      "add.u32 %r, %a, %e;\noutput %r\n");
  auto runs = RunProgramsOnTool(tool_, {&wide, 1}, ProgramInputs::kRuntime);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ((*runs)[0].end, ToolRun::kRefused);
  EXPECT_THAT((*runs)[0].what, testing::HasSubstr("at most 4 inputs"));
  // The harness's limit, not the tool's refusal: nothing to learn from it
  // (program_refusals.h).
  auto checks = MakeToolProgramBackend(tool_)->Check(
      {&wide, 1}, ProgramInputs::kRuntime, Reading::kSpec,
      absl::InfiniteFuture());
  ASSERT_TRUE(checks.ok()) << checks.status();
  EXPECT_FALSE((*checks)[0].judged);
  EXPECT_FALSE((*checks)[0].refused);
}

// A program the tool refuses alone is checked as refused, one it runs
// beside it is not.
TEST_F(ProgramToolTest, AProgramTheToolRefusesIsCheckedAsRefused) {
  ProgramTool refusing = tool_;
  refusing.command = absl::StrCat(PTXDIFF_INTERPRETER_PATH,
                                  " --refuse=bmsk {ptx} {in} {out}");
  const std::vector<Program> programs = {
      ProgramOf("input %a .b32 6\nbmsk.clamp.b32 %r, %a, 4;\noutput %r\n"),
      ProgramOf("input %a .b32 1\nadd.u32 %r, %a, 1;\noutput %r\n")};
  auto checks = MakeToolProgramBackend(refusing)->Check(
      programs, ProgramInputs::kRuntime, Reading::kSpec,
      absl::InfiniteFuture());
  ASSERT_TRUE(checks.ok()) << checks.status();
  EXPECT_TRUE((*checks)[0].refused);
  EXPECT_FALSE((*checks)[0].judged);
  EXPECT_THAT((*checks)[0].why_not, testing::HasSubstr("bmsk"));
  EXPECT_FALSE((*checks)[1].refused);
  EXPECT_TRUE((*checks)[1].judged);
}

// The kernel ABI runs a program on one thread: one with a thread input is
// not judged, and says why, beside a program that is.
TEST_F(ProgramToolTest, ProgramsWithThreadInputsAreNotJudged) {
  const std::vector<Program> programs = {
      ProgramOf("input %t .b32 %tid.x\nadd.u32 %r, %t, 1;\noutput %r\n"),
      ProgramOf("input %a .b32 1\nadd.u32 %r, %a, 1;\noutput %r\n")};
  auto backend = MakeToolProgramBackend(tool_);
  EXPECT_FALSE(backend->JudgesThreadInputs());  // none are generated for it
  auto checks = backend->Check(programs, ProgramInputs::kRuntime,
                               Reading::kSpec, absl::InfiniteFuture());
  ASSERT_TRUE(checks.ok()) << checks.status();
  ASSERT_EQ(checks->size(), 2u);
  EXPECT_FALSE((*checks)[0].judged);
  EXPECT_EQ((*checks)[0].why_not, kThreadInputsNotRun);
  EXPECT_TRUE((*checks)[1].judged) << (*checks)[1].why_not;
  EXPECT_FALSE((*checks)[1].mismatch.has_value());
}

// A program that exits at every input vector stores nothing: it is not
// judged, and says so, never "agree"; one that exits only at some is
// judged at the others.
TEST_F(ProgramToolTest, AProgramThatAlwaysExitsIsNotJudged) {
  const std::vector<Program> programs = {
      ProgramOf("input %a .b32 1\nadd.u32 %r, %a, 1;\nexit;\noutput %r\n"),
      ProgramOf("input %a .b32 1\nsetp.eq.u32 %p, %a, 0;\n@%p exit;\n"
                "add.u32 %r, %a, 1;\noutput %r\n")};
  auto backend = MakeToolProgramBackend(tool_);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto checks =
        backend->Check(programs, form, Reading::kSpec, absl::InfiniteFuture());
    ASSERT_TRUE(checks.ok()) << checks.status();
    ASSERT_EQ(checks->size(), 2u);
    EXPECT_FALSE((*checks)[0].judged);
    EXPECT_THAT((*checks)[0].why_not, testing::HasSubstr("exits at every"));
    EXPECT_TRUE((*checks)[1].judged) << (*checks)[1].why_not;
    EXPECT_FALSE((*checks)[1].mismatch.has_value());
  }
}

}  // namespace
}  // namespace ptxdiff

#endif  // PTXDIFF_INTERPRETER_PATH
