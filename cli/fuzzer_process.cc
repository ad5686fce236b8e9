#include "cli/fuzzer_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/subprocess.h"

namespace ptxdiff {

namespace {

// Writes `bytes` to a file in `dir`, then removes it: an error if they could
// not all be written (a full disk; a file size limit), naming why.
absl::Status WriteAndRemove(const std::string& dir, int64_t bytes) {
  const std::string path = dir + "/room";
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  const std::string chunk(64 << 10, '\0');
  int error = 0;
  for (int64_t left = bytes; left > 0 && error == 0;) {
    const ssize_t n =
        write(fd, chunk.data(),
              static_cast<size_t>(std::min<int64_t>(left, chunk.size())));
    if (n > 0) left -= n;
    if (n < 0 && errno != EINTR) error = errno;
  }
  close(fd);
  unlink(path.c_str());
  if (error != 0) return absl::ResourceExhaustedError(std::strerror(error));
  return absl::OkStatus();
}

// The fuzzer's process group, which a Ctrl-Z (SIGTSTP to the terminal's
// foreground group: this process's, not the fuzzer's) stops with this
// process, and `fg` (SIGCONT to this process) continues; 0: none.
std::atomic<pid_t> fuzzer_group{0};
struct sigaction before_fuzzer;  // SIGTSTP's action before the fuzzer ran
// fuzzer_group while the fuzzer is being started: a Ctrl-Z then is kept
// for once its group is known (else the fuzzer would run on, unstopped).
constexpr pid_t kStarting = -1;
std::atomic<bool> stop_while_starting{false};

void SetTerminalStop(void (*handler)(int)) {
  struct sigaction action = {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTSTP, &action, nullptr);
}

// Async-signal-safe: kill, sigaction, sigprocmask and raise only.
void StopTheFuzzerToo(int) {
  const int saved_errno = errno;
  const pid_t group = fuzzer_group.load();
  if (group == kStarting) {
    stop_while_starting = true;
    errno = saved_errno;
    return;
  }
  if (group > 0) kill(-group, SIGSTOP);
  // This process stops as it would have without the handler...
  SetTerminalStop(SIG_DFL);
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  sigprocmask(SIG_UNBLOCK, &tstp, nullptr);
  raise(SIGTSTP);
  // ...and is continued here: the fuzzer goes on too.
  SetTerminalStop(StopTheFuzzerToo);
  if (group > 0) kill(-group, SIGCONT);
  errno = saved_errno;
}

// While the fuzzer runs, a Ctrl-Z stops it too (unless SIGTSTP is ignored):
// from before it starts, so that one in between is not missed.
void StopWithThisProcessFromNow() {
  sigaction(SIGTSTP, nullptr, &before_fuzzer);
  if (before_fuzzer.sa_handler == SIG_IGN) return;
  fuzzer_group = kStarting;
  SetTerminalStop(StopTheFuzzerToo);
}

// The fuzzer's group once started (0: it did not start); a Ctrl-Z while it
// started is taken now.
void TheFuzzerStarted(pid_t group) {
  pid_t expected = kStarting;
  if (!fuzzer_group.compare_exchange_strong(expected, group)) return;
  if (group == 0) sigaction(SIGTSTP, &before_fuzzer, nullptr);
  if (stop_while_starting.exchange(false)) raise(SIGTSTP);
}

// Before the group is reaped (its id may then be another's).
void NoLongerStopWithThisProcess(pid_t group) {
  pid_t expected = group;
  if (fuzzer_group.compare_exchange_strong(expected, 0))
    sigaction(SIGTSTP, &before_fuzzer, nullptr);
}

}  // namespace

absl::StatusOr<std::unique_ptr<FuzzerProcess>> FuzzerProcess::Start(
    const std::vector<std::string>& argv, FuzzerLog& log, int64_t room,
    absl::Duration stop_grace) {
  absl::StatusOr<std::unique_ptr<TempDir>> temp = TempDir::Create("fuzzer");
  if (!temp.ok()) return temp.status();
  if (room > 0) {
    if (absl::Status s = WriteAndRemove((*temp)->path(), room); !s.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "TMPDIR (", TempRoot(), ") has no room for the fuzzer's -fork jobs: ",
          room >> 10, " KiB could not be written there (", s.message(),
          "); they keep their inputs and merge lists there: free some space "
          "or set TMPDIR to a larger disk"));
    }
  }
  StopWithThisProcessFromNow();
  absl::StatusOr<pid_t> pid =
      StartProcess(argv,
                   {.stdout_fd = log.fuzzer_end(),
                    .stderr_fd = log.fuzzer_end(),
                    .dies_with_caller = true,
                    .own_group = true,
                    .environment = {"TMPDIR=" + (*temp)->path()}},
                   "the fuzzer");
  log.CloseFuzzerEnd();
  TheFuzzerStarted(pid.ok() ? *pid : 0);
  if (!pid.ok()) return absl::FailedPreconditionError(pid.status().message());
  auto process = std::unique_ptr<FuzzerProcess>(
      new FuzzerProcess(*pid, std::move(*temp), stop_grace));
  process->forks_ = absl::c_any_of(argv, [](const std::string& arg) {
    return absl::StartsWith(arg, "-fork=");
  });
  return process;
}

FuzzerProcess::~FuzzerProcess() {
  if (reaped_) return;
  NoLongerStopWithThisProcess(pid_);
  kill(-pid_, SIGKILL);
  ForgetProcessGroup(pid_);
  waitpid(pid_, nullptr, 0);
}

bool FuzzerProcess::Ended() const { return ChildHasEnded(pid_); }

bool FuzzerProcess::AskToStop() {
  if (asked_to_stop()) return false;
  Ask();
  asked_at_ = last_asked_at_ = absl::Now();
  return true;
}

void FuzzerProcess::AskAgainIfDue() {
  constexpr absl::Duration kAskAgainEvery = absl::Seconds(2);
  if (!asked_to_stop() || killed_ ||
      absl::Now() - last_asked_at_ < kAskAgainEvery)
    return;
  Ask();
  last_asked_at_ = absl::Now();
}

void FuzzerProcess::Ask() {
  // SIGINT to the group: the fuzzer, or a -fork parent's jobs, stop in
  // order. SIGTERM to a -fork parent too: it ignores SIGINT while a job
  // runs, and stops on this (differential_fuzzer.cc).
  kill(-pid_, SIGINT);
  if (forks_) kill(pid_, SIGTERM);
}

bool FuzzerProcess::KillIfOverdue() {
  if (killed_ || absl::Now() - asked_at_ < stop_grace_) return false;
  Kill();
  return true;
}

void FuzzerProcess::Kill() {
  kill(-pid_, SIGKILL);
  killed_ = true;
}

int FuzzerProcess::Reap() {
  // The group is killed while its leader, not yet reaped, keeps its id
  // from being another group's.
  NoLongerStopWithThisProcess(pid_);
  kill(-pid_, SIGKILL);
  ForgetProcessGroup(pid_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status;
}

}  // namespace ptxdiff
