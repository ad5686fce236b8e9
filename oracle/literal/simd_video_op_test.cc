// SimdVideoOpOf: a variant as the literal SIMD video oracle's LiteralSimdOp.

#include "oracle/literal/simd_video_op.h"

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/literal/literal_simd_video.h"

namespace ptxdiff {
namespace {

LiteralSimdOp OpOf(const char* spelling) {
  return SimdVideoOpOf<LiteralSimdOp>(*ParseVariant(spelling));
}

TEST(SimdVideoOpTest, MergeFormWithSaturationAndMixedTypes) {
  const LiteralSimdOp op = OpOf("vadd2.s32.u32.s32.sat");
  EXPECT_EQ(op.lanes, 2);
  EXPECT_EQ(op.op, LiteralSimdOp::Op::kAdd);
  EXPECT_TRUE(op.d_signed);
  EXPECT_FALSE(op.a_signed);
  EXPECT_TRUE(op.b_signed);
  EXPECT_TRUE(op.sat);
  EXPECT_FALSE(op.accumulate);
  EXPECT_EQ(op.cmp, Cmp::kNone);
  EXPECT_EQ(op.mask_lanes, 0b11u);  // the default .h10
}

TEST(SimdVideoOpTest, AccumulateFormWithAMask) {
  const LiteralSimdOp op = OpOf("vavrg4.u32.u32.u32.add d.b310, a, b, c");
  EXPECT_EQ(op.lanes, 4);
  EXPECT_EQ(op.op, LiteralSimdOp::Op::kAvrg);
  EXPECT_FALSE(op.sat);
  EXPECT_TRUE(op.accumulate);
  EXPECT_EQ(op.mask_lanes, 0b1011u);
}

TEST(SimdVideoOpTest, VsetHasACmpAndNoDtype) {
  const LiteralSimdOp op = OpOf("vset2.s32.u32.ge d.h1, a, b, c");
  EXPECT_EQ(op.op, LiteralSimdOp::Op::kSet);
  EXPECT_FALSE(op.d_signed);
  EXPECT_TRUE(op.a_signed);
  EXPECT_EQ(op.cmp, Cmp::kGe);
  EXPECT_EQ(op.mask_lanes, 0b10u);
}

TEST(SimdVideoOpTest, EveryFamilyMapsToItsOperation) {
  const std::pair<Family, LiteralSimdOp::Op> expected[] = {
      {Family::kVadd2, LiteralSimdOp::Op::kAdd},
      {Family::kVsub4, LiteralSimdOp::Op::kSub},
      {Family::kVavrg2, LiteralSimdOp::Op::kAvrg},
      {Family::kVabsdiff4, LiteralSimdOp::Op::kAbsdiff},
      {Family::kVmin2, LiteralSimdOp::Op::kMin},
      {Family::kVmax4, LiteralSimdOp::Op::kMax},
      {Family::kVset4, LiteralSimdOp::Op::kSet}};
  for (const auto& [family, op] : expected) {
    EXPECT_EQ(SimdLaneOpOf<LiteralSimdOp>(family), op) << InfoOf(family).opcode;
  }
}

}  // namespace
}  // namespace ptxdiff
