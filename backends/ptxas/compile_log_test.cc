#include "backends/ptxas/compile_log.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

TEST(CompileLogTest, EachRunIsOneLineWithItsKernelsTuplesAndTime) {
  const std::string path =
      ::testing::TempDir() + "/compile_log_test." + std::to_string(getpid());
  std::remove(path.c_str());
  const std::string ptx =
      ".visible .entry k0(.param .u64 out)\n{}\n"
      ".visible .entry k1(.param .u64 out)\n{}\n";
  LogCompileTo(path, {.purpose = "halves", .tuples = 5, .runtime_tuples = 3},
               ptx, /*opt_level=*/3, absl::UnixEpoch() + absl::Seconds(12),
               absl::Milliseconds(7));
  LogCompileTo(path, {.purpose = "reference", .tuples = 1}, ptx, 0,
               absl::Now(), absl::Milliseconds(1));
  const absl::StatusOr<std::string> text = ReadFileAtMost(path, 4096);
  ASSERT_TRUE(text.ok()) << text.status();
  const std::vector<std::string> lines =
      absl::StrSplit(*text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "12.000 halves 3 2 5 3 7.000");
  EXPECT_EQ(lines[1].substr(lines[1].find(' ')), " reference 0 2 1 0 1.000");
}

}  // namespace
}  // namespace ptxdiff
