// Word that a long piece of work is still going, for whoever waits on this
// process and must tell work from a hang: ptxdiff-worker passes it on to
// its client as PROGRESS frames while it answers a batch of programs
// (docs/worker-protocol.md). The work says so where it already looks at
// the clock (a child process that ended, the evaluator's deadline checks);
// with nobody listening that costs one atomic load.

#ifndef PTXDIFF_COMMON_PROGRESS_H_
#define PTXDIFF_COMMON_PROGRESS_H_

#include <functional>

#include "absl/time/time.h"

namespace ptxdiff {

// While alive, NoteProgress() calls `say`, from the thread that notes it,
// at most once per `every` and never twice at once. One at a time.
class ScopedProgressListener {
 public:
  ScopedProgressListener(std::function<void()> say, absl::Duration every);
  ~ScopedProgressListener();
  ScopedProgressListener(const ScopedProgressListener&) = delete;
  ScopedProgressListener& operator=(const ScopedProgressListener&) = delete;
};

// The work goes on: said to the listener, if any and if it is time.
void NoteProgress();

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_PROGRESS_H_
