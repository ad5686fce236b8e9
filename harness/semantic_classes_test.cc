#include "harness/semantic_classes.h"

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

uint32_t ClassesOf(const char* spelling, Operands ops) {
  const Variant v = *ParseVariant(spelling);
  return SemanticClasses({v, ops}, Evaluate(v, ops));
}

bool Has(uint32_t classes, SemanticClass c) { return (classes & c) != 0; }

// A runtime source is a class of its own, so that the fuzz loop keeps an
// input that first reaches a family with one; it signs nothing as a trigger.
TEST(SemanticClassesTest, ARuntimeSourceIsAClassButNoTrigger) {
  const Variant v = *ParseVariant("bfe.s32");
  const Operands ops = {{1, 40, 8}};
  const uint32_t runtime = SemanticClasses({v, ops, 0b001}, Evaluate(v, ops));
  EXPECT_TRUE(Has(runtime, kRuntimeSource));
  EXPECT_FALSE(Has(ClassesOf("bfe.s32", ops), kRuntimeSource));
  EXPECT_EQ(TriggerClasses(runtime), TriggerClasses(ClassesOf("bfe.s32", ops)));
}

TEST(SemanticClassesTest, EqualExtremesAreTwoSourcesEqualOrOneApartAtAnEnd) {
  EXPECT_TRUE(Has(ClassesOf("setp.lt.s32", {{0x80000000, 0x80000000}}),
                  kEqualExtremes));
  EXPECT_TRUE(Has(ClassesOf("setp.lt.s32", {{0x7ffffffe, 0x7fffffff}}),
                  kEqualExtremes));
  EXPECT_TRUE(Has(ClassesOf("min.u16", {{0xffff, 0xffff}}), kEqualExtremes));
  EXPECT_FALSE(Has(ClassesOf("setp.lt.s32", {{5, 5}}), kEqualExtremes));
  EXPECT_FALSE(
      Has(ClassesOf("setp.lt.s32", {{0, 0xffffffff}}), kEqualExtremes));
  EXPECT_FALSE(Has(ClassesOf("setp.lt.s32", {{0x80000000, 0x7ffffff0}}),
                   kEqualExtremes));
}

TEST(SemanticClassesTest,
     DestinationBoundaryIsANarrowedSourceAtTheDestinationsEdge) {
  EXPECT_TRUE(
      Has(ClassesOf("cvt.s8.s32", {{0x80}}), kDestinationBoundary));  // MAX + 1
  EXPECT_TRUE(Has(ClassesOf("cvt.s8.s32", {{0xffffff7f}}),
                  kDestinationBoundary));  // MIN - 1
  EXPECT_TRUE(
      Has(ClassesOf("cvt.sat.u16.s64", {{0x10000}}), kDestinationBoundary));
  EXPECT_FALSE(Has(ClassesOf("cvt.s8.s32", {{0x1234}}), kDestinationBoundary));
  // Widening: the destination holds every source value.
  EXPECT_FALSE(Has(ClassesOf("cvt.s32.s8", {{0x80}}), kDestinationBoundary));
}

TEST(SemanticClassesTest, LaneBoundaryIsOneLanesExactResultOnePastItsEdge) {
  // Lane 2 of vadd4.s32.s32.s32: 0x7f + 0x01 = 128, one past s8's MAX.
  EXPECT_TRUE(Has(
      ClassesOf("vadd4.s32.s32.s32", {{0x007f0000, 0x00010000, 0, 0x76543210}}),
      kLaneBoundary));
  EXPECT_FALSE(Has(
      ClassesOf("vadd4.s32.s32.s32", {{0x007e0000, 0x00010000, 0, 0x76543210}}),
      kLaneBoundary));
  // The lanes as the selector picks them: lane 0 of a reads byte 2 of a
  // (asel 0x2), lane 0 of b byte 0 of b (bsel 0x4).
  const Operands picked = {{0x007f0000, 0x00000001, 0, 0x44440002}};
  EXPECT_TRUE(Has(ClassesOf("vadd4.s32.s32.s32", picked), kLaneBoundary));
  EXPECT_EQ(SimdLaneOperands(*ParseVariant("vadd4.s32.s32.s32"), picked, 0),
            (std::pair<int64_t, int64_t>{127, 1}));
  // Unsigned lanes end at 255: 0xff + 0x01 is past it, 0x7f + 0x01 is not.
  EXPECT_TRUE(Has(ClassesOf("vadd4.u32.u32.u32", {{0xff, 0x01, 0, 0x76543210}}),
                  kLaneBoundary));
  EXPECT_FALSE(
      Has(ClassesOf("vadd4.u32.u32.u32", {{0x7f, 0x01, 0, 0x76543210}}),
          kLaneBoundary));
}

}  // namespace
}  // namespace ptxdiff
