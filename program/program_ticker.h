// A callback called every so often from a thread of its own, for as long
// as its holder lives: the program campaign's counts so far (a report's
// timeline).

#ifndef PTXDIFF_PROGRAM_PROGRAM_TICKER_H_
#define PTXDIFF_PROGRAM_PROGRAM_TICKER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace ptxdiff {

// Calls `tick` every `every` on a thread of its own until destroyed.
class Ticker {
 public:
  Ticker(absl::Duration every, std::function<void()> tick) {
    if (!tick) return;
    thread_ = std::thread([this, every, tick = std::move(tick)] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, absl::ToChronoMilliseconds(every),
                           [this] { return done_; })) {
        lock.unlock();
        tick();
        lock.lock();
      }
    });
  }
  ~Ticker() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_TICKER_H_
