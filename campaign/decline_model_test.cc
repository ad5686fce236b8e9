#include "campaign/decline_model.h"

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

const TupleResult kValue{.bits = 1};
const TupleResult kNotFolded{.kind = ResultKind::kDecline,
                             .code = DeclineCode::kNotEvaluable};
const TupleResult kUnsupported{.kind = ResultKind::kDecline,
                               .code = DeclineCode::kUnsupportedVariant};

uint32_t ClassOf(const char* spelling, Operands ops) {
  const Tuple t{*ParseVariant(spelling), ops};
  return DeclineClass(t, Evaluate(t.variant, t.operands));
}

void Learn(DeclineModel& m, int v, uint32_t cls, const TupleResult& answer) {
  m.Learn(v, answer, [cls] { return cls; });
}
bool Worth(DeclineModel& m, int v, uint32_t cls) {
  return m.Worth(v, [cls] { return cls; });
}

TEST(DeclineModelTest, ClassesSayWhichOperandsAreZeroOrUnitAndIdentity) {
  // div.u32: a divisor of 0 vs 1 vs 7 are three classes (ptxas folds the first
  // two).
  EXPECT_NE(ClassOf("div.u32", {{7, 0}}), ClassOf("div.u32", {{7, 1}}));
  EXPECT_NE(ClassOf("div.u32", {{7, 1}}), ClassOf("div.u32", {{7, 3}}));
  EXPECT_EQ(ClassOf("div.u32", {{7, 3}}), ClassOf("div.u32", {{9, 5}}));
  // a / 1 == a: the identity bit.
  EXPECT_TRUE(ClassOf("div.u32", {{7, 1}}) & (1u << 8));
}

// A result the spec leaves open is one class per variant, whatever the
// operands: a tool that crashed on one division by zero is not sent the
// next in another operand shape (each cost a crash and its isolation).
TEST(DeclineModelTest, TuplesTheSpecLeavesOpenAreOneClassPerVariant) {
  EXPECT_EQ(ClassOf("div.u32", {{7, 0}}), kUndefinedResultClass);
  EXPECT_EQ(ClassOf("div.u32", {{0, 0}}), ClassOf("div.u32", {{7, 0}}));
  EXPECT_EQ(ClassOf("div.u32", {{0xffffffff, 0}}),
            ClassOf("div.u32", {{1, 0}}));
  EXPECT_NE(ClassOf("div.u32", {{7, 3}}), kUndefinedResultClass);
  DeclineModel m;
  const int div = VariantIndex(*ParseVariant("div.u32"));
  m.Quarantine(div, [] { return ClassOf("div.u32", {{7, 0}}); });
  EXPECT_FALSE(Worth(m, div, ClassOf("div.u32", {{0xffffffff, 0}})));
  EXPECT_TRUE(Worth(m, div, ClassOf("div.u32", {{7, 3}})));
}

// A tool that reads a 64-bit immediate as its low 32 bits divides by zero
// where the divisor's low half is 0: that crash quarantines its own class,
// not the variant's ordinary tuples. A runtime source (the tool reads it
// whole) and a 32-bit source are not of the class.
TEST(DeclineModelTest, AWideImmediateWithAZeroLowHalfIsAClassOfItsOwn) {
  const uint32_t low_half_zero = ClassOf("div.u64", {{7, 0x100000000}});
  EXPECT_TRUE(low_half_zero & kZeroLowHalfImmediate);
  EXPECT_EQ(low_half_zero, ClassOf("div.u64", {{9, 0x8000000000000000}}));
  EXPECT_EQ(ClassOf("div.u64", {{7, 0x100000001}}),
            ClassOf("div.u64", {{7, 3}}));
  EXPECT_EQ(ClassOf("div.u64", {{7, 0}}), kUndefinedResultClass);
  Tuple runtime{*ParseVariant("div.u64"), {{7, 0x100000000}}, 0b10};
  EXPECT_FALSE(
      DeclineClass(runtime, Evaluate(runtime.variant, runtime.operands)) &
      kZeroLowHalfImmediate);
  // shl.b64's shift amount is 32 bits wide.
  EXPECT_FALSE(ClassOf("shl.b64", {{5, 0x100000000}}) & kZeroLowHalfImmediate);
  DeclineModel m;
  const int div = VariantIndex(*ParseVariant("div.u64"));
  m.Quarantine(div, [&] { return low_half_zero; });
  EXPECT_FALSE(Worth(m, div, ClassOf("div.u64", {{5, 0x300000000}})));
  EXPECT_TRUE(Worth(m, div, ClassOf("div.u64", {{7, 3}})));
}

// ptxas folds a carry chain only when no carry passes along it, and SIMD
// video only with the default selectors: each is a class of its own.
TEST(DeclineModelTest,
     ClassesSayWhetherACarryComesOutAndTheSelectorIsTheDefault) {
  EXPECT_NE(ClassOf("add.cc.u32", {{0xfffffff0, 0x20}}),
            ClassOf("add.cc.u32", {{0x10, 0x20}}));
  EXPECT_EQ(ClassOf("add.cc.u32", {{0x10, 0x20}}),
            ClassOf("add.cc.u32", {{0x30, 0x40}}));
  const char* vadd2 = "vadd2.u32.u32.u32";
  EXPECT_NE(ClassOf(vadd2, {{5, 6, 7, 0x3210}}),
            ClassOf(vadd2, {{5, 6, 7, 0x1032}}));
  EXPECT_EQ(ClassOf(vadd2, {{5, 6, 7, 0x1032}}),
            ClassOf(vadd2, {{5, 6, 7, 0x2301}}));
  const char* vadd4 = "vadd4.u32.u32.u32";
  EXPECT_NE(ClassOf(vadd4, {{5, 6, 7, 0x76543210}}),
            ClassOf(vadd4, {{5, 6, 7, 0x76543201}}));
}

TEST(DeclineModelTest,
     AClassDeclinedAlmostAlwaysIsMostlySkippedButNotForgotten) {
  DeclineModel m;
  const int div = VariantIndex(*ParseVariant("div.u32"));
  const uint32_t folds = ClassOf("div.u32", {{7, 1}}),
                 never = ClassOf("div.u32", {{7, 3}});
  for (int i = 0; i < DeclineModel::kMinAnswers; ++i) {
    Learn(m, div, never, kNotFolded);
    Learn(m, div, folds, kValue);
    Learn(m, div, folds, kValue);  // the variant as a whole folds often
  }
  // Probed at the 256th, 512th, 1024th and 2048th call: a generator that
  // keeps offering the class does not keep the backend busy with it.
  int sent = 0;
  const int calls = 10 * DeclineModel::kKeepOneIn;
  for (int i = 0; i < calls; ++i) sent += Worth(m, div, never);
  EXPECT_EQ(sent, 4);
  EXPECT_EQ(m.skipped(), calls - sent);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(Worth(m, div, folds));
  EXPECT_FALSE(m.Unsupported(div));
}

TEST(DeclineModelTest, AVariantThatAlmostNeverFoldsIsLearnedAsAWhole) {
  DeclineModel m;
  const int v = VariantIndex(*ParseVariant("min.u16x2"));
  for (int i = 0; i < DeclineModel::kMinVariantAnswers; ++i)
    Learn(m, v, i % 300, kNotFolded);
  // A class never seen before is skipped too.
  int sent = 0;
  for (int i = 0; i < 10 * DeclineModel::kKeepOneIn; ++i)
    sent += Worth(m, v, 511);
  EXPECT_EQ(sent, 4);
}

// In a variant that declines most tuples, a class not yet learned has at
// most kMinAnswers tuples in flight: more only as answers come back.
TEST(DeclineModelTest,
     AnUnlearnedClassOfAMostlyDeclinedVariantIsProbedAFewAtATime) {
  DeclineModel m;
  const int v = VariantIndex(*ParseVariant("div.s32"));
  const uint32_t learned = ClassOf("div.s32", {{7, 3}}),
                 fresh = ClassOf("div.s32", {{7, 1}});
  for (int i = 0; i < DeclineModel::kMinVariantAnswers; ++i) {
    Learn(m, v, learned, i % 4 == 0 ? kValue : kNotFolded);  // 3 in 4 declined
  }
  int sent = 0;
  for (int i = 0; i < 1000; ++i) sent += Worth(m, v, fresh);
  EXPECT_EQ(sent, DeclineModel::kMinAnswers);
  Learn(m, v, fresh, kValue);  // one answer back: room for one more
  sent = 0;
  for (int i = 0; i < 1000; ++i) sent += Worth(m, v, fresh);
  EXPECT_EQ(sent, 1);
  for (int i = 0; i < DeclineModel::kMinAnswers; ++i)
    Learn(m, v, fresh, kValue);
  EXPECT_TRUE(Worth(m, v, fresh));  // learned, and it folds: always worth it
}

// Until a variant declines something, its classes are not counted (nor
// their classes computed): the rates start at its first decline.
TEST(DeclineModelTest, AVariantsClassesAreCountedFromItsFirstDeclineOn) {
  DeclineModel m;
  const int v = VariantIndex(*ParseVariant("div.u32"));
  const uint32_t cls = ClassOf("div.u32", {{7, 3}});
  int asked = 0;
  for (int i = 0; i < 100; ++i)
    m.Learn(v, kValue, [&] { return ++asked, cls; });
  EXPECT_EQ(asked, 0);
  for (int i = 0; i < DeclineModel::kMinAnswers; ++i)
    Learn(m, v, cls, kNotFolded);
  // Four of four declined since the first: declining, though 100 folded before.
  int sent = 0;
  for (int i = 0; i < DeclineModel::kKeepOneIn - 1; ++i)
    sent += Worth(m, v, cls);
  EXPECT_EQ(sent, 0);
  // Answers after the first decline count with the class.
  for (int i = 0; i < 4 * DeclineModel::kMinAnswers; ++i)
    Learn(m, v, cls, kValue);
  EXPECT_TRUE(Worth(m, v, cls));
}

TEST(DeclineModelTest, AVariantOnlyEverUnsupportedIsNotSent) {
  DeclineModel m;
  const int v = VariantIndex(*ParseVariant("vadd.u32.u32.u32"));
  EXPECT_TRUE(Worth(m, v, 0));
  for (int i = 0; i < 4; ++i) Learn(m, v, i, kUnsupported);
  EXPECT_TRUE(m.Unsupported(v));
  EXPECT_FALSE(Worth(m, v, 99));
  Learn(m, v, 0, kValue);  // one real answer: it is supported after all
  EXPECT_FALSE(m.Unsupported(v));
}

// A tool that aborts on every `sad` faults in each of its hundreds of
// classes: after kMinVariantFaults faults in two classes, with no value
// answered, the variant is probed as a whole, as a declining class is.
TEST(DeclineModelTest, AVariantThatFaultsOnEveryTupleIsProbedAsAWhole) {
  DeclineModel m;
  const int sad = VariantIndex(*ParseVariant("sad.u32"));
  const uint32_t first = ClassOf("sad.u32", {{7, 3, 5}}),
                 second = ClassOf("sad.u32", {{0, 3, 5}}),
                 fresh = ClassOf("sad.u32", {{1, 0, 0}});
  ASSERT_NE(first, second);
  ASSERT_NE(first, fresh);
  ASSERT_NE(second, fresh);
  for (int i = 0; i < DeclineModel::kMinVariantFaults - 1; ++i)
    m.Quarantine(sad, [&] { return first; });
  EXPECT_FALSE(m.FaultsOnEverything(sad));  // one class only
  EXPECT_TRUE(Worth(m, sad, fresh));
  m.Quarantine(sad, [&] { return second; });
  EXPECT_TRUE(m.FaultsOnEverything(sad));
  // A class never tried is skipped too: probed at the 256th, 512th, 1024th
  // and 2048th call, whatever the classes offered.
  int sent = 0;
  for (int i = 0; i < 10 * DeclineModel::kKeepOneIn; ++i)
    sent += Worth(m, sad, i % 2 ? fresh : first + i);
  EXPECT_EQ(sent, 4);
  // One value answered: the variant is not all faults after all, and only
  // its quarantined classes stay skipped.
  Learn(m, sad, fresh, kValue);
  EXPECT_FALSE(m.FaultsOnEverything(sad));
  EXPECT_TRUE(Worth(m, sad, fresh));
  EXPECT_FALSE(Worth(m, sad, first));
}

// A variant that faults only on some inputs (a division by zero) answers
// values too: its faults never make it skipped as a whole.
TEST(DeclineModelTest, AVariantThatAlsoAnswersValuesIsNotSkippedAsAWhole) {
  DeclineModel m;
  const int div = VariantIndex(*ParseVariant("div.u32"));
  Learn(m, div, ClassOf("div.u32", {{7, 3}}), kValue);
  for (int i = 0; i < 2 * DeclineModel::kMinVariantFaults; ++i)
    m.Quarantine(div, [&] {
      return ClassOf("div.u32", {{7, uint64_t(i % 2)}});
    });
  EXPECT_FALSE(m.FaultsOnEverything(div));
  EXPECT_TRUE(Worth(m, div, ClassOf("div.u32", {{9, 5}})));
}

}  // namespace
}  // namespace ptxdiff
