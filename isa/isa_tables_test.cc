#include "isa/isa_tables.h"

#include <algorithm>

#include "common/fnv1a.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// The baked tables (what every program links) are what the generator
// composed from this build's family table, read back intact.
TEST(IsaTablesTest, TheBakedTablesAreTheComputedOnes) {
  const ComputedIsaTables computed = ComputeIsaTables();
  const IsaTables& baked = TheIsaTables();
  ASSERT_EQ(baked.variants.size(), computed.variants.size());
  EXPECT_TRUE(std::equal(baked.variants.begin(), baked.variants.end(),
                         computed.variants.begin()));
  EXPECT_EQ(baked.spelling_text, computed.spelling_text);
  EXPECT_EQ(baked.spelling_ends, absl::MakeConstSpan(computed.spelling_ends));
  EXPECT_EQ(baked.stable_ids, absl::MakeConstSpan(computed.stable_ids));
  EXPECT_EQ(baked.by_stable_id, absl::MakeConstSpan(computed.by_stable_id));
}

TEST(IsaTablesTest, EachRowIsOneVariantItsSpellingAndItsId) {
  const IsaTables& t = TheIsaTables();
  ASSERT_EQ(t.spelling_ends.size(), t.variants.size());
  ASSERT_EQ(t.stable_ids.size(), t.variants.size());
  for (size_t i = 0; i < t.variants.size(); i += 97) {
    EXPECT_EQ(t.SpellingAt(i), SpellWithoutTables(t.variants[i]));
    EXPECT_EQ(t.stable_ids[i], Fnv1a64(t.SpellingAt(i)));
    EXPECT_EQ(VariantIndex(t.variants[i]), static_cast<int>(i));
  }
  EXPECT_EQ(t.SpellingAt(0), Spell(AllVariants()[0]));
}

TEST(IsaTablesTest, EveryVariantIsFoundByItsIdAndItsSpelling) {
  const IsaTables& t = TheIsaTables();
  for (size_t i = 0; i < t.variants.size(); ++i) {
    ASSERT_EQ(t.FindByStableId(t.stable_ids[i]), static_cast<int>(i));
    ASSERT_EQ(t.FindByStableId(t.stable_ids[i], t.SpellingAt(i)),
              static_cast<int>(i));
  }
}

TEST(IsaTablesTest, AnUnknownIdOrAnotherSpellingIsNotFound) {
  const IsaTables& t = TheIsaTables();
  EXPECT_EQ(t.FindByStableId(Fnv1a64("add.s33")), -1);
  // The right id with a spelling not its own (a hash collision's case).
  EXPECT_EQ(t.FindByStableId(t.stable_ids[0], t.SpellingAt(1)), -1);
  EXPECT_FALSE(VariantByStableId(Fnv1a64("add.s33")).has_value());
}

}  // namespace
}  // namespace ptxdiff
