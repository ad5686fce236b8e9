// A call bounded as a child process is: for work done in-process where a
// process would be killed at its timeout or at a stop (libnvJitLink's
// assembler in place of the ptxas executable, nvjitlink.h).
//
// A function cannot be killed. CallWithin runs it on a thread kept for such
// calls and stops waiting at the timeout or at a stop (interrupt.h); the
// call runs on to its end on that thread, which takes later calls only
// once it is done. The threads are reused, never ended: a library that
// keeps state per thread (libnvJitLink does) does not grow with the calls.
// A call that never returns holds its thread, and a core if it spins, until
// the process ends.

#ifndef PTXDIFF_COMMON_CALL_WITHIN_H_
#define PTXDIFF_COMMON_CALL_WITHIN_H_

#include <cstdint>
#include <functional>

#include "absl/time/time.h"

namespace ptxdiff {

enum class CallEnd {
  kReturned,     // `fn` returned within the timeout
  kTimedOut,     // the timeout passed first; `fn` runs on
  kInterrupted,  // a stop came first (or was recorded before); `fn` runs on,
                 // or never started
};

// Runs `fn` on a kept thread, waiting for it up to `timeout`. `fn` must own
// what it uses (captures by value, shared state by shared_ptr): past the
// wait it can outlive the caller's frame. Safe to call from several
// threads at once: each call has a thread of its own.
CallEnd CallWithin(std::function<void()> fn, absl::Duration timeout);

// The threads CallWithin has started in this process: one per call at once,
// and one per call still running past its wait.
int64_t CallThreadsStarted();

// The calls given to CallWithin that have not returned yet (running on, or
// about to start).
int64_t CallsNotReturned();

// Waits up to `limit` for every call to return (a process about to exit:
// exit()'s handlers must not free what a call still uses); whether they
// all did.
bool WaitForCallsToReturn(absl::Duration limit);

// Ends the process with `status`, as returning it from main does, unless a
// call has not returned: exit()'s handlers would then destroy what it uses
// (libnvJitLink's state: a double free, SIGABRT, in place of the status),
// and the process ends by _Exit, its standard streams flushed first.
[[noreturn]] void EndProcess(int status);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_CALL_WITHIN_H_
