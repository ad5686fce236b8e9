#include "common/call_within.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
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

TEST(CallWithinTest, ACallPastItsWaitIsCountedUntilItReturns) {
  // The calls of the tests before have all returned.
  ASSERT_TRUE(WaitForCallsToReturn(absl::Minutes(1)));
  auto gate = std::make_shared<Gate>();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  EXPECT_EQ(CallWithin(
                [gate, finished] {
                  gate->Wait();
                  *finished = true;
                },
                absl::Milliseconds(10)),
            CallEnd::kTimedOut);
  EXPECT_EQ(CallsNotReturned(), 1);
  gate->open = true;
  while (!finished->load()) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_TRUE(WaitForCallsToReturn(absl::Minutes(1)));
}

// An exit handler that says it ran by its status.
void ExitHandlerRan() { _exit(42); }

// The child of a death test: a call left running (or none), then EndProcess.
void EndWithACallRunning(bool running) {
  std::atexit(ExitHandlerRan);
  if (running) {
    auto gate = std::make_shared<Gate>();  // never opened
    CallWithin([gate] { gate->Wait(); }, absl::Milliseconds(10));
  }
  EndProcess(0);
}

// exit() with a call of libnvJitLink running on freed its state under it
// (`calibrate --programs N --max-time 3`: a double free, SIGABRT at exit).
TEST(CallWithinDeathTest, EndProcessSkipsExitHandlersOnlyWhileACallRuns) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(EndWithACallRunning(true), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(EndWithACallRunning(false), ::testing::ExitedWithCode(42), "");
}

}  // namespace
}  // namespace ptxdiff
