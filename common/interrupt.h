// A stop asked of this process by Ctrl-C or SIGTERM, for the commands that
// do their work in it (`ptxdiff program`, `programs`, `minimize`, `repro`).
//
// The signal handler only records the stop. The work sees it where it
// waits: RunProcess (subprocess.h) kills the command it is running and
// returns at once, and starts none after it; a campaign stops as at its
// deadline and prints its summary. Destructors then run as on any return,
// so that the temporary directories go with the process. A process that
// never installs the handler never sees a stop.

#ifndef PTXDIFF_COMMON_INTERRUPT_H_
#define PTXDIFF_COMMON_INTERRUPT_H_

#include <signal.h>

namespace ptxdiff {

// While alive, SIGINT and SIGTERM record a stop (Interrupt) instead of
// ending the process; the handlers before it come back when it goes. A stop
// recorded before it is forgotten (a new command in this process).
class ScopedInterruptHandler {
 public:
  ScopedInterruptHandler();
  ~ScopedInterruptHandler();
  ScopedInterruptHandler(const ScopedInterruptHandler&) = delete;
  ScopedInterruptHandler& operator=(const ScopedInterruptHandler&) = delete;

 private:
  struct sigaction previous_[2];  // SIGINT's and SIGTERM's
};

// Whether a stop was recorded.
bool Interrupted();

// Records a stop: what the handler does (async-signal-safe), and what a
// test does in its place.
void Interrupt();

// Forgets a recorded stop.
void ClearInterrupt();

// A descriptor that polls readable (POLLIN) while a stop is recorded, for a
// wait that must end at one.
int InterruptFd();

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_INTERRUPT_H_
