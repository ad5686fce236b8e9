#include "isa/family_table.h"

#include <map>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

int CountOf(Family f) {
  int n = 0;
  ForEachVariant(f, [&](const Variant&) { ++n; });
  return n;
}

TEST(FamilyTableTest, RowsAreInFamilyOrder) {
  ASSERT_EQ(AllFamilies().size(), static_cast<size_t>(kNumFamilies));
  for (int i = 0; i < kNumFamilies; ++i) {
    EXPECT_EQ(static_cast<int>(AllFamilies()[i].family), i);
  }
}

// Counts derived by hand from the syntax lines and restrictions of the spec.
TEST(FamilyTableTest, VariantCountsMatchTheSpec) {
  // 8 types, .sat.s32, .cc on u32 s32 u64 s64
  EXPECT_EQ(CountOf(Family::kAdd), 8 + 1 + 4);
  EXPECT_EQ(CountOf(Family::kSub), 6 + 1 + 4);
  EXPECT_EQ(CountOf(Family::kMul), 3 * 6 - 2);  // no .wide for 64-bit
  // + mad.hi.sat.s32, + mad{.hi,.lo}.cc on u32 s32 u64 s64
  EXPECT_EQ(CountOf(Family::kMad), 3 * 6 - 2 + 1 + 2 * 4);
  // addc{.cc}, subc{.cc}, madc{.hi,.lo}{.cc} on u32 s32 u64 s64
  EXPECT_EQ(CountOf(Family::kAddc), 2 * 4);
  EXPECT_EQ(CountOf(Family::kSubc), 2 * 4);
  EXPECT_EQ(CountOf(Family::kMadc), 2 * 2 * 4);
  EXPECT_EQ(CountOf(Family::kMul24), 4);
  EXPECT_EQ(CountOf(Family::kMad24), 5);
  EXPECT_EQ(CountOf(Family::kMin), 8 + 2);  // + .relu on s16x2, s32
  EXPECT_EQ(CountOf(Family::kBfind), 8);
  EXPECT_EQ(CountOf(Family::kShf), 4);
  EXPECT_EQ(CountOf(Family::kDp2a), 8);
  // dtype x atype x btype x sat x asel x bsel x (none | 3 secops | 6 dsels)
  EXPECT_EQ(CountOf(Family::kVadd), 8 * 2 * 7 * 7 * 10);
  EXPECT_EQ(CountOf(Family::kVshr), 4 * 2 * 2 * 7 * 7 * 10);
  // types x sat x scale x asel x bsel x (plain, -a, -c, .po)
  EXPECT_EQ(CountOf(Family::kVmad), 8 * 2 * 3 * 7 * 7 * 4);
  EXPECT_EQ(CountOf(Family::kVset), 4 * 6 * 7 * 7 * 10);
  EXPECT_EQ(CountOf(Family::kVisaShl), 8 * 8 * 8 * 2);
  // (b16..b64 x eq/ne; u16..u64 x eq..ge, lo..hs; s16..s64 x eq..ge) x
  // (plain, .and, .or, .xor)
  EXPECT_EQ(CountOf(Family::kSetp), (3 * 2 + 3 * 10 + 3 * 6) * 4);
  EXPECT_EQ(CountOf(Family::kSelp), 9);
  EXPECT_EQ(CountOf(Family::kSlct), 9);
  // 8 x 8 pairs, and .sat where dtype's range does not hold atype's: of the
  // 64 pairs, 26 hold (same signedness and dtype at least as wide: 2 x 10;
  // signed dtype wider than an unsigned atype: 6).
  EXPECT_EQ(CountOf(Family::kCvt), 64 + (64 - 26));
  // SIMD video: dtype x atype x btype x (merge, .sat, .add) x masks;
  // vset2/vset4: atype x btype x cmp x (merge, .add) x masks.
  for (Family f : {Family::kVadd2, Family::kVsub2, Family::kVavrg2,
                   Family::kVabsdiff2, Family::kVmin2, Family::kVmax2}) {
    EXPECT_EQ(CountOf(f), 8 * 3 * 3) << InfoOf(f).opcode;
  }
  for (Family f : {Family::kVadd4, Family::kVsub4, Family::kVavrg4,
                   Family::kVabsdiff4, Family::kVmin4, Family::kVmax4}) {
    EXPECT_EQ(CountOf(f), 8 * 3 * 15) << InfoOf(f).opcode;
  }
  EXPECT_EQ(CountOf(Family::kVset2), 4 * 6 * 2 * 3);
  EXPECT_EQ(CountOf(Family::kVset4), 4 * 6 * 2 * 15);
  int simd = 0;
  for (const Variant& v : AllVariants()) simd += IsSimdVideo(v.family);
  EXPECT_EQ(simd, 3456);
}

// SIMD video (PTX ISA 9.7.18.2): a, b, c and the selector "sel", an
// immediate of 16 (2 lanes) or 32 bits (4 lanes) written as a/b suffixes.
TEST(FamilyTableTest, SimdVideoShapes) {
  auto v = [](absl::string_view s) { return *ParseVariant(s); };
  const Variant two = v("vadd2.u32.u32.u32"), four = v("vset4.s32.u32.ne.add");
  EXPECT_EQ(NumSources(two), 4);
  EXPECT_EQ(NumWrittenSources(two), 3);
  EXPECT_EQ(SourceName(two, 3), "sel");
  EXPECT_EQ(SourceWidth(two, 3), 16);
  EXPECT_EQ(SourceWidth(four, 3), 32);
  EXPECT_EQ(SourceWidth(four, 2), 32);
  EXPECT_EQ(ResultWidth(four), 32);
  EXPECT_TRUE(IsSelectorSource(two, 3));
  EXPECT_TRUE(MustBeImmediate(two, 3));
  EXPECT_TRUE(MayBeImmediate(two, 3));
  EXPECT_FALSE(MayBeImmediate(two, 0));
  EXPECT_FALSE(IsSelectorSource(two, 2));
  EXPECT_FALSE(IsSelectorSource(v("lop3.b32"), 3));
  EXPECT_EQ(SourceMask(two, 3), 0x3333u);
  EXPECT_EQ(SourceMask(four, 3), 0x77777777u);
  EXPECT_EQ(SourceMask(four, 0), 0xffffffffu);
  EXPECT_EQ(SimdLanes(Family::kVmax2), 2);
  EXPECT_EQ(SimdLanes(Family::kVmax4), 4);
  EXPECT_EQ(SimdLanes(Family::kVmax), 0);
  EXPECT_FALSE(IsVideo(Family::kVadd2));
  EXPECT_FALSE(IsSimdVideo(Family::kVset));
  EXPECT_EQ(LevelOf(four).ptx, 30);
  EXPECT_EQ(LevelOf(four).sm, 30);
  // The selector's nibbles: lane i of a takes AselPart(i), of b BselPart(i).
  const SimdSelector defaults2{2, DefaultSimdSelector(2)};
  EXPECT_EQ(defaults2.AselPart(0), 0);
  EXPECT_EQ(defaults2.AselPart(1), 1);
  EXPECT_EQ(defaults2.BselPart(0), 2);
  EXPECT_EQ(defaults2.BselPart(1), 3);
  const SimdSelector defaults4{4, DefaultSimdSelector(4)};
  EXPECT_EQ(defaults4.AselPart(3), 3);
  EXPECT_EQ(defaults4.BselPart(0), 4);
  EXPECT_EQ(defaults4.BselPart(3), 7);
  EXPECT_EQ((SimdSelector{4, 0xf0000000}.BselPart(3)), 7);  // the low 3 bits
}

TEST(FamilyTableTest, EveryListedVariantIsLegalAndDistinct) {
  absl::flat_hash_set<Variant> seen;
  for (const Variant& v : AllVariants()) {
    EXPECT_TRUE(IsLegal(v));
    EXPECT_TRUE(seen.insert(v).second) << Spell(v);
  }
}

// ForEachVariantWhile walks the family in ForEachVariant's order and stops
// at the first false.
TEST(FamilyTableTest, ForEachVariantWhileStopsWhereTold) {
  std::vector<Variant> all, first_ten;
  ForEachVariant(Family::kVadd, [&](const Variant& v) { all.push_back(v); });
  ForEachVariantWhile(Family::kVadd, [&](const Variant& v) {
    first_ten.push_back(v);
    return first_ten.size() < 10;
  });
  ASSERT_GT(all.size(), 10u);
  EXPECT_EQ(first_ten, std::vector<Variant>(all.begin(), all.begin() + 10));
}

// VariantsOf reads a family's variants from AllVariants(): the ones
// ForEachVariant composes, in its order, for every family.
TEST(FamilyTableTest, VariantsOfIsWhatForEachVariantComposes) {
  size_t total = 0;
  for (const FamilyInfo& info : AllFamilies()) {
    std::vector<Variant> composed;
    ForEachVariant(info.family,
                   [&](const Variant& v) { composed.push_back(v); });
    const absl::Span<const Variant> read = VariantsOf(info.family);
    EXPECT_EQ(std::vector<Variant>(read.begin(), read.end()), composed)
        << info.opcode;
    total += read.size();
  }
  EXPECT_EQ(total, AllVariants().size());
}

TEST(FamilyTableTest, VariantIndexIsThePositionInAllVariants) {
  const absl::Span<const Variant> all = AllVariants();
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(VariantIndex(all[i]), static_cast<int>(i)) << Spell(all[i]);
  }
  int other_thread = -2;
  std::thread([&] { other_thread = VariantIndex(all.back()); }).join();
  EXPECT_EQ(other_thread, static_cast<int>(all.size()) - 1);
}

// VariantIndex computes a slot from the axis values instead of looking the
// variant up: every value of every axis of a sample of variants, legal or
// not, answers as a plain lookup in AllVariants() does.
TEST(FamilyTableTest, VariantIndexAnswersAsALookupForEveryAxisValue) {
  const absl::Span<const Variant> all = AllVariants();
  absl::flat_hash_map<Variant, int> reference;
  for (size_t i = 0; i < all.size(); ++i)
    reference[all[i]] = static_cast<int>(i);
  int illegal = 0;
  for (size_t i = 0; i < all.size(); i += 113) {
    for (const AxisInfo& axis : AllAxes()) {
      for (int value = 0; value < 256; ++value) {
        Variant v = all[i];
        axis.set(v, value);
        const auto it = reference.find(v);
        const int expected = it == reference.end() ? -1 : it->second;
        illegal += expected < 0;
        ASSERT_EQ(VariantIndex(v), expected)
            << Spell(all[i]) << " with " << axis.label << " = " << value;
        EXPECT_EQ(IsLegal(v), expected >= 0);
      }
    }
  }
  EXPECT_GT(illegal, 0);
  Variant no_family = all[0];
  no_family.family = static_cast<Family>(kNumFamilies);
  EXPECT_EQ(VariantIndex(no_family), -1);
  Variant add_sat_u16 = *ParseVariant("add.s32");
  add_sat_u16.sat = true;  // `.sat` is for add.s32 only
  add_sat_u16.type = Type::kU16;
  EXPECT_EQ(VariantIndex(add_sat_u16), -1);
}

TEST(FamilyTableTest, RejectsCombinationsTheSpecForbids) {
  Variant add_sat_u32{.family = Family::kAdd, .type = Type::kU32, .sat = true};
  EXPECT_FALSE(IsLegal(add_sat_u32));
  Variant mul_wide_u64{
      .family = Family::kMul, .type = Type::kU64, .mul_mode = MulMode::kWide};
  EXPECT_FALSE(IsLegal(mul_wide_u64));
  Variant mad_lo_sat{.family = Family::kMad,
                     .type = Type::kS32,
                     .mul_mode = MulMode::kLo,
                     .sat = true};
  EXPECT_FALSE(IsLegal(mad_lo_sat));
  Variant min_relu_u32{
      .family = Family::kMin, .type = Type::kU32, .relu = true};
  EXPECT_FALSE(IsLegal(min_relu_u32));
  Variant setp_lt_b32{
      .family = Family::kSetp, .type = Type::kB32, .cmp = Cmp::kLt};
  EXPECT_FALSE(IsLegal(setp_lt_b32));  // bit-size: eq and ne only
  Variant setp_lo_s32{
      .family = Family::kSetp, .type = Type::kS32, .cmp = Cmp::kLo};
  EXPECT_FALSE(IsLegal(setp_lo_s32));  // lo..hs: unsigned only
  // set compares its .stype (atype) as setp compares its .type.
  EXPECT_FALSE(IsLegal({.family = Family::kSet, .type = Type::kU32,
                        .atype = Type::kB32, .cmp = Cmp::kLt}));
  EXPECT_FALSE(IsLegal({.family = Family::kSet, .type = Type::kF32,
                        .atype = Type::kS16, .cmp = Cmp::kLo}));
  EXPECT_TRUE(ParseVariant("set.hs.s32.u64").ok());
  Variant setp_lt_u32{
      .family = Family::kSetp, .type = Type::kU32, .cmp = Cmp::kLt};
  EXPECT_TRUE(IsLegal(setp_lt_u32));
  Variant cvt_sat_s32_u16{.family = Family::kCvt,
                          .type = Type::kS32,
                          .atype = Type::kU16,
                          .sat = true};
  EXPECT_FALSE(IsLegal(cvt_sat_s32_u16));  // nothing to saturate
  Variant cvt_sat_u64_s8{.family = Family::kCvt,
                         .type = Type::kU64,
                         .atype = Type::kS8,
                         .sat = true};
  EXPECT_TRUE(IsLegal(cvt_sat_u64_s8));  // negatives clamp to 0
  Variant vadd_merge_and_secop{.family = Family::kVadd,
                               .type = Type::kU32,
                               .atype = Type::kU32,
                               .btype = Type::kU32,
                               .secop = SecOp::kAdd,
                               .dsel = Sel::kB0};
  EXPECT_FALSE(IsLegal(vadd_merge_and_secop));
  // .cc: u32 s32 u64 s64 only, never with .sat, mad only with .hi/.lo.
  for (absl::string_view bad :
       {"add.cc.u16", "add.cc.s16", "add.cc.u16x2", "add.sat.cc.s32",
        "sub.cc.s16", "mad.wide.cc.u32", "mad.hi.sat.cc.s32",
        "mad.lo.cc.u16"}) {
    EXPECT_FALSE(ParseVariant(bad).ok()) << bad;
  }
  for (absl::string_view good :
       {"add.cc.u32", "add.cc.s64", "sub.cc.u64", "mad.hi.cc.s32",
        "mad.lo.cc.u64", "addc.u32", "addc.cc.s64", "subc.cc.u32",
        "madc.hi.u64", "madc.lo.cc.s32"}) {
    EXPECT_TRUE(ParseVariant(good).ok()) << good;
  }
}

TEST(FamilyTableTest, SimdVideoRejectsSatWithAdd) {
  Variant v = *ParseVariant("vadd2.s32.s32.s32.sat");
  v.secop = SecOp::kAdd;
  EXPECT_FALSE(IsLegal(v));
  v = *ParseVariant("vadd4.s32.s32.s32");
  v.secop = SecOp::kMin;  // only .add
  EXPECT_FALSE(IsLegal(v));
  v = *ParseVariant("vadd2.s32.s32.s32");
  v.mask = SimdMask::kB0;  // a 4-lane mask
  EXPECT_FALSE(IsLegal(v));
  v = *ParseVariant("vset2.s32.s32.lt");
  v.sat = true;
  EXPECT_FALSE(IsLegal(v));
}

TEST(FamilyTableTest, CarrySources) {
  auto v = [](absl::string_view s) { return *ParseVariant(s); };
  EXPECT_EQ(NumSources(v("addc.u32")), 3);
  EXPECT_EQ(NumSources(v("subc.cc.u64")), 3);
  EXPECT_EQ(NumSources(v("madc.hi.cc.s32")), 4);
  EXPECT_EQ(NumSources(v("add.cc.u32")), 2);
  EXPECT_EQ(NumSources(v("mad.lo.cc.u32")), 3);
  EXPECT_EQ(SourceName(v("addc.u32"), 2), "cf");
  EXPECT_EQ(SourceWidth(v("addc.u64"), 2), 1);
  EXPECT_EQ(SourceWidth(v("addc.u64"), 1), 64);
  EXPECT_EQ(SourceName(v("madc.lo.u64"), 3), "cf");
  EXPECT_EQ(SourceWidth(v("madc.lo.u64"), 3), 1);
  EXPECT_EQ(SourceName(v("madc.lo.u64"), 2), "c");
  EXPECT_EQ(ResultWidth(v("madc.hi.u64")), 64);
  EXPECT_EQ(CarryInSource(v("subc.u32")), 2);
  EXPECT_EQ(CarryInSource(v("add.cc.u32")), -1);
  EXPECT_FALSE(MayBeImmediate(v("addc.u32"), 2));
  EXPECT_TRUE(MayBeImmediate(v("addc.u32"), 1));
  EXPECT_TRUE(HasCarryOut(v("add.cc.u32")));
  EXPECT_TRUE(HasCarryOut(v("madc.lo.cc.u32")));
  EXPECT_FALSE(HasCarryOut(v("addc.u32")));
  EXPECT_FALSE(HasCarryOut(v("add.u32")));
  EXPECT_TRUE(HasCarryIn(v("addc.u32")));
  EXPECT_FALSE(HasCarryIn(v("add.cc.u32")));
}

TEST(FamilyTableTest, OperandShapes) {
  auto v = [](absl::string_view s) { return *ParseVariant(s); };
  EXPECT_EQ(ResultWidth(v("mul.wide.u32")), 64);
  EXPECT_EQ(ResultWidth(v("mul.wide.s16")), 32);
  EXPECT_EQ(SourceWidth(v("mad.wide.s32"), 2), 64);
  EXPECT_EQ(SourceWidth(v("mad.wide.s32"), 0), 32);
  EXPECT_EQ(ResultWidth(v("popc.b64")), 32);
  EXPECT_EQ(SourceWidth(v("popc.b64"), 0), 64);
  EXPECT_EQ(SourceWidth(v("bfe.u64"), 1), 32);
  EXPECT_EQ(ResultWidth(v("add.s16")), 16);
  EXPECT_EQ(ResultWidth(v("add.u16x2")), 32);
  EXPECT_EQ(NumSources(v("bfi.b32")), 4);
  EXPECT_EQ(NumSources(v("vadd.u32.u32.u32")), 2);
  EXPECT_EQ(NumSources(v("vadd.u32.u32.u32.add")), 3);
  EXPECT_EQ(NumSources(v("vadd.u32.u32.u32 d.b0, a, b, c")), 3);
  EXPECT_EQ(NumSources(v("vmad.u32.u32.u32")), 3);
  EXPECT_EQ(SourceWidth(v("visa.shl.q.ub.uw"), 0), 8);
  EXPECT_EQ(SourceWidth(v("visa.shl.q.ub.uw"), 1), 16);
  EXPECT_EQ(ResultWidth(v("visa.shl.q.ub.uw")), 64);
  EXPECT_EQ(SourceName(v("fns.b32"), 1), "base");
  EXPECT_EQ(ResultWidth(v("setp.lt.s64")), 1);  // a predicate
  EXPECT_EQ(SourceWidth(v("setp.lt.s64"), 1), 64);
  EXPECT_EQ(SourceWidth(v("selp.b16"), 0), 16);
  EXPECT_EQ(SourceWidth(v("selp.b16"), 2), 1);
  EXPECT_EQ(SourceWidth(v("slct.u64.s32"), 1), 64);
  EXPECT_EQ(SourceWidth(v("slct.u64.s32"), 2), 32);
  EXPECT_EQ(ResultWidth(v("cvt.s8.u64")), 8);
  EXPECT_EQ(SourceWidth(v("cvt.s8.u64"), 0), 64);
  EXPECT_EQ(ResultWidth(v("cvt.sat.u64.s16")), 64);
  EXPECT_EQ(SourceWidth(v("cvt.sat.u64.s16"), 0), 16);
  EXPECT_FALSE(MayBeImmediate(v("vadd.u32.u32.u32"), 1));
  EXPECT_TRUE(MayBeImmediate(v("shf.l.clamp.b32"), 2));
  EXPECT_TRUE(MayBeImmediate(v("selp.b32"), 1));
  EXPECT_FALSE(MayBeImmediate(v("selp.b32"), 2));  // c, a predicate
}

// The widths are row data (FamilyInfo::source_widths, result_width): one per
// rule, so that a wrong row shows.
TEST(FamilyTableTest, WidthsAreRowData) {
  auto v = [](absl::string_view s) { return *ParseVariant(s); };
  EXPECT_EQ(SourceWidth(v("mad.wide.u32"), 0), 32);
  EXPECT_EQ(SourceWidth(v("mad.wide.u32"), 2), 64);  // c as wide as d
  EXPECT_EQ(ResultWidth(v("mad.wide.u32")), 64);
  EXPECT_EQ(SourceWidth(v("mad.lo.u64"), 2), 64);
  EXPECT_EQ(ResultWidth(v("mul.hi.u16")), 16);
  EXPECT_EQ(SourceWidth(v("bfe.u64"), 0), 64);
  EXPECT_EQ(SourceWidth(v("bfe.u64"), 1), 32);  // position
  EXPECT_EQ(SourceWidth(v("bfe.u64"), 2), 32);  // length
  EXPECT_EQ(SourceWidth(v("bfi.b64"), 1), 64);
  EXPECT_EQ(SourceWidth(v("bfi.b64"), 3), 32);
  EXPECT_EQ(SourceWidth(v("shl.b16"), 1), 32);  // shift amount
  EXPECT_EQ(SourceWidth(v("shr.s64"), 0), 64);
  EXPECT_EQ(SourceWidth(v("lop3.b32"), 2), 32);
  EXPECT_EQ(SourceWidth(v("lop3.b32"), 3), 8);  // immLut
  EXPECT_EQ(ResultWidth(v("setp.lt.s64")), 1);
  EXPECT_EQ(SourceWidth(v("setp.lt.and.s64"), 2), 1);  // the boolop's c
  EXPECT_EQ(SourceWidth(v("selp.b64"), 2), 1);
  EXPECT_EQ(SourceWidth(v("slct.s16.s32"), 2), 32);
  EXPECT_EQ(SourceWidth(v("cvt.u16.u64"), 0), 64);  // atype
  EXPECT_EQ(ResultWidth(v("cvt.u16.u64")), 16);
  EXPECT_EQ(SourceWidth(v("visa.shl.uq.b.d"), 0), 8);   // atype
  EXPECT_EQ(SourceWidth(v("visa.shl.uq.b.d"), 1), 32);  // btype
  EXPECT_EQ(ResultWidth(v("popc.b64")), 32);
  EXPECT_EQ(ResultWidth(v("clz.b64")), 32);
  EXPECT_EQ(ResultWidth(v("bfind.shiftamt.s64")), 32);
  EXPECT_EQ(SourceWidth(v("addc.u32"), 2), 1);            // CC.CF
  EXPECT_EQ(SourceWidth(v("dp4a.u32.s32"), 2), 32);       // no type: 32
  EXPECT_EQ(SourceWidth(v("vadd2.u32.u32.u32"), 3), 16);  // the selector
  EXPECT_EQ(SourceWidth(v("vadd4.u32.u32.u32"), 3), 32);
  // The video families read and write 32-bit registers (PTX ISA 9.7.18).
  for (const Variant& x : AllVariants()) {
    if (!IsVideo(x.family) && !IsSimdVideo(x.family)) continue;
    for (int i = 0; i < NumSources(x); ++i) {
      if (!IsSelectorSource(x, i)) EXPECT_EQ(SourceWidth(x, i), 32) << i;
    }
    EXPECT_EQ(ResultWidth(x), 32);
  }
}

TEST(FamilyTableTest, SourceNamesAreRowData) {
  for (const FamilyInfo& info : AllFamilies()) {
    // A row names all its sources or none (a, b, c, d).
    if (!info.source_names.empty()) {
      EXPECT_EQ(info.source_names.size(), info.num_sources) << info.opcode;
    }
  }
  auto v = [](absl::string_view s) { return *ParseVariant(s); };
  EXPECT_EQ(SourceName(v("add.s32"), 1), "b");
  EXPECT_EQ(SourceName(v("fns.b32"), 2), "offset");
  EXPECT_EQ(SourceName(v("lop3.b32"), 3), "immLut");
  EXPECT_EQ(SourceName(v("addc.cc.u32"), 2), "cf");
  EXPECT_EQ(SourceName(v("madc.hi.s64"), 3), "cf");
  EXPECT_EQ(SourceName(v("visa.shl.q.ub.uw"), 0), "src0");
  EXPECT_EQ(InfoOf(Family::kVisaShl).isa, TargetIsa::kIntelVisa);
  EXPECT_EQ(InfoOf(Family::kAdd).isa, TargetIsa::kPtx);
}

TEST(FamilyTableTest, IsaLevels) {
  auto level = [](absl::string_view s) { return LevelOf(*ParseVariant(s)); };
  EXPECT_EQ(level("add.s32").ptx, 10);
  EXPECT_EQ(level("add.u16x2").ptx, 80);
  EXPECT_EQ(level("add.u16x2").sm, 90);
  EXPECT_EQ(level("min.relu.s32").sm, 90);
  EXPECT_EQ(level("min.s32").sm, 0);
  EXPECT_EQ(level("max.s16x2").ptx, 80);
  EXPECT_EQ(level("sub.s32").ptx, 10);
  EXPECT_EQ(level("bmsk.wrap.b32").sm, 70);
  EXPECT_EQ(level("dp4a.u32.s32").ptx, 50);
  EXPECT_EQ(level("shf.r.wrap.b32").sm, 32);
  EXPECT_EQ(level("fns.b32").ptx, 60);
  for (const char* s :
       {"setp.hs.u16", "selp.b64", "slct.s16.s32", "cvt.sat.u8.s64"}) {
    EXPECT_EQ(level(s).ptx, 10) << s;
    EXPECT_EQ(level(s).sm, 0) << s;
  }
  // PTX ISA 9.7.2: 32-bit add.cc/addc/sub.cc/subc PTX 1.2 on all targets,
  // mad.cc/madc PTX 3.0 sm_20; every 64-bit form PTX 4.3 sm_20.
  for (absl::string_view s :
       {"add.cc.u32", "addc.s32", "sub.cc.s32", "subc.cc.u32"}) {
    EXPECT_EQ(level(s).ptx, 12) << s;
    EXPECT_EQ(level(s).sm, 0) << s;
  }
  for (absl::string_view s : {"mad.lo.cc.u32", "madc.hi.s32"}) {
    EXPECT_EQ(level(s).ptx, 30) << s;
    EXPECT_EQ(level(s).sm, 20) << s;
  }
  for (absl::string_view s : {"add.cc.u64", "addc.s64", "sub.cc.s64",
                              "subc.u64", "mad.hi.cc.u64", "madc.lo.cc.s64"}) {
    EXPECT_EQ(level(s).ptx, 43) << s;
    EXPECT_EQ(level(s).sm, 20) << s;
  }
  EXPECT_EQ(level("add.u64").ptx, 10);  // without .cc: unchanged
  EXPECT_EQ(level("mad.lo.u32").sm, 0);
}

}  // namespace
}  // namespace ptxdiff
