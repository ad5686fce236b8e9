// `ptxdiff report` (cli/report_command.h): what it shows, says and writes.

#include "cli/report_command.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/testing/fake_fuzzer.h"
#include "cli/testing/run_ptxdiff.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Issue 45: `ptxdiff report` says what it could not show, and fails when
// there was nothing to report, or no campaign's directory at all.
TEST(ReportCommandTest, ADirectoryWithoutRecordsIsSaidAndExitsOne) {
  const std::string dir = TempDirFor("report_nothing");
  ASSERT_EQ(mkdir((dir + "/stats").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir + "/stats/run-1000-1").c_str(), 0755), 0);
  const CliRun r = Ptxdiff({"report", dir});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 run stopped before its first record"));
  // Issue 65: nothing to show, so nothing written.
  EXPECT_THAT(r.out, HasSubstr("report: no report written: no campaign's "
                               "records to show\n"));
  EXPECT_FALSE(ReadFile(dir + "/report.html").ok());
  // Issue 65: nor into a folder that is no campaign's, which it wrote
  // report.html and report.json into.
  const std::string other = TempDirFor("report_not_a_campaign");
  ASSERT_TRUE(WriteFile(other + "/notes.txt", "mine\n").ok());
  const CliRun not_a_campaign = Ptxdiff({"report", other});
  EXPECT_EQ(not_a_campaign.code, 1) << not_a_campaign.out;
  EXPECT_THAT(not_a_campaign.out, HasSubstr("no run with records"));
  EXPECT_EQ(FilesIn(other).size(), 1u);
  const CliRun missing = Ptxdiff({"report", dir + "/missing"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("is not a campaign's --out directory"));
  const CliRun two_dirs = Ptxdiff({"report", dir, dir, "--dir", dir});
  EXPECT_EQ(two_dirs.code, 2);
  EXPECT_THAT(two_dirs.err,
              HasSubstr("--dir names the triage directory of one"));
}

// Issue 65: a damaged programs.tsv gave a line per bad line and "programs
// on :" with no backend; a damaged triage entry was not said at all. One
// line a damaged file, and each damaged entry, on stderr.
TEST(ReportCommandTest, DamageIsALineAFileOnStderr) {
  const std::string dir = TempDirFor("report_damage");
  const std::string run = dir + "/out/stats/programs-3000-4";
  ASSERT_TRUE(MakeDirs(run).ok());
  std::string garbage;
  for (int i = 0; i < 13; ++i) garbage += "garbage\n";
  ASSERT_TRUE(WriteFile(run + "/programs.tsv", garbage).ok());
  const std::string entry = dir + "/triage/crash~ptxas~crash~add.u32";
  ASSERT_TRUE(MakeDirs(entry).ok());
  ASSERT_TRUE(WriteFile(entry + "/meta.txt", "\x01\x02 garbage\n").ok());
  const CliRun r = Ptxdiff({"report", dir + "/out", "--dir", dir + "/triage"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("programs on :")));
  EXPECT_THAT(r.out, HasSubstr("programs on a backend its record does not "
                               "name: 1 run"));
  size_t records = 0;
  for (size_t at = r.err.find("damaged record"); at != std::string::npos;
       at = r.err.find("damaged record", at + 1)) {
    ++records;
  }
  EXPECT_EQ(records, 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("report: damaged triage entry: " + entry));
  // The eleventh fault run: `fuzz|programs --report` wrote the same report
  // and said nothing of the damage.
  const CliRun fuzz = FuzzWith(dir, kSomeStats, "",
                               {"--backend", "oracle", "--out", dir + "/out",
                                "--dir", dir + "/triage", "--report"});
  EXPECT_THAT(fuzz.out, HasSubstr("fuzz: report: "));
  EXPECT_THAT(fuzz.err, HasSubstr("report: damaged triage entry: " + entry));
}

// Fault run of issue 65: `report --html` into a directory it cannot write
// said "cannot create DIR/.tmp-file-...", its own temporary file's name. It
// names the file asked for.
TEST(ReportCommandTest, AReportItCannotWriteNamesTheFileAskedFor) {
  const std::string dir = TempDirFor("report_unwritable");
  const std::string run = dir + "/out/stats/programs-3000-4";
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(WriteFile(run + "/programs.tsv", "garbage\n").ok());
  // No such directory: what a read-only one is to root, who writes anyway.
  const std::string html = dir + "/missing/r.html";
  const CliRun r = Ptxdiff({"report", dir + "/out", "--html", html});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot write " + html + ": "));
  EXPECT_THAT(r.err, Not(HasSubstr(".tmp-")));
}

// The fifteenth fault run: OUT/stats a file was "no run with records".
TEST(ReportCommandTest, AStatsThatIsNoDirectoryIsSaid) {
  const std::string dir = TempDirFor("report_stats_file");
  ASSERT_TRUE(MakeDirs(dir + "/out").ok());
  ASSERT_TRUE(WriteFile(dir + "/out/stats", "not a directory\n").ok());
  const CliRun r = Ptxdiff({"report", dir + "/out", "--html", dir + "/r.html",
                            "--json", dir + "/r.json"});
  EXPECT_THAT(r.err, HasSubstr(dir + "/out/stats is not a directory")) << r.out;
}

// The fifteenth fault run: `report --json NODE` renamed the page over a
// device node or a FIFO (as root: /dev/full). A device is written through
// and stays one; a FIFO is refused and stays one.
TEST(ReportCommandTest, ADeviceNamedForThePageIsWrittenNotReplaced) {
  const std::string dir = TempDirFor("report_device");
  const std::string run = dir + "/out/stats/programs-3000-4";
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(WriteFile(run + "/programs.tsv", "garbage\n").ok());
  CliRun r = Ptxdiff({"report", dir + "/out", "--json", "/dev/null", "--html",
                      dir + "/r.html"});
  EXPECT_NE(r.code, 2) << r.out << r.err;
  struct stat st;
  ASSERT_EQ(lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  r = Ptxdiff(
      {"report", dir + "/out", "--json", fifo, "--html", dir + "/r.html"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(fifo + " is a FIFO"));
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
}  // namespace ptxdiff
