#include "cli/fuzzer_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/time/clock.h"
#include "cli/fuzzer_output.h"
#include "cli/testing/run_ptxdiff.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// A fuzzer deaf to the stop (a fork job reading a 3 GB corpus file) is
// killed, its whole group, once its grace has passed since it was asked;
// not before.
TEST(FuzzerProcessTest, AFuzzerDeafToTheStopIsKilledAfterItsGrace) {
  const std::string dir = TempDirFor("fuzzer_process_deaf");
  auto log = FuzzerLog::Open(dir + "/fuzz.log");
  ASSERT_TRUE(log.ok()) << log.status();
  const std::string deaf = dir + "/deaf";
  auto fuzzer = FuzzerProcess::Start(
      {"/bin/sh", "-c",
       "trap '' INT; : > '" + deaf + "'; sleep 120 & sleep 120"},
      **log, /*room=*/0, absl::Seconds(1));
  ASSERT_TRUE(fuzzer.ok()) << fuzzer.status();
  while (access(deaf.c_str(), F_OK) != 0) {  // once it ignores SIGINT
    ASSERT_FALSE((*fuzzer)->Ended());
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE((*fuzzer)->AskToStop());
  EXPECT_FALSE((*fuzzer)->AskToStop()) << "asked once only";
  EXPECT_FALSE((*fuzzer)->KillIfOverdue()) << "killed before its grace";
  const absl::Time asked = absl::Now();
  while (!(*fuzzer)->KillIfOverdue()) {
    ASSERT_LT(absl::Now() - asked, absl::Seconds(30)) << "never killed";
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_GE(absl::Now() - asked, absl::Seconds(1));
  while (!(*fuzzer)->Ended()) absl::SleepFor(absl::Milliseconds(10));
  const int status = (*fuzzer)->Reap();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_TRUE((*fuzzer)->killed());
}

}  // namespace
}  // namespace ptxdiff
