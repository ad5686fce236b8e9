#include "common/run_id.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// A run named by a process that still runs is kept by what it started; a
// name whose process is gone (exported by hand, long ago) is replaced, and
// `ptxdiff` itself always starts a run (the seventeenth fault run: a fixed
// PTXDIFF_RUN skipped the re-check of a tool's refusals).
TEST(RunIdTest, ARunIsKeptOnlyWhileItsNamerRuns) {
  const std::string mine = absl::StrCat(getpid(), "-100");
  setenv(kRunVariable, mine.c_str(), 1);
  NameThisRun();
  EXPECT_EQ(ThisRun(), mine);

  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const std::string stale = absl::StrCat(child, "-100");
  setenv(kRunVariable, stale.c_str(), 1);
  NameThisRun();
  EXPECT_NE(ThisRun(), stale);
  EXPECT_EQ(ThisRun().substr(0, ThisRun().find('-')), absl::StrCat(getpid()));

  setenv(kRunVariable, mine.c_str(), 1);
  NameThisRun(/*new_run=*/true);
  EXPECT_NE(ThisRun(), mine);
  unsetenv(kRunVariable);
}

}  // namespace
}  // namespace ptxdiff
