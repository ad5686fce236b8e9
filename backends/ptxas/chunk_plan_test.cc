#include "backends/ptxas/chunk_plan.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;

// Every tuple of `chunks`, in order.
std::vector<int> AllTuples(const std::vector<Chunk>& chunks) {
  std::vector<int> all;
  for (const Chunk& c : chunks)
    all.insert(all.end(), c.tuples.begin(), c.tuples.end());
  return all;
}

// Each chunk's kernels cover its tuples exactly.
void ExpectKernelsCoverTheirTuples(const std::vector<Chunk>& chunks) {
  for (const Chunk& c : chunks) {
    EXPECT_EQ(std::accumulate(c.kernel_sizes.begin(), c.kernel_sizes.end(),
                              size_t{0}),
              c.tuples.size());
    EXPECT_LE(c.kernel_sizes.size(), kMaxKernelsPerModule);
    for (int size : c.kernel_sizes) EXPECT_GT(size, 0);
  }
}

TEST(ChunkPlanTest, TuplesGoIntoKernelsOfTheirSizeLargestFirstInTheirOrder) {
  const std::vector<Chunk> chunks =
      PlanChunks({{2, 0}, {4, 1}, {2, 2}, {4, 3}, {2, 4}, {1, 5}}, {.jobs = 1});
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_THAT(chunks[0].tuples, ElementsAre(1, 3, 0, 2, 4, 5));
  // Size 4: two tuples; size 2: two and one; size 1: one.
  EXPECT_THAT(chunks[0].kernel_sizes, ElementsAre(2, 2, 1, 1));
}

// Runs come in multiples of `jobs`, of about equal cost (kKernelCost per
// kernel and one per tuple): here three kernels whose cost 65 makes a
// share of 33, which the first two kernels reach.
TEST(ChunkPlanTest, EachJobGetsAShareOfTheCost) {
  const std::vector<Chunk> chunks =
      PlanChunks({{2, 0}, {2, 1}, {2, 2}, {2, 3}, {1, 4}}, {.jobs = 2});
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_THAT(chunks[0].tuples, ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(chunks[0].kernel_sizes, ElementsAre(2, 2));
  EXPECT_THAT(chunks[1].tuples, ElementsAre(4));
  EXPECT_THAT(chunks[1].kernel_sizes, ElementsAre(1));
}

TEST(ChunkPlanTest, ABatchLargerThanAModuleTakesSeveralRuns) {
  std::vector<SizedTuple> sized;
  for (int t = 0; t < 1000; ++t) sized.push_back({8, t});
  // 125 kernels of 8, each of cost 28; a module of 10 such kernels costs
  // 280: 13 runs, rounded up to a multiple of 2.
  const std::vector<Chunk> chunks = PlanChunks(
      sized, {.tuples_per_kernel = 8, .kernels_per_module = 10, .jobs = 2});
  EXPECT_EQ(chunks.size(), 14u);
  ExpectKernelsCoverTheirTuples(chunks);
  std::vector<int> in_order(1000);
  std::iota(in_order.begin(), in_order.end(), 0);
  EXPECT_EQ(AllTuples(chunks), in_order);
}

TEST(ChunkPlanTest, NoTuplesNoRuns) {
  EXPECT_TRUE(PlanChunks({}, {}).empty());
  EXPECT_TRUE(PlanHalves({}, 2).empty());
}

TEST(ChunkPlanTest, EveryTupleIsPlannedOnce) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<SizedTuple> sized;
    const int n = static_cast<int>(rng() % 300);
    for (int t = 0; t < n; ++t) sized.push_back({1 << (rng() % 7), t});
    const ChunkLimits limits{
        .tuples_per_kernel = 64,
        .kernels_per_module = 1 + static_cast<int>(rng() % 8),
        .jobs = 1 + static_cast<int>(rng() % 4)};
    const std::vector<Chunk> chunks = PlanChunks(sized, limits);
    ExpectKernelsCoverTheirTuples(chunks);
    std::vector<int> all = AllTuples(chunks);
    std::sort(all.begin(), all.end());
    std::vector<int> expected(n);
    std::iota(expected.begin(), expected.end(), 0);
    ASSERT_EQ(all, expected) << "round " << round;
  }
}

TEST(ChunkPlanTest, AModuleHoldsAtMostItsKernelLimit) {
  std::vector<SizedTuple> sized;
  for (int t = 0; t < 5000; ++t) sized.push_back({1, t});
  const std::vector<Chunk> chunks = PlanChunks(
      sized, {.tuples_per_kernel = 1, .kernels_per_module = 100000, .jobs = 1});
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].kernel_sizes.size(), kMaxKernelsPerModule);
  ExpectKernelsCoverTheirTuples(chunks);
}

// A bisection round: each failed kernel in two, the first half the larger,
// in at least `jobs` runs where there are enough halves.
TEST(ChunkPlanTest, HalvesOfTheFailedKernels) {
  const std::vector<Chunk> one_job = PlanHalves({{0, 1, 2, 3, 4}, {5, 6}}, 1);
  ASSERT_EQ(one_job.size(), 1u);
  EXPECT_THAT(one_job[0].tuples, ElementsAre(0, 1, 2, 3, 4, 5, 6));
  EXPECT_THAT(one_job[0].kernel_sizes, ElementsAre(3, 2, 1, 1));

  const std::vector<Chunk> two_jobs = PlanHalves({{0, 1, 2, 3, 4}}, 2);
  ASSERT_EQ(two_jobs.size(), 2u);
  EXPECT_THAT(two_jobs[0].tuples, ElementsAre(0, 1, 2));
  EXPECT_THAT(two_jobs[1].tuples, ElementsAre(3, 4));
  // More jobs than halves: one run a half.
  EXPECT_EQ(PlanHalves({{0, 1}}, 8).size(), 2u);
}

TEST(ChunkPlanTest, HalvesOfAChunkAreByKernelsOrByTuples) {
  Chunk kernels;
  kernels.AddKernel(std::vector<int>{0, 1});
  kernels.AddKernel(std::vector<int>{2});
  kernels.AddKernel(std::vector<int>{3, 4, 5});
  const auto [first, second] = Halves(kernels);
  EXPECT_THAT(first.tuples, ElementsAre(0, 1));
  EXPECT_THAT(first.kernel_sizes, ElementsAre(2));
  EXPECT_THAT(second.tuples, ElementsAre(2, 3, 4, 5));
  EXPECT_THAT(second.kernel_sizes, ElementsAre(1, 3));

  Chunk one;
  one.AddKernel(std::vector<int>{7, 8, 9});
  const auto [low, high] = Halves(one);
  EXPECT_THAT(low.tuples, ElementsAre(7));
  EXPECT_THAT(high.tuples, ElementsAre(8, 9));
  EXPECT_THAT(high.kernel_sizes, ElementsAre(2));
}

TEST(ChunkPlanTest, DroppedTuplesLeaveTheirKernels) {
  Chunk chunk;
  chunk.AddKernel(std::vector<int>{10, 11});
  chunk.AddKernel(std::vector<int>{12});
  chunk.AddKernel(std::vector<int>{13, 14, 15});
  const Chunk kept =
      WithoutPositions(chunk, {true, false, true, false, true, false});
  EXPECT_THAT(kept.tuples, ElementsAre(11, 13, 15));
  // The kernel of 12 alone is gone.
  EXPECT_THAT(kept.kernel_sizes, ElementsAre(1, 2));
}

TEST(KernelSizesTest, AVariantNotSeenYetGetsTheLargestKernels) {
  const KernelSizes sizes(64);
  EXPECT_EQ(sizes.Of(*ParseVariant("add.u32"), 0), 64);
}

TEST(KernelSizesTest, AVariantThatRarelyFoldsGetsSmallKernels) {
  const Variant folds = *ParseVariant("add.u32");
  const Variant rarely = *ParseVariant("div.u32");
  KernelSizes sizes(64);
  for (int batch = 0; batch < 10; ++batch) {
    sizes.Learn(folds, 0, 100, 100, 0);
    sizes.Learn(rarely, 0, 5, 100, 0);
  }
  EXPECT_EQ(sizes.Of(folds, 0), 64);
  EXPECT_EQ(sizes.Of(rarely, 0), 1);
}

// A shape with few answers yet goes by its variant's rate; once it has
// enough, by its own.
TEST(KernelSizesTest, AShapeCountsOnceItHasEnoughAnswers) {
  const Variant v = *ParseVariant("div.u32");
  const uint32_t by_one = 1, other = 2;
  KernelSizes sizes(64);
  sizes.Learn(v, other, 0, 1000, 0);
  sizes.Learn(v, by_one, 8, 8, 0);
  EXPECT_EQ(sizes.Of(v, by_one), 1) << "8 answers: the variant's rate";
  sizes.Learn(v, by_one, 1000, 1000, 0);
  EXPECT_EQ(sizes.Of(v, by_one), 64);
  EXPECT_EQ(sizes.Of(v, other), 1);
}

// A kernel that did not decode though its tuples fold alone counts as a
// failure of the rate.
TEST(KernelSizesTest, SpuriousFailuresShrinkTheKernels) {
  const Variant v = *ParseVariant("add.u32");
  KernelSizes sizes(64);
  sizes.Learn(v, 0, 100, 100, 400);
  EXPECT_LT(sizes.Of(v, 0), 64);
}

}  // namespace
}  // namespace ptxdiff
