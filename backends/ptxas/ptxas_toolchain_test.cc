#include "backends/ptxas/ptxas_toolchain.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <memory>
#include <string>

#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// Fault run of issue 65: what a tool printed reached the user raw. A log's
// summary (what "ptxas rejected the kernel: ..." quotes) shows its first
// three lines, each bounded, with the bytes a terminal acts on escaped.
TEST(LogSummaryTest, ShowsThreeLinesBoundedAndEscaped) {
  EXPECT_EQ(LogSummary("ptxas: error 1\n\n  \nline 2\nline 3\nline 4\n"),
            "ptxas: error 1 | line 2 | line 3");
  EXPECT_EQ(LogSummary("bad \033[2J\001\377 bytes"),
            "bad \\x1b[2J\\x01\\xff bytes");
  const std::string summary = LogSummary(std::string(100000, 'x'));
  EXPECT_EQ(summary, std::string(400, 'x') + "...");
}

// Third fault run: where TMPDIR was full, `ptxas --version`'s output was
// lost (its writes failed) and read as "did not print a release line". The
// temporary file that cannot be written is said, with why. A file size
// limit of 0 stands in for the full disk: a write fails as on one (EFBIG
// where a full disk gives ENOSPC).
TEST(ToolchainOfTest, AnOutputFileThatCannotBeWrittenIsSaid) {
  auto dir = TempDir::Create("toolchain-test");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string ptxas = (*dir)->File("ptxas");
  ASSERT_TRUE(
      WriteFile(ptxas,
                "#!/bin/sh\n"
                "echo 'Cuda compilation tools, release 13.0, V13.0.88'\n")
          .ok());
  chmod(ptxas.c_str(), 0755);
  ASSERT_TRUE(ToolchainOf(ptxas).ok()) << ToolchainOf(ptxas).status();
  struct rlimit before;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  const struct rlimit none = {.rlim_cur = 0, .rlim_max = before.rlim_max};
  const sighandler_t xfsz = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &none), 0);
  const absl::StatusOr<std::string> toolchain = ToolchainOf(ptxas);
  setrlimit(RLIMIT_FSIZE, &before);
  signal(SIGXFSZ, xfsz);
  ASSERT_FALSE(toolchain.ok()) << *toolchain;
  EXPECT_THAT(
      toolchain.status().message(),
      ::testing::AllOf(HasSubstr(ptxas + " --version: cannot write "),
                       HasSubstr("/log: File too large (the temporary file for "
                                 "its output)"),
                       ::testing::Not(HasSubstr("release line"))));
}

}  // namespace
}  // namespace ptxdiff
