#include "program/composed_oracle.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "program/program.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

std::vector<ProgramValue> Outputs(const Program& p,
                                  std::vector<uint64_t> inputs,
                                  Reading reading = Reading::kSpec) {
  auto out = EvaluateProgram(p, inputs, reading);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<ProgramValue>{};
}

constexpr ProgramValue Defined(uint64_t bits) {
  return {.bits = bits, .defined = true};
}

// A 64-bit sum of 32-bit halves: the carry goes from add.cc to addc.
TEST(ComposedOracleTest, TheCarryFlowsAlongAChain) {
  const Program p = ProgramOf(
      "input %alo .b32 0\ninput %ahi .b32 0\ninput %blo .b32 0\ninput %bhi "
      ".b32 0\n"
      "add.cc.u32 %lo, %alo, %blo;\n"
      "addc.u32 %hi, %ahi, %bhi;\n"
      "output %lo\noutput %hi\n");
  EXPECT_EQ(Outputs(p, {0xffffffff, 0, 1, 0}),
            (std::vector<ProgramValue>{Defined(0), Defined(1)}));
  EXPECT_EQ(Outputs(p, {0xfffffffe, 7, 1, 8}),
            (std::vector<ProgramValue>{Defined(0xffffffff), Defined(15)}));
  // A borrow chain: 0x1_00000000 - 1.
  const Program sub = ProgramOf(
      "input %lo .b32 0\ninput %hi .b32 1\n"
      "sub.cc.u32 %dlo, %lo, 1;\n"
      "subc.u32 %dhi, %hi, 0;\n"
      "output %dlo\noutput %dhi\n");
  EXPECT_EQ(Outputs(sub, {0, 1}),
            (std::vector<ProgramValue>{Defined(0xffffffff), Defined(0)}));
}

// ZLUDA's carry_set_all and subc_cc_s32, run on NVIDIA GPUs
// (docs/spec-notes.md): across kinds the one bit is the adder's carry-out.
// The spec leaves those chains open, so the spec reading judges nothing.
TEST(ComposedOracleTest,
     ChainsAcrossKindsAreHardwareKnownAnswersAndOpenInTheSpec) {
  const Program sub_then_addc = ProgramOf(
      "input %z .b32 0\n"
      "sub.cc.u32 %x, %z, %z;\n"
      "addc.u32 %y, %z, %z;\n"
      "output %y\n");
  EXPECT_EQ(Outputs(sub_then_addc, {0}, Reading::kHardware)[0], Defined(1));
  EXPECT_FALSE(Outputs(sub_then_addc, {0}, Reading::kSpec)[0].defined);
  const Program add_then_subc = ProgramOf(
      "input %z .b32 0\n"
      "add.cc.u32 %x, %z, %z;\n"
      "subc.u32 %y, %z, %z;\n"
      "output %y\n");
  EXPECT_EQ(Outputs(add_then_subc, {0}, Reading::kHardware)[0],
            Defined(0xffffffff));
  EXPECT_FALSE(Outputs(add_then_subc, {0}, Reading::kSpec)[0].defined);
  // A borrowing sub.cc leaves NOT borrow = 0 for addc.
  const Program borrow_then_addc = ProgramOf(
      "input %z .b32 0\n"
      "sub.cc.u32 %x, %z, 1;\n"
      "addc.u32 %y, %z, %z;\n"
      "output %y\n");
  EXPECT_EQ(Outputs(borrow_then_addc, {0}, Reading::kHardware)[0], Defined(0));
}

TEST(ComposedOracleTest, AFlagReadBeforeAnyStepSetsItIsUndefined) {
  const Program p =
      ProgramOf("input %a .b32 5\naddc.u32 %y, %a, %a;\noutput %y\n");
  EXPECT_FALSE(EvaluateAtWitness(p)[0].defined);
  EXPECT_FALSE(EvaluateAtWitness(p, Reading::kHardware)[0].defined);
}

// What the spec leaves open poisons what depends on it, and nothing else.
TEST(ComposedOracleTest, AnUndefinedStepPoisonsOnlyWhatDependsOnIt) {
  const Program p = ProgramOf(
      "input %a .b32 7\ninput %z .b32 0\n"
      "div.u32 %q, %a, %z;\n"
      "add.u32 %r, %q, 1;\n"
      "and.b32 %n, %r, 0;\n"  // even a mask that clears every bit
      "add.u32 %s, %a, 1;\n"
      "output %n\noutput %s\n");
  const std::vector<ProgramValue> out = EvaluateAtWitness(p);
  EXPECT_FALSE(out[0].defined);
  EXPECT_EQ(out[1], Defined(8));
  EXPECT_EQ(Outputs(p, {7, 2})[0], Defined(0));
}

// A loop's body runs its trip count times, nested loops on every trip of
// their parent; a register set only in a loop that does not run is unset,
// which nothing defines.
TEST(ComposedOracleTest, LoopsRunTheirTripCounts) {
  const Program p = ProgramOf(
      "input %n .b32 3\nmov.b32 %acc, 0;\n"
      "loop 4 {\n add.u32 %acc, %acc, %n;\n loop 2 {\n add.u32 %acc, %acc, "
      "1;\n }\n}\n"
      "loop 0 {\n mov.b32 %never, 1;\n}\n"
      "output %acc\noutput %never\n");
  const std::vector<ProgramValue> out = Outputs(p, {3});
  EXPECT_EQ(out[0], Defined(4 * (3 + 2)));
  EXPECT_FALSE(out[1].defined);
  // FuzzX m009's chain: one-trip loops, the second negating INT_MAX.
  const Program m009 = ProgramOf(
      "loop 1 {\n}\nmov.b32 %r, 0x7fffffff;\nloop 1 {\n neg.s32 %r, "
      "%r;\n}\noutput %r\n");
  EXPECT_EQ(EvaluateAtWitness(m009)[0], Defined(0x80000001));
}

// Issue 29's bfe: a position past the top replicates the sign bit.
TEST(ComposedOracleTest, StepsSeeTheirSourcesMaskedToTheirWidths) {
  const Program p = ProgramOf(
      "input %a .b32 1\n"
      "bfe.s32 %r, %a, 40, 8;\n"
      "setp.lt.s32 %p, %a, 0;\n"
      "selp.b32 %s, 0xffffffff, 0, %p;\n"
      "output %r\noutput %s\n");
  EXPECT_EQ(Outputs(p, {1}),
            (std::vector<ProgramValue>{Defined(0), Defined(0)}));
  EXPECT_EQ(
      Outputs(p, {0x80000000}),
      (std::vector<ProgramValue>{Defined(0xffffffff), Defined(0xffffffff)}));
  EXPECT_FALSE(EvaluateProgram(p, std::vector<uint64_t>{}).ok());
}

// An if runs the branch its condition takes, in loops and around them;
// `if !%p` the other way.
TEST(ComposedOracleTest, AnIfRunsTheBranchItsConditionTakes) {
  const Program p = ProgramOf(
      "input %a .b32 0\ninput %n .b32 7\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "if %p {\n shl.b32 %r, %n, 24;\n loop 2 {\n  add.u32 %r, %r, 1;\n }\n"
      "} else {\n mov.b32 %r, 0x80000000;\n}\n"
      "loop 3 {\n if !%p {\n  add.u32 %r, %r, 2;\n }\n}\n"
      "output %r\n");
  EXPECT_EQ(Outputs(p, {3, 7})[0], Defined(0x07000002));
  EXPECT_EQ(Outputs(p, {16, 7})[0], Defined(0x80000006));
  EXPECT_EQ(Outputs(p, {0xffffffff, 1})[0], Defined(0x80000006));
}

// A condition the spec leaves open runs neither branch: what either sets
// (CC.CF included) is undefined after the block, what neither sets keeps
// its value.
TEST(ComposedOracleTest, AnUndefinedConditionPoisonsWhatEitherBranchSets) {
  const Program p = ProgramOf(
      "input %a .b32 5\ninput %d .b32 0\n"
      "div.u32 %q, %a, %d;\n"
      "setp.lt.u32 %p, %q, 10;\n"
      "mov.b32 %r, 1;\nmov.b32 %s, 2;\nmov.b32 %t, 3;\n"
      "add.cc.u32 %c, %a, %a;\n"
      "if %p {\n mov.b32 %r, 4;\n} else {\n loop 2 {\n"
      "  add.cc.u32 %s, %s, 1;\n }\n}\n"
      "addc.u32 %k, 0, 0;\n"
      "output %r\noutput %s\noutput %t\noutput %k\n");
  const std::vector<ProgramValue> open = Outputs(p, {5, 0});
  EXPECT_FALSE(open[0].defined);
  EXPECT_FALSE(open[1].defined);
  EXPECT_EQ(open[2], Defined(3));
  EXPECT_FALSE(open[3].defined);
  // With the condition defined, everything is.
  EXPECT_EQ(Outputs(p, {5, 1}),
            (std::vector<ProgramValue>{Defined(4), Defined(2), Defined(3),
                                       Defined(0)}));
}

// A register first set in one branch and read after the block is undefined
// where the other branch ran, as one set only in a loop that ran 0 times.
TEST(ComposedOracleTest, ARegisterSetInOneBranchIsUndefinedOnTheOtherPath) {
  const Program p = ProgramOf(
      "input %a .b32 0\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "if %p {\n mov.b32 %r, 9;\n} else {\n add.u32 %r, %r, 1;\n}\n"
      "add.u32 %s, %r, 1;\n"
      "output %s\n");
  EXPECT_EQ(Outputs(p, {3})[0], Defined(10));
  EXPECT_FALSE(Outputs(p, {16})[0].defined);
}

// A branch taken skips to its label; one not taken falls through. A
// guarded branch in a loop's body is judged on each trip.
TEST(ComposedOracleTest, ABranchSkipsToItsLabel) {
  const Program p = ProgramOf(
      "input %a .b32 0\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "mov.b32 %r, 1;\n"
      "@%p bra SKIP;\n"
      "add.u32 %r, %r, 2;\n"
      "SKIP:\n"
      "mov.b32 %i, 0;\n"
      "loop 4 {\n"
      " add.u32 %i, %i, 1;\n"
      " setp.eq.u32 %odd, %i, 3;\n"
      " @%odd bra NEXT;\n"
      " add.u32 %r, %r, 10;\n"
      " NEXT:\n"
      "}\n"
      "bra OVER;\n"
      "add.u32 %r, %r, 1000;\n"
      "OVER:\n"
      "output %r\n");
  EXPECT_EQ(Outputs(p, {3})[0], Defined(1 + 30));
  EXPECT_EQ(Outputs(p, {16})[0], Defined(3 + 30));
}

// Where paths join at a label, a register one of them never set is
// undefined (as after an if), and one both set is defined.
TEST(ComposedOracleTest, ARegisterSetOnlyOnTheSkippedPathIsUndefinedAtTheLabel) {
  const Program p = ProgramOf(
      "input %a .b32 0\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "mov.b32 %s, 7;\n"
      "@%p bra L;\n"
      "mov.b32 %r, 9;\n"
      "L:\n"
      "add.u32 %t, %r, 1;\n"
      "output %t\noutput %s\n");
  EXPECT_FALSE(Outputs(p, {3})[0].defined);
  EXPECT_EQ(Outputs(p, {3})[1], Defined(7));
  EXPECT_EQ(Outputs(p, {16})[0], Defined(10));
}

// Under a guard the spec leaves open both paths go on and join at the
// label: what they both hold stays defined, what differs does not.
TEST(ComposedOracleTest, AnUndefinedBranchGuardJoinsBothPaths) {
  const Program p = ProgramOf(
      "input %a .b32 5\ninput %d .b32 0\n"
      "div.u32 %q, %a, %d;\n"
      "setp.lt.u32 %p, %q, 10;\n"
      "mov.b32 %r, 1;\nmov.b32 %s, 2;\nmov.b32 %u, 6;\n"
      "@%p bra L;\n"
      "mov.b32 %r, 4;\n"
      "mov.b32 %u, 6;\n"
      "L:\n"
      "output %r\noutput %s\noutput %u\n");
  const std::vector<ProgramValue> open = Outputs(p, {5, 0});
  EXPECT_FALSE(open[0].defined);
  EXPECT_EQ(open[1], Defined(2));
  EXPECT_EQ(open[2], Defined(6));
  EXPECT_EQ(Outputs(p, {5, 1})[0], Defined(1));
  EXPECT_EQ(Outputs(p, {50, 1})[0], Defined(4));
}

// A thread that exits stores nothing: no output is judged, and where its
// exit's guard is undefined it may have exited. One whose exit is not taken
// is judged as any other.
TEST(ComposedOracleTest, AThreadThatExitsStoresNothing) {
  const Program p = ProgramOf(
      "input %a .b32 0\ninput %d .b32 1\n"
      "div.u32 %q, %a, %d;\n"
      "setp.lt.u32 %p, %q, 16;\n"
      "mov.b32 %r, 1;\n"
      "loop 2 {\n @%p exit;\n add.u32 %r, %r, 1;\n}\n"
      "output %r\n");
  const ProgramValue exited = Outputs(p, {3, 1})[0];
  EXPECT_FALSE(exited.defined);
  EXPECT_TRUE(exited.exits);
  EXPECT_EQ(Outputs(p, {16, 1})[0], Defined(3));
  EXPECT_TRUE(Outputs(p, {3, 0})[0].exits);
  EXPECT_EQ(OutputsText(p, {&exited, 1}),
            "%r = 0x00000000 (not stored: the thread exits)");
}

// A line that names a program's inputs or outputs names the first 16 and
// counts the rest: 1,001 inputs made one line of 25 KB.
TEST(ComposedOracleTest, ValuesPastSixteenAreCountedNotNamed) {
  std::string text;
  for (int k = 0; k < 20; ++k)
    absl::StrAppend(&text, "input %i", k, " .b32 ", k, "\n");
  absl::StrAppend(&text, "add.u32 %r, %i0, %i19;\noutput %r\n");
  const Program p = ProgramOf(text);
  std::vector<uint64_t> inputs(20);
  for (int k = 0; k < 20; ++k) inputs[k] = k;
  const std::string named = InputsText(p, inputs);
  EXPECT_TRUE(absl::StrContains(named, "%i15 = 0x0000000f and 4 more inputs"))
      << named;
  EXPECT_FALSE(absl::StrContains(named, "%i16")) << named;
  EXPECT_EQ(InputsText(ProgramOf("input %a .b32 1\nadd.u32 %r, %a, 1;\n"
                                 "output %r\n"),
                       std::vector<uint64_t>{1}),
            "%a = 0x00000001");
}

// An exit inside an if whose condition is undefined may run.
TEST(ComposedOracleTest, AnExitUnderAnUndefinedConditionMayRun) {
  const Program p = ProgramOf(
      "input %a .b32 5\ninput %d .b32 0\n"
      "div.u32 %q, %a, %d;\n"
      "setp.lt.u32 %p, %q, 10;\n"
      "mov.b32 %r, 1;\n"
      "if %p {\n exit;\n}\n"
      "output %r\n");
  EXPECT_TRUE(Outputs(p, {5, 0})[0].exits);
  EXPECT_EQ(Outputs(p, {50, 1})[0], Defined(1));
  EXPECT_TRUE(Outputs(p, {5, 1})[0].exits);
}

}  // namespace
}  // namespace ptxdiff
