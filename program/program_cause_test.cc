#include "program/program_cause.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/interrupt.h"
#include "gmock/gmock.h"
#include "isa/spelling.h"
#include "gtest/gtest.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

// The culprit's key of `body` where ptxas stored `claimed` (one output).
std::string KeyOf(const std::string& body, uint64_t claimed) {
  const std::vector<uint64_t> values = {claimed};
  const std::optional<WrongConstant> w =
      WrongConstantCause(ProgramOf(body), values);
  return w ? w->key : "(none)";
}

// bfe.s32 with a field past the top, which ptxas 13.0 takes to be all ones
// whatever `a` is, reached through the shapes a 10-minute campaign filed
// apart (issue 64): an exit, a guarded sub after a compare, a bare label, a
// brev after it. Each one's culprit is the bfe, not the steps that hide it.
TEST(WrongConstantCauseTest, BfePastTheTopThroughSeveralShapesIsOneKey) {
  const uint64_t ptxas = 0xffffffff;  // what ptxas 13.0 stored in each
  EXPECT_EQ(KeyOf("input %in0 .b32 0x0\n"
                  "setp.lt.u32 %p0, 0x0, 0x1;\n"
                  "@!%p0 exit;\n"
                  "bfe.s32 %r6, %in0, 0xff, 0x1;\n"
                  "output %r6\n",
                  ptxas),
            "bfe.s32");
  EXPECT_EQ(KeyOf("mov.b32 %r1, 0x0;\n"
                  "setp.lt.u32 %p3, 0x0, 0x1;\n"
                  "@!%p3 sub.u32 %r1, 0x0, 0x1;\n"
                  "bfe.s32 %r7, %r1, 0x3e, 0x1;\n"
                  "output %r7\n",
                  ptxas),
            "bfe.s32")
      << "the compare explains the value too, but at plain operands";
  EXPECT_EQ(KeyOf("mov.b32 %r0, 0;\n"
                  "L0:\n"
                  "bfe.s32 %r7, %r0, 85, 1;\n"
                  "output %r7\n",
                  ptxas),
            "bfe.s32");
  EXPECT_EQ(KeyOf("input %a .b32 0x0\n"
                  "bfe.s32 %r1, %a, 63, 63;\n"
                  "brev.b32 %r2, %r1;\n"
                  "output %r2\n",
                  ptxas),
            "bfe.s32");
}

constexpr char kBfeLabel[] =
    "mov.b32 %r0, 0;\nL0:\nbfe.s32 %r7, %r0, 85, 1;\noutput %r7\n";

// The search runs the program once per step and value: a 6,000-step case
// took minutes, deaf to Ctrl-C. A stop, or a case past
// kCulpritSearchSteps, gets no culprit.
TEST(WrongConstantCauseTest, NoSearchPastItsStepsOrOnceAStopCame) {
  ASSERT_EQ(KeyOf(kBfeLabel, 0xffffffff), "bfe.s32");
  Interrupt();
  const std::string stopped = KeyOf(kBfeLabel, 0xffffffff);
  ClearInterrupt();
  EXPECT_EQ(stopped, "(none)");
  std::string padded = "mov.b32 %r0, 0;\n";
  for (size_t k = 0; k < kCulpritSearchSteps; ++k)
    absl::StrAppend(&padded, "add.u32 %x", k, ", %r0, 1;\n");
  absl::StrAppend(&padded, "L0:\nbfe.s32 %r7, %r0, 85, 1;\noutput %r7\n");
  EXPECT_EQ(KeyOf(padded, 0xffffffff), "(none)");
}

TEST(WrongConstantCauseTest, SaysWhatWasAssumedInWords) {
  const std::vector<uint64_t> claimed = {0xffffffff};
  const std::optional<WrongConstant> w = WrongConstantCause(
      ProgramOf("mov.b32 %r0, 0;\nL0:\nbfe.s32 %r7, %r0, 85, 1;\n"
                "output %r7\n"),
      claimed);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->step, 2u);
  EXPECT_EQ(w->trigger, "ge64_field-past-top") << "a position of 85";
  EXPECT_EQ(w->assumed, 0xffffffffu);
  EXPECT_EQ(w->oracle.bits, 0u);
  EXPECT_EQ(w->words,
            "ptxas's constant is what the program gives if `bfe.s32` of 0x0, "
            "0x55, 0x1 (ge64_field-past-top) were 0xffffffff (the oracle: "
            "0x0)");
}

// `abs(a) < 0` claimed false for every a: the culprit is abs at INT_MIN
// (taken to be non-negative), not the compare, though a wrong compare
// would explain the value too.
TEST(WrongConstantCauseTest, AbsAtIntMinIsTheCulpritOfTheCompare) {
  const std::vector<uint64_t> claimed = {0};
  const std::optional<WrongConstant> w = WrongConstantCause(
      ProgramOf("input %a .b32 0x80000000\n"
                "abs.s32 %r1, %a;\n"
                "setp.lt.s32 %p, %r1, 0;\n"
                "output %p\n"),
      claimed);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "abs.s32");
  EXPECT_EQ(w->trigger, "min");
  // The same compare through executed code: its result selected and added
  // to a second input, which ptxas 13.0's code stores (0x5, where the
  // oracle gives 0x6) with no departure. The same key.
  EXPECT_EQ(KeyOf("input %a .b32 0x80000000\n"
                  "input %b .b32 0x5\n"
                  "abs.s32 %r0, %a;\n"
                  "setp.lt.s32 %p, %r0, 0;\n"
                  "selp.b32 %r1, 1, 0, %p;\n"
                  "add.u32 %r2, %r1, %b;\n"
                  "output %r2\n",
                  5),
            "abs.s32");
}

// m016's slct through a register, the shape the minimizer cannot make one
// instruction (ptxas folds the immediate form right): its key is the
// variant's, which a tuple entry of slct.s32.s32 is grouped under.
TEST(WrongConstantCauseTest, SlctThroughAMoveIsSlct) {
  EXPECT_EQ(KeyOf("mov.b32 %r1, 0x7fffffff;\n"
                  "slct.s32.s32 %r1, 0x0, 0x1, %r1;\n"
                  "output %r1\n",
                  1),
            "slct.s32.s32");
}

// found-branch-max-neg: a branch on `%in0 < 1` over `max.u32` and
// `neg.s32`, claimed INT_MAX where the oracle gives INT_MAX negated. The
// compare explains the value too (the branch taken skips both steps), but
// it only steers: the culprit is the negation.
TEST(WrongConstantCauseTest, AStepThatOnlySteersIsNotTheCulprit) {
  const std::vector<uint64_t> claimed = {0x7fffffff};
  auto p = TestdataProgram("found-branch-max-neg.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::optional<WrongConstant> w = WrongConstantCause(*p, claimed);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "neg.s32") << w->words;
  // Where only a compare explains it (`-|a| < INT_MIN`), the compare, and
  // the words say that what ptxas took its operands to be is not told.
  const std::vector<uint64_t> one = {1};
  const std::optional<WrongConstant> compare =
      WrongConstantCause(ProgramOf("input %a .b32 0x0\n"
                                   "abs.s32 %r1, %a;\n"
                                   "neg.s32 %r2, %r1;\n"
                                   "setp.lt.s32 %p, %r2, 0x80000000;\n"
                                   "output %p\n"),
                         one);
  ASSERT_TRUE(compare.has_value());
  EXPECT_EQ(compare->key, "setp.lt.s32");
  EXPECT_THAT(compare->words,
              testing::HasSubstr("no one value of a step before it explains "
                                 "it, so the key is the compare"));
  EXPECT_THAT(w->words, testing::Not(testing::HasSubstr("the key is the "
                                                        "compare")));
}

// No key where no instruction explains the value: one only moved there,
// and a claim the oracle agrees with has nothing to explain.
TEST(WrongConstantCauseTest, NoKeyWhereNoOneInstructionExplainsIt) {
  EXPECT_EQ(KeyOf("mov.b32 %r, 5;\noutput %r\n", 6), "(none)");
  EXPECT_EQ(KeyOf("input %a .b32 3\nadd.u32 %r, %a, 1;\noutput %r\n", 4),
            "(none)");
}

// A step in a loop is a culprit too: m009's negation, in its loop, is
// what ptxas 13.0 got wrong (it folds the program to INT_MAX).
TEST(WrongConstantCauseTest, AStepInALoopIsACulprit) {
  const std::vector<uint64_t> claimed = {0x7fffffff};
  auto p = TestdataProgram("fuzzx-m009.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  const std::optional<WrongConstant> w = WrongConstantCause(*p, claimed);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "neg.s32");
  EXPECT_EQ(w->step, 4u) << "the neg in the second loop";
  EXPECT_EQ(w->tuple.operands.v[0], 0x7fffffffu);
  // And in an if: the branch over max and neg as an if, which ptxas 13.0
  // claims INT_MAX for too.
  EXPECT_EQ(KeyOf("input %in0 .b32 0x0\n"
                  "mov.b32 %r3, 0x7fffffff;\n"
                  "mov.b32 %r4, 0x0;\n"
                  "setp.lt.u32 %p5, %in0, 0x1;\n"
                  "if %p5 {\n"
                  "  max.u32 %r4, %r4, %r3;\n"
                  "  neg.s32 %r3, %r4;\n"
                  "}\n"
                  "output %r3\n",
                  0x7fffffff),
            "neg.s32");
}

// INT_MAX negated after an empty loop or behind a branch, which ptxas
// 13.0 takes to be INT_MAX (docs/program-causes.md has the runs that show it
// needs INT_MAX, and the loop or the branch): the same bug whether the
// negation is a `neg` (m009, the branch over max and neg, a neg then shl
// or max) or the subtrahend of a `sub` (m011, m012, whose constants are
// a + INT_MAX), so one key, neg.s32.
TEST(WrongConstantCauseTest, IntMaxNegatedThroughLoopsIsOneKey) {
  const auto testdata_key = [](const std::string& name, uint64_t claimed) {
    auto p = TestdataProgram(name);
    EXPECT_TRUE(p.ok()) << p.status();
    const std::vector<uint64_t> values = {claimed};
    const std::optional<WrongConstant> w =
        p.ok() ? WrongConstantCause(*p, values) : std::nullopt;
    return w ? w->key : "(none)";
  };
  // What ptxas 13.0 (sm_90) folded or claimed each to.
  EXPECT_EQ(testdata_key("fuzzx-m009.ptxprog", 0x7fffffff), "neg.s32");
  EXPECT_EQ(testdata_key("fuzzx-m011.ptxprog", 0x7ffffffe), "neg.s32");
  EXPECT_EQ(testdata_key("fuzzx-m012.ptxprog", 0x800001ad), "neg.s32");
  EXPECT_EQ(testdata_key("found-branch-max-neg.ptxprog", 0x7fffffff),
            "neg.s32");
  const std::string int_max_after_loops =
      "mov.b32 %r0, 0;\n"
      "loop 1 {\n"
      "}\n"
      "loop 4 {\n"
      "  mov.b32 %r0, 0x7fffffff;\n"
      "}\n";
  EXPECT_EQ(KeyOf(int_max_after_loops +
                      "sub.u32 %r3, 0x1, %r0;\noutput %r3\n",
                  0x80000000),
            "neg.s32");
  EXPECT_EQ(KeyOf(int_max_after_loops +
                      "neg.s32 %r1, %r0;\nshl.b32 %r3, %r1, 1;\n"
                      "output %r3\n",
                  0xfffffffe),
            "neg.s32");
  EXPECT_EQ(KeyOf(int_max_after_loops +
                      "neg.s32 %r1, %r0;\nmax.s32 %r3, %r1, 0x80000000;\n"
                      "output %r3\n",
                  0x7fffffff),
            "neg.s32");
  // A sub wrong some other way is the sub's.
  EXPECT_EQ(KeyOf(int_max_after_loops + "sub.u32 %r3, 0x1, %r0;\noutput %r3\n",
                  0),
            "sub.u32");
}

// The low bits of a square of a value with k trailing zeros, which ptxas
// 13.0 takes to have bit 2k mod 32 set (m025: 0x4, 2k = 34; a k of 21:
// 0x400; m037's 23: 0x4000): one bug whether the square is a mul.lo or a
// mad.lo of x, x.
TEST(WrongConstantCauseTest, TheLowBitsOfASquareAreOneKey) {
  auto m025 = TestdataProgram("fuzzx-m025.ptxprog");
  ASSERT_TRUE(m025.ok()) << m025.status();
  const std::vector<uint64_t> four = {4};
  const std::optional<WrongConstant> w = WrongConstantCause(*m025, four);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "mul.lo.u32");
  EXPECT_EQ(KeyOf("input %a .b32 0x0\n"
                  "or.b32 %r1, 0x1f, %a;\n"
                  "shl.b32 %r2, %r1, 0x15;\n"
                  "mul.lo.u32 %r3, %r2, %r2;\n"
                  "and.b32 %r4, %r3, 0x3fff;\n"
                  "output %r4\n",
                  0x400),
            "mul.lo.u32");
  // A last step's wrong value is its own.
  EXPECT_EQ(KeyOf("input %a .b32 0x3\n"
                  "add.u32 %r1, %a, 1;\n"
                  "shl.b32 %r2, %r1, 4;\n"
                  "output %r2\n",
                  0x12345),
            "shl.b32");
  const std::vector<uint64_t> bit14 = {0x4000};
  const std::optional<WrongConstant> mad = WrongConstantCause(
      ProgramOf("bmsk.clamp.b32 %r10, 0x0, 0x0;\n"
                "bfi.b32 %r5, %r10, 0x800000, 0x1c, 0x1a;\n"
                "mad.lo.u32 %r18, %r5, %r5, 0x0;\n"
                "and.b32 %r7, %r18, 0x5b57;\n"
                "output %r7\n"),
      bit14);
  ASSERT_TRUE(mad.has_value());
  EXPECT_EQ(mad->key, "mul.lo.u32");
  EXPECT_THAT(mad->words, testing::HasSubstr("`mad.lo.u32` of 0x800000, "
                                             "0x800000, 0x0"));
  EXPECT_THAT(mad->words, testing::HasSubstr("a square"));
  // A mad.lo of two values is no square: its own.
  EXPECT_EQ(KeyOf("input %a .b32 0x0\n"
                  "or.b32 %r1, 0x1f, %a;\n"
                  "shl.b32 %r2, %r1, 21;\n"
                  "mad.lo.u32 %r3, %r2, 0x3, 0x0;\n"
                  "and.b32 %r4, %r3, 0x3fff;\n"
                  "output %r4\n",
                  0x400),
            "mad.lo.u32");
}

// A shl after the square, which ptxas 13.0 claims 0x40000000 for (the
// square's bit 10 moved up by 20): no plain value of the square gives it,
// and the shl explains it by being given ptxas's constant, as any step that
// writes the output would. Values alone cannot tell whether the shl or the
// square is wrong (an `and` before an `xor` whose low bit a tool flips
// looks the same: program_cause_frames_test), so the shl is run alone on
// the backend: where it gives the oracle's value there, the square one bit
// off is the culprit (issue 64).
Program SquareReadByShl() {
  return ProgramOf("input %a .b32 0x0\n"
                   "or.b32 %r1, 0x1f, %a;\n"
                   "shl.b32 %r2, %r1, 21;\n"
                   "mul.lo.u32 %r3, %r2, %r2;\n"
                   "shl.b32 %r4, %r3, 20;\n"
                   "output %r4\n");
}

TEST(WrongConstantCauseTest, AStepRightAloneYieldsToTheStepBeforeItOneBitOff) {
  const std::vector<uint64_t> moved = {0x40000000};
  std::vector<std::string> asked;
  const AloneCheck right = [&asked](const Tuple& t) -> std::optional<bool> {
    asked.push_back(absl::StrFormat("%s 0x%x 0x%x", Spell(t.variant),
                                    t.operands.v[0], t.operands.v[1]));
    return true;
  };
  const std::optional<WrongConstant> w =
      WrongConstantCause(SquareReadByShl(), moved, Reading::kSpec, &right);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "mul.lo.u32") << w->words;
  EXPECT_EQ(w->step, 2u);
  EXPECT_EQ(w->assumed, 0x400u) << "the square's bit 10";
  EXPECT_THAT(asked, testing::ElementsAre("shl.b32 0x0 0x14"))
      << "the shl alone, at the square the oracle gives";
  EXPECT_THAT(w->words,
              testing::HasSubstr("`shl.b32` of 0x0, 0x14 alone gives the "
                                 "oracle's 0x0 on the backend"));
}

TEST(WrongConstantCauseTest, AStepWrongAloneOrNotJudgedKeepsItsKey) {
  const std::vector<uint64_t> moved = {0x40000000};
  for (const std::optional<bool> verdict : {std::optional<bool>(false),
                                            std::optional<bool>()}) {
    const AloneCheck alone = [verdict](const Tuple&) { return verdict; };
    const std::optional<WrongConstant> w =
        WrongConstantCause(SquareReadByShl(), moved, Reading::kSpec, &alone);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->key, "shl.b32") << w->words;
    EXPECT_EQ(w->step, 3u);
  }
  // Without a backend to ask, too.
  const std::optional<WrongConstant> unasked =
      WrongConstantCause(SquareReadByShl(), moved);
  ASSERT_TRUE(unasked.has_value());
  EXPECT_EQ(unasked->key, "shl.b32");
}

TEST(WrongConstantCauseTest, AStepRightAloneWithNothingBeforeItOneBitOffSaysSo) {
  // 0x12345 is no shift by 4 of anything: no step before explains it.
  const std::vector<uint64_t> claimed = {0x12345};
  const AloneCheck right = [](const Tuple&) { return std::optional(true); };
  const std::optional<WrongConstant> w = WrongConstantCause(
      ProgramOf("input %a .b32 0x3\n"
                "add.u32 %r1, %a, 1;\n"
                "shl.b32 %r2, %r1, 4;\n"
                "output %r2\n"),
      claimed, Reading::kSpec, &right);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "shl.b32");
  EXPECT_THAT(w->words, testing::HasSubstr("not one shown wrong"));
}

TEST(WrongConstantCauseTest, ATellingCulpritIsNotAskedAbout) {
  // bfe.s32 with a field past the top tells by its operands.
  const std::vector<uint64_t> ones = {0xffffffff};
  int asked = 0;
  const AloneCheck alone = [&asked](const Tuple&) {
    ++asked;
    return std::optional(true);
  };
  const std::optional<WrongConstant> w = WrongConstantCause(
      ProgramOf("input %in0 .b32 0x0\n"
                "bfe.s32 %r6, %in0, 0xff, 0x1;\n"
                "output %r6\n"),
      ones, Reading::kSpec, &alone);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->key, "bfe.s32");
  EXPECT_EQ(asked, 0);
}

TEST(DepartsAtAConstantTest, AConstantWrittenFromNoRegister) {
  EXPECT_TRUE(DepartsAtAConstant(
      "executed code that departs first at `MOV R, 0xffffffff`"));
  EXPECT_TRUE(
      DepartsAtAConstant("executed code that departs first at `HFMA2.MMA R, "
                         "-RZ, RZ, 0, 5.9604644775390625e-08`"));
  EXPECT_TRUE(DepartsAtAConstant(
      "executed code that departs first at `IMAD.MOV.U32 R, RZ, RZ, 0x1`"));
  EXPECT_FALSE(DepartsAtAConstant(
      "executed code that departs first at `SEL R, R, 0xffff8000, !P`"));
  EXPECT_FALSE(DepartsAtAConstant(
      "executed code that departs first at `LOP3.LUT R, R, 0xffff, RZ, "
      "0xc0, !PT`"));
  EXPECT_FALSE(DepartsAtAConstant(
      "executed code that departs first at `@P MOV R, 0x1`"))
      << "a predicated move chooses between values";
  EXPECT_FALSE(DepartsAtAConstant("no departure"));
}

}  // namespace
}  // namespace ptxdiff
