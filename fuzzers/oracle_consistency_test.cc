#include "fuzzers/oracle_consistency.h"

#include <vector>

#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// An input naming `v` by its stable id, then `operands` (8 bytes each).
std::vector<uint8_t> Input(const Variant& v,
                           const std::vector<uint64_t>& operands) {
  std::vector<uint8_t> bytes;
  const uint64_t id = StableId(v);
  for (int i = 0; i < 8; ++i) bytes.push_back(id >> (8 * i));
  for (uint64_t x : operands) {
    for (int i = 0; i < 8; ++i) bytes.push_back(x >> (8 * i));
  }
  return bytes;
}

TEST(OracleConsistencyTest, DecodesVariantAndMaskedOperands) {
  const Variant add16 = *ParseVariant("add.s16");
  const auto bytes = Input(add16, {0x12345, 0xffffffff, 7, 8, 9});
  auto batch = DecodeBatch(bytes.data(), bytes.size());
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->variant, add16);
  ASSERT_EQ(batch->tuples.size(), 2u);  // the fifth operand is left over
  EXPECT_EQ(batch->tuples[0].v[0], 0x2345u);
  EXPECT_EQ(batch->tuples[0].v[1], 0xffffu);
  EXPECT_EQ(batch->tuples[1].v[0], 7u);
}

TEST(OracleConsistencyTest, RejectsInputsWithoutATuple) {
  EXPECT_FALSE(DecodeBatch(nullptr, 0).has_value());
  const auto bytes = Input(*ParseVariant("add.s32"), {1});  // half a tuple
  EXPECT_FALSE(DecodeBatch(bytes.data(), bytes.size()).has_value());
  // An id no variant has: a foreign file, not the first variant.
  std::vector<uint8_t> foreign(8 + 16, 0xab);
  EXPECT_FALSE(DecodeBatch(foreign.data(), foreign.size()).has_value());
}

TEST(OracleConsistencyTest, CapsTuplesPerInput) {
  const auto bytes = Input(*ParseVariant("popc.b32"),
                           std::vector<uint64_t>(kMaxTuplesPerInput + 10, 1));
  EXPECT_EQ(DecodeBatch(bytes.data(), bytes.size())->tuples.size(),
            kMaxTuplesPerInput);
}

TEST(OracleConsistencyTest, OraclesAgreeOnADecodedBatch) {
  const auto bytes = Input(*ParseVariant("vmad.s32.u32.s32.sat.shr15"),
                           {0x80000000, 0xffffffff, 0x7fffffff});
  EXPECT_EQ(FindOracleDisagreement(*DecodeBatch(bytes.data(), bytes.size())),
            std::nullopt);
}

}  // namespace
}  // namespace ptxdiff
