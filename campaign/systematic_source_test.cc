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

TEST(SystematicTest, TheSourceReachesEveryVariantBeforeGoingDeep) {
  std::vector<Variant> variants;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kAdd || v.family == Family::kBfe ||
        v.family == Family::kVadd) {
      variants.push_back(v);
    }
  }
  SystematicSource source(variants, /*run=*/8);
  absl::flat_hash_set<Variant> reached;
  // One pass: 8 tuples per variant.
  for (size_t i = 0; i < variants.size() * 8; ++i) {
    const std::optional<Tuple> t = source.Next();
    ASSERT_TRUE(t.has_value());
    reached.insert(t->variant);
  }
  // Round-robin over families: the small families are already through
  // several passes, so not every vadd variant is reached yet, but every add
  // and bfe variant is.
  for (const Variant& v : variants) {
    if (v.family != Family::kVadd) EXPECT_TRUE(reached.contains(v)) << Spell(v);
  }
}

// Every variant of these families.
std::vector<Variant> VariantsOfFamilies(
    std::initializer_list<Family> families) {
  std::vector<Variant> out;
  for (const Family f : families) {
    const absl::Span<const Variant> of = VariantsOf(f);
    out.insert(out.end(), of.begin(), of.end());
  }
  return out;
}

// Each family's variants in the order of StableId x 0x9e3779b97f4a7c15
// (fixed, so that a campaign meets the variants in the same order on every
// run and every machine).
std::vector<std::vector<Variant>> ByFamilyInStableIdOrder(
    const std::vector<Variant>& variants) {
  std::vector<std::vector<std::pair<uint64_t, Variant>>> keyed(kNumFamilies);
  for (const Variant& v : variants) {
    keyed[static_cast<int>(v.family)].emplace_back(
        StableId(v) * 0x9e3779b97f4a7c15ull, v);
  }
  std::vector<std::vector<Variant>> out;
  for (auto& family : keyed) {
    if (family.empty()) continue;
    std::sort(family.begin(), family.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out.emplace_back();
    for (const auto& [key, v] : family) out.back().push_back(v);
  }
  return out;
}

// The breadth pass: one tuple of every variant, each its set's first; one
// variant of each family in turn (in table order), each family's in stable
// id order, so that a small family's pass is over within its first turns.
TEST(SystematicTest, TheBreadthPassTakesAVariantOfEachFamilyInTurn) {
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kAdd, Family::kVmin, Family::kFns});
  const std::vector<std::vector<Variant>> families =
      ByFamilyInStableIdOrder(variants);
  std::vector<Variant> expected;
  for (size_t turn = 0; expected.size() < variants.size(); ++turn) {
    for (const std::vector<Variant>& family : families) {
      if (turn < family.size()) expected.push_back(family[turn]);
    }
  }
  SystematicSource source(variants);
  std::vector<Tuple> breadth;
  while (!source.breadth_done()) ASSERT_TRUE(source.NextRun(breadth));
  ASSERT_EQ(breadth.size(), variants.size());
  for (size_t i = 0; i < breadth.size(); ++i) {
    ASSERT_EQ(breadth[i].variant, expected[i]) << i;
    ASSERT_TRUE(breadth[i] == SystematicTuple(expected[i], 0)) << i;
  }
  // fns (one variant) and add (13) are through by add's last turn.
  EXPECT_EQ(breadth[1].variant.family, Family::kFns);
  EXPECT_NE(breadth[2 * 13].variant.family, Family::kAdd);
}

// For a compiler whose code is also run: each variant's tuple 0 as
// immediates, then, once every variant of its family had it, the same
// tuples in the same order with every runtime-capable source a runtime
// value; a variant with none (no source can be one) once.
// Within a family, the runtime forms come after its default ones, or (for
// a backend that keeps its compiled code) before them.
class BreadthInBothFormsTest : public ::testing::TestWithParam<bool> {};

TEST_P(BreadthInBothFormsTest, TheBreadthPassInBothFormsGivesTupleZeroTwice) {
  const bool runtime_first = GetParam();
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kAdd, Family::kBfe, Family::kFns});
  SystematicSource source(variants, 8, /*endless=*/false,
                          /*runtime_forms=*/true);
  source.SetBreadthInBothForms(true, runtime_first);
  std::vector<Tuple> breadth;
  while (!source.breadth_done()) ASSERT_TRUE(source.NextRun(breadth));
  size_t copies = 0;
  for (const std::vector<Variant>& family : ByFamilyInStableIdOrder(variants)) {
    std::vector<Tuple> defaults, runtime;
    for (const Variant& v : family)
      defaults.push_back(SystematicTuple(v, 0, /*forms=*/true));
    for (const Variant& v : family) {
      Tuple copy = SystematicTuple(v, 0, /*forms=*/true);
      ASSERT_EQ(copy.runtime, 0) << Spell(v);
      copy.runtime = RuntimeCapableSources(v);
      if (copy.runtime != 0) runtime.push_back(copy), ++copies;
    }
    std::vector<Tuple> expected = runtime_first ? runtime : defaults;
    for (const Tuple& t : runtime_first ? defaults : runtime)
      expected.push_back(t);
    std::vector<Tuple> got;
    for (const Tuple& t : breadth) {
      if (t.variant.family == family[0].family) got.push_back(t);
    }
    ASSERT_EQ(got.size(), expected.size()) << Spell(family[0]);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_TRUE(got[i] == expected[i]) << Spell(family[0]) << " " << i;
  }
  EXPECT_EQ(breadth.size(), variants.size() + copies);
  EXPECT_GT(copies, variants.size() / 2);
  // After the pass, the sets go on as without it.
  std::vector<Tuple> next;
  ASSERT_TRUE(source.NextRun(next));
  EXPECT_TRUE(next[0] == SystematicTuple(next[0].variant, 1, /*forms=*/true));
}

INSTANTIATE_TEST_SUITE_P(RuntimeFirstOrNot, BreadthInBothFormsTest,
                         ::testing::Bool());

// An endless source (a campaign's) runs the families whose pass is over
// while the pass goes on, with at most the depth share of the pass's time
// (kDepthShareDuringBreadth, or kDepthShareWithKeptCode where set), and
// never a variant before its breadth tuple; the pass still gives every
// variant its tuple 0.
class DepthShareTest : public ::testing::TestWithParam<double> {};

TEST_P(DepthShareTest, FamiliesWhosePassIsOverGoDeepWhileThePassGoesOn) {
  const double share = GetParam();
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kFns, Family::kBfe, Family::kVadd});
  SystematicSource source(variants, 8, /*endless=*/true);
  if (share != SystematicSource::kDepthShareDuringBreadth)
    source.SetDepthShareDuringBreadth(share);
  source.SetFamilyCost(Family::kVadd, 2);
  auto cost = [](const Tuple& t) {
    return t.variant.family == Family::kVadd ? 2.0 : 1.0;
  };
  absl::flat_hash_set<Variant> reached;
  absl::flat_hash_map<Variant, uint64_t> produced;
  double breadth_time = 0, deep_time = 0;
  int64_t deep_runs = 0;
  std::vector<Tuple> run;
  while (!source.breadth_done()) {
    run.clear();
    ASSERT_TRUE(source.NextRun(run));
    const bool deep = std::all_of(run.begin(), run.end(), [&](const Tuple& t) {
      return t.variant == run[0].variant && reached.contains(t.variant);
    });
    if (deep) {
      ++deep_runs;
      deep_time += static_cast<double>(run.size()) * cost(run[0]);
      EXPECT_NE(run[0].variant.family, Family::kVadd);
      // The set goes on after the breadth tuple (tuple 0).
      uint64_t& k = produced[run[0].variant];
      if (k < SystematicCount(run[0].variant)) {
        EXPECT_TRUE(run[0] == SystematicTuple(run[0].variant, k))
            << Spell(run[0].variant) << " " << k;
      }
      k += run.size();
      continue;
    }
    for (const Tuple& t : run) {
      breadth_time += cost(t);
      EXPECT_TRUE(reached.insert(t.variant).second) << Spell(t.variant);
      produced[t.variant] = 1;
    }
  }
  EXPECT_EQ(reached.size(), variants.size());
  EXPECT_GT(deep_runs, 100);
  EXPECT_LE(deep_time, share * breadth_time + 8);
  EXPECT_GT(deep_time, share * breadth_time - 8 - 64);
}

INSTANTIATE_TEST_SUITE_P(
    DefaultAndKeptCode, DepthShareTest,
    ::testing::Values(SystematicSource::kDepthShareDuringBreadth,
                      SystematicSource::kDepthShareWithKeptCode));

// Where depth during the pass is for planned tiers only (a backend whose
// every tuple of depth costs a compile), a family whose variants are past
// their planned tiers waits for the pass to end; without it, it goes on
// into its pairs and its random tail.
TEST(SystematicTest, DepthDuringThePassStopsAtThePlannedTiersWhereAsked) {
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kFns, Family::kVadd});
  const Variant fns = *ParseVariant("fns.b32");
  const auto fns_tuples_during_pass = [&](bool planned_only) {
    SystematicSource source(variants, 8, /*endless=*/true);
    source.SetDepthShareDuringBreadth(1.0);
    source.SetDepthPlannedOnlyDuringBreadth(planned_only);
    uint64_t n = 0;
    std::vector<Tuple> run;
    while (!source.breadth_done()) {
      run.clear();
      if (!source.NextRun(run)) break;
      for (const Tuple& t : run) n += t.variant == fns;
    }
    return n;
  };
  const uint64_t planned = PlannedCount(fns);
  EXPECT_LE(fns_tuples_during_pass(true), planned + 8);
  EXPECT_GT(fns_tuples_during_pass(true), planned / 2);
  EXPECT_GT(fns_tuples_during_pass(false), planned + 8);
}

// A variant counts in planned_done the moment its planned tiers (first
// tier, relations, middle tier) have all been produced, whether by runs or
// one tuple at a time, and once.
TEST(SystematicTest, PlannedDoneCountsEachVariantAsItPassesItsPlannedTiers) {
  const std::vector<Variant> variants = {*ParseVariant("add.s32"),
                                         *ParseVariant("mul.hi.u32"),
                                         *ParseVariant("bfe.u32")};
  for (const bool runs : {false, true}) {
    SystematicSource source(variants, 8, /*endless=*/true);
    absl::flat_hash_map<uint64_t, uint64_t> produced;  // by stable id
    int64_t passed = 0;
    std::vector<Tuple> out;
    for (int step = 0; step < 2000 && passed < 3; ++step) {
      out.clear();
      if (runs) {
        ASSERT_TRUE(source.NextRun(out));
      } else {
        out.push_back(*source.Next());
      }
      for (const Tuple& t : out) {
        const uint64_t n = ++produced[StableId(t.variant)];
        if (n == PlannedCount(t.variant)) ++passed;
      }
      EXPECT_EQ(source.planned_done(), passed) << step;
    }
    EXPECT_EQ(passed, 3);
  }
  // add.s32's: the first tier and relations (as the middle tier's test
  // counts them), then each of its two sources at every middle value.
  EXPECT_EQ(PlannedCount(*ParseVariant("add.s32")),
            2 * 5 * 3 + 4 * 3 + 4 * 5 + 2 * MiddleValues(32).size());
}

// Where the compiled code is kept (runtime_first), a set's runtime tier
// (what ptxas claims for every value of an operand: bfe.s32 past the top)
// comes right after the relations, not after the middle tier; the set
// holds the same tuples either way.
TEST(SystematicTest, WithKeptCodeTheRuntimeTierComesBeforeTheMiddleTier) {
  const Variant v = *ParseVariant("bfe.s32");
  const auto run = [&](bool runtime_first, std::vector<Tuple>& all) {
    SystematicSource source({v}, 64, /*endless=*/false, /*runtime_forms=*/true);
    source.SetBreadthInBothForms(true, runtime_first);
    size_t first_probe = 0;
    while (std::optional<Tuple> t = source.Next()) {
      // Past the breadth pass's tuple 0 in both forms.
      if (all.size() >= 2 && first_probe == 0 && t->runtime != 0)
        first_probe = all.size();
      all.push_back(*t);
    }
    return first_probe;
  };
  std::vector<Tuple> early_set, late_set;
  const size_t early = run(true, early_set);
  const size_t late = run(false, late_set);
  // The breadth pass's two tuples, then the set from its tuple 1: late,
  // the probes come after the planned tiers (the first, the relations and
  // the middle tier); early, before the middle tier, each of whose three
  // numbers is alone at its middle values.
  EXPECT_EQ(late, 1 + PlannedCount(v, /*forms=*/true));
  EXPECT_EQ(late - early, MiddleValues(32).size() +
                              2 * MiddleValues(32, /*amount=*/true).size());
  absl::flat_hash_map<Tuple, int> count;
  for (const Tuple& t : early_set) ++count[t];
  for (const Tuple& t : late_set) --count[t];
  for (const auto& [t, n] : count) EXPECT_EQ(n, 0) << Spell(t.variant);
  EXPECT_EQ(early_set.size(), late_set.size());
}

TEST(SystematicTest, RunsGiveTheSameTuplesAsOneAtATime) {
  std::vector<Variant> variants;
  for (const char* s : {"add.s32", "bfe.u64", "vadd.u32.u32.u32", "popc.b32"}) {
    variants.push_back(*ParseVariant(s));
  }
  SystematicSource one(variants, 5), runs(variants, 5);
  std::vector<Tuple> batched;
  while (batched.size() < 2000 && runs.NextRun(batched)) {
  }
  for (const Tuple& t : batched) {
    const std::optional<Tuple> next = one.Next();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(*next, t);
  }
}

// For a worker whose default form is runtime, the tiers that leave the form
// open give every source that may be a runtime value as one; the runtime
// tier keeps its probes (one source runtime, the others immediates).
TEST(SystematicTest, OpenFormsTakeTheDefaultForm) {
  const Variant v = *ParseVariant("bfe.s32");
  SystematicSource source({v}, 64, /*endless=*/false, /*runtime_forms=*/true);
  source.SetRuntimeByDefault(true);
  std::vector<Tuple> tuples;
  while (source.NextRun(tuples)) {
  }
  ASSERT_EQ(tuples.size(), SystematicCount(v, /*forms=*/true));
  int all = 0, one = 0;
  for (const Tuple& t : tuples) {
    all += t.runtime == 0b111;
    one += std::popcount(t.runtime) == 1;
    ASSERT_NE(t.runtime, 0) << "an open form left as immediates";
  }
  EXPECT_GT(all, 0);
  EXPECT_GT(one, 0);
  EXPECT_EQ(all + one, static_cast<int>(tuples.size()));
}

// Equal time, not equal tuples: a family four times as costly gets a
// quarter of the tuples after the breadth pass.
TEST(SystematicTest, FamilyCostsGiveFamiliesEqualTime) {
  std::vector<Variant> variants;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kAdd || v.family == Family::kMul)
      variants.push_back(v);
  }
  SystematicSource source(variants, 8);
  source.SetFamilyCost(Family::kMul, 4);
  for (size_t i = 0; i < variants.size(); ++i)
    ASSERT_TRUE(source.Next());  // breadth
  int add = 0, mul = 0;
  for (int i = 0; i < 10000; ++i) {  // well before any add variant is exhausted
    const std::optional<Tuple> t = source.Next();
    ASSERT_TRUE(t.has_value());
    (t->variant.family == Family::kAdd ? add : mul) += 1;
  }
  EXPECT_NEAR(static_cast<double>(add) / mul, 4.0, 0.1);
}

// An endless source: once a family's every variant is in its random tail,
// it gets a sixteenth of a family still in its set, so that the video
// families' planned tiers are not held back by small families' random
// tuples; before that, the two share equally.
TEST(SystematicTest, AFamilyInItsRandomTailYieldsToOnesStillInTheirSets) {
  const std::vector<Variant> variants = {*ParseVariant("popc.b32"),
                                         *ParseVariant("bfi.b64")};
  SystematicSource source(variants, 8, /*endless=*/true);
  std::vector<Tuple> run;
  int popc_in_set = 0, bfi_in_set = 0;
  while (source.exhausted() == 0) {
    run.clear();
    ASSERT_TRUE(source.NextRun(run));
    ++(run[0].variant.family == Family::kPopc ? popc_in_set : bfi_in_set);
  }
  EXPECT_NEAR(popc_in_set, bfi_in_set, 2);  // equal time while both in sets
  int popc = 0, bfi = 0;
  for (int i = 0; i < 1700; ++i) {
    run.clear();
    ASSERT_TRUE(source.NextRun(run));
    ++(run[0].variant.family == Family::kPopc ? popc : bfi);
  }
  ASSERT_LT(source.exhausted(), 2);  // bfi.b64 is still in its set
  EXPECT_NEAR(static_cast<double>(bfi) / popc, 16.0, 1.0);
}

TEST(SystematicTest, ASmallSourceIsExhaustedExactly) {
  const std::vector<Variant> variants = {*ParseVariant("popc.b32"),
                                         *ParseVariant("clz.b32")};
  SystematicSource source(variants, 3);
  uint64_t expected =
      SystematicCount(variants[0]) + SystematicCount(variants[1]);
  uint64_t n = 0;
  while (source.Next()) ++n;
  EXPECT_EQ(n, expected);
  EXPECT_EQ(source.exhausted(), 2);
}

// After the sets, an endless source goes on with each variant's random tail:
// fresh tuples (few repeats of three operands), within the operand widths, the
// same for the same index, and small amounts for amount sources now and then.
TEST(SystematicTest, AnEndlessSourceGoesOnWithRandomTails) {
  const std::vector<Variant> variants = {*ParseVariant("popc.b32"),
                                         *ParseVariant("bfe.u64")};
  SystematicSource source(variants, 4, /*endless=*/true);
  const uint64_t sets =
      SystematicCount(variants[0]) + SystematicCount(variants[1]);
  std::vector<Tuple> tuples;
  while (tuples.size() < sets + 20000) ASSERT_TRUE(source.NextRun(tuples));
  EXPECT_EQ(source.exhausted(), 2);
  std::set<std::pair<std::string, std::vector<uint64_t>>> tail;
  int small_positions = 0, tail_tuples = 0;
  for (size_t i = sets; i < tuples.size(); ++i) {
    const Tuple& t = tuples[i];
    std::vector<uint64_t> ops;
    for (int s = 0; s < NumSources(t.variant); ++s) {
      ASSERT_EQ(t.operands.v[s],
                Low(t.operands.v[s], SourceWidth(t.variant, s)));
      ops.push_back(t.operands.v[s]);
    }
    if (t.variant.family != Family::kBfe) continue;  // one operand repeats
    tail.insert({Spell(t.variant), ops});
    ++tail_tuples;
    if (t.operands.v[1] <= 300 && t.operands.v[1] > 64) {
      ++small_positions;  // neither an edge value nor random bits
    }
  }
  EXPECT_GT(tail.size(), 0.8 * tail_tuples);
  EXPECT_GT(small_positions, 100);
  std::vector<Tuple> again;
  TailTuples(variants[1], 123, 2, again);
  std::vector<Tuple> same;
  TailTuples(variants[1], 123, 2, same);
  EXPECT_EQ(again[1].operands.v[0], same[1].operands.v[0]);
  EXPECT_EQ(again[1].operands.v[2], same[1].operands.v[2]);
}

}  // namespace
}  // namespace ptxdiff
