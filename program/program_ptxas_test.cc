#include "program/program_ptxas.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "common/call_within.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/program_generator.h"
#include "program/program_ptx.h"
#include "program/testing/programs.h"
#include "sass/sass_decoder.h"

namespace ptxdiff {
namespace {

class ProgramPtxasTest : public testing::Test {
 protected:
  void SetUp() override {
    auto found = FindPtxas({});
    if (!found.ok()) GTEST_SKIP() << "no ptxas: " << found.status();
    ptxas_ = *found;
  }
  // The executable, and the library the campaign compiles with where it
  // loads (PtxasProgramCompiler): a finding is flagged on both's code.
  std::vector<ProgramCompiler> Compilers() const {
    std::vector<ProgramCompiler> out = {ptxas_};
    if (auto loaded = NvJitLink::Load(ptxas_); loaded.ok())
      out.emplace_back(ptxas_, *std::move(loaded));
    return out;
  }
  std::string ptxas_;
};

// Programs are compiled as the tuple backend assembles: in-process where
// the library of ptxas's release loads, the executable where asked; the
// identity and the reproducer say which.
TEST_F(ProgramPtxasTest, ProgramsCompileWithTheTupleBackendsAssembler) {
  auto executable = PtxasProgramCompiler({{"compiler", "ptxas"}});
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ(executable->in_process, nullptr);
  const Program p =
      ProgramOf("input %a .b32 1\nbfe.s32 %r, %a, 40, 8;\noutput %r\n");
  EXPECT_EQ(MakePtxasProgramBackend(*executable, "sm_90")->Identity(),
            absl::StrCat("ptxas sm_90 (", ptxas_, ")"));
  EXPECT_THAT(MakePtxasProgramBackend(*executable, "sm_90")
                  ->ReproModule(p, ProgramInputs::kRuntime),
              testing::StartsWith("// Compile: ptxas -arch=sm_90 repro.ptx"));
  if (!NvJitLink::Load(ptxas_).ok())
    GTEST_SKIP() << "no libnvJitLink next to " << ptxas_;
  auto chosen = PtxasProgramCompiler({});
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  ASSERT_NE(chosen->in_process, nullptr);
  const auto backend = MakePtxasProgramBackend(*chosen, "sm_90");
  EXPECT_THAT(backend->Identity(), testing::HasSubstr("in-process by"));
  EXPECT_THAT(backend->ReproModule(p, ProgramInputs::kRuntime),
              testing::StartsWith("// Compiled in-process by "));
  auto check = CheckProgram(*chosen, "sm_90", p, ProgramInputs::kRuntime,
                            Reading::kSpec);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->mismatch.has_value()) << check->why_not;
}

// Issue 29's claim, as a program: ptxas stores -1 for every runtime `a` of
// bfe.s32 a, 40, 8, which the oracle refutes at the witness a = 1 (0). With
// `a` an immediate it folds to the right 0.
TEST_F(ProgramPtxasTest, TheBfeClaimIsRefutedAtTheWitness) {
  const Program p =
      ProgramOf("input %a .b32 1\nbfe.s32 %r, %a, 40, 8;\noutput %r\n");
  auto runtime = CompileProgram(ptxas_, "sm_90", p, ProgramInputs::kRuntime);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  ASSERT_TRUE(runtime->claimed.has_value()) << runtime->why_not;
  EXPECT_EQ(*runtime->claimed, std::vector<uint64_t>{0xffffffff});
  const std::optional<CounterExample> refuted =
      RefuteClaim(p, *runtime->claimed, Reading::kSpec);
  ASSERT_TRUE(refuted.has_value());
  EXPECT_EQ(refuted->inputs, std::vector<uint64_t>{1});
  EXPECT_EQ(refuted->oracle[0], (ProgramValue{.bits = 0, .defined = true}));

  auto immediate =
      CompileProgram(ptxas_, "sm_90", p, ProgramInputs::kImmediate);
  ASSERT_TRUE(immediate.ok()) << immediate.status();
  ASSERT_TRUE(immediate->claimed.has_value()) << immediate->why_not;
  EXPECT_EQ(*immediate->claimed, std::vector<uint64_t>{0});
}

// A chain ptxas gets right: with immediates it folds both outputs to the
// oracle's values at the witness; with runtime inputs the code reads them,
// which is not judged without a GPU.
TEST_F(ProgramPtxasTest,
       AChainFoldsWithImmediatesAndKeepsItsCodeWithRuntimeInputs) {
  const Program p = ProgramOf(
      "input %a .b32 0x12345\ninput %b .b32 7\n"
      "mul.lo.u32 %x, %a, %b;\nadd.u32 %y, %x, 1;\nshr.u32 %z, %y, 3;\n"
      "output %y\noutput %z\n");
  auto immediate =
      CompileProgram(ptxas_, "sm_90", p, ProgramInputs::kImmediate);
  ASSERT_TRUE(immediate.ok()) << immediate.status();
  ASSERT_TRUE(immediate->claimed.has_value()) << immediate->why_not;
  const std::vector<ProgramValue> at_witness = EvaluateAtWitness(p);
  EXPECT_EQ(*immediate->claimed,
            (std::vector<uint64_t>{at_witness[0].bits, at_witness[1].bits}));
  EXPECT_EQ(at_witness[0].bits, 0x12345u * 7 + 1);

  auto runtime = CompileProgram(ptxas_, "sm_90", p, ProgramInputs::kRuntime);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_FALSE(runtime->claimed.has_value());
  EXPECT_FALSE(runtime->why_not.empty());
}

// Code ptxas keeps for runtime inputs is run on the CPU and judged: at
// the witness and at the refutation's vectors, where it agrees.
TEST_F(ProgramPtxasTest, RuntimeCodeIsRunAndJudged) {
  const Program p = ProgramOf(
      "input %a .b32 0x12345\ninput %b .b32 7\n"
      "mul.lo.u32 %x, %a, %b;\nadd.u32 %y, %x, 1;\nshr.u32 %z, %y, 3;\n"
      "loop 3 {\n xor.b32 %y, %y, %a;\n}\n"
      "output %y\noutput %z\n");
  auto runtime = CompileProgram(ptxas_, "sm_90", p, ProgramInputs::kRuntime);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_FALSE(runtime->claimed.has_value());
  EXPECT_FALSE(runtime->code.empty());
  auto check =
      CheckProgram(ptxas_, "sm_90", p, ProgramInputs::kRuntime, Reading::kSpec);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->judged) << check->why_not;
  EXPECT_FALSE(check->mismatch.has_value());
}

// Nested loops, moves and a loop that never runs compile in both forms.
TEST_F(ProgramPtxasTest, LoopsCompile) {
  const Program p = ProgramOf(
      "input %n .b32 3\nmov.b32 %acc, 0;\n"
      "loop 4 {\n add.u32 %acc, %acc, %n;\n loop 2 {\n add.u32 %acc, %acc, "
      "1;\n }\n}\n"
      "loop 0 {\n mov.b32 %acc, 7;\n}\n"
      "output %acc\n");
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto compiled = CompileProgram(ptxas_, "sm_90", p, form);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_THAT(compiled->why_not,
                ::testing::Not(::testing::HasSubstr("rejected")));
    // Where ptxas folds the nest, it is to the oracle's 4 * (3 + 2).
    if (compiled->claimed.has_value()) {
      EXPECT_EQ(*compiled->claimed, std::vector<uint64_t>{20});
    }
  }
}

// if/else blocks, nested with loops and each other, compile in both forms
// on several targets; where ptxas folds them it is to the oracle's value
// (the else branch at the witness, then the loop's if/else's then branch).
TEST_F(ProgramPtxasTest, IfElseBlocksCompile) {
  const Program p = ProgramOf(
      "input %a .b32 20\ninput %n .b32 7\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "if %p {\n shl.b32 %r, %n, 24;\n} else {\n mov.b32 %r, 0x80000000;\n"
      " if !%p {\n  add.u32 %r, %r, 1;\n }\n}\n"
      "loop 2 {\n if !%p {\n  add.u32 %r, %r, %n;\n } else {\n"
      "  add.u32 %r, %r, 1;\n }\n}\n"
      "output %r\n");
  const uint64_t want = 0x80000000 + 1 + 2 * 7;
  ASSERT_EQ(EvaluateAtWitness(p)[0].bits, want);
  for (const char* arch : {"sm_75", "sm_90", "sm_120"}) {
    for (ProgramInputs form :
         {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
      auto compiled = CompileProgram(ptxas_, arch, p, form);
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      EXPECT_THAT(compiled->why_not,
                  ::testing::Not(::testing::HasSubstr("rejected")))
          << arch;
      if (compiled->claimed.has_value()) {
        EXPECT_EQ(*compiled->claimed, std::vector<uint64_t>{want}) << arch;
      }
    }
  }
}

// Forward branches (plain, guarded, in a loop's body), a bare label and
// an exit compile in both forms on several targets, and ptxas's code is
// judged by the oracle: folded, claimed or run by the SASS evaluator.
TEST_F(ProgramPtxasTest, ForwardBranchesAndExitsCompileAndAgree) {
  const Program p = ProgramOf(
      "input %a .b32 5\ninput %n .b32 0x7fffffff\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "mov.b32 %r, %n;\n"
      "@%p bra SKIP;\n"
      "add.u32 %r, %r, 2;\n"
      "SKIP:\n"
      "BARE:\n"
      "loop 3 {\n"
      " @!%p bra NEXT;\n"
      " add.u32 %r, %r, %a;\n"
      " NEXT:\n"
      "}\n"
      "setp.gt.u32 %big, %a, 100;\n"
      "@%big exit;\n"
      "output %r\n");
  ASSERT_EQ(EvaluateAtWitness(p)[0].bits, 0x7fffffffu + 15);
  for (const char* arch : {"sm_75", "sm_90", "sm_120"}) {
    for (ProgramInputs form :
         {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
      auto check = CheckProgram(ptxas_, arch, p, form, Reading::kSpec);
      ASSERT_TRUE(check.ok()) << check.status();
      EXPECT_FALSE(check->mismatch.has_value()) << arch;
      EXPECT_THAT(check->why_not,
                  ::testing::Not(::testing::HasSubstr("rejected")))
          << arch;
      if (std::string(arch) == "sm_90") {
        EXPECT_TRUE(check->judged) << check->why_not;
      }
    }
  }
}

// A thread that exits stores nothing: the lanes that exit are not judged,
// the others are, each on ptxas's code run by the SASS evaluator.
TEST_F(ProgramPtxasTest, LanesThatExitAreNotJudgedTheOthersAre) {
  const Program p = ProgramOf(
      "input %t .b32 %tid.x 3\ninput %a .b32 9\n"
      "setp.ge.u32 %late, %t, 16;\n"
      "@%late exit;\n"
      "mad.lo.u32 %r, %t, 3, %a;\n"
      "output %r\n");
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto compiled = CompileProgram(ptxas_, "sm_90", p, form);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_THAT(SassListing(compiled->code), ::testing::HasSubstr("EXIT"));
    auto check = CheckProgram(ptxas_, "sm_90", p, form, Reading::kSpec);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_TRUE(check->judged) << check->why_not;
    EXPECT_TRUE(check->executed);
    EXPECT_FALSE(check->mismatch.has_value());
  }
  // Every lane exits: nothing is stored, and nothing judged.
  const Program gone = ProgramOf(
      "input %t .b32 %tid.x\nmov.b32 %r, 1;\nexit;\noutput %r\n");
  auto check =
      CheckProgram(ptxas_, "sm_90", gone, ProgramInputs::kRuntime,
                   Reading::kSpec);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->judged);
  EXPECT_FALSE(check->mismatch.has_value());
}

// Public reproducers of ptxas miscompilations (FuzzX, found on a GPU),
// written as program cases: regression tests against this toolkit's ptxas
// (13.0), each flagged with no GPU. m016 and m037 fold to a wrong constant
// with every operand an immediate, and so do the loop cases m009, m011 and
// m012 (their counters set in the entry block); m025 claims a constant for
// every value of its runtime input, which the oracle refutes at the witness.
TEST_F(ProgramPtxasTest, PublicReproducersAreFlagged) {
  struct Case {
    std::string file;
    ProgramInputs inputs;
    uint64_t oracle, ptxas;
  };
  for (const Case& c : std::vector<Case>{
           {"fuzzx-m016.ptxprog", ProgramInputs::kImmediate, 0x1, 0xc},
           {"fuzzx-m037.ptxprog", ProgramInputs::kImmediate, 0x316, 0x4316},
           {"fuzzx-m025.ptxprog", ProgramInputs::kRuntime, 0x0, 0x4},
           {"fuzzx-m009.ptxprog", ProgramInputs::kImmediate, 0x80000001,
            0x7fffffff},
           {"fuzzx-m011.ptxprog", ProgramInputs::kImmediate, 0x80000000,
            0x7ffffffe},
           {"fuzzx-m012.ptxprog", ProgramInputs::kImmediate, 0x800001af,
            0x800001ad},
       }) {
    auto p = TestdataProgram(c.file);
    ASSERT_TRUE(p.ok()) << c.file << ": " << p.status();
    EXPECT_EQ(EvaluateAtWitness(*p)[0],
              (ProgramValue{.bits = c.oracle, .defined = true}))
        << c.file;
    auto compiled = CompileProgram(ptxas_, "sm_90", *p, c.inputs);
    ASSERT_TRUE(compiled.ok()) << c.file << ": " << compiled.status();
    ASSERT_TRUE(compiled->claimed.has_value())
        << c.file << ": " << compiled->why_not;
    EXPECT_EQ(*compiled->claimed, std::vector<uint64_t>{c.ptxas}) << c.file;
    const std::optional<CounterExample> refuted =
        RefuteClaim(*p, *compiled->claimed, Reading::kSpec);
    EXPECT_TRUE(refuted.has_value()) << c.file;
  }
}

// The same reproducers at -O0, where ptxas optimizes the least: each wrong
// constant above is its optimizer's, so at -O0 ptxas either claims what the
// oracle gives or keeps code that computes the value (FuzzX's -O0 runs on a
// GPU gave the oracle's values, the table above), which the SASS evaluator
// runs. Issue 67: every file is judged one way or the other, or this test
// checked nothing.
TEST_F(ProgramPtxasTest, PublicReproducersAgreeAtO0) {
  const std::vector<std::pair<std::string, ProgramInputs>> files = {
      {"fuzzx-m016.ptxprog", ProgramInputs::kImmediate},
      {"fuzzx-m037.ptxprog", ProgramInputs::kImmediate},
      {"fuzzx-m025.ptxprog", ProgramInputs::kRuntime},
      {"fuzzx-m009.ptxprog", ProgramInputs::kImmediate},
      {"fuzzx-m011.ptxprog", ProgramInputs::kImmediate},
      {"fuzzx-m012.ptxprog", ProgramInputs::kImmediate},
  };
  int judged = 0, kept = 0;
  for (const auto& [file, form] : files) {
    auto p = TestdataProgram(file);
    ASSERT_TRUE(p.ok()) << file << ": " << p.status();
    auto checks =
        CheckPrograms(ptxas_, "sm_90", {&*p, 1}, form, Reading::kSpec,
                      kPtxasTimeout, absl::InfiniteFuture(), /*execute=*/true,
                      /*opt_level=*/0);
    ASSERT_TRUE(checks.ok()) << file << ": " << checks.status();
    const ProgramCheck& c = (*checks)[0];
    EXPECT_TRUE(c.judged) << file << " at -O0: " << c.why_not;
    EXPECT_FALSE(c.mismatch.has_value())
        << file << " at -O0 gives "
        << (c.mismatch ? ClaimedText(*p, c.mismatch->claimed) : "");
    judged += c.judged;
    kept += c.executed;
  }
  EXPECT_EQ(judged, static_cast<int>(files.size()));
  RecordProperty("kept_code_at_O0", kept);
}

// Programs share a ptxas run; one ptxas rejects (here a source register
// never declared, which no parsed program has) is split off and said to be
// rejected, and the others are still judged.
TEST_F(ProgramPtxasTest, ARejectedProgramIsSplitOffItsRun) {
  const Program good = ProgramOf("add.u32 %r, 1, 2;\noutput %r\n");
  Program bad = good;
  bad.steps[0].sources[0] = {.is_register = true, .name = "never_declared"};
  const std::vector<Program> programs = {good, bad, good, good};
  auto compiled =
      CompilePrograms(ptxas_, "sm_90", programs, ProgramInputs::kImmediate);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_EQ(compiled->size(), 4u);
  EXPECT_THAT((*compiled)[1].why_not,
              testing::HasSubstr("ptxas rejected the kernel"));
  EXPECT_FALSE((*compiled)[1].claimed.has_value());
  for (size_t k : {0, 2, 3}) {
    ASSERT_TRUE((*compiled)[k].claimed.has_value())
        << k << ": " << (*compiled)[k].why_not;
    EXPECT_EQ(*(*compiled)[k].claimed, std::vector<uint64_t>{3});
  }
}

// Programs whose -O3 code the evaluator runs to a wrong value: each says
// where the code departs from its -O0 code's values, and the clamps after
// `neg` and after `abs` depart at one instruction (one root cause).
TEST_F(ProgramPtxasTest, ExecutedFindingsSayWhereTheCodeDeparts) {
  std::vector<std::string> keys;
  for (const char* file :
       {"found-neg-cvt-sat-u16.ptxprog", "found-abs-cvt-sat-u16.ptxprog"}) {
    auto p = TestdataProgram(file);
    ASSERT_TRUE(p.ok()) << file << ": " << p.status();
    auto check = CheckProgram(ptxas_, "sm_90", *p, ProgramInputs::kRuntime,
                              Reading::kSpec);
    ASSERT_TRUE(check.ok()) << file << ": " << check.status();
    ASSERT_TRUE(check->mismatch.has_value()) << file << ": " << check->why_not;
    const ProgramMismatch& m = *check->mismatch;
    EXPECT_TRUE(m.executed) << file;
    EXPECT_EQ(m.claimed, std::vector<uint64_t>{0xffff}) << file;
    EXPECT_THAT(m.departure,
                ::testing::ContainsRegex(
                    "SEL U?R[0-9]+, U?R[0-9]+, 0xffff, !U?P[0-9]`, which "
                    "wrote 0xffff, a value its -O0 code never computes \\(its "
                    "condition from `U?ISETP\\."))
        << file;
    keys.push_back(m.departure_cause);
  }
  EXPECT_EQ(keys[0], "executed code that departs first at `SEL R, R, 0xffff, !P`");
  EXPECT_EQ(keys[0], keys[1]);
}

// A thread input: each lane's code run on the CPU, judged by the oracle at
// that lane. Lane 0 (the witness) agrees; the refutation finds lane 2.
TEST_F(ProgramPtxasTest, ThreadInputsAreJudgedOnEveryLane) {
  auto p = TestdataProgram("lane-abs-cvt-sat-u16.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(WitnessInputs(*p), std::vector<uint64_t>{0});
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto check = CheckProgram(ptxas_, "sm_90", *p, form, Reading::kSpec);
    ASSERT_TRUE(check.ok()) << check.status();
    ASSERT_TRUE(check->mismatch.has_value()) << check->why_not;
    const ProgramMismatch& m = *check->mismatch;
    EXPECT_TRUE(m.executed);
    EXPECT_EQ(LaneOf(*p, m.inputs) % 4, 2u);
    EXPECT_EQ(m.claimed, std::vector<uint64_t>{0xffff});
    ASSERT_EQ(m.oracle.size(), 1u);
    EXPECT_EQ(m.oracle[0].bits, 0u);
    EXPECT_EQ(m.departure_cause,
              "executed code that departs first at `SEL R, R, 0xffff, !P`");
  }
  // Where every lane agrees, the program is judged and agrees.
  auto fine = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %t .b32 %tid.x 7
input %l .b32 %laneid
input %a .b32 5
mad.lo.u32 %r, %t, 3, %a;
sub.u32 %s, %r, %l;
output %s
)"));
  ASSERT_TRUE(fine.ok()) << fine.status();
  auto check =
      CheckProgram(ptxas_, "sm_90", *fine, ProgramInputs::kRuntime,
                   Reading::kSpec);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->judged) << check->why_not;
  EXPECT_TRUE(check->executed);
  EXPECT_FALSE(check->mismatch.has_value());
  // And so the campaign generates them for ptxas.
  EXPECT_TRUE(MakePtxasProgramBackend(ptxas_, "sm_90")->JudgesThreadInputs());
}

// Inputs loaded from memory (in[%tid.x]): ptxas emits a global load for
// each (LDG, its size and sign from the type), which the SASS evaluator
// runs from a buffer whose other lanes hold the complement; judged and
// agreeing in both forms, alone and beside a thread input.
TEST_F(ProgramPtxasTest, LoadedInputsAreReadByTheCodeRun) {
  auto p = TestdataProgram("loaded-inputs.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  auto lanes = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %t .b32 %tid.x 5
input %a .b32 in[%tid.x] 0x80000000
input %b .b16 in[%tid.x] 0xfff0
cvt.s32.s16 %c, %b;
mad.lo.u32 %r, %t, %c, %a;
output %r
)"));
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  for (const Program& program : {*p, *lanes}) {
    for (ProgramInputs form :
         {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
      auto check = CheckProgram(ptxas_, "sm_90", program, form, Reading::kSpec);
      ASSERT_TRUE(check.ok()) << check.status();
      EXPECT_TRUE(check->judged) << check->why_not;
      EXPECT_FALSE(check->mismatch.has_value()) << FormatProgram(program);
      if (form == ProgramInputs::kRuntime) EXPECT_TRUE(check->executed);
    }
  }
}

// Root causes `ptxdiff programs` found on this toolkit's ptxas (13.0),
// minimized: regression tests, each a claim for every input that the
// oracle refutes at the case's witness.
TEST_F(ProgramPtxasTest, CampaignFindingsAreFlagged) {
  struct Case {
    std::string file;
    uint64_t oracle, ptxas;
    ProgramInputs form = ProgramInputs::kRuntime;
  };
  for (const Case& c : std::vector<Case>{
           {"found-abs-lt-zero.ptxprog", 0x1, 0x0},
           {"found-neg-abs-lt-min.ptxprog", 0x0, 0x1},
           {"found-square-low-bits.ptxprog", 0x0, 0x400},
           {"found-bmsk-min-max-unsigned.ptxprog", 0xffffffff, 0x0,
            ProgramInputs::kImmediate},
       }) {
    auto p = TestdataProgram(c.file);
    ASSERT_TRUE(p.ok()) << c.file << ": " << p.status();
    for (const ProgramCompiler& compiler : Compilers()) {
      SCOPED_TRACE(compiler.Description());
      auto check = CheckProgram(compiler, "sm_90", *p, c.form, Reading::kSpec);
      ASSERT_TRUE(check.ok()) << c.file << ": " << check.status();
      ASSERT_TRUE(check->mismatch.has_value())
          << c.file << ": " << check->why_not;
      EXPECT_EQ(check->mismatch->claimed, std::vector<uint64_t>{c.ptxas})
          << c.file;
      EXPECT_EQ(check->mismatch->inputs, WitnessInputs(*p)) << c.file;
      EXPECT_EQ(check->mismatch->oracle[0],
                (ProgramValue{.bits = c.oracle, .defined = true}))
          << c.file;
    }
  }
}

// A root cause `ptxdiff programs` found that needs a bare label: ptxas 13.0
// folds bfe.s32 of a 0 moved before the label to 0xffffffff (the oracle:
// 0), and folds the same steps without the label right.
TEST_F(ProgramPtxasTest, ABareLabelIsWhatPtxasNeedsToFoldBfeWrong) {
  auto p = TestdataProgram("found-label-bfe-s32-past-top.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  auto check =
      CheckProgram(ptxas_, "sm_90", *p, ProgramInputs::kImmediate,
                   Reading::kSpec);
  ASSERT_TRUE(check.ok()) << check.status();
  ASSERT_TRUE(check->mismatch.has_value()) << check->why_not;
  EXPECT_EQ(check->mismatch->claimed, std::vector<uint64_t>{0xffffffff});
  EXPECT_EQ(check->mismatch->oracle[0], (ProgramValue{.bits = 0}));
  Program unlabelled = *p;
  std::erase_if(unlabelled.steps, [](const ProgramStep& s) {
    return s.kind == ProgramStep::kLabel;
  });
  auto plain = CheckProgram(ptxas_, "sm_90", unlabelled,
                            ProgramInputs::kImmediate, Reading::kSpec);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->judged) << plain->why_not;
  EXPECT_FALSE(plain->mismatch.has_value());
}

// A root cause `ptxdiff programs` found that needs a forward branch: over
// max.u32 and neg.s32 of INT_MAX, ptxas 13.0 claims 0x7fffffff for every
// input (where the branch is not taken the oracle gives 0x80000001); the
// same steps predicated compile right.
TEST_F(ProgramPtxasTest, AForwardBranchIsWhatPtxasNeedsToClaimWrong) {
  auto p = TestdataProgram("found-branch-max-neg.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  auto check = CheckProgram(ptxas_, "sm_90", *p, ProgramInputs::kRuntime,
                            Reading::kSpec);
  ASSERT_TRUE(check.ok()) << check.status();
  ASSERT_TRUE(check->mismatch.has_value()) << check->why_not;
  EXPECT_EQ(check->mismatch->claimed, std::vector<uint64_t>{0x7fffffff});
  EXPECT_EQ(check->mismatch->inputs, WitnessInputs(*p));
  EXPECT_EQ(check->mismatch->oracle[0], (ProgramValue{.bits = 0x80000001}));
  // The branch's steps guarded by its condition instead.
  Program predicated = *p;
  std::erase_if(predicated.steps, IsJumpOrLabel);
  for (ProgramStep& s : predicated.steps) {
    if (s.kind != ProgramStep::kInstruction || s.dst == "p5") continue;
    s.guard = "p5";
  }
  ASSERT_EQ(EvaluateAtWitness(predicated)[0].bits, 0x80000001u);
  auto plain = CheckProgram(ptxas_, "sm_90", predicated,
                            ProgramInputs::kRuntime, Reading::kSpec);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->judged) << plain->why_not;
  EXPECT_FALSE(plain->mismatch.has_value()) << FormatProgram(predicated);
}

// Root causes `ptxdiff programs` found through thread inputs (ptxas 13.0),
// minimized: in both forms ptxas's code is wrong on the lane each case
// names, and it needs the thread id there: with the id an immediate at
// that lane, ptxas folds it right.
TEST_F(ProgramPtxasTest, CampaignThreadInputFindingsAreFlagged) {
  struct Case {
    std::string file;
    uint32_t lane;  // the first lane refuted
    uint64_t oracle, ptxas;
    std::string cause;
  };
  for (const Case& c : std::vector<Case>{
           // Every lane differs: the witness's lane is refuted first.
           {"lane-bfe-s32-past-top.ptxprog", 20, 0x0, 0xffffffff,
            "executed code that departs first at `MOV R, 0xffffffff`"},
           // Only lane 0 differs.
           {"lane-cnot-cvt-sat-s16.ptxprog", 0, 0x1, 0x8000,
            "executed code that departs first at `SEL R, R, 0xffff8000, !P`"},
       }) {
    SCOPED_TRACE(c.file);
    auto p = TestdataProgram(c.file);
    ASSERT_TRUE(p.ok()) << p.status();
    for (ProgramInputs form :
         {ProgramInputs::kImmediate, ProgramInputs::kRuntime}) {
      for (const ProgramCompiler& compiler : Compilers()) {
        SCOPED_TRACE(compiler.Description());
        auto check = CheckProgram(compiler, "sm_90", *p, form, Reading::kSpec);
        ASSERT_TRUE(check.ok()) << check.status();
        ASSERT_TRUE(check->mismatch.has_value()) << check->why_not;
        const ProgramMismatch& m = *check->mismatch;
        EXPECT_TRUE(m.executed);
        EXPECT_EQ(LaneOf(*p, m.inputs), c.lane);
        EXPECT_EQ(m.claimed, std::vector<uint64_t>{c.ptxas});
        ASSERT_EQ(m.oracle.size(), 1u);
        EXPECT_EQ(m.oracle[0],
                  (ProgramValue{.bits = c.oracle, .defined = true}));
        EXPECT_EQ(m.departure_cause, c.cause);
      }
    }
    Program immediate_id = *p;
    immediate_id.inputs[0] = {.name = p->inputs[0].name, .witness = c.lane};
    auto folded = CheckProgram(ptxas_, "sm_90", immediate_id,
                               ProgramInputs::kImmediate, Reading::kSpec);
    ASSERT_TRUE(folded.ok()) << folded.status();
    EXPECT_TRUE(folded->judged) << folded->why_not;
    EXPECT_FALSE(folded->mismatch.has_value());
  }
}

// One step of every family (its first PTX variant up to sm_90) as a
// program, in both input forms, as the kernels of one module each: ptxas
// accepts them all.
TEST_F(ProgramPtxasTest, EveryFamilysKernelAssembles) {
  const PtxTarget target = *TargetForDevice(90);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    std::string kernels;
    int ptx = target.min_ptx, count = 0;
    for (const FamilyInfo& f : AllFamilies()) {
      if (f.isa != TargetIsa::kPtx) continue;
      bool done = false;
      ForEachVariant(f.family, [&](const Variant& v) {
        if (done || LevelOf(v).sm > 90) return;
        done = true;
        const Program p = TupleAsProgram(v, Operands{{1, 1, 1, 1}});
        ptx = std::max(ptx, PtxVersionFor(v, target));
        absl::StrAppend(&kernels,
                        ProgramKernel(p, absl::StrCat("k", count++), form));
      });
    }
    const std::string module =
        absl::StrCat(".version ", ptx / 10, ".", ptx % 10,
                     "\n.target sm_90\n.address_size 64\n\n", kernels);
    auto out = RunPtxas(ptxas_, "sm_90", module);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->ok) << LogSummary(out->log);
    EXPECT_GT(count, 50);
  }
}

// The module of programs a tool or a GPU runs (ProgramToolModule, kernel
// ABI 2: the `ptx-cmd` and `cuda` backends) assembles for each arch from
// sm_75 to sm_100, in both input forms: generated programs (loops, guards,
// narrowing) and the testdata cases, many in one module as the backends
// run them.
TEST_F(ProgramPtxasTest, ProgramToolModulesAssembleOnEveryArch) {
  std::mt19937_64 rng(11);
  std::vector<Program> programs;
  for (int k = 0; k < 40; ++k) programs.push_back(RandomProgram(rng));
  for (const char* name :
       {"found-abs-lt-zero.ptxprog", "found-neg-abs-lt-min.ptxprog",
        "found-square-low-bits.ptxprog", "fuzzx-m009.ptxprog",
        "fuzzx-m037.ptxprog", "forward-branches-exit.ptxprog"}) {
    absl::StatusOr<Program> p = TestdataProgram(name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status();
    programs.push_back(*std::move(p));
  }
  auto dir = TempDir::Create("program-tool-module");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string ptx = (*dir)->File("m.ptx"), log = (*dir)->File("m.log");
  for (int sm : {75, 80, 90, 100}) {
    for (ProgramInputs form :
         {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
      const std::string module =
          ProgramToolModule(programs, *TargetForDevice(sm), form);
      ASSERT_TRUE(WriteFile(ptx, module).ok());
      auto ran = RunProcess({ptxas_, absl::StrCat("-arch=sm_", sm), "-o",
                             (*dir)->File("m.cubin"), ptx},
                            {.output_path = log});
      ASSERT_TRUE(ran.ok()) << ran.status();
      EXPECT_TRUE(ran->ok())
          << "sm_" << sm << ", inputs "
          << (form == ProgramInputs::kRuntime ? "runtime" : "immediate") << ": "
          << ran->Describe(absl::Seconds(0)) << "\n"
          << ReadFileTail(log, 2000);
    }
  }
}

// A stand-in for ptxas, a shell script running `body`, in `dir`.
std::string FakePtxas(const TempDir& dir, const std::string& body) {
  const std::string path = dir.File("ptxas");
  EXPECT_TRUE(WriteFile(path, "#!/bin/sh\n" + body + "\n").ok());
  chmod(path.c_str(), 0755);
  return path;
}

// Issue 42, item 10: a ptxas that crashes (SIGSEGV on a long register name)
// was reported as "rejected the kernel", not judged. A compiler crash is a
// finding: of the program alone, found by splitting the module.
TEST(ProgramPtxasFaultTest, ACrashOfPtxasIsAFaultOfTheProgram) {
  auto dir = TempDir::Create("program-ptxas-fault");
  ASSERT_TRUE(dir.ok());
  const std::string ptxas = FakePtxas(**dir, "kill -SEGV $$");
  const std::vector<Program> programs = {
      ProgramOf("input %a .b32 1\nadd.u32 %r, %a, 1;\noutput %r\n"),
      ProgramOf("input %a .b32 1\nsub.u32 %r, %a, 1;\noutput %r\n")};
  auto compiled =
      CompilePrograms(ptxas, "sm_90", programs, ProgramInputs::kImmediate);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (const ProgramCompilation& c : *compiled) {
    ASSERT_TRUE(c.fault.has_value()) << c.why_not;
    EXPECT_EQ(c.fault->kind, CaseFault::kCrash);
    EXPECT_THAT(c.fault->what,
                testing::StartsWith("ptxas killed by signal 11 (SIGSEGV)"));
  }
  auto check = CheckProgram(ptxas, "sm_90", programs[0],
                            ProgramInputs::kImmediate, Reading::kSpec);
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE(check->fault.has_value());
  EXPECT_FALSE(check->judged);
}

// `n` programs, the one at `crashing` a sub.u32 (what CrashingOnSub's
// ptxas crashes on), the others add.u32s.
std::vector<Program> AddsWithASubAt(size_t crashing, size_t n) {
  std::vector<Program> programs;
  for (size_t k = 0; k < n; ++k) {
    programs.push_back(ProgramOf(
        absl::StrCat("input %a .b32 1\n", k == crashing ? "sub" : "add",
                     ".u32 %r, %a, ", k, ";\noutput %r\n")));
  }
  return programs;
}

// How many times the script ptxas of AMinimizerOfACrash... was run.
size_t RunsCounted(const std::string& runs) {
  const absl::StatusOr<std::string> text = ReadFile(runs);
  return text.ok() ? std::count(text->begin(), text->end(), '\n') : 0;
}

// The twenty-second fault run: a ptxas that crashed on every module holding
// brev stalled `programs`, as each round of the crash's minimizer compiled
// its candidates (all holding brev) by halves down to each alone. A crash's
// minimizer asks only up to the first candidate that crashes: those before
// it are judged, those after it not compiled, and a first that crashes is
// one run.
TEST_F(ProgramPtxasTest, AMinimizerOfACrashCompilesUpToTheFirstThatCrashes) {
  auto dir = TempDir::Create("program-ptxas-until-fault");
  ASSERT_TRUE(dir.ok());
  const std::string runs = (*dir)->File("runs");
  const std::string ptxas = FakePtxas(
      **dir, absl::StrCat("echo run >> ", runs, "\nfor a; do last=$a; done\n",
                          "grep -q sub.u32 \"$last\" && kill -SEGV $$\n",
                          "exec ", ptxas_, " \"$@\""));
  const std::unique_ptr<ProgramBackend> backend =
      MakePtxasProgramBackend(ptxas, "sm_90");
  const std::vector<Program> all_crash(16, AddsWithASubAt(0, 1)[0]);
  auto checks =
      backend->CheckUntilFault(all_crash, ProgramInputs::kImmediate,
                               Reading::kSpec, absl::InfiniteFuture());
  ASSERT_TRUE(checks.ok()) << checks.status();
  ASSERT_TRUE((*checks)[0].fault.has_value()) << (*checks)[0].why_not;
  for (size_t k = 1; k < checks->size(); ++k)
    EXPECT_TRUE((*checks)[k].cut) << k << ": " << (*checks)[k].why_not;
  EXPECT_EQ(RunsCounted(runs), 1);

  checks =
      backend->CheckUntilFault(AddsWithASubAt(5, 16), ProgramInputs::kImmediate,
                               Reading::kSpec, absl::InfiniteFuture());
  ASSERT_TRUE(checks.ok()) << checks.status();
  for (size_t k = 0; k < 5; ++k)
    EXPECT_TRUE((*checks)[k].judged) << k << ": " << (*checks)[k].why_not;
  ASSERT_TRUE((*checks)[5].fault.has_value()) << (*checks)[5].why_not;
  EXPECT_EQ((*checks)[5].fault->kind, CaseFault::kCrash);
  for (size_t k = 6; k < checks->size(); ++k)
    EXPECT_TRUE((*checks)[k].cut) << k << ": " << (*checks)[k].why_not;
}

// The in-process compiler is bounded as the executable is: past the
// timeout the module is not judged, at a stop it is cut (the compile runs
// on, on a thread of its own).
TEST_F(ProgramPtxasTest, AnInProcessCompileIsBoundedAsTheExecutableIs) {
  auto library = NvJitLink::Load(ptxas_);
  if (!library.ok()) GTEST_SKIP() << library.status();
  const ProgramCompiler in_process(ptxas_, *std::move(library));
  // 600 nested loops: seconds of ptxas's time (2,000: 46 s).
  std::string text = "input %a .b32 1\n";
  for (int k = 0; k < 600; ++k) text += "loop 1 {\n";
  text += "add.u32 %a, %a, 1;\n";
  for (int k = 0; k < 600; ++k) text += "}\n";
  const Program deep = ProgramOf(text + "output %a\n");
  auto slow =
      CompileProgram(in_process, "sm_90", deep, ProgramInputs::kImmediate,
                     kPtxasDefaultOptLevel, absl::Milliseconds(100));
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_FALSE(slow->cut);
  EXPECT_EQ(slow->why_not,
            "ptxas did not finish: timed out after 100ms (in-process, left "
            "to run on)");
  Interrupt();
  auto stopped =
      CompileProgram(in_process, "sm_90", deep, ProgramInputs::kImmediate);
  ClearInterrupt();
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_TRUE(stopped->cut) << stopped->why_not;
  // The compiles left to run on must end before the test binary does:
  // exit()'s handlers would free libnvJitLink's state under them (ASan:
  // "attempting free on address which was not malloc()-ed").
  EXPECT_TRUE(WaitForCallsToReturn(absl::Minutes(3)));
}

// Issue 42, items 3 and 4: ptxas had a fixed 60 s. Past its timeout a
// module is not judged, saying why, and not split (each half would cost
// the timeout again); cut by the caller's deadline, its programs are `cut`
// (not checked, not counted).
TEST(ProgramPtxasFaultTest, TheTimeoutAndTheDeadlineBoundPtxas) {
  auto dir = TempDir::Create("program-ptxas-slow");
  ASSERT_TRUE(dir.ok());
  const std::string ptxas = FakePtxas(**dir, "exec sleep 60");
  const std::vector<Program> programs = {
      ProgramOf("input %a .b32 1\nadd.u32 %r, %a, 1;\noutput %r\n"),
      ProgramOf("input %a .b32 1\nsub.u32 %r, %a, 1;\noutput %r\n")};
  absl::Time start = absl::Now();
  auto slow =
      CompilePrograms(ptxas, "sm_90", programs, ProgramInputs::kImmediate,
                      kPtxasDefaultOptLevel, absl::Seconds(1));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "split, or not bound";
  ASSERT_TRUE(slow.ok()) << slow.status();
  for (const ProgramCompilation& c : *slow) {
    EXPECT_FALSE(c.cut);
    EXPECT_EQ(c.why_not, "ptxas did not finish: timed out after 1s (killed)");
  }
  start = absl::Now();
  auto cut = CompilePrograms(ptxas, "sm_90", programs,
                             ProgramInputs::kImmediate, kPtxasDefaultOptLevel,
                             absl::Seconds(60), absl::Now() + absl::Seconds(1));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  ASSERT_TRUE(cut.ok()) << cut.status();
  for (const ProgramCompilation& c : *cut) EXPECT_TRUE(c.cut);
}

}  // namespace
}  // namespace ptxdiff
