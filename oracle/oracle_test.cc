#include "oracle/oracle.h"

#include <random>
#include <set>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

TEST(OracleTest, BatchEqualsOneByOne) {
  std::mt19937_64 rng(7);
  std::vector<Operands> tuples(64);
  std::vector<Result> results(tuples.size());
  for (const Variant& v : AllVariants()) {
    FillEdgeTuples(v, rng, tuples);
    EvaluateBatch(v, tuples, results);
    for (size_t i = 0; i < tuples.size(); ++i) {
      ASSERT_EQ(results[i], Evaluate(v, tuples[i])) << Spell(v);
    }
  }
}

// Results are zero-extended from the result width, and bits of an operand
// above its width change nothing.
TEST(OracleTest, ResultWidthAndIgnoredHighOperandBits) {
  std::mt19937_64 rng(8);
  std::vector<Operands> tuples(16);
  for (const Variant& v : AllVariants()) {
    FillEdgeTuples(v, rng, tuples);
    for (Operands o : tuples) {
      const Result clean = Evaluate(v, o);
      ASSERT_EQ(clean.bits, Low(clean.bits, ResultWidth(v))) << Spell(v);
      for (int i = 0; i < NumSources(v); ++i) {
        o.v[i] |= ~LowMask(SourceWidth(v, i)) & 0xa5a5a5a5a5a5a5a5ull;
      }
      for (int i = NumSources(v); i < kMaxSources; ++i) o.v[i] = rng();
      ASSERT_EQ(Evaluate(v, o), clean) << Spell(v);
    }
  }
}

TEST(OracleTest, ReasonsHaveDistinctTokensAndDescriptions) {
  std::set<absl::string_view> tokens, descriptions;
  for (int i = 0; i < kNumUndefinedReasons; ++i) {
    const auto why = static_cast<Undefined>(i);
    EXPECT_TRUE(tokens.insert(Token(why)).second);
    EXPECT_TRUE(descriptions.insert(Describe(why)).second);
  }
}

// Only the families whose spec leaves results open ever report undefined.
TEST(OracleTest, UndefinedOnlyWhereTheSpecSaysSo) {
  std::mt19937_64 rng(9);
  std::vector<Operands> tuples(64);
  const std::set<Family> may_be_undefined = {Family::kDiv, Family::kRem,
                                             Family::kFns, Family::kVmad,
                                             Family::kVisaShl};
  for (const Variant& v : AllVariants()) {
    if (may_be_undefined.count(v.family)) continue;
    // SIMD video `.add` of vop2/vop4 (not vset2/vset4, whose lanes are 0 or
    // 1): the accumulated sum may be open (kSimdAccumulateAmbiguous).
    const bool vset = v.family == Family::kVset2 || v.family == Family::kVset4;
    if (IsSimdVideo(v.family) && v.secop == SecOp::kAdd && !vset) continue;
    FillEdgeTuples(v, rng, tuples);
    for (const Operands& o : tuples) {
      ASSERT_TRUE(Evaluate(v, o).defined()) << Spell(v);
    }
  }
}

// SIMD video: only the low 2 (2-lane) or 3 (4-lane) bits of each selector
// nibble count (SourceMask); the rest change nothing.
TEST(OracleTest, SimdSelectorBitsOutsideTheMaskChangeNothing) {
  std::mt19937_64 rng(11);
  std::vector<Operands> tuples(32);
  for (const Variant& v : AllVariants()) {
    if (!IsSimdVideo(v.family)) continue;
    const int sel = NumSources(v) - 1;
    ASSERT_TRUE(IsSelectorSource(v, sel)) << Spell(v);
    FillEdgeTuples(v, rng, tuples);
    for (Operands o : tuples) {
      ASSERT_EQ(o.v[sel], o.v[sel] & SourceMask(v, sel)) << Spell(v);
      const Result canonical = Evaluate(v, o);
      o.v[sel] |= ~SourceMask(v, sel) & LowMask(SourceWidth(v, sel));
      ASSERT_EQ(Evaluate(v, o), canonical) << Spell(v);
    }
  }
}

// SIMD video `.add` is open exactly where a masked lane's exact result
// does not fit .dtype's lane: vadd4.u32 lanes of 0x80 + 0x80 do not.
TEST(OracleTest, SimdAccumulateOpenOnlyWhereALaneOverflows) {
  const Variant v = *ParseVariant("vadd4.u32.u32.u32.add");
  EXPECT_TRUE(Evaluate(v, {{0x7f7f7f7f, 0x01010101, 0, 0x76543210}}).defined());
  const Result open = Evaluate(v, {{0x80, 0x80, 0, 0x76543210}});
  EXPECT_EQ(open.undefined, Undefined::kSimdAccumulateAmbiguous);
  EXPECT_EQ(open.bits, 0x100u);  // the pseudocode's exact sum
  // The same lanes masked off: nothing overflows.
  const Variant masked = *ParseVariant("vadd4.u32.u32.u32.add d.b321, a, b, c");
  EXPECT_EQ(Evaluate(masked, {{0x80, 0x80, 0, 0x76543210}}),
            (Result{0, Undefined::kDefined}));
}

// The extended-precision instructions (PTX ISA 9.7.2): the carry out of the
// full-precision sum, for the sub kind the borrow; b + cf never wraps; .s*
// types carry like .u*; only `.cc` variants write a carry.
TEST(OracleTest, CarryAndBorrow) {
  auto eval = [](absl::string_view spelling, Operands o) {
    return Evaluate(*ParseVariant(spelling), o);
  };
  auto value = [](uint64_t bits, bool carry) {
    return Result{bits, Undefined::kDefined, carry};
  };
  EXPECT_EQ(eval("add.cc.u32", {{0xffffffff, 1}}), value(0, true));
  EXPECT_EQ(eval("add.cc.s32", {{0xffffffff, 1}}), value(0, true));  // -1 + 1
  EXPECT_EQ(eval("add.cc.s32", {{0x7fffffff, 1}}), value(0x80000000, false));
  EXPECT_EQ(eval("add.cc.u64", {{~0ull, ~0ull}}), value(~0ull - 1, true));
  EXPECT_EQ(eval("add.u32", {{0xffffffff, 1}}), value(0, false));  // no .cc
  EXPECT_EQ(eval("sub.cc.u32", {{0, 1}}), value(0xffffffff, true));
  EXPECT_EQ(eval("sub.cc.u32", {{1, 1}}), value(0, false));
  EXPECT_EQ(eval("sub.cc.s64", {{0x8000000000000000, 1}}),
            value(0x7fffffffffffffff, false));  // signed overflow, no borrow
  // addc: + cf; the carry with .cc only.
  EXPECT_EQ(eval("addc.u32", {{0xffffffff, 0, 1}}), value(0, false));
  EXPECT_EQ(eval("addc.cc.u32", {{0xffffffff, 0, 1}}), value(0, true));
  EXPECT_EQ(eval("addc.cc.u32", {{0xffffffff, 0xffffffff, 1}}),
            value(0xffffffff, true));
  EXPECT_EQ(eval("addc.cc.u64", {{~0ull, 0, 0}}), value(~0ull, false));
  // subc: a - (b + cf), b + cf in full precision.
  EXPECT_EQ(eval("subc.cc.u32", {{0, 0xffffffff, 1}}), value(0, true));
  EXPECT_EQ(eval("subc.cc.u32", {{5, 3, 1}}), value(1, false));
  EXPECT_EQ(eval("subc.cc.u32", {{5, 5, 1}}), value(0xffffffff, true));
  EXPECT_EQ(eval("subc.u64", {{0, 0, 1}}), value(~0ull, false));
  // mad.cc / madc: the chosen half + c (+ cf); .hi of a signed product.
  EXPECT_EQ(eval("mad.lo.cc.u32", {{0x10000, 0x10000, 1}}), value(1, false));
  EXPECT_EQ(eval("mad.lo.cc.u32", {{1, 0xffffffff, 1}}), value(0, true));
  EXPECT_EQ(eval("mad.hi.cc.u32", {{0x10000, 0x10000, 0xfffffffe}}),
            value(0xffffffff, false));
  EXPECT_EQ(eval("mad.hi.cc.u32", {{0x10000, 0x10000, 0xffffffff}}),
            value(0, true));
  EXPECT_EQ(eval("mad.hi.cc.s32", {{0xffffffff, 1, 1}}),
            value(0, true));  // hi(-1) = -1
  EXPECT_EQ(eval("mad.hi.cc.u32", {{0xffffffff, 1, 1}}),
            value(1, false));  // hi = 0
  EXPECT_EQ(eval("madc.hi.cc.s32", {{0xffffffff, 1, 0xffffffff, 1}}),
            value(0xffffffff, true));
  EXPECT_EQ(eval("madc.lo.u64", {{~0ull, ~0ull, ~0ull, 1}}), value(1, false));
  EXPECT_EQ(eval("madc.lo.cc.u64", {{~0ull, ~0ull, ~0ull, 1}}), value(1, true));
  // No variant without .cc ever carries.
  std::mt19937_64 rng(10);
  std::vector<Operands> tuples(64);
  for (const Variant& v : AllVariants()) {
    if (v.cc) continue;
    FillEdgeTuples(v, rng, tuples);
    for (const Operands& o : tuples)
      ASSERT_FALSE(Evaluate(v, o).carry) << Spell(v);
  }
}

// The f32 special bit patterns are edge values of the 32- and 64-bit
// operands (issue 13); every table's values fit its width.
TEST(EdgeOperandsTest, F32SpecialPatternsAndWidths) {
  for (int width : {32, 64}) {
    const std::vector<uint64_t>& edges = EdgeValues(width);
    const std::set<uint64_t> values(edges.begin(), edges.end());
    EXPECT_EQ(values.size(), edges.size()) << width;
    for (uint64_t x :
         {0x00000000ull, 0x80000000ull, 0x7f800000ull, 0x7f800001ull,
          0x7fffffffull, 0xff800000ull, 0xffffffffull}) {
      EXPECT_TRUE(values.count(x)) << width << ": " << x;
    }
  }
  EXPECT_EQ(EdgeValues(1), (std::vector<uint64_t>{0, 1}));  // the carry-in
  for (int width : {1, 8, 16, 24, 32, 64}) {
    for (uint64_t x : EdgeValues(width)) {
      EXPECT_EQ(x, Low(x, width)) << width << ": " << x;
    }
  }
}

}  // namespace
}  // namespace ptxdiff
