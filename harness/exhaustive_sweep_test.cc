#include "harness/exhaustive_sweep.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "worker/testing/faulty_worker_client.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

Variant V(const char* spelling) { return *ParseVariant(spelling); }


TEST(ExhaustiveSweepTest, TheRuntimeSourcesTakeTheLowBitsOfTheIndex) {
  const Variant add = V("add.u16");
  EXPECT_EQ(InputBits(add), 32);
  const Operands both = NthInput(add, 0b11, 0x1234abcd);
  EXPECT_EQ(both.v[0], 0xabcdu);
  EXPECT_EQ(both.v[1], 0x1234u);
  // b alone at runtime: b varies fastest, a batch shares a's immediate.
  const Operands b_first = NthInput(add, 0b10, 0x1234abcd);
  EXPECT_EQ(b_first.v[1], 0xabcdu);
  EXPECT_EQ(b_first.v[0], 0x1234u);
}

TEST(ExhaustiveSweepTest, EveryIndexIsADistinctInputWithinTheMasks) {
  for (const char* spelling : {"cvt.u16.u8", "not.b16", "addc.cc.u32"}) {
    const Variant v = V(spelling);
    const int bits = std::min(InputBits(v), 16);
    absl::flat_hash_set<std::vector<uint64_t>> seen;
    for (uint64_t i = 0; i < (uint64_t{1} << bits); ++i) {
      const Operands ops = NthInput(v, 0, i);
      std::vector<uint64_t> key;
      for (int s = 0; s < NumSources(v); ++s) {
        EXPECT_EQ(ops.v[s] & ~SourceMask(v, s), 0u) << spelling << " " << i;
        key.push_back(ops.v[s]);
      }
      EXPECT_TRUE(seen.insert(key).second) << spelling << " " << i;
    }
  }
  // A carry-in is one bit: addc.cc.u32's a, b and CC.CF.
  EXPECT_EQ(InputBits(V("addc.cc.u32")), 65);
}

TEST(ExhaustiveSweepTest, NarrowVariantsAreExhaustiveWideOnesSampled) {
  const std::vector<Variant> variants = {V("not.b16"), V("add.u32"),
                                         V("cvt.u16.u8")};
  const ExhaustiveOptions options{.max_bits = 16, .sample = 1000};
  const std::vector<VariantSweep> plan =
      PlanExhaustiveSweep(variants, options, /*forms=*/true);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_TRUE(plan[0].exhaustive);
  EXPECT_EQ(plan[0].inputs, 65536u);
  EXPECT_EQ(plan[0].runtime, 0b1);
  EXPECT_FALSE(plan[1].exhaustive);
  EXPECT_EQ(plan[1].inputs, 1000u);
  EXPECT_EQ(plan[2].inputs, 256u);
  // Without operand forms, every source an immediate; without a sample,
  // the wide variants are left out.
  const std::vector<VariantSweep> narrow = PlanExhaustiveSweep(
      variants, {.max_bits = 16, .sample = 0}, /*forms=*/false);
  ASSERT_EQ(narrow.size(), 2u);
  EXPECT_EQ(narrow[0].runtime, 0);
}

TEST(ExhaustiveSweepTest, ProvesWhatAgreesEverywhereAndRefutesTheRest) {
  // cnot.b16 is wrong from a = 40000 up: 25,536 of its 65,536 inputs.
  auto client =
      StartFaultyWorker({"--fault=wrong-on=cnot", "--when-operand=0:40000"});
  ASSERT_NE(client, nullptr);
  const ExhaustiveOptions options{.max_bits = 16, .sample = 300,
                                  .batch = 4096};
  std::vector<VariantSweep> plan = PlanExhaustiveSweep(
      std::vector<Variant>{V("not.b16"), V("cnot.b16"), V("popc.b32")},
      options, client->identity().forms);
  int reports = 0;
  SweepProgress last;
  RunExhaustiveSweep(
      *client, plan, options, [] { return false; },
      [&](const SweepProgress& p) {
        ++reports;
        last = p;
      });
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_TRUE(plan[0].proved());
  EXPECT_EQ(plan[0].summary.counts.agreed, 65536);
  EXPECT_FALSE(plan[1].proved());
  EXPECT_TRUE(plan[1].refuted());
  EXPECT_EQ(plan[1].summary.counts.mismatched, 65536 - 40000);
  ASSERT_FALSE(plan[1].summary.mismatches.empty());
  EXPECT_THAT(plan[1].summary.mismatches[0], HasSubstr("cnot.b16"));
  // A sample is never a proof, however it went.
  EXPECT_TRUE(plan[2].complete());
  EXPECT_FALSE(plan[2].refuted());
  EXPECT_FALSE(plan[2].proved());
  EXPECT_EQ(plan[2].summary.counts.agreed, 300);
  EXPECT_GE(reports, 1);
  EXPECT_EQ(last.done, last.total);
  EXPECT_EQ(last.total, 2 * 65536u + 300);
}

TEST(ExhaustiveSweepTest, AStoppedSweepProvesNothingItDidNotRun) {
  auto client = StartFaultyWorker();
  ASSERT_NE(client, nullptr);
  const ExhaustiveOptions options{.max_bits = 16, .batch = 1024};
  std::vector<VariantSweep> plan = PlanExhaustiveSweep(
      std::vector<Variant>{V("not.b16")}, options, client->identity().forms);
  int batches = 0;
  RunExhaustiveSweep(
      *client, plan, options, [&] { return ++batches > 3; },
      [](const SweepProgress&) {});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_GT(plan[0].done, 0u);
  EXPECT_LT(plan[0].done, plan[0].inputs);
  EXPECT_FALSE(plan[0].proved());
  EXPECT_EQ(plan[0].summary.counts.agreed, static_cast<int64_t>(plan[0].done));
}

}  // namespace
}  // namespace ptxdiff
