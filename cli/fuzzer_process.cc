#include "cli/fuzzer_process.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "common/subprocess.h"

namespace ptxdiff {

absl::StatusOr<std::unique_ptr<FuzzerProcess>> FuzzerProcess::Start(
    const std::vector<std::string>& argv, FuzzerLog& log,
    absl::Duration stop_grace) {
  absl::StatusOr<std::unique_ptr<TempDir>> temp = TempDir::Create("fuzzer");
  if (!temp.ok()) return temp.status();
  absl::StatusOr<pid_t> pid =
      StartProcess(argv,
                   {.stdout_fd = log.fuzzer_end(),
                    .stderr_fd = log.fuzzer_end(),
                    .dies_with_caller = true,
                    .own_group = true,
                    .environment = {"TMPDIR=" + (*temp)->path()}},
                   "the fuzzer");
  log.CloseFuzzerEnd();
  if (!pid.ok()) return absl::FailedPreconditionError(pid.status().message());
  return std::unique_ptr<FuzzerProcess>(
      new FuzzerProcess(*pid, std::move(*temp), stop_grace));
}

FuzzerProcess::~FuzzerProcess() {
  if (reaped_) return;
  kill(-pid_, SIGKILL);
  ForgetProcessGroup(pid_);
  waitpid(pid_, nullptr, 0);
}

bool FuzzerProcess::Ended() const {
  siginfo_t info = {};
  return waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

bool FuzzerProcess::AskToStop() {
  if (asked_to_stop()) return false;
  kill(-pid_, SIGINT);
  asked_at_ = absl::Now();
  return true;
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
  kill(-pid_, SIGKILL);
  ForgetProcessGroup(pid_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status;
}

}  // namespace ptxdiff
