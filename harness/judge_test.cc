#include "harness/judge.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

Tuple T(absl::string_view spelling, Operands ops) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return {v.value_or(Variant{}), ops};
}

TupleResult Value(uint64_t bits, bool carry = false) {
  return {.kind = ResultKind::kValue, .bits = bits, .carry = carry};
}

TEST(JudgeTest, AValueIsJudgedOnItsBits) {
  const Tuple add = T("add.s32", {{1, 2}});
  EXPECT_EQ(JudgeTuple(add, Value(3)).verdict, Verdict::kAgree);
  const Judgement wrong = JudgeTuple(add, Value(4));
  EXPECT_EQ(wrong.verdict, Verdict::kMismatch);
  EXPECT_EQ(wrong.oracle.bits, 3u);
  EXPECT_EQ(wrong.backend_bits, 4u);
}

// The carry out is part of the answer of a `.cc` variant only: the protocol
// cannot tell a plain variant's flag apart from noise.
TEST(JudgeTest, TheCarryCountsOnlyWhereTheVariantWritesIt) {
  const Tuple cc = T("add.cc.u32", {{0xffffffff, 1}});
  EXPECT_EQ(JudgeTuple(cc, Value(0, /*carry=*/true)).verdict, Verdict::kAgree);
  EXPECT_EQ(JudgeTuple(cc, Value(0, /*carry=*/false)).verdict,
            Verdict::kMismatch);
  const Tuple plain = T("add.u32", {{0xffffffff, 1}});
  const Judgement j = JudgeTuple(plain, Value(0, /*carry=*/true));
  EXPECT_EQ(j.verdict, Verdict::kAgree);
  EXPECT_FALSE(j.backend_carry);
}

// A decline is never a finding, a fault always is (a crash on a division by
// zero is a crash, though the spec leaves the value open), and a value where
// the spec leaves the result open is never compared.
TEST(JudgeTest, DeclinesFaultsAndOpenResults) {
  const Tuple by_zero = T("div.u32", {{7, 0}});
  EXPECT_EQ(JudgeTuple(by_zero, {.kind = ResultKind::kDecline}).verdict,
            Verdict::kDeclined);
  EXPECT_EQ(JudgeTuple(by_zero,
                       {.kind = ResultKind::kFault, .fault = CaseFault::kCrash})
                .verdict,
            Verdict::kFault);
  EXPECT_EQ(JudgeTuple(by_zero, Value(0x12345678)).verdict,
            Verdict::kUnspecified);
  EXPECT_EQ(JudgeTuple(T("add.s32", {{1, 2}}), {.kind = ResultKind::kDecline})
                .verdict,
            Verdict::kDeclined);
}

// 64-bit bfe past the top (the checked-in ptxas entry): the spec gives 0,
// NVIDIA hardware uses the whole 32-bit position and length. Whichever
// reading is judged against, the other's value is `other-reading`, naming
// the erratum, and any third value a mismatch.
TEST(JudgeTest, TheOtherReadingsValueIsNotABug) {
  const Tuple bfe = T("bfe.u64", {{0x0401010100000000, 0x18, 0x100}});
  const uint64_t spec = 0, hardware = 0x0000000401010100;
  const Judgement under_spec = JudgeTuple(bfe, Value(hardware), Reading::kSpec);
  EXPECT_EQ(under_spec.verdict, Verdict::kOtherReading);
  ASSERT_NE(under_spec.erratum, nullptr);
  EXPECT_EQ(std::string(under_spec.erratum->id), "bfe-bfi-64-unmasked");
  EXPECT_EQ(JudgeTuple(bfe, Value(spec), Reading::kSpec).verdict,
            Verdict::kAgree);

  EXPECT_EQ(JudgeTuple(bfe, Value(hardware), Reading::kHardware).verdict,
            Verdict::kAgree);
  EXPECT_EQ(JudgeTuple(bfe, Value(spec), Reading::kHardware).verdict,
            Verdict::kOtherReading);
  EXPECT_EQ(JudgeTuple(bfe, Value(7), Reading::kSpec).verdict,
            Verdict::kMismatch);
  EXPECT_EQ(JudgeTuple(bfe, Value(7), Reading::kHardware).verdict,
            Verdict::kMismatch);
}

TEST(JudgeCountsTest, WhatWasTestedLeavesOutDeclinesAndFaultyBatches) {
  JudgeCounts c;
  for (Verdict v : {Verdict::kAgree, Verdict::kAgree, Verdict::kMismatch,
                    Verdict::kDeclined, Verdict::kUnspecified,
                    Verdict::kOtherReading, Verdict::kFault}) {
    c.Count(v);
  }
  c.tuples = 10, c.faulty_batches = 1;  // 3 tuples in a batch that faulted
  EXPECT_EQ(c.judged(), 7);
  EXPECT_EQ(c.tested(), 6);
  JudgeCounts sum = c;
  sum += c;
  EXPECT_EQ(sum.tuples, 20);
  EXPECT_EQ(sum.agreed, 4);
  EXPECT_EQ(sum.faulted, 2);
  EXPECT_EQ(sum.faulty_batches, 2);
  EXPECT_EQ(sum.tested(), 12);
}

TEST(DeclineReasonsTest, CountedByFirstLineAndCapped) {
  DeclineReasons reasons;
  EXPECT_EQ(reasons.Top(), (std::pair<std::string, int64_t>{"", 0}));
  reasons.Add("not folded\nthe tool's output, which varies", 3);
  reasons.Add("not folded\nother output", 2);
  reasons.Add("unsupported", 5);
  EXPECT_EQ(reasons.Top(),
            (std::pair<std::string, int64_t>{"not folded", 5}));  // tie: sorted
  for (size_t i = 0; i < DeclineReasons::kMaxReasons + 10; ++i) {
    reasons.Add(absl::StrCat("reason ", i), 100);
  }
  reasons.Add("reason 0", 1);  // kept (among the first kMaxReasons), so counted
  EXPECT_EQ(reasons.Top(), (std::pair<std::string, int64_t>{"reason 0", 101}));
}

TEST(NothingTestedErrorTest, SaysWhyNothingWasTested) {
  JudgeCounts some;
  some.tuples = 2, some.agreed = 1, some.declined = 1;
  EXPECT_EQ(NothingTestedError(some, "x", 1), "");
  // A tuple the spec leaves open was still tested.
  JudgeCounts open;
  open.tuples = 65, open.faulty_batches = 1, open.unspecified = 1;
  EXPECT_EQ(NothingTestedError(open, "", 0), "");

  EXPECT_EQ(NothingTestedError(JudgeCounts{}, "", 0),
            "nothing was tested: no tuple came back from the backend (none "
            "was sent, or its first batches were still running when the run "
            "ended)");

  JudgeCounts declined;
  declined.tuples = declined.declined = 272;
  EXPECT_EQ(NothingTestedError(declined, "not folded\ndetail", 200),
            "nothing was tested: the backend declined all 272 tuples sent "
            "(most often, 200 "
            "tuples: not folded)");

  JudgeCounts faulty;
  faulty.tuples = 64, faulty.faulty_batches = 2;
  EXPECT_THAT(
      NothingTestedError(faulty, "", 0),
      HasSubstr("every batch sent faulted the worker: 2 batches (64 tuples)"));

  JudgeCounts both = faulty;
  both.tuples += 8, both.declined = 8;
  EXPECT_THAT(
      NothingTestedError(both, "unsupported", 8),
      HasSubstr(
          "the backend declined 8 tuples and 2 batches (64 tuples) faulted the "
          "worker (most often, 8 tuples: unsupported)"));
}

}  // namespace
}  // namespace ptxdiff
