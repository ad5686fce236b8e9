#include "isa/fuzz_input.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(FuzzInputTest, RoundTripsEveryFamily) {
  for (const FamilyInfo& f : AllFamilies()) {
    Variant v;
    bool found = false;
    ForEachVariant(f.family, [&](const Variant& x) {
      if (!found) v = x, found = true;
    });
    const std::vector<Operands> ops = {{{1, 2, 3, 4}}, {{~0ull, 0, 7, 9}}};
    auto tuples = DecodeFuzzInput(EncodeFuzzInput(v, ops));
    ASSERT_TRUE(tuples.ok()) << f.opcode << ": " << tuples.status();
    ASSERT_EQ(tuples->size(), 2u);
    EXPECT_EQ((*tuples)[0].variant, v);
    EXPECT_EQ((*tuples)[1].operands.v[0], ~0ull >> (64 - SourceWidth(v, 0)));
  }
}

TEST(FuzzInputTest, BadInputsNameTheProblem) {
  EXPECT_THAT(DecodeFuzzInput("abc").status().message(), HasSubstr("truncated"));
  EXPECT_THAT(DecodeFuzzInput(std::string(24, 'x')).status().message(),
              HasSubstr("names no known variant"));
  const std::string only_id = EncodeFuzzInput(*ParseVariant("add.s32"), {});
  EXPECT_THAT(DecodeFuzzInput(only_id + "1234").status().message(),
              HasSubstr("16 needed for one tuple"));
}

}  // namespace
}  // namespace ptxdiff
