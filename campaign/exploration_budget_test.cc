#include "campaign/exploration_budget.h"

#include <algorithm>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

std::vector<int> Range(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

bool Any(int) { return true; }

TEST(ExploredBucketTest, SmallCountsAreExactLargeOnesPowersOfTwo) {
  EXPECT_EQ(ExploredBucket(0), 0);
  EXPECT_EQ(ExploredBucket(63), 63);
  EXPECT_EQ(ExploredBucket(64), 64);
  EXPECT_EQ(ExploredBucket(127), 64);
  EXPECT_EQ(ExploredBucket(128), 65);
  EXPECT_EQ(ExploredBucket(UINT32_MAX), kExploredBuckets - 1);
  for (int b = 0; b < kExploredBuckets; ++b) {
    EXPECT_EQ(ExploredBucket(ExploredBucketLow(b)), b);
    EXPECT_EQ(ExploredBucket(ExploredBucketHigh(b)), b);
  }
}

// A pass gives each variant once, in a shuffled order, and only then does
// the budget rise: a variant that took its share waits for the next pass.
TEST(ExplorationBudgetTest, APassGivesEveryVariantOnceThenRaisesTheBudget) {
  ExplorationBudget budget({3, 5, 7, 9, 11}, 12, /*seed=*/42);
  std::vector<int> pass;
  for (int i = 0; i < 5; ++i) pass.push_back(budget.Next(Any));
  EXPECT_EQ(std::set<int>(pass.begin(), pass.end()),
            (std::set<int>{3, 5, 7, 9, 11}));
  EXPECT_NE(pass, (std::vector<int>{3, 5, 7, 9, 11}));  // shuffled
  for (uint32_t i = 0; i < ExplorationBudget::kTuplesPerPass; ++i)
    budget.Count(pass[0]);
  EXPECT_TRUE(budget.HadItsShare(pass[0]));
  EXPECT_FALSE(budget.HadItsShare(pass[1]));
  // With twice that, it has had the second pass's share too: that pass
  // gives the four others alone.
  for (uint32_t i = 0; i < ExplorationBudget::kTuplesPerPass; ++i)
    budget.Count(pass[0]);
  std::vector<int> second;
  for (int i = 0; i < 4; ++i) second.push_back(budget.Next(Any));
  EXPECT_EQ(std::count(second.begin(), second.end(), pass[0]), 0);
  EXPECT_EQ(std::set<int>(second.begin(), second.end()).size(), 4u);
}

TEST(ExplorationBudgetTest, OnlyWantedVariantsAreGiven) {
  ExplorationBudget budget(Range(10), 10);
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ(budget.Next([](int index) { return index == 6; }), 6);
  }
  EXPECT_EQ(budget.Next([](int) { return false; }), -1);
}

TEST(ExplorationBudgetTest, AVariantOutsideTheBudgetHasHadItsShare) {
  ExplorationBudget budget({1, 2}, 4);
  EXPECT_TRUE(budget.HadItsShare(0));
  EXPECT_FALSE(budget.HadItsShare(1));
  budget.Count(0);  // not counted: not one of the budget's
  EXPECT_EQ(budget.tuples(0), 0u);
  EXPECT_EQ(budget.Histogram()[0], 2);
}

TEST(ExplorationBudgetTest, TheHistogramFollowsTheCounts) {
  ExplorationBudget budget(Range(4), 4);
  for (int i = 0; i < 3; ++i) budget.Count(1);
  for (int i = 0; i < 100; ++i) budget.Count(2);
  const std::vector<int64_t> h = budget.Histogram();
  ASSERT_EQ(h.size(), static_cast<size_t>(kExploredBuckets));
  EXPECT_EQ(h[0], 2);
  EXPECT_EQ(h[3], 1);
  EXPECT_EQ(h[ExploredBucket(100)], 1);
  EXPECT_EQ(budget.tuples(2), 100u);
}

TEST(LeastExploredTextTest, NamesTheLeastExploredPercentAndTheMedian) {
  std::vector<int64_t> h(kExploredBuckets);
  h[2] = 3;     // the least explored: 3 variants got 2 tuples
  h[5] = 197;   // then 5
  h[64] = 100;  // 64 to 127
  EXPECT_EQ(LeastExploredText(h),
            "least-explored variants: 3 of 300 got at most 2 tuples from fuzz "
            "inputs beyond the systematic tiers; the median variant got 5");
  h[5] = 0;
  h[64] = 297;
  EXPECT_THAT(LeastExploredText(h), HasSubstr("the median variant got 64 to "
                                              "127"));
  EXPECT_EQ(LeastExploredText(std::vector<int64_t>(kExploredBuckets)), "");
  std::vector<int64_t> unexplored(kExploredBuckets);
  unexplored[0] = 9;  // a short run on a slow backend
  unexplored[1] = 1;
  EXPECT_EQ(LeastExploredText(unexplored),
            "least-explored variants: 9 of 10 got no tuples from fuzz inputs "
            "beyond the systematic tiers; the median variant got none");
}

}  // namespace
}  // namespace ptxdiff
