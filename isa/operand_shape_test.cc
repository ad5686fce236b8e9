#include "isa/operand_shape.h"

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

uint32_t ShapeOf(const char* spelling, Operands ops) {
  return OperandShape({*ParseVariant(spelling), ops});
}

TEST(OperandShapeTest, ZeroAndUnitSourcesInTheirWidth) {
  EXPECT_EQ(ShapeOf("div.u32", {{7, 0, 0, 0}}), 1u << 1);
  EXPECT_EQ(ShapeOf("div.u32", {{7, 1, 0, 0}}), 1u << 5);
  // All ones in the source's width; bits above it do not count.
  EXPECT_EQ(ShapeOf("div.u32", {{7, 0xffffffff, 0, 0}}), 1u << 5);
  EXPECT_EQ(ShapeOf("div.u32", {{7, 0x1'0000'0000, 0, 0}}), 1u << 1);
  EXPECT_EQ(ShapeOf("div.u32", {{7, 2, 0, 0}}), 0u);
  EXPECT_EQ(ShapeOf("div.u64", {{0, 0xffffffff, 0, 0}}), 1u << 0);
}

TEST(OperandShapeTest, ARuntimeSourceIsMarkedAndItsValueLeftOut) {
  const Variant v = *ParseVariant("div.u32");
  // b runtime: its witness 0 or 7 makes no difference; a's 0 still shows.
  EXPECT_EQ(OperandShape({v, {{0, 0}}, 0b10}),
            (1u << 0) | (kRuntimeSource << 1));
  EXPECT_EQ(OperandShape({v, {{0, 7}}, 0b10}),
            (1u << 0) | (kRuntimeSource << 1));
  EXPECT_NE(OperandShape({v, {{0, 0}}, 0b10}), OperandShape({v, {{0, 0}}, 0}));
}

TEST(OperandShapeTest, ACarryInIsZeroOrOne) {
  // addc's third source is CC.CF, one bit: set is "1", clear is "0".
  EXPECT_EQ(ShapeOf("addc.u32", {{5, 6, 1, 0}}), 1u << 6);
  EXPECT_EQ(ShapeOf("addc.u32", {{5, 6, 0, 0}}), 1u << 2);
}

TEST(OperandShapeTest, SimdSelectorsAreDefaultOrNot) {
  const Variant v = *ParseVariant("vadd2.u32.u32.u32");
  int selector = -1;
  for (int i = 0; i < NumSources(v); ++i) {
    if (IsSelectorSource(v, i)) selector = i;
  }
  ASSERT_GE(selector, 0);
  Operands ops{{3, 4, 5, 0}};
  ops.v[selector] = DefaultSimdSelector(2);
  EXPECT_EQ(OperandShape({v, ops}), kDefaultSelectors);
  ops.v[selector] = 0x1010;  // a and b both take their low halves
  EXPECT_EQ(OperandShape({v, ops}), 0u);
}

TEST(OperandShapeTest, LeavesTheResultBitsClear) {
  for (const Variant& v : AllVariants()) {
    const uint32_t shape = OperandShape({v, {{0, 1, ~uint64_t{0}, 0}}});
    ASSERT_EQ(shape & (3u << 8), 0u) << Spell(v);
  }
}

}  // namespace
}  // namespace ptxdiff
