// ChildOfAKilledCaller: what happens to a process's child when the process
// is killed, for the tests of PR_SET_PDEATHSIG (StartProcess's
// dies_with_caller, the workers a client starts).

#ifndef PTXDIFF_COMMON_TESTING_CHILD_OF_A_KILLED_CALLER_H_
#define PTXDIFF_COMMON_TESTING_CHILD_OF_A_KILLED_CALLER_H_

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

namespace ptxdiff {

struct OrphanEnd {
  pid_t child = -1;     // what `start` returned: -1, it started none
  bool reaped = false;  // it ended within the limit (else it was killed here)
  int status = 0;       // its wait status, when reaped
};

// Forks a caller that runs `start` (which starts a child and returns its
// pid, or -1) and then waits to be killed; kills it with SIGKILL; and waits
// up to `limit` for the child, which comes to this process
// (PR_SET_CHILD_SUBREAPER while this runs). Polled: a child that got its
// signal ends within milliseconds, and the limit only bounds a failing test.
// A child still running at the limit is killed and reaped, not reported.
inline OrphanEnd ChildOfAKilledCaller(
    const std::function<pid_t()>& start,
    std::chrono::seconds limit = std::chrono::seconds(30)) {
  OrphanEnd end;
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int pid_pipe[2];
  if (pipe(pid_pipe) != 0) return end;
  const pid_t caller = fork();
  if (caller == 0) {
    const pid_t child = start();
    (void)!write(pid_pipe[1], &child, sizeof(child));
    pause();
    _exit(0);
  }
  if (read(pid_pipe[0], &end.child, sizeof(end.child)) != sizeof(end.child))
    end.child = -1;
  close(pid_pipe[0]);
  close(pid_pipe[1]);
  kill(caller, SIGKILL);
  waitpid(caller, nullptr, 0);
  if (end.child > 0) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    pid_t reaped = 0;
    while ((reaped = waitpid(end.child, &end.status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    end.reaped = reaped == end.child;
    if (!end.reaped) kill(end.child, SIGKILL), waitpid(end.child, nullptr, 0);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  return end;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_TESTING_CHILD_OF_A_KILLED_CALLER_H_
