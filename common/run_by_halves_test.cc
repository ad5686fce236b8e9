#include "common/run_by_halves.h"

#include <cstddef>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using Part = std::pair<size_t, size_t>;

// A run fails on a part holding any of `failing`; each part run is logged.
auto FailsOn(std::set<size_t> failing, std::vector<Part>& runs) {
  return [failing, &runs](size_t begin, size_t end) -> absl::StatusOr<PartEnd> {
    runs.push_back({begin, end});
    for (size_t i = begin; i < end; ++i) {
      if (failing.contains(i)) return PartEnd::kHalve;
    }
    return PartEnd::kDone;
  };
}

TEST(RunByHalvesTest, HalvesDepthFirstDownToTheCaseThatFails) {
  std::vector<Part> runs;
  ASSERT_TRUE(RunByHalves(0, 8, FailsOn({5}, runs)).ok());
  EXPECT_THAT(runs, ElementsAre(Part{0, 8}, Part{0, 4}, Part{4, 8}, Part{4, 6},
                                Part{4, 5}, Part{5, 6}, Part{6, 8}));
}

TEST(RunByHalvesTest, APartOfOneIsNeverHalved) {
  std::vector<Part> runs;
  ASSERT_TRUE(RunByHalves(3, 4, FailsOn({3}, runs)).ok());
  EXPECT_THAT(runs, ElementsAre(Part{3, 4}));
}

TEST(RunByHalvesTest, APartDoneIsNotHalvedEvenIfItFailed) {
  std::vector<Part> runs;
  auto past_deadline = [&runs](size_t begin,
                               size_t end) -> absl::StatusOr<PartEnd> {
    runs.push_back({begin, end});
    return begin == 0 ? PartEnd::kHalve : PartEnd::kDone;
  };
  ASSERT_TRUE(RunByHalves(0, 4, past_deadline).ok());
  EXPECT_THAT(runs, ElementsAre(Part{0, 4}, Part{0, 2}, Part{0, 1}, Part{1, 2},
                                Part{2, 4}));
}

TEST(RunByHalvesTest, AnErrorEndsTheRun) {
  std::vector<Part> runs;
  auto fails_second = [&runs](size_t begin,
                              size_t end) -> absl::StatusOr<PartEnd> {
    runs.push_back({begin, end});
    if (runs.size() == 2) return absl::InternalError("no cubin");
    return PartEnd::kHalve;
  };
  EXPECT_EQ(RunByHalves(0, 4, fails_second), absl::InternalError("no cubin"));
  EXPECT_THAT(runs, ElementsAre(Part{0, 4}, Part{0, 2}));
}

TEST(RunByHalvesTest, AnEmptyBatchRunsNothing) {
  std::vector<Part> runs;
  ASSERT_TRUE(RunByHalves(0, 0, FailsOn({0}, runs)).ok());
  EXPECT_TRUE(runs.empty());
}

}  // namespace
}  // namespace ptxdiff
