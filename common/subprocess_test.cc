#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/process_tree.h"
#include "common/testing/child_of_a_killed_caller.h"
#include "common/testing/fifo_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// Runs `script` with /bin/sh in `dir`, output to dir/log.
ProcessOutcome Shell(const TempDir& dir, const std::string& script,
                     absl::Duration timeout = absl::Seconds(30)) {
  auto outcome =
      RunProcess({"/bin/sh", "-c", script}, {.output_path = dir.File("log"),
                                             .working_directory = dir.path(),
                                             .timeout = timeout});
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  return outcome.value_or(ProcessOutcome{});
}

// A run's timeout is what is left before its deadline, up to its own
// (calibrate's compiles and a ptx-cmd tool's runs, within --max-time).
TEST(TimeoutBeforeTest, IsWhatIsLeftUpToTheRunsOwn) {
  const absl::Duration own = absl::Seconds(60);
  EXPECT_EQ(TimeoutBefore(absl::InfiniteFuture(), own), own);
  EXPECT_EQ(TimeoutBefore(absl::InfinitePast(), own), absl::Milliseconds(1));
  EXPECT_EQ(TimeoutBefore(absl::Now() + absl::Hours(1), own), own);
  EXPECT_LE(TimeoutBefore(absl::Now() + absl::Seconds(5), own),
            absl::Seconds(5));
}

TEST(RunProcessTest, ExitStatusOutputAndWorkingDirectory) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  ProcessOutcome ok = Shell(**dir, "pwd; echo to-stderr >&2");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.Describe(absl::Seconds(1)), "exit status 0");
  EXPECT_EQ(*ReadFile((*dir)->File("log")), (*dir)->path() + "\nto-stderr\n");

  ProcessOutcome three = Shell(**dir, "exit 3");
  EXPECT_FALSE(three.ok());
  EXPECT_EQ(three.exit_status, 3);
  EXPECT_EQ(three.Describe(absl::Seconds(1)), "exit status 3");
}

// A command that prints without end cannot fill the disk before its
// timeout: past twice keep_output_bytes, the head of its output is dropped
// from the disk while it runs, and its end stays to be read.
TEST(RunProcessTest, ALongOutputKeepsOnlyItsEndOnTheDisk) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  constexpr size_t kKeep = size_t{1} << 20;
  const std::string log = (*dir)->File("log");
  auto outcome = RunProcess(
      {"/bin/sh", "-c",
       "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo the-end"},
      {.output_path = log,
       .timeout = absl::Seconds(60),
       .keep_output_bytes = kKeep});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->ok()) << outcome->Describe(absl::Seconds(60));
  struct stat st;
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 50000000 + 9);  // its size, and so its end, kept
  EXPECT_LE(uint64_t{512} * st.st_blocks, 2 * kKeep);
  EXPECT_TRUE(absl::EndsWith(ReadFileTail(log, 100), "x\nthe-end\n"));
}

TEST(RunProcessTest, SignalsAreNamed) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  ProcessOutcome segv = Shell(**dir, "kill -SEGV $$");
  EXPECT_FALSE(segv.ok());
  EXPECT_EQ(segv.signal, SIGSEGV);
  EXPECT_EQ(segv.Describe(absl::Seconds(1)), "killed by signal 11 (SIGSEGV)");
  // SIGPIPE is the default in the child even when the caller ignores it.
  signal(SIGPIPE, SIG_IGN);
  ProcessOutcome pipe = Shell(**dir, "kill -PIPE $$");
  EXPECT_EQ(pipe.signal, SIGPIPE);
}

// True once `pid` has ended (gone, or a zombie not yet reaped by init).
bool Ended(pid_t pid) { return HasEnded(pid); }

// Waits (polling) for `pid` to end; false if it still runs after `limit`.
// The limit only bounds a failing test: a process that was killed has ended
// within milliseconds, one that was not runs for 30 s.
bool EndsWithin(pid_t pid, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  while (!Ended(pid)) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

// The pid a script's background child wrote to dir/bg.pid.
pid_t BackgroundPid(const TempDir& dir) {
  auto text = ReadFile(dir.File("bg.pid"));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? static_cast<pid_t>(std::stol(*text)) : 0;
}

// A background child that outlives the shell (it writes its own pid, then
// sleeps 30 s), as a tool's helper process would.
constexpr char kBackgroundChild[] =
    "sh -c 'echo $$ > bg.pid; exec sleep 30' & ";

TEST(RunProcessTest, TimeoutKillsTheWholeGroup) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  // The shell's child would outlive a kill of the shell alone.
  ProcessOutcome hung =
      Shell(**dir,
            std::string(kBackgroundChild) +
                "while [ ! -s bg.pid ]; do :; done; sleep 30",
            absl::Seconds(3));  // ample for the child to write its pid
  EXPECT_TRUE(hung.timed_out);
  EXPECT_FALSE(hung.ok());
  EXPECT_EQ(hung.Describe(absl::Seconds(3)), "timed out after 3s (killed)");
  const pid_t child = BackgroundPid(**dir);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(EndsWithin(child, absl::Seconds(10)))
      << "pid " << child << " still runs";
}

// The fifteenth fault run: a tool run as `timeout 100 TOOL` (GNU timeout
// moves itself to a group of its own) and a child in a session of its own
// ran on after their run was said killed. The whole tree is.
TEST(RunProcessTest, TimeoutKillsWhatLeftTheGroupToo) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  for (const char* leaves : {"timeout 100 sh -c", "setsid sh -c"}) {
    unlink((*dir)->File("bg.pid").c_str());  // the last round's
    ProcessOutcome hung =
        Shell(**dir,
              absl::StrCat(leaves,
                           " 'echo $$ > bg.pid; exec sleep 100' & "
                           "while [ ! -s bg.pid ]; do :; done; sleep 100"),
              absl::Seconds(3));
    EXPECT_TRUE(hung.timed_out) << leaves;
    const pid_t child = BackgroundPid(**dir);
    ASSERT_GT(child, 0) << leaves;
    EXPECT_TRUE(EndsWithin(child, absl::Seconds(10)))
        << leaves << ": pid " << child << " still runs";
  }
}

// A remover of temporary files (files.h) is no part of the tree to kill:
// killed, the files of the process it is for stay (a Ctrl-C of `program`
// left its worker's directory).
TEST(RunProcessTest, TheTreesKillSparesARemover) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  ProcessOutcome hung =
      Shell(**dir,
            "setsid sh -c 'echo $$ > bg.pid; sleep 100; :' ptxdiff-remover & "
            "while [ ! -s bg.pid ]; do :; done; sleep 100",
            absl::Seconds(2));
  EXPECT_TRUE(hung.timed_out);
  const pid_t remover = BackgroundPid(**dir);
  ASSERT_GT(remover, 0);
  EXPECT_FALSE(Ended(remover)) << "the remover was killed";
  kill(-remover, SIGKILL);
  EXPECT_TRUE(EndsWithin(remover, absl::Seconds(10)));
}

TEST(RunProcessTest, WhatTheCommandLeavesRunningIsKilled) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  ProcessOutcome done =
      Shell(**dir, std::string(kBackgroundChild) +
                       "while [ ! -s bg.pid ]; do :; done; exit 0");
  EXPECT_TRUE(done.ok());
  const pid_t child = BackgroundPid(**dir);
  ASSERT_GT(child, 0);
  EXPECT_TRUE(EndsWithin(child, absl::Seconds(10)))
      << "pid " << child << " still runs";
}

TEST(RunProcessTest, AMissingExecutableIsAnError) {
  auto outcome = RunProcess({"/nonexistent/tool"}, {});
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.status().message(),
              HasSubstr("cannot run /nonexistent/tool"));
}

// A started child runs beside the caller with the streams it was given: a
// pipe of the caller's as stdin, its output in a file.
TEST(StartProcessTest, StreamsAreTheOnesGiven) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  int in[2];
  ASSERT_EQ(pipe(in), 0);
  auto pid = StartProcess(
      {"/bin/sh", "-c", "read x; echo got $x; echo err >&2"},
      {.stdin_fd = in[0], .output_path = (*dir)->File("log")}, "test shell");
  ASSERT_TRUE(pid.ok()) << pid.status();
  close(in[0]);
  ASSERT_EQ(write(in[1], "hello\n", 6), 6);
  close(in[1]);
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto log = ReadFile((*dir)->File("log"));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(*log, "got hello\nerr\n");
}

// The variables given are set in the child's environment over the caller's,
// which it otherwise inherits; the caller's own stays as it was. Both ways
// of starting a child (dying with the caller or not).
TEST(StartProcessTest, TheEnvironmentGivenIsSetOverTheCallers) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  setenv("PTXDIFF_TEST_KEPT", "kept", 1);
  setenv("PTXDIFF_TEST_SET", "caller's", 1);
  for (const bool dies_with_caller : {false, true}) {
    auto pid = StartProcess(
        {"/bin/sh", "-c", "echo $PTXDIFF_TEST_KEPT $PTXDIFF_TEST_SET"},
        {.output_path = (*dir)->File("log"),
         .dies_with_caller = dies_with_caller,
         .environment = {"PTXDIFF_TEST_SET=child's"}},
        "test shell");
    ASSERT_TRUE(pid.ok()) << pid.status();
    int status = 0;
    ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
    auto log = ReadFile((*dir)->File("log"));
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ(*log, "kept child's\n") << dies_with_caller;
  }
  EXPECT_STREQ(getenv("PTXDIFF_TEST_SET"), "caller's");
  unsetenv("PTXDIFF_TEST_KEPT");
  unsetenv("PTXDIFF_TEST_SET");
}

// A child started `dies_with_caller` gets SIGTERM when its caller is killed,
// so that a `kill -9` of `ptxdiff fuzz` ends its fuzzer (issue 28, item 7).
TEST(StartProcessTest, AChildThatDiesWithItsCallerDoes) {
  const OrphanEnd end = ChildOfAKilledCaller([] {
    auto child =
        StartProcess({"/bin/sleep", "20"}, {.dies_with_caller = true}, "sleep");
    return child.ok() ? *child : -1;
  });
  ASSERT_GT(end.child, 0);
  ASSERT_TRUE(end.reaped) << "the child outlived its caller";
  EXPECT_TRUE(WIFSIGNALED(end.status) && WTERMSIG(end.status) == SIGTERM)
      << "the child outlived its caller and ended by itself";
}

// A Ctrl-C at the terminal reaches the caller's whole process group. A
// child started `ignores_interrupt` (a campaign's worker) lives on, for its
// caller to stop in order.
TEST(StartProcessTest, AChildThatIgnoresInterruptsOutlivesACtrlC) {
  auto pid = StartProcess({"/bin/sleep", "1"},
                          {.dies_with_caller = true, .ignores_interrupt = true},
                          "sleep");
  ASSERT_TRUE(pid.ok()) << pid.status();
  kill(*pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "SIGINT ended the child";
}

TEST(StartProcessTest,
     AMissingExecutableOfAChildThatDiesWithItsCallerIsAnError) {
  auto pid = StartProcess({"/nonexistent/tool"}, {.dies_with_caller = true},
                          "the tool");
  ASSERT_FALSE(pid.ok());
  EXPECT_THAT(
      pid.status().message(),
      HasSubstr("cannot start the tool '/nonexistent/tool': No such file"));
}

TEST(StartProcessTest, AMissingExecutableNamesWhatAndWhy) {
  auto pid = StartProcess({"/nonexistent/tool"}, {}, "the tool");
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(
      pid.status().message(),
      HasSubstr("cannot start the tool '/nonexistent/tool': No such file"));
}

// The pids a script wrote to `file`, one a line.
std::vector<pid_t> PidsIn(const std::string& file) {
  std::vector<pid_t> out;
  std::ifstream in(file);
  for (pid_t pid; in >> pid;) out.push_back(pid);
  return out;
}

// Polls `done` every 10 ms, reaping what comes to this process, at most
// `limit` (which only bounds a failing test).
template <typename Done>
bool Within(absl::Duration limit, Done done) {
  for (const absl::Time give_up = absl::Now() + limit; absl::Now() < give_up;
       absl::SleepFor(absl::Milliseconds(10))) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (done()) return true;
  }
  return done();
}

bool Gone(pid_t pid) {
  waitpid(pid, nullptr, WNOHANG);
  return kill(pid, 0) != 0 && errno == ESRCH;
}

// A shell that writes its pid and its background child's to `pids`, then
// waits on the child, which sleeps longer than any test.
std::string HangingScript(const std::string& pids) {
  return "echo $$ >> '" + pids + "'; sleep 1000 & echo $! >> '" + pids +
         "'; wait";
}

// Issue 42, item 7: a command RunProcess ran (its process group, a
// shell's children included) outlived a caller killed by SIGKILL. The
// group dies with its caller now.
TEST(RunProcessTest, TheCommandAndWhatItStartedDieWithAKilledCaller) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  const std::string pids = (*dir)->File("pids");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t caller = fork();
  if (caller == 0) {
    (void)RunProcess({"/bin/sh", "-c", HangingScript(pids)}, {});
    _exit(0);
  }
  const bool started =
      Within(absl::Seconds(30), [&] { return PidsIn(pids).size() >= 2; });
  kill(caller, SIGKILL);
  waitpid(caller, nullptr, 0);
  ASSERT_TRUE(started) << "the command never ran";
  for (pid_t pid : PidsIn(pids)) {
    EXPECT_TRUE(Within(absl::Seconds(10), [&] { return Gone(pid); }))
        << pid << " outlived its caller";
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// A stop (Ctrl-C in a command that handles it) ends the command RunProcess
// waits for at once, and what it started; after it, nothing is started.
TEST(RunProcessTest, AStopEndsTheCommandAndStartsNoMore) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  const std::string pids = (*dir)->File("pids");
  std::thread stopper([&] {
    if (Within(absl::Seconds(30), [&] { return PidsIn(pids).size() >= 2; }))
      Interrupt();
  });
  const absl::Time start = absl::Now();
  auto outcome = RunProcess({"/bin/sh", "-c", HangingScript(pids)},
                            {.timeout = absl::Seconds(60)});
  stopper.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->interrupted);
  EXPECT_FALSE(outcome->ok());
  EXPECT_EQ(outcome->Describe(absl::Seconds(60)), "interrupted (killed)");
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  for (pid_t pid : PidsIn(pids)) {
    EXPECT_TRUE(Within(absl::Seconds(10), [&] { return Gone(pid); })) << pid;
  }
  auto after = RunProcess({"/bin/sh", "-c", "echo ran > '" + pids + "'"}, {});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->interrupted);
  ClearInterrupt();
  EXPECT_EQ(PidsIn(pids).size(), 2u) << "a command ran after the stop";
  after = RunProcess({"/bin/true"}, {});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->ok()) << "a cleared stop still stops";
}

// A TempDir lives under this process's root, which a process of its own
// removes once this one is gone, however it ends: here a forked copy of
// this process, killed by SIGKILL with its TempDir alive.
TEST(TempDirTest, AKilledProcesssDirectoriesAreRemoved) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  const std::string report = (*dir)->File("report");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const pid_t child = fork();
  if (child == 0) {
    auto mine = TempDir::Create("killed");
    if (mine.ok()) std::ofstream(report) << (*mine)->path() << "\n";
    pause();
    _exit(0);
  }
  std::string path;
  const bool made = Within(absl::Seconds(30), [&] {
    path = ReadFile(report).value_or("");
    return absl::EndsWith(path, "\n");
  });
  path = std::string(absl::StripTrailingAsciiWhitespace(path));
  EXPECT_THAT(path, HasSubstr(absl::StrCat("/ptxdiff-", child, "/killed-")));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(made) << "the child made no TempDir";
  struct stat st;
  EXPECT_TRUE(Within(
      absl::Seconds(10),
      [&] { return stat(ProcessTempDir("ptxdiff", child).c_str(), &st) != 0; }))
      << "left: " << path;
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(ShellQuoteTest, SurvivesTheShell) {
  auto dir = TempDir::Create("subprocess-test");
  ASSERT_TRUE(dir.ok());
  const std::string tricky = "it's $HOME `x` \"y\" \\ z";
  EXPECT_TRUE(Shell(**dir, "printf %s " + ShellQuote(tricky)).ok());
  EXPECT_EQ(*ReadFile((*dir)->File("log")), tricky);
}

// A ptx-cmd tool that does not run (a typo, a relative path: the command
// runs in a directory of its own) exited 127 on every module, which a
// campaign learned as refusals of every class and remembered for the next
// run. It is bad input, said once, before anything runs.
TEST(CheckCommandProgramTest, RefusesAProgramThatCannotRun) {
  EXPECT_TRUE(CheckCommandProgram("/bin/sh -c 'x' {ptx} {in} {out}").ok());
  EXPECT_TRUE(CheckCommandProgram("  sh {ptx} {in} {out}").ok());  // on $PATH
  // Shell syntax and builtins: the shell's to judge.
  EXPECT_TRUE(CheckCommandProgram("X=1 my-tool {ptx}").ok());
  EXPECT_TRUE(CheckCommandProgram("exec /no/such {ptx}").ok());
  EXPECT_TRUE(CheckCommandProgram("if true; then sh {ptx}; fi").ok());
  EXPECT_TRUE(CheckCommandProgram("\"$TOOL\" {ptx}").ok());

  EXPECT_THAT(CheckCommandProgram("/no/such/tool {ptx} {in} {out}").message(),
              testing::HasSubstr("/no/such/tool does not exist"));
  EXPECT_THAT(CheckCommandProgram("/etc/passwd {ptx}").message(),
              testing::HasSubstr("is not an executable file"));
  EXPECT_THAT(CheckCommandProgram("/tmp {ptx}").message(),
              testing::HasSubstr("is not an executable file"));
  EXPECT_THAT(CheckCommandProgram("./tool.sh {ptx}").message(),
              testing::HasSubstr("'./tool.sh' is a relative path"));
  EXPECT_THAT(
      CheckCommandProgram("no-such-tool-xyz {ptx}").message(),
      testing::HasSubstr("'no-such-tool-xyz' is not a command /bin/sh knows"));
}

// Seventh fault run of issue 65: a program quoted whole (a path with a
// space must be) was not checked: `fuzz --backend 'ptx-cmd:"/nonexistent/my
// tool" {ptx} {in} {out}'` learned exit 127 on every module as the tool's
// refusals and kept them in OUT/refusals/ for the next run.
TEST(CheckCommandProgramTest, AProgramQuotedWholeIsCheckedToo) {
  EXPECT_THAT(CheckCommandProgram("\"/nonexistent/my tool\" {ptx} {in} {out}")
                  .message(),
              testing::HasSubstr("/nonexistent/my tool does not exist"));
  EXPECT_THAT(CheckCommandProgram("'/no/such' {ptx}").message(),
              testing::HasSubstr("/no/such does not exist"));
  EXPECT_THAT(CheckCommandProgram("'./tool.sh' {ptx}").message(),
              testing::HasSubstr("is a relative path"));
  EXPECT_TRUE(CheckCommandProgram("'/bin/sh' -c x {ptx}").ok());
  // Quotes that are shell syntax still go to the shell.
  EXPECT_TRUE(CheckCommandProgram("\"$HOME/x\" {ptx}").ok());
  EXPECT_TRUE(CheckCommandProgram("'/no/'such {ptx}").ok());
  EXPECT_TRUE(CheckCommandProgram("'/no/such {ptx}").ok());  // unclosed
}

TEST(FilesTest, ReadWriteTailAndMissing) {
  auto dir = TempDir::Create("files-test");
  ASSERT_TRUE(dir.ok());
  const std::string path = (*dir)->File("f");
  ASSERT_TRUE(WriteFile(path, std::string("ab\0cd", 5)).ok());
  EXPECT_EQ(*ReadFile(path), std::string("ab\0cd", 5));
  EXPECT_EQ(ReadFileTail(path, 2), "...cd");
  EXPECT_EQ(ReadFileTail(path, 10), std::string("ab\0cd", 5));
  EXPECT_EQ(ReadFileTail((*dir)->File("none"), 10), "");
  EXPECT_EQ(ReadFile((*dir)->File("none")).status().code(),
            absl::StatusCode::kNotFound);
}

// Ninth fault run: a FIFO at a file a command writes in place (fuzz.log,
// differential.dict) blocked its open for ever. Both writers refuse it at
// once; a reader opened after 3 s frees a writer that waited, to fail here.
TEST(FilesTest, AFifoIsNotWrittenInPlaceNorWaitedOn) {
  auto dir = TempDir::Create("files-fifo");
  ASSERT_TRUE(dir.ok());
  const std::string fifo = (*dir)->File("fuzz.log");
  absl::Status wrote, appended;
  {
    const LateFifoReader reader(fifo, absl::Seconds(3));
    ASSERT_TRUE(reader.made());
    wrote = WriteFile(fifo, "x");
    appended = AppendToFile(fifo, "x\n");
    EXPECT_FALSE(reader.opened()) << "a writer waited on the FIFO";
  }
  for (const absl::Status& s : {wrote, appended}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(s.message(), HasSubstr(fifo + " is a FIFO"));
    EXPECT_THAT(s.message(), HasSubstr("not a regular file: not written"));
  }
  // Opened by a reader, it is refused all the same: it is not a file.
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_THAT(WriteFile(fifo, "x").message(), HasSubstr("is a FIFO"));
  close(reader);
  EXPECT_EQ(ReadFileTail(fifo, 10), "");  // nor is its tail waited on
  // A character device is written, as before.
  EXPECT_TRUE(WriteFile("/dev/null", "x").ok());
  EXPECT_TRUE(AppendToFile("/dev/null", "x").ok());
}

// The fifteenth fault run: `report --json NODE` renamed the page over a
// device node or a FIFO (as root, /dev/full). An atomic replace leaves them
// be; a file the user names is written through them, or refused.
TEST(FilesTest, NoDeviceOrFifoIsReplacedByAFile) {
  auto dir = TempDir::Create("files-replace");
  ASSERT_TRUE(dir.ok());
  const std::string fifo = (*dir)->File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const absl::Status s = WriteFileAtomic(fifo, "page");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr(fifo + " is a FIFO, not a file"));
  EXPECT_THAT(WriteOutputFile(fifo, "page").message(), HasSubstr("is a FIFO"));
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_THAT(WriteFileAtomic("/dev/null", "page").message(),
              HasSubstr("/dev/null is a device, not a file: not replaced"));
  EXPECT_TRUE(WriteOutputFile("/dev/null", "page").ok());
  ASSERT_EQ(lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A link is written through, and stays a link; a file is replaced.
  const std::string target = (*dir)->File("target");
  const std::string link = (*dir)->File("link");
  ASSERT_TRUE(WriteFile(target, "old").ok());
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(WriteOutputFile(link, "page").ok());
  EXPECT_EQ(*ReadFile(target), "page");
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(WriteOutputFile(target, "new").ok());
  EXPECT_EQ(*ReadFile(link), "new");
}

// Ninth fault run: a file at OUT/findings passed for its directory (mkdir's
// EEXIST), and libFuzzer failed 13 s later.
TEST(FilesTest, MakeDirsSaysAFileIsNoDirectory) {
  auto dir = TempDir::Create("files-makedirs");
  ASSERT_TRUE(dir.ok());
  EXPECT_TRUE(MakeDirs((*dir)->File("a/b")).ok());
  EXPECT_TRUE(MakeDirs((*dir)->File("a/b")).ok());  // there already
  ASSERT_TRUE(WriteFile((*dir)->File("findings"), "").ok());
  const absl::Status s = MakeDirs((*dir)->File("findings"));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr((*dir)->File("findings") +
                                     ": a file of that name is there"));
}

TEST(TempDirTest, RemovedWithEverythingInside) {
  std::string path;
  {
    auto dir = TempDir::Create("files-test");
    ASSERT_TRUE(dir.ok());
    path = (*dir)->path();
    EXPECT_THAT(path, HasSubstr("/files-test-"));
    EXPECT_TRUE(Shell(**dir, "mkdir -p a/b && touch a/b/c x").ok());
  }
  struct stat st;
  EXPECT_NE(stat(path.c_str(), &st), 0);
}

}  // namespace
}  // namespace ptxdiff
