// SimdVideoOpOf against a mirror of the literal SIMD video oracle's
// LiteralSimdOp (literal_simd_video.h, pending): the fields the design fixes.

#include "oracle/literal/simd_video_op.h"

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// The shape of LiteralSimdOp, field for field.
struct MirrorSimdOp {
  int lanes;
  enum class Op { kAdd, kSub, kAvrg, kAbsdiff, kMin, kMax, kSet } op;
  bool d_signed, a_signed, b_signed;
  bool sat;
  bool accumulate;
  Cmp cmp;
  uint32_t mask_lanes;
};

MirrorSimdOp OpOf(const char* spelling) {
  return SimdVideoOpOf<MirrorSimdOp>(*ParseVariant(spelling));
}

TEST(SimdVideoOpTest, MergeFormWithSaturationAndMixedTypes) {
  const MirrorSimdOp op = OpOf("vadd2.s32.u32.s32.sat");
  EXPECT_EQ(op.lanes, 2);
  EXPECT_EQ(op.op, MirrorSimdOp::Op::kAdd);
  EXPECT_TRUE(op.d_signed);
  EXPECT_FALSE(op.a_signed);
  EXPECT_TRUE(op.b_signed);
  EXPECT_TRUE(op.sat);
  EXPECT_FALSE(op.accumulate);
  EXPECT_EQ(op.cmp, Cmp::kNone);
  EXPECT_EQ(op.mask_lanes, 0b11u);  // the default .h10
}

TEST(SimdVideoOpTest, AccumulateFormWithAMask) {
  const MirrorSimdOp op = OpOf("vavrg4.u32.u32.u32.add d.b310, a, b, c");
  EXPECT_EQ(op.lanes, 4);
  EXPECT_EQ(op.op, MirrorSimdOp::Op::kAvrg);
  EXPECT_FALSE(op.sat);
  EXPECT_TRUE(op.accumulate);
  EXPECT_EQ(op.mask_lanes, 0b1011u);
}

TEST(SimdVideoOpTest, VsetHasACmpAndNoDtype) {
  const MirrorSimdOp op = OpOf("vset2.s32.u32.ge d.h1, a, b, c");
  EXPECT_EQ(op.op, MirrorSimdOp::Op::kSet);
  EXPECT_FALSE(op.d_signed);
  EXPECT_TRUE(op.a_signed);
  EXPECT_EQ(op.cmp, Cmp::kGe);
  EXPECT_EQ(op.mask_lanes, 0b10u);
}

TEST(SimdVideoOpTest, EveryFamilyMapsToItsOperation) {
  const std::pair<Family, MirrorSimdOp::Op> expected[] = {
      {Family::kVadd2, MirrorSimdOp::Op::kAdd},
      {Family::kVsub4, MirrorSimdOp::Op::kSub},
      {Family::kVavrg2, MirrorSimdOp::Op::kAvrg},
      {Family::kVabsdiff4, MirrorSimdOp::Op::kAbsdiff},
      {Family::kVmin2, MirrorSimdOp::Op::kMin},
      {Family::kVmax4, MirrorSimdOp::Op::kMax},
      {Family::kVset4, MirrorSimdOp::Op::kSet}};
  for (const auto& [family, op] : expected) {
    EXPECT_EQ(SimdLaneOpOf<MirrorSimdOp>(family), op) << InfoOf(family).opcode;
  }
}

}  // namespace
}  // namespace ptxdiff
