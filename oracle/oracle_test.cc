#include "absl/strings/string_view.h"
#include "oracle/oracle.h"

#include <random>
#include <set>
#include <vector>

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
  const std::set<Family> may_be_undefined = {
      Family::kDiv, Family::kRem, Family::kFns, Family::kVmad,
      Family::kVisaShl};
  for (const Variant& v : AllVariants()) {
    if (may_be_undefined.count(v.family)) continue;
    FillEdgeTuples(v, rng, tuples);
    for (const Operands& o : tuples) {
      ASSERT_TRUE(Evaluate(v, o).defined()) << Spell(v);
    }
  }
}

// The f32 special bit patterns are edge values of the 32- and 64-bit
// operands (issue 13); every table's values fit its width.
TEST(EdgeOperandsTest, F32SpecialPatternsAndWidths) {
  for (int width : {32, 64}) {
    const std::vector<uint64_t>& edges = EdgeValues(width);
    const std::set<uint64_t> values(edges.begin(), edges.end());
    EXPECT_EQ(values.size(), edges.size()) << width;
    for (uint64_t x : {0x00000000ull, 0x80000000ull, 0x7f800000ull,
                       0x7f800001ull, 0x7fffffffull, 0xff800000ull,
                       0xffffffffull}) {
      EXPECT_TRUE(values.count(x)) << width << ": " << x;
    }
  }
  for (int width : {8, 16, 24, 32, 64}) {
    for (uint64_t x : EdgeValues(width)) {
      EXPECT_EQ(x, Low(x, width)) << width << ": " << x;
    }
  }
}

}  // namespace
}  // namespace ptxdiff
