// What isa/spelling_table.cc composes and looks up: a canonical spelling is
// the opcode part, then the operand list only where operands are decorated;
// the lookup by spelling finds a table spelling exactly and nothing else;
// a variant outside the table is spelled and identified by composing.

#include "isa/spelling_table.h"

#include "common/fnv1a.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

Variant V(absl::string_view spelling) { return *ParseVariant(spelling); }

TEST(SpellingTableTest, AVariantWithoutDecoratedOperandsIsItsOpcodePart) {
  EXPECT_EQ(Spell(V("add.sat.s32")), "add.sat.s32");
  EXPECT_EQ(SpellOpcode(V("add.sat.s32")), "add.sat.s32");
  EXPECT_EQ(Spell(V("shf.l.clamp.b32")), "shf.l.clamp.b32");
  // Written with an operand list, the operands undecorated: none in the
  // spelling.
  EXPECT_EQ(Spell(V("vadd2.s32.s32.u32.sat r1, r2, r3, r1")),
            "vadd2.s32.s32.u32.sat");
}

TEST(SpellingTableTest, DecoratedOperandsFollowTheOpcodePart) {
  const Variant selectors = V("vadd.s32.u32.s32.sat r1.b1, r2.h1, r3.b2, r4");
  EXPECT_EQ(SpellOpcode(selectors), "vadd.s32.u32.s32.sat");
  EXPECT_EQ(Spell(selectors), "vadd.s32.u32.s32.sat d.b1, a.h1, b.b2, c");
  EXPECT_EQ(Spell(V("vmad.u32.u32.u32 r0, -r1, r2, r3")),
            "vmad.u32.u32.u32 d, -a, b, c");
  EXPECT_EQ(Spell(V("vmad.s32.s32.u32.sat r0, r1, r2, -r3")),
            "vmad.s32.s32.u32.sat d, a, b, -c");
  EXPECT_EQ(Spell(V("vset2.s32.u32.lt r1.h1, r2, r3, r1")),
            "vset2.s32.u32.lt d.h1, a, b, c");
}

TEST(SpellingTableTest, TheDestinationSuffixIsASelectorOrALaneMask) {
  EXPECT_EQ(DestinationSuffix(V("add.s32")), "");
  EXPECT_EQ(DestinationSuffix(V("vadd.s32.u32.s32 d.b1, a, b, c")), "b1");
  EXPECT_EQ(DestinationSuffix(V("vadd.s32.u32.s32 d.h0, a, b, c")), "h0");
  EXPECT_EQ(DestinationSuffix(V("vset2.s32.u32.lt d.h1, a, b, c")), "h1");
  EXPECT_EQ(DestinationSuffix(V("vsub4.s32.s32.s32.sat d.b0, a, b, c")), "b0");
  // A SIMD instruction that writes every lane has no mask.
  EXPECT_EQ(DestinationSuffix(V("vadd4.u32.u32.u32")), "");
}

TEST(SpellingTableTest, EveryTableSpellingLooksUpItsVariant) {
  for (const Variant& v : AllVariants()) {
    const Variant* found = VariantSpelled(SpellingInTable(v));
    ASSERT_NE(found, nullptr) << Spell(v);
    ASSERT_EQ(*found, v) << Spell(v);
    ASSERT_EQ(VariantSpelled(SpellingInTable(v)), found)
        << "one variant, one address";
  }
}

TEST(SpellingTableTest, OnlyTheExactCanonicalSpellingIsFound) {
  ASSERT_NE(VariantSpelled("add.s32"), nullptr);
  EXPECT_EQ(VariantSpelled("add.s32 "), nullptr);
  EXPECT_EQ(VariantSpelled("add.s32;"), nullptr);
  EXPECT_EQ(VariantSpelled("ADD.S32"), nullptr);
  EXPECT_EQ(VariantSpelled("add.s33"), nullptr);
  EXPECT_EQ(VariantSpelled(""), nullptr);
  // The parser reads other spellings of a variant; the table has one.
  ASSERT_TRUE(ParseVariant("vadd.s32.u32.s32.sat r1, r2.b0, r3.h0").ok());
  EXPECT_EQ(VariantSpelled("vadd.s32.u32.s32.sat r1, r2.b0, r3.h0"), nullptr);
  EXPECT_NE(VariantSpelled("vadd.s32.u32.s32.sat d, a.b0, b.h0"), nullptr);
}

// A variant built by hand may be illegal: it is in no table, and is spelled
// and identified by composing its spelling, which nothing looks up.
TEST(SpellingTableTest, AVariantOutsideTheTableIsComposed) {
  Variant illegal = V("add.u32");
  illegal.sat = true;  // add.sat is .s32 only
  ASSERT_FALSE(IsLegal(illegal));
  EXPECT_EQ(Spell(illegal), "add.sat.u32");
  EXPECT_EQ(SpellWithoutTables(illegal), "add.sat.u32");
  EXPECT_EQ(SpellingInTable(illegal), "");
  EXPECT_EQ(StableId(illegal), Fnv1a64("add.sat.u32"));
  EXPECT_FALSE(VariantByStableId(StableId(illegal)).has_value());
  EXPECT_EQ(VariantSpelled(Spell(illegal)), nullptr);
}

TEST(SpellingTableTest, AVariantRoundTripsThroughItsStableId) {
  for (const Variant& v : AllVariants()) {
    const std::optional<Variant> back = VariantByStableId(StableId(v));
    ASSERT_TRUE(back.has_value()) << Spell(v);
    ASSERT_EQ(*back, v) << Spell(v);
  }
}

}  // namespace
}  // namespace ptxdiff
