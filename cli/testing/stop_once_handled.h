// A Ctrl-C in an in-process CLI test, without a signal: a stop recorded
// (Interrupt, common/interrupt.h) once the command under test has put in
// its handler (ScopedInterruptHandler), which forgets any stop recorded
// before it. Not at a time: at the first step of the command's work that
// looks for a stop after the handler is in.

#ifndef PTXDIFF_CLI_TESTING_STOP_ONCE_HANDLED_H_
#define PTXDIFF_CLI_TESTING_STOP_ONCE_HANDLED_H_

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "common/interrupt.h"

namespace ptxdiff {

// Made before the command runs; the stop is forgotten when it goes.
class StopOnceHandled {
 public:
  StopOnceHandled() {
    struct sigaction before = {};
    sigaction(SIGINT, nullptr, &before);
    watcher_ = std::thread([this, before] {
      while (!done_) {
        struct sigaction now = {};
        sigaction(SIGINT, nullptr, &now);
        if (now.sa_handler != before.sa_handler) {
          Interrupt();
          stopped_ = true;
          return;
        }
        usleep(100);
      }
    });
  }
  ~StopOnceHandled() {
    done_ = true;
    watcher_.join();
    ClearInterrupt();
  }
  StopOnceHandled(const StopOnceHandled&) = delete;
  StopOnceHandled& operator=(const StopOnceHandled&) = delete;

  // Whether the stop was recorded (the command put in its handler).
  bool stopped() const { return stopped_; }

 private:
  std::atomic<bool> done_{false};
  std::atomic<bool> stopped_{false};
  std::thread watcher_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_TESTING_STOP_ONCE_HANDLED_H_
