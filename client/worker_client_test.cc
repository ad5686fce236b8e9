#include "client/worker_client.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "common/process_tree.h"
#include "common/testing/child_of_a_killed_caller.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"
#include "worker/testing/faulty_worker_client.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// The faulty worker, a hang caught within 20 s by default.
WorkerCommand Faulty(const std::vector<std::string>& flags,
                     absl::Duration timeout = absl::Seconds(20)) {
  return FaultyWorkerCommand(flags, timeout);
}

// The faulty worker, isolating the faults of a batch within `budget`.
WorkerCommand FaultyIsolating(const std::vector<std::string>& flags,
                              absl::Duration timeout,
                              absl::Duration budget = absl::Seconds(30)) {
  WorkerCommand command = Faulty(flags, timeout);
  command.isolate_faults = true;
  command.isolation_budget = budget;
  return command;
}

std::vector<Tuple> SomeTuples(std::vector<std::string> spellings,
                              int per_variant) {
  std::mt19937_64 rng(3);
  std::vector<Tuple> tuples;
  for (const std::string& s : spellings) {
    const Variant v = *ParseVariant(s);
    std::vector<Operands> ops(per_variant);
    FillEdgeTuples(v, rng, ops);
    for (const Operands& o : ops) tuples.push_back({v, o});
  }
  return tuples;
}

void ExpectMatchesOracle(const std::vector<Tuple>& tuples,
                         const BatchOutcome& out) {
  ASSERT_FALSE(out.fault.has_value()) << out.fault->detail;
  ASSERT_EQ(out.results.size(), tuples.size());
  for (size_t i = 0; i < tuples.size(); ++i) {
    ASSERT_EQ(out.results[i].kind, ResultKind::kValue);
    EXPECT_EQ(out.results[i].bits,
              Evaluate(tuples[i].variant, tuples[i].operands).bits)
        << Spell(tuples[i].variant);
  }
}

TEST(WorkerClientTest, OracleWorkerAnswersLikeTheInProcessOracle) {
  auto command = CommandForBackend("oracle", PTXDIFF_WORKER_PATH);
  ASSERT_TRUE(command.ok());
  auto client = WorkerClient::Start(*command);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->identity().name, "oracle");
  const auto tuples = SomeTuples(
      {"add.s32", "mul.wide.u32", "vmad.s32.u32.s32.sat.shr7 d, -a.b1, b, c",
       "visa.shl.sat.d.ub.uw", "bfi.b64"},
      300);
  for (int round = 0; round < 3; ++round) {  // one worker, several batches
    ExpectMatchesOracle(tuples, (*client)->Run(tuples));
  }
  EXPECT_EQ((*client)->restarts(), 0);
}

TEST(WorkerClientTest, UnsupportedVariantsAreDeclinedWithoutBeingSent) {
  auto client = WorkerClient::Start(Faulty({"--supports=add,bfe.u32"}));
  ASSERT_TRUE(client.ok()) << client.status();
  const auto tuples = SomeTuples({"add.s32", "bfe.s32", "bfe.u32"}, 2);
  const BatchOutcome out = (*client)->Run(tuples);
  ASSERT_FALSE(out.fault.has_value());
  EXPECT_EQ(out.results[0].kind, ResultKind::kValue);
  EXPECT_EQ(out.results[2].kind, ResultKind::kDecline);
  EXPECT_EQ(out.results[2].code, DeclineCode::kUnsupportedVariant);
  EXPECT_THAT(out.messages[out.results[2].message],
              HasSubstr("not supported by faulty"));
  EXPECT_EQ(out.results[4].kind, ResultKind::kValue);
  // The client's table says what the supports lines say, of every variant
  // and of one the table does not hold (`.sat` is add.s32's only).
  for (const Variant& v : AllVariants()) {
    ASSERT_EQ((*client)->Supports(v), (*client)->identity().Supports(v))
        << Spell(v);
  }
  Variant illegal = *ParseVariant("add.u32");
  illegal.sat = true;
  ASSERT_FALSE(IsLegal(illegal));
  EXPECT_TRUE((*client)->Supports(illegal));  // the `add` line covers it
}

TEST(WorkerClientTest, CrashIsRetriedOnAFreshWorkerThenReported) {
  auto client = WorkerClient::Start(Faulty({"--fault=crash"}));
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 4));
  ASSERT_TRUE(out.fault.has_value());
  EXPECT_EQ(out.fault->kind, FaultKind::kCrash);
  EXPECT_THAT(out.fault->detail, HasSubstr("SIGABRT"));
  EXPECT_THAT(out.fault->detail, HasSubstr("crashing on purpose"));
  EXPECT_THAT(out.fault->detail, HasSubstr("first attempt: crash"));
  EXPECT_TRUE(out.results.empty());
  EXPECT_EQ((*client)->restarts(), 1);
}

TEST(WorkerClientTest, ACrashThatDoesNotRepeatIsRetriedSuccessfully) {
  char state[] = "/tmp/ptxdiff_crash_once_XXXXXX";
  const int fd = mkstemp(state);
  ASSERT_GE(fd, 0);
  close(fd);
  unlink(state);  // the worker creates it on its first crash
  auto client = WorkerClient::Start(
      Faulty({"--fault=crash-once", std::string("--state=") + state}));
  ASSERT_TRUE(client.ok()) << client.status();
  const auto tuples = SomeTuples({"sub.s64"}, 10);
  ExpectMatchesOracle(tuples, (*client)->Run(tuples));
  EXPECT_EQ((*client)->restarts(), 1);
  unlink(state);
}

TEST(WorkerClientTest, TheCallerCarriesOnAfterAFaultyBatch) {
  auto client = WorkerClient::Start(Faulty({"--fault=crash-on=div.u32"}));
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome bad =
      (*client)->Run(SomeTuples({"add.u32", "div.u32"}, 3));
  ASSERT_TRUE(bad.fault.has_value());
  EXPECT_EQ(bad.fault->kind, FaultKind::kCrash);
  const auto good = SomeTuples({"add.u32", "rem.u32"}, 3);
  ExpectMatchesOracle(good, (*client)->Run(good));
  EXPECT_EQ((*client)->restarts(), 2);
}

// A GPU worker's two exits after a device fault: a lost context (5) is a
// device fault, a kernel past its timeout (6) the implementation's hang;
// both with the worker's own line.
TEST(WorkerClientTest, AKernelPastItsTimeoutIsAHangALostContextADeviceFault) {
  for (const auto& [fault, kind, line] :
       std::vector<std::tuple<std::string, FaultKind, std::string>>{
           {"--fault=device-fault-on=div.u32", FaultKind::kDeviceFault,
            "cuda device fault: illegal instruction"},
           {"--fault=kernel-timeout-on=div.u32", FaultKind::kHang,
            "cuda kernel timeout: the kernel ran longer"}}) {
    auto client = WorkerClient::Start(Faulty({fault}));
    ASSERT_TRUE(client.ok()) << client.status();
    const BatchOutcome out = (*client)->Run(SomeTuples({"div.u32"}, 2));
    ASSERT_TRUE(out.fault.has_value()) << fault;
    EXPECT_EQ(out.fault->kind, kind) << fault;
    EXPECT_THAT(out.fault->detail, HasSubstr(line)) << fault;
  }
}

TEST(WorkerClientTest, HangIsKilledAtTheTimeout) {
  auto client =
      WorkerClient::Start(Faulty({"--fault=hang"}, absl::Milliseconds(300)));
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Time start = absl::Now();
  const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 1));
  ASSERT_TRUE(out.fault.has_value());
  EXPECT_EQ(out.fault->kind, FaultKind::kHang);
  EXPECT_THAT(out.fault->detail, HasSubstr("no reply within 300ms"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(WorkerClientTest, GarbageShortRepliesAndErrorsAreProtocolErrors) {
  for (const auto& [fault, expected] :
       std::vector<std::pair<std::string, std::string>>{
           {"garbage", "not a ptxdiff frame"},
           {"short", "worker returned 4 results for 5 tuples"},
           {"error", "worker answered ERROR: cannot do that"}}) {
    auto client = WorkerClient::Start(Faulty({"--fault=" + fault}));
    ASSERT_TRUE(client.ok()) << client.status();
    const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 5));
    ASSERT_TRUE(out.fault.has_value()) << fault;
    EXPECT_EQ(out.fault->kind, FaultKind::kProtocol) << fault;
    EXPECT_THAT(out.fault->detail, HasSubstr(expected)) << fault;
  }
}

// isolate_faults: a batch that faults the worker on one tuple is split
// until that tuple is alone; it comes back as a fault (hang, or crash for a
// worker that writes garbage and exits), every other tuple with its value.
TEST(WorkerClientTest, AFaultingTupleIsIsolatedAndTheRestAnswered) {
  std::vector<Tuple> tuples =
      SomeTuples({"add.sat.s32", "sub.s32", "bfe.u32"}, 8);
  // Edge operands never put a = MAX in add.sat.s32 here but the culprit.
  const Variant add_sat = *ParseVariant("add.sat.s32");
  for (Tuple& t : tuples) {
    if (t.variant == add_sat && t.operands.v[0] >= 0x7fffffff)
      t.operands.v[0] = 3;
  }
  const Tuple culprit{add_sat, {{0x7fffffff, 1}}};
  tuples.insert(tuples.begin() + 13, culprit);
  for (const auto& [fault, kind] :
       std::vector<std::pair<std::string, CaseFault>>{
           {"--fault=hang-on=add.sat.s32", CaseFault::kHang},
           {"--fault=garbage-on=add.sat.s32", CaseFault::kCrash}}) {
    auto client = WorkerClient::Start(FaultyIsolating(
        {fault, "--when-operand=0:2147483647"}, absl::Seconds(1)));
    ASSERT_TRUE(client.ok()) << client.status();
    const BatchOutcome out = (*client)->Run(tuples);
    ASSERT_FALSE(out.fault.has_value()) << out.fault->detail;
    for (size_t i = 0; i < tuples.size(); ++i) {
      const TupleResult& r = out.results[i];
      if (i == 13) {
        ASSERT_EQ(r.kind, ResultKind::kFault) << fault;
        EXPECT_EQ(r.fault, kind);
        EXPECT_THAT(out.messages[r.message], HasSubstr("the worker "));
        continue;
      }
      ASSERT_EQ(r.kind, ResultKind::kValue)
          << fault << " tuple " << i << ": "
          << (r.message < out.messages.size() ? out.messages[r.message] : "");
      EXPECT_EQ(r.bits, Evaluate(tuples[i].variant, tuples[i].operands).bits);
    }
    // The same client answers the next batch.
    ExpectMatchesOracle(SomeTuples({"add.s32"}, 8),
                        (*client)->Run(SomeTuples({"add.s32"}, 8)));
  }
}

// The second run's timeout follows what the worker's replies have cost:
// on a machine loaded enough, a large batch takes longer than 4 times
// --timeout or 10 s. A small batch teaches this slow worker's cost per
// tuple; a batch 40 times larger, longer than the 10 s floor, times out,
// is not narrowed (no budget), and is answered given 4 times its cost.
TEST(WorkerClientTest, TheSecondRunIsGivenWhatTheBatchShouldTake) {
  auto client = WorkerClient::Start(FaultyIsolating(
      {"--us-per-tuple=20000"}, absl::Seconds(1), absl::ZeroDuration()));
  ASSERT_TRUE(client.ok()) << client.status();
  ExpectMatchesOracle(SomeTuples({"add.s32"}, 16),
                      (*client)->Run(SomeTuples({"add.s32"}, 16)));
  const std::vector<Tuple> tuples = SomeTuples({"sub.u32"}, 640);
  const BatchOutcome out = (*client)->Run(tuples);
  EXPECT_FALSE(out.unisolated.has_value()) << out.unisolated->detail;
  ExpectMatchesOracle(tuples, out);
  EXPECT_EQ((*client)->answered_given_longer(), 1);
}

// A value's note (how the backend got it: ptxas says "executed") comes
// through isolation: the parts' replies intern their own messages, and a
// note kept the part's index, naming another message or none.
TEST(WorkerClientTest, AValuesNoteComesThroughIsolation) {
  std::vector<Tuple> tuples = SomeTuples({"sub.s32"}, 8);
  tuples.insert(tuples.begin() + 3,
                Tuple{*ParseVariant("add.sat.s32"), {{0x7fffffff, 1}}});
  auto client = WorkerClient::Start(
      FaultyIsolating({"--fault=garbage-on=add.sat.s32",
                       "--when-operand=0:2147483647", "--note=executed"},
                      absl::Seconds(5)));
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome out = (*client)->Run(tuples);
  ASSERT_FALSE(out.fault.has_value()) << out.fault->detail;
  for (size_t i = 0; i < tuples.size(); ++i) {
    if (i == 3) {
      EXPECT_EQ(out.results[i].kind, ResultKind::kFault);
      continue;
    }
    ASSERT_EQ(out.results[i].kind, ResultKind::kValue) << i;
    EXPECT_EQ(out.NoteOf(i), "executed") << i;
  }
}

// Isolation stops at its budget: what is not settled is declined, saying so,
// and the batch's fault comes back as unisolated. Every tuple hangs this
// worker, so isolating all 64 would take a run for every half down to each
// tuple, each at least the timeout set below: the declines show that it
// stopped, and the time bound is only a guard (the restarts it pays for are
// not bounded by the budget, and are slow on a loaded machine).
TEST(WorkerClientTest, IsolationStopsAtItsBudget) {
  auto client = WorkerClient::Start(FaultyIsolating(
      {"--fault=hang"}, absl::Milliseconds(300), absl::Milliseconds(500)));
  ASSERT_TRUE(client.ok()) << client.status();
  const absl::Time start = absl::Now();
  const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 64));
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  ASSERT_FALSE(out.fault.has_value());
  ASSERT_TRUE(out.unisolated.has_value());
  EXPECT_EQ(out.unisolated->kind, FaultKind::kHang);
  int declined = 0;
  for (const TupleResult& r : out.results) {
    if (r.kind != ResultKind::kDecline) continue;
    ++declined;
    EXPECT_THAT(
        out.messages[r.message],
        HasSubstr(
            "not run: isolating a hang of the worker took the whole budget"));
    // Run again given longer first (RecheckTimeout's floor: 10 s).
    EXPECT_THAT(out.messages[r.message],
                HasSubstr("; run again on a fresh worker given 10s: "));
  }
  EXPECT_GT(declined, 32);
  EXPECT_EQ((*client)->answered_given_longer(), 0);
}

// The twenty-third fault run: a backend only slower than --timeout on a
// loaded machine had its batch's "hang" filed as an unisolated hang. A
// batch whose hang isolation cannot narrow is run once more on a fresh
// worker given longer (RecheckTimeout) before it is called unisolated: this
// worker's batch takes a few times its timeout, and far less than 10 s.
TEST(WorkerClientTest, AWorkerOnlySlowerThanTheTimeoutIsNotAHang) {
  auto client = WorkerClient::Start(FaultyIsolating({"--us-per-tuple=20000"},
                                                    absl::Milliseconds(300),
                                                    absl::Milliseconds(500)));
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<Tuple> tuples = SomeTuples({"add.s32", "sub.u32"}, 32);
  const BatchOutcome out = (*client)->Run(tuples);
  EXPECT_FALSE(out.unisolated.has_value()) << out.unisolated->detail;
  ExpectMatchesOracle(tuples, out);
  EXPECT_EQ((*client)->answered_given_longer(), 1);
  // The next batch's worker is held to the client's own timeout again.
  const BatchOutcome next = (*client)->Run(SomeTuples({"add.s32"}, 2));
  EXPECT_FALSE(next.fault.has_value()) << next.fault->detail;
  EXPECT_FALSE(next.unisolated.has_value());
}

// Isolation stops at its deadline (a campaign's end), before its budget.
TEST(WorkerClientTest, IsolationStopsAtItsDeadline) {
  WorkerCommand command = FaultyIsolating(
      {"--fault=hang"}, absl::Milliseconds(300), absl::Minutes(10));
  command.isolation_deadline = absl::Now() + absl::Seconds(1);
  auto client = WorkerClient::Start(command);
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 64));
  ASSERT_FALSE(out.fault.has_value());
  ASSERT_TRUE(out.unisolated.has_value());
  int declined = 0;
  for (const TupleResult& r : out.results) {
    if (r.kind != ResultKind::kDecline) continue;
    ++declined;
    EXPECT_THAT(
        out.messages[r.message],
        HasSubstr(
            "not run: isolating a hang of the worker reached the campaign's "
            "deadline"));
  }
  EXPECT_GT(declined, 32);
}

// A worker that cannot be started again while a batch is isolated: the
// parts left were each run on no worker, and their tuples filed as
// crashes (the failed start's). They are not run, and the fault is
// unisolated.
TEST(WorkerClientTest, IsolationBlamesNoTupleWhenTheWorkerCannotRestart) {
  const std::string marker =
      ::testing::TempDir() + "/no_restart_" + std::to_string(getpid());
  std::remove(marker.c_str());
  WorkerCommand command;
  command.argv = {"/bin/sh", "-c",
                  "if mkdir '" + marker + "' 2>/dev/null; then exec " +
                      PTXDIFF_FAULTY_WORKER_PATH + " --fault=hang; fi; " +
                      "echo no more workers >&2; exit 7"};
  command.timeout = absl::Milliseconds(300);
  command.isolate_faults = true;
  auto client = WorkerClient::Start(command);
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 8));
  rmdir(marker.c_str());
  ASSERT_FALSE(out.fault.has_value());
  ASSERT_TRUE(out.unisolated.has_value());
  for (const TupleResult& r : out.results) {
    ASSERT_EQ(r.kind, ResultKind::kDecline);
    EXPECT_THAT(out.messages[r.message],
                HasSubstr("not run: isolating a hang of the worker "
                          "stopped: "));
    EXPECT_THAT(out.messages[r.message], HasSubstr("no more workers"));
  }
}

// The fifteenth fault run: a hung worker's tool run behind `timeout` (in
// a process group of its own) outlived the kill of the worker's group. A
// hung worker's whole tree is killed.
TEST(WorkerClientTest, AHungWorkersToolsEndWithItWhateverTheirGroup) {
  const std::string pid_file =
      ::testing::TempDir() + "/tool_pid_" + std::to_string(getpid());
  std::remove(pid_file.c_str());
  WorkerCommand command;
  command.argv = {"/bin/sh", "-c",
                  "setsid sleep 1000 & echo $! > '" + pid_file + "'; exec " +
                      PTXDIFF_FAULTY_WORKER_PATH + " --fault=hang"};
  command.timeout = absl::Milliseconds(500);
  auto client = WorkerClient::Start(command);
  ASSERT_TRUE(client.ok()) << client.status();
  const BatchOutcome out = (*client)->Run(SomeTuples({"add.s32"}, 2));
  ASSERT_TRUE(out.fault.has_value());
  EXPECT_EQ(out.fault->kind, FaultKind::kHang);
  std::ifstream in(pid_file);
  pid_t tool = 0;
  ASSERT_TRUE(in >> tool);
  std::remove(pid_file.c_str());
  // Gone, or a zombie left to init to reap.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  const auto ended = [tool] { return HasEnded(tool); };
  while (!ended() && absl::Now() < give_up)
    absl::SleepFor(absl::Milliseconds(20));
  EXPECT_TRUE(ended()) << "the tool (pid " << tool << ") still runs";
  if (!ended()) kill(tool, SIGKILL);
}

// A worker gets SIGTERM when its client's process dies (a `kill -9` of the
// process running a campaign), even when it was started from a thread that
// has since ended (as the campaign starts its senders' workers) and is hung
// on a batch: its pipe closing ends only an idle one (issue 28, item 7).
TEST(WorkerClientTest, AWorkerDiesWithTheProcessThatStartedIt) {
  const OrphanEnd end = ChildOfAKilledCaller([] {
    // Never freed: the client lives, hung on a batch, until the caller is
    // killed, after this function returns.
    auto* started = new absl::StatusOr<std::unique_ptr<WorkerClient>>(
        absl::UnknownError("no"));
    std::thread([&] {
      *started = WorkerClient::Start(
          Faulty({"--fault=hang-on=add.sat.s32"}, absl::Hours(1)));
    }).join();
    // The starting thread has ended, and the worker still answers (-1: it
    // did not start, or died with that thread).
    pid_t worker = -1;
    if (started->ok()) {
      WorkerClient* client = started->value().get();
      const pid_t first = client->worker_pid();
      const BatchOutcome out = client->Run(SomeTuples({"add.s32"}, 4));
      if (!out.fault && client->restarts() == 0) worker = first;
      // Then hung on a batch until the end.
      std::thread([client] {
        client->Run(SomeTuples({"add.sat.s32"}, 1));
      }).detach();
    }
    return worker;
  });
  ASSERT_GT(end.child, 0) << "the worker did not start, or did not outlive the "
                             "thread that started it";
  ASSERT_TRUE(end.reaped) << "the worker outlived the process that started it";
  // Ended by the caller's death, whichever of its two guards landed first:
  // the parent-death signal (SIGTERM), or the SIGKILL of the caller's
  // temporary root's remover, which kills the process groups recorded there
  // (common/files.h). The full suite saw the second in 1 run of 1, and 2 of
  // 4 runs alone followed.
  ASSERT_TRUE(WIFSIGNALED(end.status)) << "status " << end.status;
  EXPECT_THAT(WTERMSIG(end.status), ::testing::AnyOf(SIGTERM, SIGKILL));
}

// Whether `pid` has ended (gone, or a zombie no one has reaped yet),
// waiting up to 10 s for a SIGKILL sent to land.
bool Ended(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (HasEnded(pid)) return true;
    usleep(10000);
  }
  return false;
}

// Third fault run: what an exec: worker started (a helper, a simulator run
// per request) outlived it and ptxdiff, however ptxdiff ended. The worker
// runs in a process group of its own, killed with it.
TEST(WorkerClientTest, WhatAWorkerStartedEndsWithIt) {
  const std::string pid_file =
      ::testing::TempDir() + "/worker_child_" + std::to_string(getpid());
  WorkerCommand command = Faulty({});
  command.argv.insert(command.argv.begin(),
                      {"/bin/sh", "-c",
                       "sleep 1000 & echo $! > '" + pid_file +
                           "'; exec \"$0\" \"$@\""});
  pid_t child = 0;
  {
    auto client = WorkerClient::Start(command);
    ASSERT_TRUE(client.ok()) << client.status();
    std::ifstream(pid_file) >> child;
    ExpectMatchesOracle(SomeTuples({"add.s32"}, 4),
                        (*client)->Run(SomeTuples({"add.s32"}, 4)));
  }
  ASSERT_GT(child, 0);
  const bool ended = Ended(child);
  if (!ended) kill(child, SIGKILL);
  EXPECT_TRUE(ended) << "the worker's child outlived it";
  std::remove(pid_file.c_str());
}

// Third fault run: an exec: worker (or a child of it) printing to stderr
// without end grew its stderr, a memfd, by 400 MB a second. What it prints
// is trimmed to its last MiB or two as it runs.
TEST(WorkerClientTest, AWorkersStderrIsBounded) {
  WorkerCommand command = Faulty({});
  command.argv.insert(
      command.argv.begin(),
      {"/bin/sh", "-c",
       "head -c 67108864 /dev/zero >&2; exec \"$0\" \"$@\""});
  auto client = WorkerClient::Start(command);
  ASSERT_TRUE(client.ok()) << client.status();
  ExpectMatchesOracle(SomeTuples({"add.s32"}, 4),
                      (*client)->Run(SomeTuples({"add.s32"}, 4)));
  // The worker's stderr, as this process holds it.
  int64_t held = -1;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const auto target = std::filesystem::read_symlink(fd.path(), error);
    struct stat st;
    if (!error && absl::StrContains(target.string(), "ptxdiff-worker-stderr") &&
        stat(fd.path().c_str(), &st) == 0)
      held = int64_t{512} * st.st_blocks;
  }
  EXPECT_GE(held, 0) << "no stderr file of the worker found";
  EXPECT_LE(held, int64_t{4} << 20) << "held of the 64 MiB it printed";
}

TEST(WorkerClientTest, StartFailuresNameTheProblem) {
  WorkerCommand missing;
  missing.argv = {"/nonexistent/ptxdiff-worker"};
  auto client = WorkerClient::Start(missing);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(),
              HasSubstr("cannot start worker '/nonexistent/ptxdiff-worker'"));

  client = WorkerClient::Start(Faulty({"--fault=exit-at-hello"}));
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("failed its handshake"));
  EXPECT_THAT(client.status().message(), HasSubstr("exit status 3"));
  EXPECT_THAT(client.status().message(), HasSubstr("no device here"));

  client = WorkerClient::Start(Faulty({"--fault=bad-hello"}));
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("not a ptxdiff frame"));

  auto unknown = CommandForBackend("oracle", PTXDIFF_WORKER_PATH);
  unknown->argv[1] = "--backend=nonesuch";
  client = WorkerClient::Start(*unknown);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(),
              HasSubstr("unknown backend 'nonesuch'"));
}

// Fault run of issue 65: what a worker printed was quoted raw, escape
// sequences and all. Its bytes that are no printable text are \xNN.
TEST(WorkerClientTest, AWorkersStderrIsQuotedEscaped) {
  WorkerCommand command;
  command.argv = {"/bin/sh", "-c",
                  "printf 'said \\033[2J\\001\\377 end' >&2; exit 3"};
  auto client = WorkerClient::Start(command);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(),
              HasSubstr("its stderr: said \\x1b[2J\\x01\\xff end"));
  EXPECT_EQ(client.status().message().find('\x1b'), absl::string_view::npos);
}

// A worker that never answers HELLO held a campaign's start for its whole
// reply timeout (60 s by default), whatever --max-time, and was said as "no
// answer before the deadline". The first handshake ends at the start
// deadline, and the error says what did not answer and why it may not have.
TEST(WorkerClientTest, AWorkerThatHangsAtHelloFailsByTheStartDeadline) {
  WorkerCommand command = Faulty({"--fault=hang-at-hello"});  // a 20 s timeout
  command.start_deadline = absl::Now() + absl::Seconds(1);
  const absl::Time start = absl::Now();
  auto client = WorkerClient::Start(command);
  ASSERT_FALSE(client.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10))
      << "the handshake ran on to its timeout";
  EXPECT_THAT(
      client.status().message(),
      HasSubstr(
          "failed its handshake: no answer to HELLO before the run's deadline "
          "(--max-time), "));
  EXPECT_THAT(client.status().message(), HasSubstr("it hangs at start-up"));
}

TEST(WorkerClientTest, BackendNames) {
  EXPECT_EQ(CommandForBackend("exec:/opt/w", "x")->argv,
            std::vector<std::string>{"/opt/w"});
  EXPECT_EQ(CommandForBackend("ptxas", "/bin/wk")->argv,
            (std::vector<std::string>{"/bin/wk", "--backend=ptxas"}));
  EXPECT_FALSE(CommandForBackend("exec:", "x").ok());
  // ptx-cmd: the built-in worker, with the template in HELLO (its program
  // must exist: CheckPtxCmdCommand).
  auto ptx_cmd =
      CommandForBackend("ptx-cmd:/bin/true --x=1 {ptx} {in} {out}", "/bin/wk");
  ASSERT_TRUE(ptx_cmd.ok());
  EXPECT_EQ(ptx_cmd->argv,
            (std::vector<std::string>{"/bin/wk", "--backend=ptx-cmd"}));
  EXPECT_EQ(ptx_cmd->hello_options,
            (KeyValues{{"command", "/bin/true --x=1 {ptx} {in} {out}"}}));
  EXPECT_FALSE(CommandForBackend("ptx-cmd:", "x").ok());
  EXPECT_FALSE(CommandForBackend("ptx-cmd:a\nb", "x").ok());
  EXPECT_THAT(CommandForBackend("gpu", "x").status().message(),
              HasSubstr("use oracle, ptxas, cuda, or exec:"));
}

}  // namespace
}  // namespace ptxdiff
