#include "harness/variant_comparison.h"

#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

Variant V(const char* spelling) { return *ParseVariant(spelling); }

// PTX gives 0 once the amount reaches the width; vISA takes it modulo 32
// (UD destination): they agree below 32 and differ from 32 on.
TEST(VariantComparisonTest, PtxShlAndVisaShlDifferExactlyFromAmount32On) {
  auto c = CompareVariants(V("shl.b32"), V("visa.shl.ud.ud.ud"), 4096, 1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tuples, 4096);
  EXPECT_EQ(c->agree + c->differ + c->unspecified, c->tuples);
  EXPECT_GT(c->differ, 0);
  EXPECT_EQ(c->compared_bits, 32);
  ASSERT_FALSE(c->examples.empty());
  for (const Operands& ops : c->examples) {
    EXPECT_GE(ops.v[1] & 0xffffffff, 32u);
  }
  int below_32 = 0, from_32_to_63 = 0;
  for (const AmountRange& r : c->amount_ranges) {
    EXPECT_EQ(r.source, 1);  // the amount
    if (r.hi < 32) {
      EXPECT_EQ(r.differ, 0) << r.lo << ".." << r.hi;
      below_32 += r.tuples;
    }
    if (r.lo == 32) {
      EXPECT_GT(r.differ, 0);
      from_32_to_63 += r.tuples;
    }
  }
  EXPECT_GT(below_32, 0);
  EXPECT_GT(from_32_to_63, 0);
}

// With a Q/UQ destination vISA masks the amount to 6 bits: the first
// difference from PTX's shl.b64 is at 64.
TEST(VariantComparisonTest, SixtyFourBitShiftsDifferOnlyFrom64On) {
  auto c = CompareVariants(V("shl.b64"), V("visa.shl.uq.uq.ud"), 4096, 2);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(c->differ, 0);
  for (const AmountRange& r : c->amount_ranges) {
    if (r.hi < 64) EXPECT_EQ(r.differ, 0) << r.lo << ".." << r.hi;
  }
}

TEST(VariantComparisonTest, AVariantAgreesWithItself) {
  auto c = CompareVariants(V("shr.s32"), V("shr.s32"), 1000, 3);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->agree, 1000);
  EXPECT_EQ(c->differ, 0);
  EXPECT_TRUE(c->examples.empty());
}

TEST(VariantComparisonTest, UndefinedResultsAreNotDifferences) {
  // div by zero is unspecified in div.u32; rem is another instruction, but
  // where either side is undefined nothing is counted against it.
  auto c = CompareVariants(V("div.u32"), V("div.u32"), 2000, 4);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(c->unspecified, 0);
  EXPECT_EQ(c->differ, 0);
  EXPECT_EQ(c->agree + c->unspecified, 2000);
}

// The low 32 bits of a sum depend only on the low 32 bits of its terms, so
// add.cc.u64 and add.cc.u32 agree on every value compared; they differ in
// CC.CF (0xffffffff + 1 carries out of 32 bits, not out of 64), and only
// there.
TEST(VariantComparisonTest, CarryFlagsAreComparedWhenBothWriteThem) {
  auto c = CompareVariants(V("add.cc.u64"), V("add.cc.u32"), 2000, 6);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->compared_carry);
  EXPECT_EQ(c->compared_bits, 32);
  EXPECT_GT(c->differ, 0);
  ASSERT_FALSE(c->examples.empty());
  for (const Operands& ops : c->examples) {
    const Result wide = Evaluate(V("add.cc.u64"), ops);
    const Result narrow = Evaluate(V("add.cc.u32"), ops);
    EXPECT_EQ(wide.bits & 0xffffffff, narrow.bits);
    EXPECT_NE(wide.carry, narrow.carry);
  }
  auto without_flag = CompareVariants(V("add.u64"), V("add.cc.u32"), 2000, 6);
  ASSERT_TRUE(without_flag.ok());
  EXPECT_FALSE(without_flag->compared_carry);
  EXPECT_EQ(without_flag->differ, 0);
}

TEST(VariantComparisonTest, DifferentOperandCountsAreRejected) {
  auto c = CompareVariants(V("shl.b32"), V("not.b32"), 10, 5);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("not.b32 takes 1"), std::string::npos)
      << c.status();
}

}  // namespace
}  // namespace ptxdiff
