// WorkerClient::RunPrograms on the faulty worker (--programs): a program
// that crashes or hangs the worker is pinned alone, the others answered.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "client/worker_client.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "protocol/frame_io.h"
#include "worker/testing/faulty_worker_client.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// The faulty worker running programs (--programs), a hang caught within
// 20 s by default.
WorkerCommand Faulty(std::vector<std::string> flags,
                     absl::Duration timeout = absl::Seconds(20)) {
  flags.insert(flags.begin(), "--programs");
  return FaultyWorkerCommand(flags, timeout);
}

ProgramRunRequest Programs(int n, int bad = -1) {
  ProgramRunRequest request;
  for (int i = 0; i < n; ++i) {
    request.programs.push_back(
        absl::StrCat("program ", i, i == bad ? " BAD" : ""));
  }
  return request;
}

std::vector<ProgramOutcome::Kind> Kinds(const std::vector<ProgramOutcome>& o) {
  std::vector<ProgramOutcome::Kind> kinds;
  for (const ProgramOutcome& x : o) kinds.push_back(x.kind);
  return kinds;
}

TEST(ProgramRunsTest, AWorkerSaysItRunsProgramsOnlyWhenItDoes) {
  auto with = WorkerClient::Start(Faulty({}));
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_TRUE((*with)->identity().programs);
  WorkerCommand tuple_only = Faulty({});
  tuple_only.argv.pop_back();  // no --programs
  auto without = WorkerClient::Start(tuple_only);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE((*without)->identity().programs);
}

TEST(ProgramRunsTest, EveryProgramOfAHealthyBatchIsChecked) {
  auto client = WorkerClient::Start(Faulty({}));
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<ProgramOutcome> out = (*client)->RunPrograms(Programs(5));
  EXPECT_EQ(Kinds(out),
            std::vector<ProgramOutcome::Kind>(5, ProgramOutcome::kChecked));
  EXPECT_EQ((*client)->restarts(), 0);
}

TEST(ProgramRunsTest, AProgramThatCrashesTheWorkerIsPinnedAlone) {
  auto client = WorkerClient::Start(Faulty({"--fault=crash-on-program=BAD"}));
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<ProgramOutcome> out =
      (*client)->RunPrograms(Programs(7, /*bad=*/4));
  std::vector<ProgramOutcome::Kind> expected(7, ProgramOutcome::kChecked);
  expected[4] = ProgramOutcome::kFaulted;
  EXPECT_EQ(Kinds(out), expected);
  EXPECT_EQ(out[4].fault.kind, FaultKind::kCrash);
  // The next batch runs on a fresh worker.
  EXPECT_EQ(Kinds((*client)->RunPrograms(Programs(2))),
            std::vector<ProgramOutcome::Kind>(2, ProgramOutcome::kChecked));
}

TEST(ProgramRunsTest, AHangIsPinnedAndTheDeadlineLeavesTheRestNotRun) {
  auto client = WorkerClient::Start(
      Faulty({"--fault=hang-on-program=BAD"}, absl::Milliseconds(300)));
  ASSERT_TRUE(client.ok()) << client.status();
  std::vector<ProgramOutcome> out = (*client)->RunPrograms(Programs(4, 1));
  std::vector<ProgramOutcome::Kind> expected(4, ProgramOutcome::kChecked);
  expected[1] = ProgramOutcome::kFaulted;
  EXPECT_EQ(Kinds(out), expected);
  EXPECT_EQ(out[1].fault.kind, FaultKind::kHang);

  // With a time limit shorter than the hang's reply timeout, pinning stops
  // at the deadline and says so.
  ProgramRunRequest limited = Programs(4, 1);
  limited.time_limit_ms = 1;
  out = (*client)->RunPrograms(limited);
  EXPECT_EQ(out[1].kind, ProgramOutcome::kNotRun);
  EXPECT_THAT(out[1].fault.detail, HasSubstr("deadline passed"));
}

TEST(ProgramRunsTest, AnErrorAnswerIsTheHarnessesNotAFaultToPin) {
  auto client = WorkerClient::Start(Faulty({"--fault=error"}));
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<ProgramOutcome> out = (*client)->RunPrograms(Programs(3));
  EXPECT_EQ(Kinds(out),
            std::vector<ProgramOutcome::Kind>(3, ProgramOutcome::kError));
  EXPECT_THAT(out[0].fault.detail, HasSubstr("cannot do that"));
  EXPECT_EQ((*client)->restarts(), 0);
}

// The fourteenth fault run: a worker that stopped answering was waited for
// until the batch's time limit (a campaign's end: 300 s for `minimize`).
// One that says it tells its progress and falls silent hangs after
// silence_timeout, however long the limit.
TEST(ProgramRunsTest, AWorkerThatTellsItsProgressHangsWhenItFallsSilent) {
  WorkerCommand command = Faulty({"--progress", "--fault=hang-on-program=BAD"});
  command.silence_timeout = absl::Milliseconds(500);
  auto client = WorkerClient::Start(command);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->identity().progress);
  ProgramRunRequest request = Programs(2, /*bad=*/0);
  request.time_limit_ms = 600'000;
  const absl::Time start = absl::Now();
  const std::vector<ProgramOutcome> out = (*client)->RunPrograms(request);
  // Its end is what is asserted: without the silence limit it comes at
  // the 600 s time limit, past ctest's timeout.
  EXPECT_LT(absl::Now() - start, absl::Seconds(120));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, ProgramOutcome::kFaulted);
  EXPECT_EQ(out[0].fault.kind, FaultKind::kHang);
  EXPECT_THAT(out[0].fault.detail, HasSubstr("no word from it for 500ms"));
  EXPECT_EQ(out[1].kind, ProgramOutcome::kChecked);
}

// A worker at work longer than silence_timeout is not a hang while its
// PROGRESS frames come; one that never said it sends them (an older
// worker, a kit's) is waited for as before: until the reply's timeout.
TEST(ProgramRunsTest, ProgressKeepsASlowBatchAndSilenceIsOnlyReadWhenPromised) {
  for (const bool progress : {true, false}) {
    std::vector<std::string> flags = {"--fault=slow-programs=1500"};
    if (progress) flags.push_back("--progress");
    WorkerCommand command = Faulty(flags);
    command.silence_timeout = absl::Milliseconds(500);
    auto client = WorkerClient::Start(command);
    ASSERT_TRUE(client.ok()) << client.status();
    EXPECT_EQ((*client)->identity().progress, progress);
    ProgramRunRequest request = Programs(3);
    request.time_limit_ms = 600'000;
    EXPECT_EQ(Kinds((*client)->RunPrograms(request)),
              std::vector<ProgramOutcome::Kind>(3, ProgramOutcome::kChecked))
        << "progress=" << progress;
    EXPECT_EQ((*client)->restarts(), 0) << "progress=" << progress;
  }
}

// ptxdiff-worker's HELLO_REPLY (--backend=ptx-cmd) to a HELLO with `extra`
// keys, by hand: a client of any version.
absl::StatusOr<WorkerIdentity> HelloReplyTo(const KeyValues& extra) {
  int to[2], from[2];
  if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0)
    return absl::InternalError("pipe");
  absl::StatusOr<pid_t> pid =
      StartProcess({PTXDIFF_WORKER_PATH, "--backend=ptx-cmd"},
                   {.stdin_fd = to[0], .stdout_fd = from[1]}, "the worker");
  close(to[0]);
  close(from[1]);
  KeyValues hello = {{"protocol", "1"}, {"command", "true {ptx} {in} {out}"}};
  hello.insert(hello.end(), extra.begin(), extra.end());
  absl::StatusOr<Frame> reply = absl::UnknownError("no worker");
  if (pid.ok()) {
    const absl::Status written =
        WriteFrame(to[1], MessageType::kHello, EncodeKeyValues(hello));
    reply = written.ok() ? ReadFrame(from[0], absl::Now() + absl::Seconds(30))
                         : absl::StatusOr<Frame>(written);
  }
  close(to[1]);  // the worker ends at its stdin's end
  close(from[0]);
  if (!pid.ok()) return pid.status();
  waitpid(*pid, nullptr, 0);
  if (!reply.ok()) return reply.status();
  return IdentityFromKeyValues(DecodeKeyValues(reply->payload));
}

// ptxdiff-worker promises PROGRESS frames only to a client that asked: an
// older client would take the unknown frame type for a broken stream.
TEST(ProgramRunsTest, TheWorkerTellsItsProgressOnlyToAClientThatAsks) {
  absl::StatusOr<WorkerIdentity> asked = HelloReplyTo({{"progress", "1"}});
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_TRUE(asked->programs);
  EXPECT_TRUE(asked->progress);
  absl::StatusOr<WorkerIdentity> older = HelloReplyTo({});
  ASSERT_TRUE(older.ok()) << older.status();
  EXPECT_TRUE(older->programs);
  EXPECT_FALSE(older->progress);
}

}  // namespace
}  // namespace ptxdiff
