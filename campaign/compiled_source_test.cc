#include "campaign/compiled_source.h"

#include <vector>

#include "campaign/systematic_source.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

TEST(CompiledSourceTest, NothingToGiveBeforeAVariantIsCompiled) {
  CompiledSource source;
  std::vector<Tuple> out;
  EXPECT_FALSE(source.NextRun(64, out));
  EXPECT_TRUE(out.empty());
}

// A tuple of each variant in turn, in its register shape, with the sources
// that cannot be runtime values as the compiled tuple had them: every tuple
// runs on the code already compiled.
TEST(CompiledSourceTest, RunsAreTheCompiledShapesInTurn) {
  const Variant lop3 = ParseVariant("lop3.b32").value();
  const Variant add = ParseVariant("add.u32").value();
  CompiledSource source;
  source.Add({lop3, {{1, 2, 3, 0x96}}, RuntimeCapableSources(lop3)});
  source.Add({add, {{1, 2}}, 0});  // put in its register shape
  EXPECT_EQ(source.variants(), 2u);
  std::vector<Tuple> out;
  ASSERT_TRUE(source.NextRun(16, out));
  ASSERT_TRUE(source.NextRun(16, out));
  ASSERT_TRUE(source.NextRun(16, out));
  ASSERT_EQ(out.size(), 48u);
  // add's tuples are its systematic set's, in order.
  std::vector<Tuple> set;
  SystematicTuples(add, 0, out.size() / 2, set);
  for (size_t k = 0; k < set.size(); ++k) {
    EXPECT_EQ(out[2 * k + 1], InRegisterShape(set[k])) << k;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const Tuple& t = out[i];
    EXPECT_EQ(t.variant, i % 2 == 0 ? lop3 : add) << i;
    EXPECT_EQ(t.runtime, RuntimeCapableSources(t.variant));
    if (t.variant == lop3) EXPECT_EQ(t.operands.v[3], 0x96u);
  }
}

// A variant's systematic set first, then its endless tail.
TEST(CompiledSourceTest, TheSystematicSetThenItsTail) {
  const Variant v = ParseVariant("popc.b32").value();
  CompiledSource source;
  source.Add({v, {{5}}, RuntimeCapableSources(v)});
  const uint64_t count = SystematicCount(v);
  std::vector<Tuple> out;
  while (out.size() < count + 100) ASSERT_TRUE(source.NextRun(64, out));
  std::vector<Tuple> set, tail;
  SystematicTuples(v, 0, count, set);
  TailTuples(v, 0, 100, tail);
  for (uint64_t k = 0; k < count; ++k) {
    EXPECT_EQ(out[k], InRegisterShape(set[k])) << k;
  }
  for (uint64_t k = 0; k < 100; ++k) {
    EXPECT_EQ(out[count + k], InRegisterShape(tail[k])) << k;
  }
}

}  // namespace
}  // namespace ptxdiff
