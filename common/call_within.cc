#include "common/call_within.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/time/clock.h"
#include "common/interrupt.h"

namespace ptxdiff {
namespace {

// How often a wait looks for a stop.
constexpr absl::Duration kStopPoll = absl::Milliseconds(20);

struct Call {
  std::function<void()> fn;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
};

// Kept threads taking calls from one queue; a call finds a thread idle or
// starts one, so that no call waits behind one that runs past its wait.
class CallThreads {
 public:
  void Submit(std::shared_ptr<Call> call) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(call));
    if (idle_ < static_cast<int64_t>(queue_.size())) {
      ++started_;
      ++idle_;  // until it takes a call
      std::thread([this] { TakeCalls(); }).detach();
    }
    ready_.notify_one();
  }

  int64_t started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }

  // Calls running, and calls queued for a thread.
  int64_t not_returned() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_ - idle_ + static_cast<int64_t>(queue_.size());
  }

 private:
  void TakeCalls() {
    for (;;) {
      std::shared_ptr<Call> call;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [this] { return !queue_.empty(); });
        --idle_;
        call = std::move(queue_.front());
        queue_.pop_front();
      }
      call->fn();
      call->fn = nullptr;  // what it owns goes now, not with the caller
      {
        // Idle again before the caller hears: its next call finds it.
        std::lock_guard<std::mutex> lock(mu_);
        ++idle_;
      }
      std::lock_guard<std::mutex> lock(call->mu);
      call->done = true;
      call->done_cv.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Call>> queue_;
  int64_t idle_ = 0;  // threads not running a call
  int64_t started_ = 0;
};

// Never destroyed: its threads outlive every caller, to the process's end.
CallThreads& Threads() {
  static CallThreads* threads = new CallThreads;
  return *threads;
}

}  // namespace

CallEnd CallWithin(std::function<void()> fn, absl::Duration timeout) {
  if (Interrupted()) return CallEnd::kInterrupted;
  auto call = std::make_shared<Call>();
  call->fn = std::move(fn);
  Threads().Submit(call);
  const absl::Time end = absl::Now() + timeout;
  std::unique_lock<std::mutex> lock(call->mu);
  while (!call->done) {
    if (Interrupted()) return CallEnd::kInterrupted;
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) return CallEnd::kTimedOut;
    call->done_cv.wait_for(
        lock, absl::ToChronoNanoseconds(std::min(left, kStopPoll)));
  }
  return CallEnd::kReturned;
}

int64_t CallThreadsStarted() { return Threads().started(); }

int64_t CallsNotReturned() { return Threads().not_returned(); }

bool WaitForCallsToReturn(absl::Duration limit) {
  const absl::Time give_up = absl::Now() + limit;
  while (CallsNotReturned() > 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  return CallsNotReturned() == 0;
}

void EndProcess(int status) {
  if (CallsNotReturned() == 0) std::exit(status);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace ptxdiff
