#include "backends/ptxas/ptxas_toolchain.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "common/files.h"
#include "common/testing/scoped_env.h"
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

// A stand-in for ptxas: a script of `body` ($out is the -o file's path).
std::string FakePtxas(const std::string& name, const std::string& body) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path)
      << "#!/bin/sh\nout=\"\"\nprev=\"\"\n"
      << "for a in \"$@\"; do [ \"$prev\" = -o ] && out=\"$a\"; "
         "prev=\"$a\"; done\n"
      << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

// Seventh fault run of issue 65: a --ptxas (PTXAS=...) whose output was a
// link to /dev/zero was read until memory ran out: `calibrate --max-time
// 10` ran 97 s to 1 GB under a 2 GB cap. Its output is read to a bound,
// never a device; this one, 300 MB and sparse, was read whole.
TEST(RunPtxasTest, AnOutputPastTheBoundIsNotRead) {
  const std::string ptxas =
      FakePtxas("huge_cubin_ptxas", "truncate -s 300M \"$out\"");
  absl::StatusOr<PtxasOutput> run = RunPtxas(ptxas, "sm_90", "// nothing");
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), ::testing::HasSubstr("not read"));
  const std::string zero =
      FakePtxas("dev_zero_ptxas", "ln -sf /dev/zero \"$out\"");
  run = RunPtxas(zero, "sm_90", "// nothing");
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(),
              ::testing::HasSubstr("not a regular file"));
}

// The twenty-third fault run: a TMPDIR that filled made the worker answer
// ERROR, and the campaign filed crash and protocol-error entries. The
// harness's own files failing, or a ptxas that says the disk is full, is the
// machine's failure (EnvironmentFailure), never a verdict.
TEST(RunPtxasTest, AFullOrMissingTmpdirIsTheMachinesFailure) {
  {
    const ScopedEnv gone("TMPDIR", ::testing::TempDir() + "/no/such/dir");
    const absl::StatusOr<PtxasOutput> run =
        RunPtxas("/bin/true", "sm_90", "// nothing");
    ASSERT_FALSE(run.ok());
    EXPECT_TRUE(IsEnvironmentFailure(run.status())) << run.status();
  }
  const std::string full = FakePtxas(
      "full_disk_ptxas", "echo 'ptxas fatal: No space left on device'; exit 1");
  const absl::StatusOr<PtxasOutput> run = RunPtxas(full, "sm_90", "// x");
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(IsEnvironmentFailure(run.status())) << run.status();
  EXPECT_THAT(run.status().message(),
              ::testing::HasSubstr("No space left on device"));
}

// ... and one that printed without end (`yes`) filled TMPDIR in its 60 s,
// then its log was read whole. What it prints is kept to its last MiBs.
TEST(RunPtxasTest, ALogIsKeptToItsEnd) {
  const std::string ptxas = FakePtxas(
      "chatty_ptxas",
      "yes 'ptxas chatter' | head -c 30000000; echo last; : > \"$out\"");
  absl::StatusOr<PtxasOutput> run = RunPtxas(ptxas, "sm_90", "// nothing");
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_LT(run->log.size(), size_t{9} << 20);  // of 30 MB printed
  EXPECT_THAT(run->log, ::testing::HasSubstr("last\n"));
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
