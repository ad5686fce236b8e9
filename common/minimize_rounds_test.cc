#include "common/minimize_rounds.h"

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;

// A number's simplifications: one less, then half of it.
std::vector<int> LessOrHalf(const int& n) {
  if (n == 0) return {};
  return {n - 1, n / 2};
}

// A runner under which every candidate at or above `floor` still shows,
// recording the size of each batch it was given.
auto ShowsAtOrAbove(int floor, std::vector<size_t>* sizes = nullptr) {
  return [floor,
          sizes](std::span<int> batch) -> absl::StatusOr<std::vector<bool>> {
    if (sizes != nullptr) sizes->push_back(batch.size());
    std::vector<bool> still;
    for (int n : batch) still.push_back(n >= floor);
    return still;
  };
}

bool Smaller(const int& a, const int& b) { return a < b; }

TEST(MinimizeInRoundsTest, KeepsTheFirstThatShowsByDefault) {
  auto min = MinimizeInRounds(10, LessOrHalf, ShowsAtOrAbove(4));
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->best, 4);  // 10, 9, ..., 4 one at a time
  EXPECT_EQ(min->rounds, 7);
  EXPECT_EQ(min->candidates, 14);
  EXPECT_FALSE(min->budget_out);
}

TEST(MinimizeInRoundsTest, ChoosesByThePreferenceGiven) {
  auto min = MinimizeInRounds(10, LessOrHalf, ShowsAtOrAbove(4), Smaller);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->best, 4);  // 10, 5 (its half), 4
  EXPECT_EQ(min->rounds, 3);
}

TEST(MinimizeInRoundsTest, EndsWhenTheCaseHasNoCandidates) {
  auto min = MinimizeInRounds(10, LessOrHalf, ShowsAtOrAbove(0), Smaller);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->best, 0);  // 10, 5, 2, 1, 0: none for 0
  EXPECT_EQ(min->rounds, 4);
}

TEST(MinimizeInRoundsTest, StopsAtTheRoundLimit) {
  auto min = MinimizeInRounds(10, LessOrHalf, ShowsAtOrAbove(0),
                              FirstThatShows{}, {.max_rounds = 3});
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->best, 7);
  EXPECT_EQ(min->rounds, 3);
  EXPECT_FALSE(min->budget_out);
}

TEST(MinimizeInRoundsTest, RespectsTheCandidateBudget) {
  std::vector<size_t> sizes;
  auto min = MinimizeInRounds(10, LessOrHalf, ShowsAtOrAbove(0, &sizes),
                              FirstThatShows{}, {.max_candidates = 5});
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_THAT(sizes, ElementsAre(2, 2, 1));  // the last batch cut to fit
  EXPECT_EQ(min->candidates, 5);
  EXPECT_EQ(min->best, 7);
  EXPECT_TRUE(min->budget_out);
}

TEST(MinimizeInRoundsTest, ReturnsTheRunnersError) {
  int calls = 0;
  auto fails_second =
      [&calls](std::span<int> batch) -> absl::StatusOr<std::vector<bool>> {
    if (++calls == 2) return absl::UnavailableError("worker crashed");
    return std::vector<bool>(batch.size(), true);
  };
  auto min = MinimizeInRounds(10, LessOrHalf, fails_second);
  EXPECT_EQ(min.status(), absl::UnavailableError("worker crashed"));
}

TEST(MinimizeInRoundsTest, AnAnswerPerCandidateIsRequired) {
  auto one_answer = [](std::span<int>) -> absl::StatusOr<std::vector<bool>> {
    return std::vector<bool>{true};
  };
  auto min = MinimizeInRounds(10, LessOrHalf, one_answer);
  EXPECT_EQ(min.status().code(), absl::StatusCode::kInternal);
}

// What the runner notes on a candidate stays with it when it is kept.
struct Noted {
  int n = 0;
  std::string seen;
};

TEST(MinimizeInRoundsTest, KeepsWhatTheRunnerNotedOnTheCandidate) {
  auto candidates = [](const Noted& c) {
    return c.n == 0 ? std::vector<Noted>{} : std::vector<Noted>{{c.n - 1, ""}};
  };
  auto notes = [](std::span<Noted> batch) -> absl::StatusOr<std::vector<bool>> {
    for (Noted& c : batch) c.seen = "seen at " + std::to_string(c.n);
    return std::vector<bool>(batch.size(), batch[0].n >= 2);
  };
  auto min = MinimizeInRounds(Noted{5, "start"}, candidates, notes);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(min->best.n, 2);
  EXPECT_EQ(min->best.seen, "seen at 2");
}

}  // namespace
}  // namespace ptxdiff
