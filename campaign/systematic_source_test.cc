// The systematic source's tiers for one variant: which tuples come first
// (extremes, boundaries, relations, the runtime tier's witnesses) and in
// what order. The source across variants (the breadth pass, depth, costs,
// exhaustion) is in systematic_schedule_test.cc.

#include "campaign/systematic_source.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

TEST(SystematicTest, EveryIndexIsATupleOfTheVariantAndTheOrderIsAPermutation) {
  for (const char* s : {"popc.b32", "add.sat.s32", "bfe.u64", "bfi.b64",
                        "vadd.s32.u32.s32.sat d.b1, a.h1, b.b2, c"}) {
    const Variant v = *ParseVariant(s);
    const uint64_t n = SystematicCount(v);
    ASSERT_GT(n, 0u) << s;
    absl::flat_hash_set<uint64_t> seen_index;
    std::set<std::vector<uint64_t>> distinct;
    for (uint64_t k = 0; k < n; ++k) {
      const Tuple t = SystematicTuple(v, k);
      EXPECT_EQ(t.variant, v);
      std::vector<uint64_t> ops;
      for (int i = 0; i < NumSources(v); ++i) {
        EXPECT_EQ(t.operands.v[i], Low(t.operands.v[i], SourceWidth(v, i)))
            << s;
        ops.push_back(t.operands.v[i]);
      }
      distinct.insert(ops);
    }
    // Edge pairs alone give at least |edges|^2 distinct tuples.
    const size_t edges = ShortEdgeValues(SourceWidth(v, 0)).size();
    EXPECT_GE(distinct.size(), NumSources(v) == 1 ? edges : edges * edges) << s;
  }
}

// With forms, the runtime tier follows the relations: each probe (one
// runtime source, another source at an extreme) with its witnesses in a
// row, so that one compiled instruction answers them all. Without forms the
// set is as before: no tuple has a runtime source.
TEST(SystematicTest, TheRuntimeTierProbesEachRuntimeSourceAtItsWitnesses) {
  const Variant v = *ParseVariant("bfe.s32");
  // The first tier (singles, then a against b), the relations (equal
  // extremes of the three pairs of numbers) and the middle tier.
  const uint64_t tier_end = 3 * 5 * 3 + 4 * 3 + 3 * 4 * 5 +
                            MiddleValues(32).size() +
                            2 * MiddleValues(32, /*amount=*/true).size();
  EXPECT_EQ(SystematicTuple(v, tier_end - 1, /*forms=*/true).runtime, 0);
  // Per runtime source: 2 other sources x 5 extremes x 3 fillers probes, 5
  // witnesses each.
  EXPECT_EQ(SystematicCount(v, true), SystematicCount(v) + 3 * (2 * 5 * 3) * 5);
  bool past_the_top = false;
  std::set<std::vector<uint64_t>> witnesses;
  for (uint64_t k = tier_end; k < tier_end + 3 * 30 * 5; ++k) {
    const Tuple t = SystematicTuple(v, k, true);
    ASSERT_EQ(std::popcount(t.runtime), 1) << k;
    const int r = std::countr_zero(t.runtime);
    // The probe's other operands are those of the first tuple of its five.
    const Tuple first = SystematicTuple(v, k - (k - tier_end) % 5, true);
    EXPECT_EQ(first.runtime, t.runtime);
    for (int i = 0; i < 3; ++i) {
      if (i != r) EXPECT_EQ(t.operands.v[i], first.operands.v[i]) << k;
    }
    if (r == 0) witnesses.insert({t.operands.v[0]});
    // The claim of ptxas that issue 29 shows: a runtime source, position
    // past 31 and a length.
    past_the_top |=
        r == 0 && (t.operands.v[1] & 0xff) > 31 && (t.operands.v[2] & 0xff) > 0;
  }
  EXPECT_EQ(witnesses.size(), 5u);
  EXPECT_TRUE(past_the_top);
  for (uint64_t k = 0; k < SystematicCount(v); ++k)
    ASSERT_EQ(SystematicTuple(v, k).runtime, 0);
  // lop3's immLut never is a runtime value.
  const Variant lop3 = *ParseVariant("lop3.b32");
  std::vector<Tuple> lop3_set;
  SystematicTuples(lop3, 0, 2000, lop3_set, true);  // past its runtime tier
  EXPECT_TRUE(std::any_of(lop3_set.begin(), lop3_set.end(),
                          [](const Tuple& t) { return t.runtime != 0; }));
  for (const Tuple& t : lop3_set) ASSERT_EQ(t.runtime & 0b1000, 0);
}

TEST(SystematicTest, BoundaryTuplesPutASumExactlyOnePastTheBound) {
  // add.sat.s32: a + b == INT32_MAX + 1 must be among the tuples.
  const Variant v = *ParseVariant("add.sat.s32");
  bool found = false;
  for (uint64_t k = 0; k < SystematicCount(v) && !found; ++k) {
    const Tuple t = SystematicTuple(v, k);
    const int64_t a = static_cast<int32_t>(t.operands.v[0]);
    const int64_t b = static_cast<int32_t>(t.operands.v[1]);
    found = a + b == int64_t{INT32_MAX} + 1;
  }
  EXPECT_TRUE(found);
}

// A SIMD video selector is held at its default while the numbers vary (the
// common case, and the only one ptxas folds), and takes its own edge values
// (not a number's) in the pairs it is part of.
TEST(SystematicTest, SimdSelectorsAreMostlyTheDefaultAndSometimesOthers) {
  for (const char* spelling : {"vadd4.u32.u32.u32", "vmin2.s32.s32.s32"}) {
    const Variant v = *ParseVariant(spelling);
    const int sel = 3;
    ASSERT_TRUE(IsSelectorSource(v, sel));
    const uint64_t def = DefaultSimdSelector(SimdLanes(v.family));
    uint64_t with_default = 0;
    std::set<uint64_t> selectors;
    const uint64_t n = SystematicCount(v);
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t x = SystematicTuple(v, k).operands.v[sel];
      with_default += x == def;
      selectors.insert(x);
    }
    EXPECT_GE(3 * with_default, 2 * n) << spelling;
    EXPECT_EQ(selectors.size(), 6u) << spelling;
    EXPECT_TRUE(selectors.count(SimdLanes(v.family) == 4 ? 0x01234567 : 0x0123))
        << spelling;
  }
}

TEST(SystematicTest, PositionPlusLengthExactlyTheWidth) {
  const Variant v = *ParseVariant("bfe.u32");
  bool found = false;
  for (uint64_t k = 0; k < SystematicCount(v) && !found; ++k) {
    const Tuple t = SystematicTuple(v, k);
    found = t.operands.v[1] + t.operands.v[2] == 32 && t.operands.v[1] > 0 &&
            t.operands.v[2] > 0 && t.operands.v[0] != 0;
  }
  EXPECT_TRUE(found);
}

// The tuples k .. k + n - 1 of `v`'s set, as operand vectors.
std::vector<std::vector<uint64_t>> OperandsOf(const Variant& v, uint64_t k,
                                              uint64_t n) {
  std::vector<Tuple> tuples;
  SystematicTuples(v, k, n, tuples);
  std::vector<std::vector<uint64_t>> out;
  for (const Tuple& t : tuples) {
    out.emplace_back(t.operands.v, t.operands.v + NumSources(v));
  }
  return out;
}

bool Contains(const std::vector<std::vector<uint64_t>>& all,
              const std::vector<uint64_t>& ops) {
  return std::find(all.begin(), all.end(), ops) != all.end();
}

// A bug at one operand value of one of 60k video variants is met within
// its first few tuples: tuple 0 (the breadth pass's) has a at MIN, and the
// first tier has every source alone at each extreme, the others at 0.
TEST(SystematicTest, TheFirstTierHasEachSourceAloneAtItsExtremes) {
  const Variant v = *ParseVariant("vabsdiff.s32.s32.s32.sat");
  ASSERT_EQ(NumSources(v), 2);
  EXPECT_EQ(SystematicTuple(v, 0).operands.v[0], 0x80000000u);
  EXPECT_EQ(SystematicTuple(v, 0).operands.v[1], 0u);
  // 2 sources x 5 extremes x 3 fillers.
  const auto first = OperandsOf(v, 0, 30);
  for (const uint64_t x :
       {0x80000000ull, 0x7fffffffull, 0ull, 0xffffffffull, 1ull}) {
    EXPECT_TRUE(Contains(first, {x, 0})) << x;
    EXPECT_TRUE(Contains(first, {0, x})) << x;
    EXPECT_TRUE(Contains(first, {x, 0xffffffff})) << x;
    EXPECT_TRUE(Contains(first, {1, x})) << x;
  }
  // The same for a three-source variant, where c is a number too.
  const Variant bfe = *ParseVariant("bfe.s64");
  const auto tier = OperandsOf(bfe, 0, 45);
  EXPECT_TRUE(Contains(tier, {0, 0, 0x80000000}));
  EXPECT_TRUE(Contains(tier, {0x8000000000000000, 0, 0}));
}

// Comparisons and selections: a against b at the same extreme, and one
// apart, early (the first tier) and in every pair of numbers (the rest).
TEST(SystematicTest, EqualExtremesComeEarlyAndInEveryPair) {
  const Variant v = *ParseVariant("setp.lt.s32");
  const auto first = OperandsOf(v, 0, 30 + 12);  // after each source alone
  EXPECT_TRUE(Contains(first, {0x80000000, 0x80000000}));
  EXPECT_TRUE(Contains(first, {0x80000001, 0x80000000}));
  EXPECT_TRUE(Contains(first, {0x7fffffff, 0x7fffffff}));
  EXPECT_TRUE(Contains(first, {0x7ffffffe, 0x7fffffff}));
  EXPECT_TRUE(Contains(first, {0xffffffff, 0xffffffff}));
  const Variant slct = *ParseVariant("slct.u32.s32");
  const auto all = OperandsOf(slct, 0, SystematicCount(slct));
  EXPECT_TRUE(
      Contains(all, {0, 0x7fffffff, 0x7ffffffe}));  // b and c, c one below
}

// Values inside the range, which no extreme reaches: each byte boundary
// below the width, its 64-bit kin, alternating patterns; no extreme twice.
TEST(SystematicTest, MiddleValuesAreTheBoundariesInsideTheRange) {
  const std::vector<uint64_t>& w64 = MiddleValues(64);
  for (const uint64_t x :
       {0x7full, 0x80ull, 0xffull, 0x100ull, 0x7fffull, 0x8000ull, 0xffffull,
        0x10000ull, 0x7fffffull, 0x800000ull, 0x7fffffffull, 0x80000000ull,
        0xffffffffull, 0x100000000ull, 0x5555555555555555ull,
        0xaaaaaaaaaaaaaaaaull, 0x0f0f0f0f0f0f0f0full, 0x10001ull}) {
    EXPECT_NE(std::find(w64.begin(), w64.end(), x), w64.end()) << std::hex << x;
  }
  const std::vector<uint64_t>& w32 = MiddleValues(32);
  for (const uint64_t extreme : {0ull, 1ull, 0x7fffffffull, 0x80000000ull,
                                 0xffffffffull, 0x100000000ull}) {
    EXPECT_EQ(std::find(w32.begin(), w32.end(), extreme), w32.end())
        << std::hex << extreme;
  }
  EXPECT_EQ(std::set<uint64_t>(w32.begin(), w32.end()).size(), w32.size());
  EXPECT_TRUE(MiddleValues(1).empty());
  // An amount's: the byte and half boundaries alone.
  EXPECT_EQ(MiddleValues(32, /*amount=*/true),
            (std::vector<uint64_t>{0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000,
                                   0xffff, 0x10000}));
}

// The middle tier follows the relations: every number alone at each middle
// value, the others at 0, value by value (each source's first value before
// any source's second), so that a variant's first middle tuples already
// cover all its sources.
TEST(SystematicTest, TheMiddleTierFollowsTheRelationsValueByValue) {
  const Variant v = *ParseVariant("add.s32");
  const uint64_t start = 2 * 5 * 3 + 4 * 3 + 4 * 5;  // tier + relations
  const std::vector<uint64_t>& middle = MiddleValues(32);
  const auto tier = OperandsOf(v, start, 2 * middle.size());
  ASSERT_EQ(tier.size(), 2 * middle.size());
  for (size_t round = 0; round < middle.size(); ++round) {
    for (int i = 0; i < 2; ++i) {
      std::vector<uint64_t> expected(2, 0);
      expected[i] = middle[round];
      EXPECT_EQ(tier[2 * round + i], expected) << round << " " << i;
    }
  }
  // Before it, none of these: the extremes and their relations.
  const auto before = OperandsOf(v, 0, start);
  EXPECT_FALSE(Contains(before, {0x100, 0}));
  EXPECT_FALSE(Contains(before, {0, 0x8000}));
  // bfe's position and length, amounts, get their shorter list.
  const Variant bfe = *ParseVariant("bfe.s32");
  const uint64_t bfe_start = 3 * 5 * 3 + 4 * 3 + 3 * 4 * 5;
  const auto bfe_tier = OperandsOf(bfe, bfe_start, 3);
  EXPECT_EQ(bfe_tier[0], (std::vector<uint64_t>{0x7f, 0, 0}));
  EXPECT_EQ(bfe_tier[1], (std::vector<uint64_t>{0, 0x7f, 0}));
  // a's longer list ends the tier: rounds past the amounts' 8 are a's alone.
  const size_t bfe_middle = MiddleValues(32).size() + 2 * 8;
  EXPECT_EQ(OperandsOf(bfe, bfe_start + bfe_middle - 1, 1)[0],
            (std::vector<uint64_t>{MiddleValues(32).back(), 0, 0}));
}

// The part a scalar video selector reads gets the middle values of its
// own width (a.h1 at 0x80 is a == 0x800000), not of the register's.
TEST(SystematicTest, TheMiddleTierFillsThePartASelectorReads) {
  const Variant v = *ParseVariant("vadd.u32.u32.u32 d, a.h1, b.b2");
  ASSERT_EQ(NumSources(v), 2);
  const auto all = OperandsOf(v, 0, SystematicCount(v));
  for (const uint64_t x : {0x7full, 0x80ull, 0xffull, 0x5555ull}) {
    EXPECT_TRUE(Contains(all, {x << 16, 0})) << std::hex << x;
  }
  for (const uint64_t x : {0x55ull, 0xaaull, 0x0full}) {
    EXPECT_TRUE(Contains(all, {0, x << 16})) << std::hex << x;
  }
}

// The exact sum or difference of a and b (their selected parts, as
// .atype and .btype read them) for tuples 1..8: one past and one inside the
// destination part's bounds, right after tuple 0, which stays a at MIN.
TEST(SystematicTest, AMergeIntoAPartMeetsThePartsBoundsRightAfterTupleZero) {
  const Variant v = *ParseVariant("vadd.s32.s32.u32.sat d.h1, a.b1, b.h0, c");
  ASSERT_EQ(NumSources(v), 3);
  EXPECT_EQ(SystematicTuple(v, 0).operands.v[0], 0x80000000u);
  std::set<int64_t> sums, differences;
  for (uint64_t k = 1; k <= 8; ++k) {
    const Operands& o = SystematicTuple(v, k).operands;
    const int64_t a = static_cast<int8_t>(o.v[0] >> 8);
    const int64_t b = static_cast<uint16_t>(o.v[1]);
    EXPECT_EQ(o.v[0] & ~uint64_t{0xff00}, 0u) << k;  // a only in its byte
    sums.insert(a + b);
    differences.insert(a - b);
  }
  for (const int64_t bound : {0x8000, 0x7ffe, -0x8001, -0x7fff}) {
    EXPECT_TRUE(sums.count(bound) || differences.count(bound)) << bound;
  }
  // No part in the destination: tuple 1 is the first tier's (a at MIN, b at
  // -1), as before.
  const Variant whole = *ParseVariant("vadd.s32.s32.u32.sat");
  EXPECT_EQ(SystematicTuple(whole, 1).operands.v[0], 0x80000000u);
  EXPECT_EQ(SystematicTuple(whole, 1).operands.v[1], 0xffffffffu);
}

// A narrowing conversion meets the destination's bounds and one past them
// (as source values), which the source type's own edges do not hold.
TEST(SystematicTest, ANarrowingConversionMeetsTheDestinationsBounds) {
  const Variant v = *ParseVariant("cvt.sat.s16.s32");
  const auto all = OperandsOf(v, 0, SystematicCount(v));
  for (const uint64_t x : {0x7fffull, 0x8000ull, 0xffff7fffull, 0xffff8000ull,
                           0xffffull, 0x10000ull}) {
    EXPECT_TRUE(Contains(all, {x})) << std::hex << x;
  }
  // Not for a widening one: every source value fits its destination.
  EXPECT_FALSE(NarrowsToDestination(*ParseVariant("cvt.s32.s16"), 0));
}

// The exact products a * b of `v`'s first `n` tuples (its factors read as
// `bits`-bit numbers, signed or not), each with the tuple's c.
std::vector<std::pair<__int128, uint64_t>> ProductsOf(const Variant& v,
                                                      int bits, uint64_t n) {
  std::vector<Tuple> tuples;
  SystematicTuples(v, 0, n, tuples);
  std::vector<std::pair<__int128, uint64_t>> out;
  for (const Tuple& t : tuples) {
    const auto factor = [&](uint64_t x) -> __int128 {
      return IsSigned(v.type) ? SignExtend(x, bits)
                              : static_cast<__int128>(Low(x, bits));
    };
    out.emplace_back(factor(t.operands.v[0]) * factor(t.operands.v[1]),
                     t.operands.v[2]);
  }
  return out;
}

bool HasProduct(const std::vector<std::pair<__int128, uint64_t>>& all,
                __int128 p) {
  return std::any_of(all.begin(), all.end(),
                     [&](const auto& e) { return e.first == p; });
}

// Where the result is a part of the product, the relations put the product
// at each edge of the part kept, on both sides, within the variant's first
// tuples: what a lost carry into .hi, a .lo read as signed or mul24's bits
// 47..16 taken from the wrong place needs, and no extreme times 0, 1 or -1
// reaches.
TEST(SystematicTest, AProductMeetsTheEdgesOfThePartKept) {
  constexpr __int128 k1 = 1;
  const Variant hi = *ParseVariant("mul.hi.u32");
  const auto hi_products = ProductsOf(hi, 32, 120);
  for (const __int128 p : {k1 << 32, (k1 << 32) - 1, k1 << 31, (k1 << 31) - 1})
    EXPECT_TRUE(HasProduct(hi_products, p)) << static_cast<int64_t>(p);
  // 2^63 has no factoring in 32 bits: the nearest products either side.
  EXPECT_TRUE(std::any_of(hi_products.begin(), hi_products.end(), [&](auto& e) {
    return e.first >= (k1 << 63) && e.first < (k1 << 63) + (k1 << 32);
  }));
  EXPECT_TRUE(std::any_of(hi_products.begin(), hi_products.end(), [&](auto& e) {
    return e.first < (k1 << 63) && e.first > (k1 << 63) - (k1 << 32);
  }));

  // mul24.hi keeps bits 47..16: its lowest bit's edge, both signs.
  const Variant hi24 = *ParseVariant("mul24.hi.s32");
  const auto hi24_products = ProductsOf(hi24, 24, 120);
  for (const __int128 p :
       {k1 << 16, (k1 << 16) - 1, -(k1 << 16), -(k1 << 16) - 1, k1 << 23,
        -(k1 << 23) - 1, k1 << 24, -(k1 << 24) - 1})
    EXPECT_TRUE(HasProduct(hi24_products, p)) << static_cast<int64_t>(p);
  for (const auto& [p, c] : hi24_products) {
    EXPECT_LE(p, __int128{1} << 46);  // 24-bit signed factors
  }
}

// A saturating part plus c: c so that the sum is at each s32 bound and one
// past it, for a part that is not 0 (as the boundary pairs' are, with the
// third source at 0).
TEST(SystematicTest, ASaturatingProductPartPlusCMeetsTheBounds) {
  for (const auto& [spelling, bits, low] :
       {std::tuple{"mad.hi.sat.s32", 32, 32},
        std::tuple{"mad24.hi.sat.s32", 24, 16}}) {
    const Variant v = *ParseVariant(spelling);
    std::set<int64_t> sums;
    for (const auto& [p, c] : ProductsOf(v, bits, SystematicCount(v))) {
      const int64_t part = SignExtend(static_cast<uint64_t>(p >> low), 32);
      if (part != 0) sums.insert(part + SignExtend(c, 32));
    }
    for (const int64_t bound : {int64_t{INT32_MAX}, int64_t{INT32_MAX} + 1,
                                int64_t{INT32_MIN}, int64_t{INT32_MIN} - 1}) {
      EXPECT_TRUE(sums.count(bound)) << spelling << " " << bound;
    }
  }
}

// The middle tier holds a product's other factor at 1: at 0 every product
// is 0, whatever the middle value (mul24's bit 23, its factors' sign).
TEST(SystematicTest, TheMiddleTierHoldsAProductsOtherFactorAtOne) {
  const Variant v = *ParseVariant("mul24.lo.s32");
  const auto all = OperandsOf(v, 0, SystematicCount(v));
  for (const uint64_t x : {0x7fffffull, 0x800000ull, 0xffffffull}) {
    EXPECT_TRUE(Contains(all, {x, 1})) << std::hex << x;
    EXPECT_TRUE(Contains(all, {1, x})) << std::hex << x;
  }
  // Not for a variant that multiplies nothing.
  const Variant add = *ParseVariant("add.u32");
  EXPECT_TRUE(Contains(OperandsOf(add, 0, SystematicCount(add)), {0x80, 0}));
  EXPECT_TRUE(ProductBoundOperands(add).empty());
  EXPECT_TRUE(ProductBoundOperands(*ParseVariant("dp2a.lo.u32.u32")).empty());
}

// One lane of a SIMD video variant at its own edge: for every lane, a
// tuple whose exact lane sum is one past the lane's MAX, and one whose
// difference is one below its MIN, also under a selector that is not the
// default.
TEST(SystematicTest, EveryLaneMeetsItsOwnEdgeUnderTheSelectorsChosen) {
  const Variant v = *ParseVariant("vadd4.s32.s32.s32");
  const uint64_t n = SystematicCount(v);
  const uint32_t def = DefaultSimdSelector(4);
  for (int lane = 0; lane < 4; ++lane) {
    bool sum_past_max = false, difference_below_min = false,
         other_selector = false;
    for (uint64_t k = 0; k < n; ++k) {
      const Tuple t = SystematicTuple(v, k);
      const auto [a, b] = SimdLaneOperands(v, t.operands, lane);
      if (a + b == 128) {
        sum_past_max = true;
        other_selector |= t.operands.v[3] != def;
      }
      difference_below_min |= a - b == -129;
    }
    EXPECT_TRUE(sum_past_max) << lane;
    EXPECT_TRUE(difference_below_min) << lane;
    EXPECT_TRUE(other_selector) << lane;
  }
}

// The relations come before the edge and boundary pairs: a narrowing
// conversion's destination bounds are all within its first 64 tuples.
TEST(SystematicTest, TheRelationsComeBeforeThePairs) {
  const Variant v = *ParseVariant("cvt.u8.u64");
  const auto first = OperandsOf(v, 0, 5 + kNumDestinationBoundaryValues);
  for (const uint64_t x : DestinationBoundaryValues(v, 0))
    EXPECT_TRUE(Contains(first, {x}));
}

}  // namespace
}  // namespace ptxdiff
