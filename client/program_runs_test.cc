// WorkerClient::RunPrograms on the faulty worker (--programs): a program
// that crashes or hangs the worker is pinned alone, the others answered.

#include <string>
#include <vector>

#include "client/worker_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
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

}  // namespace
}  // namespace ptxdiff
