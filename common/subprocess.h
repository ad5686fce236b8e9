// Running a command to completion, with a deadline.
//
// The child gets stdin from /dev/null and its stdout and stderr in one file
// (never the caller's stdout, which may carry protocol frames). It runs in a
// process group of its own, so that a timeout kills whatever it started too
// (a shell's children), and anything it leaves running is killed when it
// ends.

#ifndef PTXDIFF_COMMON_SUBPROCESS_H_
#define PTXDIFF_COMMON_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ptxdiff {

struct ProcessOptions {
  // Where the child's stdout and stderr go (created or truncated); "" for
  // /dev/null.
  std::string output_path;
  // The child's working directory; "" for the caller's.
  std::string working_directory;
  // After this long the child's process group is killed (SIGKILL).
  absl::Duration timeout = absl::InfiniteDuration();
};

// How a child ended.
struct ProcessOutcome {
  bool timed_out = false;  // killed by us at the deadline
  int exit_status = -1;    // if it exited
  int signal = 0;          // if a signal ended it (SIGKILL after a timeout)

  bool ok() const { return !timed_out && exit_status == 0; }
  // "exit status 1", "killed by signal 11 (SIGSEGV)", "timed out after
  // 2s (killed)".
  std::string Describe(absl::Duration timeout) const;
};

// Runs argv[0] (a path; no PATH search, no shell unless argv names one) and
// waits for it. A non-OK status means it could not be started or waited
// for; how it ended, whatever that was, is the outcome.
absl::StatusOr<ProcessOutcome> RunProcess(const std::vector<std::string>& argv,
                                          const ProcessOptions& options);

// `text` quoted for /bin/sh: 'text', with each ' as '\''.
std::string ShellQuote(const std::string& text);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_SUBPROCESS_H_
