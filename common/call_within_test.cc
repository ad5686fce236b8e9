#include "common/call_within.h"

#include <atomic>
#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "common/interrupt.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// A gate a call waits at until the test opens it.
struct Gate {
  std::atomic<bool> open{false};
  void Wait() const {
    while (!open.load()) absl::SleepFor(absl::Milliseconds(1));
  }
};

TEST(CallWithinTest, ACallThatReturnsIsReturnedAndItsThreadIsReused) {
  const int64_t before = CallThreadsStarted();
  for (int k = 0; k < 20; ++k) {
    auto value = std::make_shared<int>(0);
    EXPECT_EQ(CallWithin([value, k] { *value = k; }, absl::Seconds(60)),
              CallEnd::kReturned);
    EXPECT_EQ(*value, k);
  }
  // One after the other: at most one thread more (one may be idle already).
  EXPECT_LE(CallThreadsStarted() - before, 1);
}

TEST(CallWithinTest, ACallPastItsTimeoutRunsOnAndLaterCallsDoNotWaitForIt) {
  auto gate = std::make_shared<Gate>();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  EXPECT_EQ(CallWithin(
                [gate, finished] {
                  gate->Wait();
                  *finished = true;
                },
                absl::Milliseconds(50)),
            CallEnd::kTimedOut);
  EXPECT_FALSE(finished->load());
  // The held thread does not hold this call.
  auto value = std::make_shared<int>(0);
  EXPECT_EQ(CallWithin([value] { *value = 7; }, absl::Seconds(60)),
            CallEnd::kReturned);
  EXPECT_EQ(*value, 7);
  gate->open = true;
  while (!finished->load()) absl::SleepFor(absl::Milliseconds(1));
}

TEST(CallWithinTest, AStopEndsTheWait) {
  auto gate = std::make_shared<Gate>();
  Interrupt();
  auto ran = std::make_shared<std::atomic<bool>>(false);
  // Recorded before: nothing is started.
  EXPECT_EQ(CallWithin([ran] { *ran = true; }, absl::Seconds(60)),
            CallEnd::kInterrupted);
  EXPECT_FALSE(ran->load());
  ClearInterrupt();
  std::thread stopper([] {
    absl::SleepFor(absl::Milliseconds(50));
    Interrupt();
  });
  EXPECT_EQ(CallWithin([gate] { gate->Wait(); }, absl::Seconds(60)),
            CallEnd::kInterrupted);
  stopper.join();
  ClearInterrupt();
  gate->open = true;
}

}  // namespace
}  // namespace ptxdiff
