#include "isa/spelling.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/fnv1a.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(SpellingTest, EveryVariantRoundTrips) {
  for (const Variant& v : AllVariants()) {
    const std::string s = Spell(v);
    auto parsed = ParseVariant(s);
    ASSERT_TRUE(parsed.ok()) << s << ": " << parsed.status();
    EXPECT_EQ(*parsed, v) << s;
  }
}

TEST(SpellingTest, StableIdsAreDistinctAndFixed) {
  absl::flat_hash_set<uint64_t> ids;
  for (const Variant& v : AllVariants()) {
    EXPECT_TRUE(ids.insert(StableId(v)).second) << Spell(v);
  }
  // Pinned: these must never change, or corpora and crash files break.
  EXPECT_EQ(StableId(*ParseVariant("add.s32")), 0x96dfa25839970f8aull);
  EXPECT_EQ(
      StableId(*ParseVariant("vshr.s32.u32.u32.clamp.add d, a.b1, b.h1, c")),
      StableId(*ParseVariant("vshr.s32.u32.u32.clamp.add  d,a.b1,b.h1,c;")));
}

// The spelling table is composed with each opcode part reused along a run
// of variants; every spelling still starts with its own opcode part
// (composed on its own by SpellOpcode), ids are hashes of the spellings, and
// these ids of decorated spellings are pinned as they were when each
// spelling was composed whole.
TEST(SpellingTest, TheSpellingTableMatchesEachVariant) {
  for (const Variant& v : AllVariants()) {
    const std::string spelling = Spell(v);
    const std::string opcode = SpellOpcode(v);
    ASSERT_EQ(spelling.substr(0, spelling.find(' ')), opcode);
    ASSERT_EQ(StableId(v), Fnv1a64(spelling)) << spelling;
    // The tables computed at build time, against composing afresh.
    ASSERT_EQ(SpellWithoutTables(v), spelling);
  }
  EXPECT_EQ(StableId(*ParseVariant("vadd.s32.u32.s32.sat d.b1, a.h1, b.b2, c")),
            0xeb191301b5d7ba92ull);
  EXPECT_EQ(StableId(*ParseVariant("vmad.u32.u32.u32 d, -a, b, c")),
            0xb6a86bdf9695e4e4ull);
  EXPECT_EQ(StableId(*ParseVariant("vmax2.u32.u32.u32 d.h1, a, b, c")),
            0x234e771b23f2941aull);
}

TEST(SpellingTest, CanonicalSpellings) {
  auto spell = [](absl::string_view s) { return Spell(*ParseVariant(s)); };
  EXPECT_EQ(spell("mad.hi.sat.s32"), "mad.hi.sat.s32");
  EXPECT_EQ(spell("vadd.s32.u32.s32.sat r1, r2.b0, r3.h0"),
            "vadd.s32.u32.s32.sat d, a.b0, b.h0");
  EXPECT_EQ(spell("vmad.s32.s32.u32.sat r0, r1, r2, -r3"),
            "vmad.s32.s32.u32.sat d, a, b, -c");
  EXPECT_EQ(spell("shf.l.clamp.b32"), "shf.l.clamp.b32");
  EXPECT_EQ(spell("visa.shl.sat.d.ub.uw"), "visa.shl.sat.d.ub.uw");
}

TEST(SpellingTest, PtxInstructionDecoratesOperands) {
  EXPECT_EQ(
      PtxInstruction(*ParseVariant("vadd.u32.u32.u32.sat d.b1, a, b.h0, c"),
                     "%r0", {"%r1", "%r2", "%r3"}),
      "vadd.u32.u32.u32.sat %r0.b1, %r1, %r2.h0, %r3");
  EXPECT_EQ(PtxInstruction(*ParseVariant("vmad.s32.s32.s32 d, a, b, -c"), "%r0",
                           {"%r1", "%r2", "%r3"}),
            "vmad.s32.s32.s32 %r0, %r1, %r2, -%r3");
  EXPECT_EQ(PtxInstruction(*ParseVariant("bfe.s32"), "%r0", {"%r1", "4", "8"}),
            "bfe.s32 %r0, %r1, 4, 8");
  // The instruction text parses back to the same variant.
  for (const Variant& v : AllVariants()) {
    std::vector<std::string> sources;
    for (int i = 0; i < NumSources(v); ++i) sources.push_back("%r9");
    const std::string text = PtxInstruction(v, "%r0", sources);
    auto parsed = ParseVariant(text);
    ASSERT_TRUE(parsed.ok()) << text;
    ASSERT_EQ(*parsed, v) << text;
  }
}

// SIMD video: the mask is part of the variant (`d.h0`), the selectors are
// the value of the sel source and not: the spec's example lines parse to
// the variant without them.
TEST(SpellingTest, SimdVideoMasksAndSelectors) {
  auto spell = [](absl::string_view s) { return Spell(*ParseVariant(s)); };
  EXPECT_EQ(spell("vadd2.s32.s32.u32.sat r1, r2, r3, r1;"),
            "vadd2.s32.s32.u32.sat");
  EXPECT_EQ(spell("vsub2.s32.s32.s32.sat r1.h0, r2.h10, r3.h32, r1;"),
            "vsub2.s32.s32.s32.sat d.h0, a, b, c");
  EXPECT_EQ(spell("vmin2.s32.u32.u32.add r1.h10, r2.h00, r3.h22, r1;"),
            "vmin2.s32.u32.u32.add");
  EXPECT_EQ(spell("vsub4.s32.s32.s32.sat r1.b0, r2.b3210, r3.b7654, r1;"),
            "vsub4.s32.s32.s32.sat d.b0, a, b, c");
  EXPECT_EQ(spell("vset4.u32.u32.ne.add d.b3210, a, b, c"),
            "vset4.u32.u32.ne.add");
  EXPECT_EQ(spell("vset2.s32.u32.lt d.h1, a, b, c"),
            "vset2.s32.u32.lt d.h1, a, b, c");
  // The spec's `r1.b00` is no mask; .h10 is 2-lane only; a bad selector.
  EXPECT_FALSE(ParseVariant("vmin4.s32.u32.u32.add r1.b00, r2, r3, r1").ok());
  EXPECT_FALSE(ParseVariant("vadd4.u32.u32.u32 d.h10, a, b, c").ok());
  EXPECT_FALSE(ParseVariant("vadd2.u32.u32.u32 d, a.h04, b, c").ok());
  EXPECT_FALSE(ParseVariant("vadd4.u32.u32.u32 d, a.b321, b, c").ok());
  EXPECT_FALSE(ParseVariant("vadd4.u32.u32.u32 d, a, b, c, 0x76543210").ok());
}

TEST(SpellingTest, SimdVideoSelectorValues) {
  const Variant two = *ParseVariant("vadd2.u32.u32.u32");
  const Variant four = *ParseVariant("vmin4.s32.u32.u32.add");
  EXPECT_EQ(*SpelledSimdSelector(two, "vadd2.u32.u32.u32"), 0x3210u);
  EXPECT_EQ(*SpelledSimdSelector(two, "vadd2.u32.u32.u32 d, a.h23, b.h01, c"),
            0x0123u);
  EXPECT_EQ(*SpelledSimdSelector(two, "vadd2.u32.u32.u32 d, a, b.h00, c"),
            0x0010u);  // a keeps the default .h10
  EXPECT_EQ(*SpelledSimdSelector(
                four, "vmin4.s32.u32.u32.add r1, r2.b0000, r3.b2222, r1"),
            0x22220000u);
  EXPECT_FALSE(
      SpelledSimdSelector(two, "vadd2.u32.u32.u32 d, a.b10, b, c").ok());
  EXPECT_FALSE(
      SpelledSimdSelector(*ParseVariant("vadd.u32.u32.u32"), "vadd.u32.u32.u32")
          .ok());
  EXPECT_EQ(SpellSimdSelector(2, 0x3210),
            std::make_pair(std::string("h10"), std::string("h32")));
  EXPECT_EQ(SpellSimdSelector(4, 0x32107654),
            std::make_pair(std::string("b7654"), std::string("b3210")));
  EXPECT_EQ(SpellSimdSelector(2, 0xfedc),  // only the low 2 bits count
            std::make_pair(std::string("h10"), std::string("h32")));
  EXPECT_EQ(PtxInstruction(*ParseVariant("vsub2.s32.s32.s32.sat d.h0, a, b, c"),
                           "%r0", {"%r1", "%r2", "%r3", "0x0123"}),
            "vsub2.s32.s32.s32.sat %r0.h0, %r1.h23, %r2.h01, %r3");
  EXPECT_EQ(PtxInstruction(four, "%r0", {"%r1", "%r2", "%r3", "0x22220000"}),
            "vmin4.s32.u32.u32.add %r0, %r1.b0000, %r2.b2222, %r3");
}

TEST(SpellingTest, AcceptsPlainOperandListsAndWhiteSpace) {
  EXPECT_EQ(*ParseVariant("  add.s32   d,a ,b ; "), *ParseVariant("add.s32"));
  EXPECT_EQ(*ParseVariant("bfi.b32 f, a, b, c, d"), *ParseVariant("bfi.b32"));
}

// CC.CF is implicit: addc/subc/madc are written without their "cf" source,
// and PtxInstruction leaves it out.
TEST(SpellingTest, CarryInIsNotAnOperandInTheText) {
  EXPECT_EQ(*ParseVariant("addc.cc.u32 x2, y2, z2;"),
            *ParseVariant("addc.cc.u32"));
  EXPECT_EQ(*ParseVariant("subc.u64 d, a, b"), *ParseVariant("subc.u64"));
  EXPECT_EQ(*ParseVariant("madc.hi.cc.s32 d, a, b, c"),
            *ParseVariant("madc.hi.cc.s32"));
  EXPECT_EQ(*ParseVariant("add.cc.u32 x1, y1, z1;"),
            *ParseVariant("add.cc.u32"));
  EXPECT_EQ(*ParseVariant("mad.lo.cc.u32 d, a, b, c"),
            *ParseVariant("mad.lo.cc.u32"));
  EXPECT_FALSE(ParseVariant("addc.u32 d, a, b, cf").ok());
  EXPECT_EQ(
      PtxInstruction(*ParseVariant("addc.u32"), "%r0", {"%r1", "%r2", "%r3"}),
      "addc.u32 %r0, %r1, %r2");
  EXPECT_EQ(PtxInstruction(*ParseVariant("madc.lo.cc.u64"), "%rd0",
                           {"%rd1", "%rd2", "%rd3", "%r4"}),
            "madc.lo.cc.u64 %rd0, %rd1, %rd2, %rd3");
}

TEST(SpellingTest, SpecAlternativeSpellings) {
  // The spec's own example writes `.relu` last.
  EXPECT_EQ(*ParseVariant("min.s16x2.relu"), *ParseVariant("min.relu.s16x2"));
  // vmad: only the product's sign matters.
  EXPECT_EQ(*ParseVariant("vmad.s32.s32.s32 d, a, -b, c"),
            *ParseVariant("vmad.s32.s32.s32 d, -a, b, c"));
  EXPECT_EQ(*ParseVariant("vmad.s32.s32.s32 d, -a, -b, c"),
            *ParseVariant("vmad.s32.s32.s32"));
}

TEST(SpellingTest, UnknownSpellingNamesNearestValidOnes) {
  auto r = ParseVariant("bfe.b32");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("unknown instruction variant"));
  EXPECT_THAT(r.status().message(), HasSubstr("bfe.u32"));
  EXPECT_THAT(r.status().message(), HasSubstr("bfe.s32"));
  EXPECT_THAT(std::string(ParseVariant("ad.s32").status().message()),
              HasSubstr("add.s32"));
  EXPECT_FALSE(ParseVariant("").ok());
  EXPECT_FALSE(ParseVariant("add.sat.u32").ok());
  EXPECT_FALSE(ParseVariant("vadd.u32.u32.u32.add d.b0, a, b, c").ok());
  EXPECT_FALSE(ParseVariant("vadd.u32.u32.u32.sat d.b1, a.h2, b, c").ok());
  EXPECT_FALSE(ParseVariant("vadd.u32.u32.u32 r1, r2.b4, r3").ok());
}

// Every instruction in the seeds' and the PTX text's Examples blocks that
// belongs to a covered family parses (except the ones spec-notes.md lists).
TEST(SpellingTest, SpecExamplesParse) {
  const char* kExamples[] = {
      "add.u32     x,y,z;",
      "add.sat.s32 c,c,1;",
      "add.u16x2   u,v,w;",
      "sub.s32 c,a,b;",
      "mul.wide.s16 fa,fxs,fys;",
      "mul.lo.s16 fa,fxs,fys;",
      "mul.wide.s32 z,x,y;",
      "mad.lo.s32 d,a,b,c;",
      "mad.lo.s32 r,p,q,r;",
      "mul24.lo.s32 d,a,b;",
      "mad24.lo.s32 d,a,b,c;",
      "sad.s32  d,a,b,c;",
      "sad.u32  d,a,b,d;",
      "div.s32  b,n,i;",
      "rem.s32  x,x,8;",
      "abs.s32  r0,a;",
      "neg.s32  r0,a;",
      "min.s32  r0,a,b;",
      "min.u16  h,i,j;",
      "min.s16x2.relu u,v,w;",
      "max.u32  d,a,b;",
      "max.s32  q,q,0;",
      "max.relu.s16x2 t,t,u;",
      "popc.b32  d, a;",
      "popc.b64  cnt, X;",
      "clz.b32  d, a;",
      "clz.b64  cnt, X;",
      "bfind.u32  d, a;",
      "bfind.shiftamt.s64  cnt, X;",
      "fns.b32 d, 0xaaaaaaaa, 3, 1;",
      "brev.b32  d, a;",
      "bfi.b32  d,a,b,start,len;",
      "szext.clamp.s32 rd, ra, rb;",
      "szext.wrap.u32  rd, 0xffffffff, 0;",
      "bmsk.clamp.b32  rd, ra, rb;",
      "bmsk.wrap.b32   rd, 1, 2;",
      "dp4a.u32.u32           d0, a0, b0, c0;",
      "dp4a.u32.s32           d1, a1, b1, c1;",
      "dp2a.lo.u32.u32           d0, a0, b0, c0;",
      "dp2a.hi.u32.s32           d1, a1, b1, c1;",
      "shf.l.clamp.b32  r3,r1,r0,16;",
      "shf.r.clamp.b32  r1,r0,r0,n;",
      "vadd.s32.u32.s32.sat      r1, r2.b0, r3.h0;",
      "vsub.s32.s32.u32.sat      r1, r2.h1, r3.h1;",
      "vabsdiff.s32.s32.s32.sat  r1.h0, r2.b0, r3.b2, c;",
      "vmin.s32.s32.s32.sat.add  r1, r2, r3, c;",
      "vshl.s32.u32.u32.clamp  r1, r2, r3;",
      "vshr.u32.u32.u32.wrap   r1, r2, r3.h1;",
      "vmad.s32.s32.u32.sat    r0, r1, r2, -r3;",
      "vmad.u32.u32.u32.shr15  r0, r1.h0, r2.h0, r3;",
      "vset.s32.u32.lt    r1, r2, r3;",
      "vset.u32.u32.ne    r1, r2, r3.h1;",
  };
  for (const char* example : kExamples) {
    auto parsed = ParseVariant(example);
    EXPECT_TRUE(parsed.ok()) << example << ": " << parsed.status();
  }
}

}  // namespace
}  // namespace ptxdiff
