// eval and sweep with a backend (cli/backend_commands.h).

#include "cli/backend_commands.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "cli/testing/run_ptxdiff.h"
#include "cli/testing/stop_once_handled.h"
#include "common/testing/scoped_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(BackendCommandsTest, EvalWithABackendPrintsBothAndTheVerdict) {
  CliRun r = Ptxdiff({"eval", "--backend=oracle", "bfe.s32", "0xf0", "4", "4"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "oracle:  0xffffffff  defined  (spec reading)\n"
            "backend: 0xffffffff  (oracle 1 (ptxdiff CPU oracle))\n"
            "verdict: agree\n");
  r = Ptxdiff(
      {"eval", "--backend=oracle", "addc.cc.u32", "0xffffffff", "0", "1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "oracle:  0x00000000 cf=1  defined  (spec reading)\n"
            "backend: 0x00000000 cf=1  (oracle 1 (ptxdiff CPU oracle))\n"
            "verdict: agree\n");
  r = Ptxdiff({"eval", "--backend",
               std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH, "popc.b32",
               "3"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
}

// --runtime: the named sources are runtime values; a worker that does not
// run operand forms declines such tuples, saying why, instead of running
// them as immediates.
TEST(BackendCommandsTest, RuntimeSourcesReachOnlyAWorkerThatRunsForms) {
  CliRun r = Ptxdiff({"eval", "--backend=oracle", "--runtime", "a", "bfe.s32",
                      "1", "40", "8"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(
      r.out, HasSubstr("instruction: bfe.s32 d, %a, 0x00000028, 0x00000008\n"));
  EXPECT_THAT(r.out, HasSubstr("verdict: agree"));
  r = Ptxdiff({"eval", "--backend=oracle", "--runtime", "immLut", "lop3.b32",
               "1", "2", "3", "4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot be a runtime value"));
  const std::string faulty = std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH;
  r = Ptxdiff({"sweep", "--backend", faulty, "--family", "bfe", "--tuples", "2",
               "--runtime", "a"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("agreed          8\n"));
  const std::string script = TempDirFor("no_forms") + "/no_forms_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --no-forms\n";
  chmod(script.c_str(), 0755);
  r = Ptxdiff({"sweep", "--backend", "exec:" + script, "--family", "bfe",
               "--tuples", "2", "--runtime", "a"});
  EXPECT_EQ(r.code, 1);  // nothing was tested
  EXPECT_THAT(r.out, HasSubstr("declined        8\n"));
  EXPECT_THAT(r.out, HasSubstr("(it does not say forms=1)"));
}

// Seventh fault run of issue 65: `eval` and `repro` exited 0, as for
// "agree", on a tuple the backend declined (a ptx-cmd tool that no longer
// runs: `repro ENTRY && echo fixed`), and 2, as for bad input, when the
// backend crashed on it. Not judged is 3, as `program` says it; a crash 1.
TEST(BackendCommandsTest, EvalAndReproExitAsTheirVerdictSays) {
  const std::string dir = TempDirFor("eval_exits");
  const std::string no_forms = dir + "/no_forms_worker.sh";
  std::ofstream(no_forms) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                          << " --no-forms\n";
  const std::string crash = dir + "/crash_worker.sh";
  std::ofstream(crash) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                       << " --fault=crash\n";
  for (const std::string& s : {no_forms, crash}) chmod(s.c_str(), 0755);
  CliRun r = Ptxdiff({"eval", "--backend", "exec:" + no_forms, "--runtime", "a",
                      "bfe.s32", "1", "40", "8"});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("verdict: declined"));
  r = Ptxdiff({"eval", "--backend", "exec:" + crash, "popc.b32", "3"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("verdict: backend fault"));
  // A case of two tuples, both declined.
  const std::string text_case = dir + "/two.txt";
  std::ofstream(text_case)
      << "variant: bfe.s32\noperands: 1 40 8\nruntime: a\n"
      << "variant: bfe.s32\noperands: 2 40 8\nruntime: a\n";
  r = Ptxdiff({"repro", text_case, "--backend", "exec:" + no_forms});
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("0 agree, 0 mismatch, 2 declined"));
}

TEST(BackendCommandsTest, SweepThroughAnExecBackendCountsAgreements) {
  const std::string faulty = std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH;
  CliRun r = Ptxdiff(
      {"sweep", "--backend", faulty, "--family", "popc", "--tuples", "5"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 variants x 5 tuples = 10 tuples"));
  EXPECT_THAT(r.out, HasSubstr("agreed          10\n"));
  EXPECT_THAT(r.out, HasSubstr("mismatched      0\n"));
}

// Fifth fault run: plain `sweep` put in no handler, so Ctrl-C ended it by
// the signal, without the counts of the batches it had judged. It stops
// between batches now, as `sweep --exhaustive` does: the summary of what
// was judged, then exit 130.
TEST(BackendCommandsTest, AStoppedSweepSaysWhatItJudgedAndIsExit130) {
  CliRun r;
  {
    const StopOnceHandled stop;
    r = Ptxdiff({"sweep", "--backend", "oracle", "--family", "add", "--tuples",
                 "100", "--batch", "1"});
    EXPECT_TRUE(stop.stopped());
  }
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(" tuples, stopped after "));
  EXPECT_THAT(r.out, HasSubstr("  agreed          "));
  EXPECT_THAT(r.err, HasSubstr("ptxdiff sweep: stopped; "));
}

// The thirteenth fault run: a Ctrl-C of `calibrate` while it started
// (ptxas's queries, nvJitLink's loading) ended it by the signal, exit 130
// and nothing printed. Its handler is in from the start: it says where the
// stop found it. Here ptxas takes 5 s to say its version, and the SIGINT
// comes 1.5 s in (without the handler, it ends this test's process).
TEST(BackendCommandsTest, ACtrlCOfCalibrateAtItsStartIsSaid) {
  const absl::StatusOr<std::string> real = FindPtxas({});
  if (!real.ok()) GTEST_SKIP() << "no ptxas";
  const std::string ptxas = TempDirFor("calibrate_ctrl_c") + "/ptxas";
  std::ofstream(ptxas) << "#!/bin/sh\ncase \"$*\" in *--version*) sleep 5;; "
                          "esac\nexec "
                       << *real << " \"$@\"\n";
  chmod(ptxas.c_str(), 0755);
  const ScopedEnv env("PTXAS", ptxas);
  std::thread ctrl_c([] {
    absl::SleepFor(absl::Milliseconds(1500));
    kill(getpid(), SIGINT);
  });
  const absl::Time start = absl::Now();
  const CliRun r = Ptxdiff({"calibrate", "--family", "add"});
  ctrl_c.join();
  EXPECT_EQ(r.code, 130) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("calibrate: interrupted before the first "
                               "compile"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));  // not ptxas's queries
}

// Sixth fault run: a PTXAS that hangs on --version cost `eval`, `program`
// and `programs` a fixed 60 s, whatever their --timeout. It costs the
// --timeout given, and says that ptxas timed out.
TEST(BackendCommandsTest, APtxasThatHangsOnVersionCostsTheTimeoutGiven) {
  const std::string ptxas = TempDirFor("hanging_ptxas") + "/ptxas";
  std::ofstream(ptxas) << "#!/bin/sh\nsleep 1000\n";
  chmod(ptxas.c_str(), 0755);
  const ScopedEnv env("PTXAS", ptxas);
  CliRun r = Ptxdiff(
      {"eval", "--backend", "ptxas", "--timeout", "1", "add.u32", "1", "2"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--version did not print a release line: "
                               "[timed out after 1s (killed)]"));
  r = Ptxdiff({"program", "--backend", "ptxas", "--timeout", "1",
               std::string(PTXDIFF_SOURCE_DIR) +
                   "/program/testdata/found-abs-lt-zero.ptxprog"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--version did not print a release line: "
                               "[timed out after 1s (killed)]"));
  // The twelfth fault run: `calibrate --max-time 5` waited the query's own
  // minute. Its --max-time bounds them, tuples and programs alike.
  for (const char* what : {"--family", "--programs"}) {
    r = Ptxdiff({"calibrate", what,
                 std::string(what) == "--family" ? "add" : "10", "--max-time",
                 "1"});
    EXPECT_EQ(r.code, 2) << what << r.out;
    EXPECT_THAT(r.err, HasSubstr("[timed out after 1s (killed)]")) << what;
  }
}

// A ptxas at `path` that answers --version as `real` does and runs
// `compile` (shell) for every compile.
void WriteFakePtxas(const std::string& path, const std::string& real,
                    const std::string& compile) {
  std::ofstream(path) << "#!/bin/sh\ncase \"$*\" in *--version*) exec " << real
                      << " \"$@\";; esac\n"
                      << compile << "\n";
  chmod(path.c_str(), 0755);
}

// The fourteenth fault run: `calibrate --programs` on a ptxas whose
// compiles hang cost a fixed minute a compile. --timeout bounds each, and
// the census says so.
TEST(BackendCommandsTest, CalibrateKillsACompileAtItsTimeout) {
  const absl::StatusOr<std::string> real = FindPtxas({});
  if (!real.ok()) GTEST_SKIP() << "no ptxas";
  const std::string ptxas = TempDirFor("hanging_compile") + "/ptxas";
  WriteFakePtxas(ptxas, *real, "exec sleep 1000");
  const ScopedEnv env("PTXAS", ptxas);
  const ScopedEnv executable("PTXDIFF_PTXAS_COMPILER", "ptxas");
  const CliRun r = Ptxdiff(
      {"calibrate", "--programs", "2", "--timeout", "1", "--threads", "1"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("timed out after 1s (killed)")) << r.err;
  EXPECT_THAT(r.err, HasSubstr("nothing was executed"));
}

// The nineteenth fault run: `calibrate --programs` on a ptxas that crashes
// had a census row with no reason and no example. It says ptxas crashed.
TEST(BackendCommandsTest, CalibrateProgramsSaysPtxasCrashed) {
  const absl::StatusOr<std::string> real = FindPtxas({});
  if (!real.ok()) GTEST_SKIP() << "no ptxas";
  const std::string ptxas = TempDirFor("crashing_program_compile") + "/ptxas";
  WriteFakePtxas(ptxas, *real, "kill -SEGV $$");
  const ScopedEnv env("PTXAS", ptxas);
  const ScopedEnv executable("PTXDIFF_PTXAS_COMPILER", "ptxas");
  const CliRun r = Ptxdiff(
      {"calibrate", "--programs", "2", "--timeout", "10", "--threads", "1"});
  EXPECT_THAT(r.out, HasSubstr("not judged, by why (checks, an example):\n"))
      << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("  ptxas crashed\n")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("SIGSEGV")) << r.out;
}

// The fifteenth fault run: `calibrate` on a ptxas that crashes on every
// compile said "156 rejected by ptxas", and a rejection had no example.
// A crash is no rejection: its tuples are not run, said with how ptxas
// ended; a rejection shows what ptxas said of one.
TEST(BackendCommandsTest, CalibrateTellsACrashOfPtxasFromARejection) {
  const absl::StatusOr<std::string> real = FindPtxas({});
  if (!real.ok()) GTEST_SKIP() << "no ptxas";
  const std::string dir = TempDirFor("crashing_compile");
  const ScopedEnv executable("PTXDIFF_PTXAS_COMPILER", "ptxas");
  for (const std::string& compile :
       {std::string("kill -SEGV $$"),
        std::string("echo 'ptxas fatal   : licence server gone'; exit 1")}) {
    const std::string ptxas = dir + "/ptxas";
    WriteFakePtxas(ptxas, *real, compile);
    const ScopedEnv env("PTXAS", ptxas);
    const CliRun r = Ptxdiff(
        {"calibrate", "--family", "add", "--tuples", "4", "--threads", "1"});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    if (compile.starts_with("kill")) {
      EXPECT_THAT(r.out, HasSubstr(", 0 rejected by ptxas")) << r.out;
      EXPECT_THAT(r.out, HasSubstr("ptxas did not finish the compile"));
      EXPECT_THAT(r.out, HasSubstr("killed by signal 11 (SIGSEGV)"));
    } else {
      EXPECT_THAT(r.out, Not(HasSubstr(", 0 rejected by ptxas"))) << r.out;
      EXPECT_THAT(r.out, HasSubstr("e.g. add."));
      EXPECT_THAT(r.out,
                  HasSubstr("rejected by ptxas: ptxas fatal   : licence"));
    }
  }
}

// --exhaustive: every input of the narrow variants, proved or refuted;
// a sample of the wide ones; the flags that only it takes.
TEST(BackendCommandsTest, AnExhaustiveSweepProvesAndRefutes) {
  const std::string script = TempDirFor("wrong_cnot") + "/wrong_cnot.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=wrong-on=cnot --when-operand=0:65000\n";
  chmod(script.c_str(), 0755);
  CliRun r = Ptxdiff({"sweep", "--backend", "exec:" + script, "--exhaustive",
                      "--family", "not", "--family", "cnot", "--max-bits",
                      "16", "--sample", "100"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("2 variants of at most 16 input bits"));
  EXPECT_THAT(r.out, HasSubstr("  proved      1 "));
  // cnot.b32's and cnot.b64's samples are wrong too (a above 65000).
  EXPECT_THAT(r.out, HasSubstr("  refuted     3 "));
  EXPECT_THAT(r.out, HasSubstr("  sampled     2 "));
  EXPECT_THAT(r.out, HasSubstr("refuted    cnot.b16"));
  EXPECT_THAT(r.out, HasSubstr("536 disagree"));  // a from 65000 to 65535
  EXPECT_THAT(r.out, HasSubstr("proved     not.b16"));
  EXPECT_THAT(r.err, HasSubstr("100.0% of 131472 inputs"));
  r = Ptxdiff({"sweep", "--backend", "oracle", "--exhaustive", "--family",
               "not", "--max-bits", "16", "--sample", "0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("65536 inputs of 1 variants"));
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--max-bits", "33"},
        {"--max-bits", "8", "--tuples", "4"},
        {"--runtime", "a"}}) {
    std::vector<std::string> args = {"sweep", "--backend", "oracle",
                                     "--exhaustive", "--family", "not"};
    args.insert(args.end(), bad.begin(), bad.end());
    EXPECT_EQ(Ptxdiff(args).code, 2) << bad[0];
  }
  // Its flags without it.
  r = Ptxdiff({"sweep", "--backend", "oracle", "--max-bits", "8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--max-bits is a flag of --exhaustive"));
}

// Third fault run: a wide variant whose every batch crashed the worker was
// listed "sampled ... no disagreement in their sample" (exit 1, no fault
// said). It is not proved, its faulty batches counted, the first shown.
TEST(BackendCommandsTest, AnExhaustiveSweepSaysASampleThatFaulted) {
  const std::string script = TempDirFor("crash_not") + "/crash_not.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=crash-on=not.b32\n";
  chmod(script.c_str(), 0755);
  const CliRun r = Ptxdiff({"sweep", "--backend", "exec:" + script,
                            "--exhaustive", "--family", "not", "--max-bits",
                            "16", "--sample", "100"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  sampled     1 "));  // not.b64
  EXPECT_THAT(r.out, HasSubstr("  not proved  1 "));
  EXPECT_THAT(r.out, HasSubstr("not proved not.b32"));
  EXPECT_THAT(r.out, HasSubstr("1 batch faulted the backend (not judged)"));
  EXPECT_THAT(r.out, HasSubstr("e.g. crash on a batch of 100 tuples"));
}

TEST(BackendCommandsTest, SweepBadInputIsExitTwo) {
  EXPECT_EQ(Ptxdiff({"sweep", "--backend", "oracle", "--family", "nope"}).code,
            2);
  EXPECT_EQ(Ptxdiff({"sweep", "--backend", "oracle", "--tuples", "0"}).code, 2);
  EXPECT_EQ(Ptxdiff({"sweep", "--backend", "gpu"}).code, 2);
  CliRun r = Ptxdiff({"sweep", "--backend", "exec:/nonexistent/worker"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot start worker '/nonexistent/worker'"));
  r = Ptxdiff(
      {"eval", "--backend", "oracle", "--timeout", "x", "add.s32", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--timeout takes a number of seconds above 0"));
}

// Issue 28: a backend that declines every tuple (a ptx-cmd tool that always
// fails) used to make a sweep that tested nothing exit 0.
TEST(BackendCommandsTest, ASweepThatTestedNothingFailsAndSaysWhy) {
  CliRun r =
      Ptxdiff({"sweep", "--backend", "ptx-cmd:/bin/false {ptx} {in} {out}",
               "--family", "add"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("agreed          0\n"));
  EXPECT_THAT(r.out, testing::ContainsRegex("declined        [1-9]"));
  EXPECT_THAT(
      r.err,
      StartsWith(
          "ptxdiff sweep: nothing was tested: the backend declined all "));
  EXPECT_THAT(r.err, HasSubstr(" tuples sent (most often, "));
  EXPECT_THAT(r.err, HasSubstr("/bin/false {ptx} {in} {out}' failed on add."));
  EXPECT_THAT(r.err, HasSubstr("exit status 1"));
  // One variant the backend runs is enough to test something.
  const std::string faulty = std::string("exec:") + PTXDIFF_FAULTY_WORKER_PATH;
  r = Ptxdiff({"sweep", "--backend", faulty, "--family", "add", "--family",
               "popc", "--tuples", "2"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// --cuda-driver belongs to the cuda backend: with another it is a mistake,
// not silently ignored.
TEST(BackendCommandsTest, CudaDriverNeedsTheCudaBackend) {
  CliRun r = Ptxdiff(
      {"sweep", "--backend", "oracle", "--cuda-driver", "/x/libcuda.so"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(
      r.err,
      HasSubstr(
          "--cuda-driver is an option of --backend=cuda, not of 'oracle'"));
  r = Ptxdiff({"eval", "--backend", "oracle", "--cuda-driver=/x/libcuda.so",
               "add.s32", "1", "2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--cuda-driver is an option of --backend=cuda"));
}

// A carry-only disagreement is a mismatch, shown as one by eval and by
// sweep's replay lines.
TEST(BackendCommandsTest, ACarryOnlyDisagreementIsAMismatch) {
  const std::string dir = TempDirFor("carry");
  const std::string script = dir + "/wrong_carry_worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=wrong-carry-on=sub.cc \"$@\"\n";
  chmod(script.c_str(), 0755);
  CliRun r =
      Ptxdiff({"eval", "--backend", "exec:" + script, "sub.cc.u32", "0", "1"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("oracle:  0xffffffff cf=1  defined"));
  EXPECT_THAT(r.out, HasSubstr("backend: 0xffffffff cf=0  (faulty"));
  EXPECT_THAT(r.out, HasSubstr("verdict: mismatch"));
  r = Ptxdiff({"sweep", "--backend", "exec:" + script, "--family", "sub",
               "--tuples", "8"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("agreed          56\n"));  // the 7 sub without .cc
  EXPECT_THAT(r.out, HasSubstr("mismatched      32\n"));  // the 4 sub.cc
  EXPECT_THAT(
      r.out,
      testing::ContainsRegex(
          "ptxdiff eval 'sub\\.cc\\.[us](32|64)' .*  # oracle 0x[0-9a-f]+ "
          "cf=([01]), faulty 0x[0-9a-f]+ cf=[01]"));
}

// `ptxdiff calibrate`: the evaluator's self-check on tuples and on random
// programs, its census, and bad input named.
// A ptxas worker that starts slower than the handshake's wait (a loaded
// machine: the fourth fault run saw one take over 10 s) has the toolkit:
// the hint says to wait longer, not to go without it.
TEST(BackendCommandsTest, AWorkerThatStartsSlowlyIsNotSaidToLackTheToolkit) {
  const std::string worker = TempDirFor("slow_start") + "/slow_worker.sh";
  std::ofstream(worker) << "#!/bin/sh\nexec sleep 30\n";
  chmod(worker.c_str(), 0755);
  setenv("PTXDIFF_WORKER", worker.c_str(), 1);
  const CliRun r = Ptxdiff(
      {"eval", "add.u32", "1", "2", "--backend", "ptxas", "--timeout", "1"});
  unsetenv("PTXDIFF_WORKER");
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("no answer to HELLO within 10s"));
  EXPECT_THAT(r.err, HasSubstr("hint: on a loaded machine a worker may start "
                               "slowly: try a larger --timeout"));
  EXPECT_THAT(r.err, Not(HasSubstr("without the CUDA toolkit")));
}

// The fifteenth fault run: a worker that cannot write its own temporary
// files (a full TMPDIR) made eval say "backend fault", sweep count faulty
// batches and minimize file the tool's protocol error. Each now exits 2
// with the worker's line, naming the file and the reason; nothing filed.
TEST(BackendCommandsTest, AWorkerThatCannotWriteItsFilesIsNoBackendFault) {
  const std::string dir = TempDirFor("no_room");
  const ScopedEnv worker("PTXDIFF_WORKER", NoRoomToWriteWorker(dir));
  const std::string tool = absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                                        " --flip-on=add.s32 {ptx} {in} {out}");
  const auto says_it = [](const CliRun& r, const std::string& command) {
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, StartsWith("ptxdiff " + command +
                                  ": the harness's own "
                                  "temporary files failed"));
    EXPECT_THAT(r.err, HasSubstr("kernel.ptx: File too large"));
    EXPECT_THAT(r.out, Not(HasSubstr("backend fault")));
  };
  says_it(Ptxdiff({"eval", "add.s32", "1", "2", "--backend", tool}), "eval");
  says_it(Ptxdiff({"sweep", "--family", "add", "--backend", tool}), "sweep");
  std::ofstream(dir + "/case.txt") << "variant: add.s32\noperands: 0x1 0x2\n";
  says_it(Ptxdiff({"minimize", dir + "/case.txt", "--dir", dir + "/triage",
                   "--backend", tool}),
          "minimize");
  int entries = 0;  // named kind~backend~...
  for (const auto& e : std::filesystem::directory_iterator(dir + "/triage"))
    entries += absl::StrContains(e.path().filename().string(), "~");
  EXPECT_EQ(entries, 0);
}

// Tenth fault run: a PTXDIFF_WORKER that exits at once under `--backend
// ptxas` was given "without the CUDA toolkit, try --backend=oracle", the
// toolkit there. That hint is for a ptxas not found.
TEST(BackendCommandsTest, AWorkerThatFailsBesidePtxasIsNotSaidToLackIt) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  const std::string worker = TempDirFor("failing_worker") + "/exit3.sh";
  std::ofstream(worker) << "#!/bin/sh\nexit 3\n";
  chmod(worker.c_str(), 0755);
  const ScopedEnv env("PTXDIFF_WORKER", worker);
  const CliRun r = Ptxdiff({"eval", "add.u32", "1", "2", "--backend", "ptxas"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("without the CUDA toolkit")));
  const ScopedEnv no_ptxas("PTXAS", "/nonexistent/ptxas");
  const ScopedEnv no_path("PATH", "/nonexistent");
  const CliRun r2 =
      Ptxdiff({"eval", "add.u32", "1", "2", "--backend", "ptxas"});
  EXPECT_THAT(r2.err, HasSubstr("without the CUDA toolkit"));
}

TEST(CalibrateCommandTest, TuplesAndProgramsAgreeAtO0AndBadInputIsNamed) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  CliRun r = Ptxdiff({"calibrate", "--family", "bfe", "--family", "cvt",
                      "--tuples", "4", "--threads", "1"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("run to the end for every tuple (100.0%)"));
  EXPECT_THAT(r.out, HasSubstr("disagreements   0"));

  r = Ptxdiff({"calibrate", "--programs", "40", "--threads", "1"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("programs        40, "));
  EXPECT_THAT(r.out, HasSubstr("disagreements   0"));

  r = Ptxdiff({"calibrate", "--arch", "sm_80"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("decodes sm_90 and sm_90a only"));
  r = Ptxdiff({"calibrate", "--programs", "5", "--family", "bfe"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--family and --tuples are for tuples"));
  r = Ptxdiff({"calibrate", "--family", "visa.shl"});  // no SASS
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no PTX variant selected"));
  EXPECT_EQ(Ptxdiff({"calibrate", "--opt", "4"}).code, 2);
}

// The self-check compiles with the assembler the ptxas backend uses:
// libnvJitLink where it loads (its code differs from the executable's, as
// 16-bit division's does), so that a gap shows here and not in a campaign.
TEST(CalibrateCommandTest, CompilesWithTheBackendsAssembler) {
  if (!FindPtxas({}).ok()) GTEST_SKIP() << "no ptxas";
  const absl::StatusOr<PtxasAssembler> assembler =
      MakePtxasAssembler({}, "sm_90");
  ASSERT_TRUE(assembler.ok()) << assembler.status();
  const CliRun r = Ptxdiff(
      {"calibrate", "--family", "add", "--tuples", "2", "--threads", "1"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("calibrate: " + assembler->description +
                               " at -O0"));
  if (NvJitLink::Load(*FindPtxas({})).ok()) {
    EXPECT_THAT(assembler->description, HasSubstr("nvJitLink"));
  }
}

}  // namespace
}  // namespace ptxdiff
