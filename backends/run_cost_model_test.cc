#include "backends/run_cost_model.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// A run's timeout is four times its expected time and half a second, where
// a big run's time is known only once one ran: before that, the ceiling.
TEST(ToolCostModelTest, ABigRunWaitsForTheCeilingUntilOneWasTimed) {
  ToolCostModel cost;
  EXPECT_EQ(cost.Timeout(1, absl::Seconds(10)), absl::Seconds(10));
  cost.Learn(1, absl::Milliseconds(70));
  EXPECT_EQ(cost.Timeout(1, absl::Seconds(10)), absl::Milliseconds(780));
  EXPECT_EQ(cost.Timeout(1000, absl::Seconds(10)), absl::Seconds(10));
  cost.Learn(1000, absl::Milliseconds(80));
  EXPECT_EQ(cost.Timeout(1000, absl::Seconds(10)), absl::Milliseconds(820));
  EXPECT_EQ(cost.Timeout(1000, absl::Milliseconds(600)),
            absl::Milliseconds(600));
}

// The fewest tuples a run needs for the tool's start-up to be a share of
// it: none until a start-up and a cost per tuple are both measured.
TEST(ToolCostModelTest, SlotsForAStartUpShareFollowTheLearnedCosts) {
  ToolCostModel cost;
  EXPECT_EQ(cost.SlotsForStartupShare(0.125), 0u);
  cost.Learn(1, absl::Milliseconds(70));
  EXPECT_EQ(cost.SlotsForStartupShare(0.125), 0u);
  cost.Learn(1000, absl::Milliseconds(80));  // 10 us a slot past start-up
  // An eighth of a run: the slots take seven times the start-up.
  EXPECT_NEAR(cost.SlotsForStartupShare(0.125), 49000, 1);
  EXPECT_NEAR(cost.SlotsForStartupShare(0.5), 7000, 1);
}

// A floor of its own (the ptxas backend's): a small run's timeout is four
// times its start-up and that floor.
TEST(ToolCostModelTest, AFloorOfItsOwnIsAddedToEveryTimeout) {
  ToolCostModel cost(absl::Seconds(2));
  cost.Learn(1, absl::Milliseconds(70));
  EXPECT_EQ(cost.Timeout(1, absl::Seconds(10)), absl::Milliseconds(2280));
}

}  // namespace
}  // namespace ptxdiff
