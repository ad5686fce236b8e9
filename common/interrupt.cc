#include "common/interrupt.h"

#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace ptxdiff {
namespace {

std::atomic<bool> stop_recorded{false};

// Made before main, so that the signal handler never makes it. Non-blocking:
// the handler's write never waits, and ClearInterrupt's read never does.
const int stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

void OnSignal(int) { Interrupt(); }

}  // namespace

ScopedInterruptHandler::ScopedInterruptHandler() {
  ClearInterrupt();
  struct sigaction on_signal = {};
  on_signal.sa_handler = OnSignal;
  sigemptyset(&on_signal.sa_mask);
  sigaction(SIGINT, &on_signal, &previous_[0]);
  sigaction(SIGTERM, &on_signal, &previous_[1]);
}

ScopedInterruptHandler::~ScopedInterruptHandler() {
  sigaction(SIGINT, &previous_[0], nullptr);
  sigaction(SIGTERM, &previous_[1], nullptr);
}

bool Interrupted() { return stop_recorded.load(); }

void Interrupt() {
  stop_recorded.store(true);
  const uint64_t one = 1;
  if (stop_fd >= 0) (void)!write(stop_fd, &one, sizeof(one));
}

void ClearInterrupt() {
  stop_recorded.store(false);
  uint64_t count;
  if (stop_fd >= 0) (void)!read(stop_fd, &count, sizeof(count));
}

int InterruptFd() { return stop_fd; }

}  // namespace ptxdiff
