#include "common/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/process_tree.h"
#include "common/progress.h"

extern char** environ;

namespace ptxdiff {
namespace {

absl::Status ErrnoError(absl::string_view what, absl::string_view path,
                        int error) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(error)));
}

// Spawn settings: its own process group, default SIGPIPE (this process may
// ignore it, and ignored signals survive exec), nothing blocked.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    sigset_t none, pipe;
    sigemptyset(&none);
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &pipe);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP |
                                         POSIX_SPAWN_SETSIGMASK |
                                         POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

class FileActions {
 public:
  explicit FileActions(const ProcessOptions& options) {
    posix_spawn_file_actions_init(&actions_);
    posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    const char* output =
        options.output_path.empty() ? "/dev/null" : options.output_path.c_str();
    posix_spawn_file_actions_addopen(&actions_, 1, output,
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions_, 1, 2);
    // After the opens, so that a relative output path means the caller's.
    if (!options.working_directory.empty()) {
      posix_spawn_file_actions_addchdir_np(&actions_,
                                           options.working_directory.c_str());
    }
  }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  const posix_spawn_file_actions_t* get() const { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// How waiting for a child ended.
enum class Waited { kExited, kDeadline, kInterrupted };

// How often a child's output is looked at to be trimmed (keep_output_bytes).
constexpr absl::Duration kTrimEvery = absl::Milliseconds(50);

// Drops from the disk all but about the last `keep` bytes of `path` once it
// holds more than twice that: a hole punched over its head (the writer's
// offset and the file's end are unchanged), else the file emptied.
void TrimOutput(const std::string& path, size_t keep) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  TrimOutputFile(fd, keep);
  close(fd);
}

// Waits until `pid` has ended, without reaping it (a zombie keeps its pid,
// and so its process group id, from being reused), at most until
// `deadline`, and no longer than a stop (interrupt.h).
Waited WaitForExit(pid_t pid, absl::Time deadline,
                   const std::function<void()>& every_while) {
  // The syscall: glibc 2.36's <sys/pidfd.h> lacks extern "C" for C++.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    Waited waited = Waited::kDeadline;
    while (true) {
      if (every_while) every_while();
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) break;
      if (every_while) left = std::min(left, kTrimEvery);
      pollfd p[2] = {{.fd = pidfd, .events = POLLIN, .revents = 0},
                     {.fd = InterruptFd(), .events = POLLIN, .revents = 0}};
      const int64_t ms = std::min<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
          1 << 30);
      if (poll(p, 2, static_cast<int>(ms)) > 0) {
        waited = p[0].revents != 0 ? Waited::kExited
                 : Interrupted()   ? Waited::kInterrupted
                                   : waited;
        if (waited != Waited::kDeadline) break;
      }
    }
    close(pidfd);
    return waited;
  }
  // No pidfd (an old kernel, a sandbox): poll, backing off to 10 ms.
  absl::Duration pause = absl::Microseconds(100);
  while (true) {
    if (every_while) every_while();
    if (ChildHasEnded(pid)) return Waited::kExited;
    if (Interrupted()) return Waited::kInterrupted;
    if (absl::Now() >= deadline) return Waited::kDeadline;
    absl::SleepFor(pause);
    pause = std::min(pause * 2, absl::Milliseconds(10));
  }
}

}  // namespace

std::string ProcessOutcome::Describe(absl::Duration timeout) const {
  if (timed_out) {
    return absl::StrCat("timed out after ", absl::FormatDuration(timeout),
                        " (killed)");
  }
  if (interrupted) return "interrupted (killed)";
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return absl::StrCat("killed by signal ", signal, " (SIG",
                        name != nullptr ? name : "?", ")");
  }
  return absl::StrCat("exit status ", exit_status);
}

absl::Duration TimeoutBefore(absl::Time deadline, absl::Duration timeout) {
  return std::max(absl::Milliseconds(1),
                  std::min(timeout, absl::Trunc(deadline - absl::Now(),
                                                absl::Milliseconds(1))));
}

absl::StatusOr<ProcessOutcome> RunProcess(const std::vector<std::string>& argv,
                                          const ProcessOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  ProcessOutcome outcome;
  if (Interrupted()) {  // a stop: nothing more is started
    outcome.interrupted = true;
    return outcome;
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const SpawnAttributes attributes;
  const FileActions actions(options);
  // The remover that kills the group if this process ends first, however it
  // ends (files.h), is made first: between the spawn and the record there
  // is then only the record's one file to make.
  ProcessTempRoot();
  pid_t pid = 0;
  const int spawn = posix_spawn(&pid, args[0], actions.get(), attributes.get(),
                                args.data(), environ);
  if (spawn != 0) return ErrnoError("cannot run", argv[0], spawn);
  RecordProcessGroup(pid);

  const absl::Time deadline = options.timeout == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : absl::Now() + options.timeout;
  std::function<void()> trim;
  if (options.keep_output_bytes > 0 && !options.output_path.empty()) {
    trim = [&options] {
      TrimOutput(options.output_path, options.keep_output_bytes);
    };
  }
  const Waited waited = WaitForExit(pid, deadline, trim);
  outcome.timed_out = waited == Waited::kDeadline;
  outcome.interrupted = waited == Waited::kInterrupted;
  // The whole group: at the deadline or a stop, the command and all it
  // started (in whatever group: `timeout TOOL`); after a normal end,
  // whatever it left running in its group. Forgotten before it is reaped,
  // while its id cannot be another group's.
  if (waited != Waited::kExited) KillProcessTree(pid);
  kill(-pid, SIGKILL);
  ForgetProcessGroup(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("cannot wait for", argv[0], errno);
  }
  if (WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  if (trim) trim();  // what it printed since the last look
  NoteProgress();    // a run ended, however: the work goes on
  return outcome;
}

void TrimOutputFile(int fd, size_t keep) {
  struct stat st;
  const uint64_t held = fstat(fd, &st) == 0 ? uint64_t{512} * st.st_blocks : 0;
  if (held > 2 * keep && static_cast<uint64_t>(st.st_size) > keep) {
    const off_t head = (st.st_size - static_cast<off_t>(keep)) & ~off_t{4095};
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, head) != 0)
      (void)!ftruncate(fd, 0);
  }
}

OutputTrimmer::OutputTrimmer(int fd, size_t keep)
    : thread_([this, fd, keep] {
        std::unique_lock<std::mutex> lock(mu_);
        while (!stop_) {
          TrimOutputFile(fd, keep);
          stopped_.wait_for(lock, std::chrono::milliseconds(50));
        }
      }) {}

OutputTrimmer::~OutputTrimmer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  stopped_.notify_one();
  thread_.join();
}

namespace {

// In the child of StartProcess with `dies_with_caller`, before exec: only
// async-signal-safe calls.
[[noreturn]] void ExecDyingWithCaller(char* const* args, char* const* envp,
                                      const ChildStreams& streams, pid_t caller,
                                      int report) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The caller may have died before the line above: then no signal comes.
  if (getppid() != caller) _exit(127);
  if (streams.own_group) setpgid(0, 0);
  if (streams.ignores_interrupt) {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, nullptr);  // kept across exec
  }
  if (streams.stdin_fd >= 0) dup2(streams.stdin_fd, STDIN_FILENO);
  if (!streams.output_path.empty()) {
    const int fd =
        open(streams.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO), close(fd);
  }
  if (streams.stdout_fd >= 0) dup2(streams.stdout_fd, STDOUT_FILENO);
  if (streams.stderr_fd >= 0) dup2(streams.stderr_fd, STDERR_FILENO);
  execve(args[0], args, envp);
  const int error = errno;
  (void)!write(report, &error, sizeof(error));
  _exit(127);
}

// Runs the forks of children that die with their caller. PR_SET_PDEATHSIG
// follows the thread that forked, not the process: a worker started from a
// thread that ends soon after (Campaign::Start's std::async, a calibration
// timer restarting a worker) would get the signal then. This thread lives
// as long as the process.
class Forker {
 public:
  // The process's forker; a forked copy of the process, which has no such
  // thread, starts its own.
  static Forker& Get() {
    static std::mutex mu;
    static Forker* forker = nullptr;  // never destroyed: its thread never ends
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(mu);
    if (forker == nullptr || owner != getpid()) {
      forker = new Forker;
      owner = getpid();
    }
    return *forker;
  }

  // Runs `fork` on the forker's thread, and returns what it returned.
  absl::StatusOr<pid_t> Run(std::function<absl::StatusOr<pid_t>()> fork) {
    std::packaged_task<absl::StatusOr<pid_t>()> job(std::move(fork));
    std::future<absl::StatusOr<pid_t>> result = job.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    ready_.notify_one();
    return result.get();
  }

 private:
  Forker() {
    std::thread([this] { Loop(); }).detach();
  }

  [[noreturn]] void Loop() {
    while (true) {
      std::packaged_task<absl::StatusOr<pid_t>()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [&] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::packaged_task<absl::StatusOr<pid_t>()>> jobs_;
};

// StartProcess by fork, so that the child can ask for a signal at its
// caller's death (posix_spawn cannot): `report` carries exec's errno back.
absl::StatusOr<pid_t> ForkDyingWithCaller(char* const* args, char* const* envp,
                                          const ChildStreams& streams,
                                          absl::string_view what) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0)
    return ErrnoError("cannot start", what, errno);
  const pid_t caller = getpid();
  const pid_t pid = fork();
  if (pid == 0) ExecDyingWithCaller(args, envp, streams, caller, report[1]);
  const int fork_error = errno;
  // As the child does: whichever runs first, the group is there before exec.
  if (pid > 0 && streams.own_group) setpgid(pid, pid);
  close(report[1]);
  if (pid < 0) {
    close(report[0]);
    return ErrnoError("cannot start", what, fork_error);
  }
  int exec_error = 0;
  ssize_t n;
  do {
    n = read(report[0], &exec_error, sizeof(exec_error));
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n != sizeof(exec_error)) return pid;  // closed by the exec
  waitpid(pid, nullptr, 0);
  return absl::NotFoundError(absl::StrCat("cannot start ", what, " '", args[0],
                                          "': ", std::strerror(exec_error)));
}

// The caller's environment with `overrides` ("NAME=value") set over it;
// the pointers (null-terminated, as execve takes them) are into `overrides`
// and environ, valid while neither changes.
std::vector<char*> EnvironmentWith(const std::vector<std::string>& overrides) {
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    const absl::string_view entry = *e;
    const absl::string_view name = entry.substr(0, entry.find('='));
    const bool overridden = std::any_of(
        overrides.begin(), overrides.end(), [&](const std::string& o) {
          return absl::StartsWith(o, name) && o.size() > name.size() &&
                 o[name.size()] == '=';
        });
    if (!overridden) envp.push_back(*e);
  }
  for (const std::string& o : overrides)
    envp.push_back(const_cast<char*>(o.c_str()));
  envp.push_back(nullptr);
  return envp;
}

}  // namespace

bool ChildHasEnded(pid_t pid) {
  siginfo_t info = {};
  return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

absl::StatusOr<pid_t> StartProcess(const std::vector<std::string>& argv,
                                   const ChildStreams& streams,
                                   absl::string_view what) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp = EnvironmentWith(streams.environment);
  if (streams.dies_with_caller) {
    // The remover that kills a group of the child's own if this process
    // ends first (files.h) is made first, as in RunProcess.
    if (streams.own_group) ProcessTempRoot();
    absl::StatusOr<pid_t> pid = Forker::Get().Run([&] {
      return ForkDyingWithCaller(args.data(), envp.data(), streams, what);
    });
    if (pid.ok() && streams.own_group) RecordProcessGroup(*pid);
    return pid;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (streams.stdin_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, streams.stdin_fd, STDIN_FILENO);
  }
  if (!streams.output_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                     streams.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  if (streams.stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, streams.stdout_fd,
                                     STDOUT_FILENO);
  }
  if (streams.stderr_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, streams.stderr_fd,
                                     STDERR_FILENO);
  }
  pid_t pid = -1;
  const int spawn =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn != 0) {
    return absl::NotFoundError(absl::StrCat(
        "cannot start ", what, " '", argv[0], "': ", std::strerror(spawn)));
  }
  return pid;
}

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

namespace {

// A word the shell takes as it is: no quotes, variables or operators.
bool IsPlainWord(absl::string_view word) {
  return std::all_of(word.begin(), word.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '/' ||
           c == '+' || c == '-';
  });
}

// Whether /bin/sh knows `name`: a builtin, a keyword (`if`), or a program
// on its $PATH. An error running the shell is no verdict: true.
bool ShellKnows(const std::string& name) {
  const absl::StatusOr<ProcessOutcome> known =
      RunProcess({"/bin/sh", "-c", "command -v \"$1\"", "sh", name},
                 {.timeout = absl::Seconds(10)});
  return !known.ok() || known->ok() || known->interrupted;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

// The command's first word if the shell takes it as it is written, quoted
// or not: `/opt/sim/run`, `'/opt/my sim/run'`, `"/opt/my sim/run"`; nullopt
// for shell syntax (a variable, an assignment, quotes within a word).
std::optional<std::string> LiteralFirstWord(absl::string_view command) {
  command = absl::StripLeadingAsciiWhitespace(command);
  if (command.empty()) return std::nullopt;
  const char quote = command[0];
  if (quote != '\'' && quote != '"') {
    const absl::string_view word =
        command.substr(0, command.find_first_of(" \t"));
    if (!IsPlainWord(word)) return std::nullopt;
    return std::string(word);
  }
  const size_t close = command.find(quote, 1);
  if (close == absl::string_view::npos) return std::nullopt;
  const absl::string_view word = command.substr(1, close - 1);
  const absl::string_view after = command.substr(close + 1);
  // Within "...", $ ` and \ are the shell's; a word goes on past a quote.
  if ((quote == '"' && word.find_first_of("$`\\") != absl::string_view::npos) ||
      (!after.empty() && after[0] != ' ' && after[0] != '\t')) {
    return std::nullopt;
  }
  return std::string(word);
}

}  // namespace

absl::Status CheckCommandProgram(absl::string_view command) {
  // Quoted too: `ptx-cmd:'"/opt/my sim/run" {ptx} {in} {out}'` with a wrong
  // path was exit 127 on every module, learned as the tool's refusals.
  const std::optional<std::string> word = LiteralFirstWord(command);
  if (!word || word->empty()) return absl::OkStatus();
  const std::string& program = *word;
  if (program.find('/') == std::string::npos) {
    if (ShellKnows(program)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("the command's program '", program,
                     "' is not a command /bin/sh knows (on no $PATH "
                     "directory, nor a builtin)"));
  }
  if (program[0] != '/') {
    char cwd[4096];
    const std::string absolute =
        getcwd(cwd, sizeof(cwd)) ? absl::StrCat(cwd, "/", program) : program;
    return absl::InvalidArgumentError(absl::StrCat(
        "the command's program '", program,
        "' is a relative path, but the command runs in a temporary directory "
        "of its own: give its absolute path (",
        absolute, ")"));
  }
  if (!IsExecutableFile(program)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the command's program ", program,
        access(program.c_str(), F_OK) == 0 ? " is not an executable file"
                                           : " does not exist"));
  }
  return absl::OkStatus();
}

}  // namespace ptxdiff
