// Running a command to completion, with a deadline.
//
// The child gets stdin from /dev/null and its stdout and stderr in one file
// (never the caller's stdout, which may carry protocol frames). It runs in a
// process group of its own, so that a timeout kills whatever it started too
// (a shell's children), and anything it leaves running is killed when it
// ends. The group dies with its caller, however the caller ends (a `kill
// -9` included: the caller's remover kills the groups it records, files.h),
// and a stop of the caller (interrupt.h) ends it at once.

#ifndef PTXDIFF_COMMON_SUBPROCESS_H_
#define PTXDIFF_COMMON_SUBPROCESS_H_

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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
  // With output_path: when the output passes twice this, all but about its
  // last this many bytes are dropped from the disk as it runs (a hole in the
  // file: its size and end stay), so that a command that prints without end
  // cannot fill the disk before its timeout. 0: all of it is kept.
  size_t keep_output_bytes = 0;
};

// How a child ended.
struct ProcessOutcome {
  bool timed_out = false;    // killed by us at the deadline
  bool interrupted = false;  // killed (or not started) at a stop
  int exit_status = -1;      // if it exited
  int signal = 0;            // if a signal ended it (SIGKILL after a timeout)

  bool ok() const { return !timed_out && !interrupted && exit_status == 0; }
  // "exit status 1", "killed by signal 11 (SIGSEGV)", "timed out after
  // 2s (killed)", "interrupted (killed)".
  std::string Describe(absl::Duration timeout) const;
};

// The timeout of a run that must also end by `deadline`: `timeout`, or
// what is left before the deadline where that is less (whole milliseconds,
// as messages quote it), and at least a millisecond: a run started past
// the deadline ends at once.
absl::Duration TimeoutBefore(absl::Time deadline, absl::Duration timeout);

// Runs argv[0] (a path; no PATH search, no shell unless argv names one) and
// waits for it. A non-OK status means it could not be started or waited
// for; how it ended, whatever that was, is the outcome. After a stop
// (Interrupted()) it starts nothing: the outcome is `interrupted`.
absl::StatusOr<ProcessOutcome> RunProcess(const std::vector<std::string>& argv,
                                          const ProcessOptions& options);

// Where a started child's standard streams go. A descriptor of the caller's
// is duplicated into the child (-1: the caller's own stream is inherited);
// `output_path`, when set, takes stdout and stderr (created or truncated).
struct ChildStreams {
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  std::string output_path;
  // The child gets SIGTERM when the calling process ends, whatever ends it
  // (a `kill -9`): `ptxdiff fuzz`'s fuzzer, and the workers. (It is forked
  // by a thread of its own that lives as long as the process: the signal
  // follows the thread that forked, and the thread that asks may end first.)
  bool dies_with_caller = false;
  // With dies_with_caller: the child ignores SIGINT. A Ctrl-C at the
  // terminal reaches the caller's whole process group, and the caller stops
  // such a child in order (a campaign's workers finish their batches in
  // flight); it still ends with the caller.
  bool ignores_interrupt = false;
  // With dies_with_caller: the child runs in a process group of its own,
  // recorded (RecordProcessGroup) so that whatever it starts can be killed
  // with it (kill(-pid)) and dies with the caller too; the caller kills the
  // group, forgets it (ForgetProcessGroup) and then reaps the child. A
  // Ctrl-C at the terminal does not reach such a child (a worker, which
  // its caller stops in order).
  bool own_group = false;
  // Set in the child's environment over the caller's ("NAME=value"): the
  // fuzzer's TMPDIR, a directory of the caller's own that goes with it.
  std::vector<std::string> environment;
};

// Whether `pid`, a child of this process, has ended; it is not reaped (its
// id stays its own, so that its process group can still be killed safely).
bool ChildHasEnded(pid_t pid);

// Starts argv[0] (a path, as RunProcess) and returns its pid at once, for a
// child that lives on beside the caller (a worker, a fuzzer); the caller
// waits for it. It stays in the caller's process group, so that a Ctrl-C at
// the terminal reaches it too, unless `own_group`. If it cannot be started: NotFound, "cannot
// start <what> '<argv[0]>': <errno's text>" (`what`: "worker", ...).
absl::StatusOr<pid_t> StartProcess(const std::vector<std::string>& argv,
                                   const ChildStreams& streams,
                                   absl::string_view what);

// Drops all but about the last `keep` bytes of the file open as `fd` (its
// output so far) once it holds more than twice that: a hole punched over
// its head, its size and end unchanged, else the file emptied.
void TrimOutputFile(int fd, size_t keep);

// Trims `fd` (TrimOutputFile) every 50 ms while it lives: a file a child
// writes without end (a worker's stderr) stays bounded. `fd` must stay open
// until it is destroyed.
class OutputTrimmer {
 public:
  OutputTrimmer(int fd, size_t keep);
  ~OutputTrimmer();
  OutputTrimmer(const OutputTrimmer&) = delete;
  OutputTrimmer& operator=(const OutputTrimmer&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;  // last: it uses the members above
};

// `text` quoted for /bin/sh: 'text', with each ' as '\''.
std::string ShellQuote(const std::string& text);

// The program a /bin/sh command line starts (its first word), checked before
// the command is run, in a directory of its own, for every module: a
// relative path (it would not be found there), a path that is missing or
// not executable, or a name /bin/sh does not know (no program on its $PATH,
// no builtin or keyword) is InvalidArgument, saying which; a first word
// quoted whole ('...', or "..." without $, ` or \) is checked as what it
// quotes. OK when the first word is other shell syntax (a variable, an
// assignment, quotes within a word): the shell decides those.
absl::Status CheckCommandProgram(absl::string_view command);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_SUBPROCESS_H_
