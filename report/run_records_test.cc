#include "report/run_records.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/records_", name,
                                       "_", getpid());
  RemoveTree(dir);
  return dir;
}

TEST(RunRecordsTest, ReadsEachRunsTimelineAndOutcomesOldestFirst) {
  const std::string out = FreshDir("runs");
  const std::string late = out + "/stats/run-2000-7", early = out + "/stats/run-1000-9";
  ASSERT_TRUE(MakeDirs(late).ok());
  ASSERT_TRUE(MakeDirs(early).ok());
  ASSERT_TRUE(MakeDirs(out + "/stats/not-a-run").ok());
  const TimelinePoint p{.seconds = 5,
                        .tuples = 1000,
                        .variants_reached = 40,
                        .variants_reached_runtime = 12,
                        .mismatches = 3,
                        .faults = 1,
                        .new_entries = 2};
  ASSERT_TRUE(WriteFile(absl::StrCat(early, "/", kTimelineFile),
                        TimelineHeader() + FormatTimelinePoint(p) +
                            "garbage\n")
                  .ok());
  ASSERT_TRUE(WriteFile(early + "/9.outcomes",
                        "# ptxdiff outcomes 1\nbackend\toracle 1\n"
                        "add.u32\timm\t-\t2\n")
                  .ok());
  ASSERT_TRUE(WriteFile(late + "/7.outcomes", "not an outcomes file\n").ok());

  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  EXPECT_EQ(runs[0].started_unix, 1000);
  EXPECT_EQ(runs[0].backend, "oracle 1");
  ASSERT_THAT(runs[0].timeline, SizeIs(1));
  EXPECT_EQ(runs[0].timeline[0].tuples, 1000);
  EXPECT_EQ(runs[0].timeline[0].new_entries, 2);
  EXPECT_DOUBLE_EQ(runs[0].timeline[0].seconds, 5);
  ASSERT_THAT(runs[0].outcomes, SizeIs(1));
  EXPECT_EQ(runs[0].outcomes[0].rows[0].counts[0], 2);
  EXPECT_THAT(runs[0].damage,
              ElementsAre(HasSubstr("line 3 is no timeline point")));
  // A file that is no record is named, not read as an empty one.
  EXPECT_EQ(runs[1].started_unix, 2000);
  EXPECT_THAT(runs[1].outcomes, SizeIs(0));
  EXPECT_THAT(runs[1].damage,
              ElementsAre(AllOf(HasSubstr("7.outcomes"),
                                HasSubstr("not an outcomes file"))));
  RemoveTree(out);
}

// A program campaign's record: its backend and progress, read back; its
// damaged lines named; a file without its backend said to be one. The
// tuple campaign's reader does not take it for a run of its own.
TEST(RunRecordsTest, ReadsEachProgramRunsBackendAndProgress) {
  const std::string out = FreshDir("programs");
  const std::string run = out + "/stats/programs-3000-4";
  const std::string broken = out + "/stats/programs-4000-5";
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(MakeDirs(broken).ok());
  const ProgramTimelinePoint p{.seconds = 5,
                               .programs = 300,
                               .judged_immediate = 280,
                               .judged_runtime = 120,
                               .disagreements = 2,
                               .faults = 1,
                               .new_entries = 1};
  ASSERT_TRUE(WriteFile(absl::StrCat(run, "/", kProgramTimelineFile),
                        ProgramTimelineHeader("ptxas 1 (sm_90)") +
                            FormatProgramTimelinePoint(p) + "5\t6\n")
                  .ok());
  ASSERT_TRUE(WriteFile(absl::StrCat(broken, "/", kProgramTimelineFile),
                        FormatProgramTimelinePoint(p))
                  .ok());

  const std::vector<ProgramRunRecord> runs = ReadProgramRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  EXPECT_EQ(runs[0].started_unix, 3000);
  EXPECT_EQ(runs[0].backend, "ptxas 1 (sm_90)");
  ASSERT_THAT(runs[0].timeline, SizeIs(1));
  EXPECT_EQ(runs[0].timeline[0].programs, 300);
  EXPECT_EQ(runs[0].timeline[0].judged_immediate, 280);
  EXPECT_EQ(runs[0].timeline[0].judged_runtime, 120);
  EXPECT_EQ(runs[0].timeline[0].disagreements, 2);
  EXPECT_EQ(runs[0].timeline[0].faults, 1);
  EXPECT_EQ(runs[0].timeline[0].new_entries, 1);
  EXPECT_THAT(runs[0].damage,
              ElementsAre(HasSubstr("line 4 is no timeline point")));
  EXPECT_THAT(runs[1].timeline, SizeIs(1));
  EXPECT_THAT(runs[1].damage, ElementsAre(HasSubstr("it names no backend")));
  EXPECT_THAT(ReadRuns(out), SizeIs(0));
  RemoveTree(out);
}

// Issue 65: a damaged programs.tsv gave a phrase for each of its bad lines
// (14 lines of the report's output for one file): one a file now.
TEST(RunRecordsTest, ADamagedRecordIsOnePhraseHoweverManyLinesAreBad) {
  const std::string out = FreshDir("damaged");
  const std::string run = out + "/stats/programs-3000-4";
  ASSERT_TRUE(MakeDirs(run).ok());
  std::string garbage;
  for (int i = 0; i < 13; ++i) garbage += "\x01garbage\n";
  ASSERT_TRUE(
      WriteFile(absl::StrCat(run, "/", kProgramTimelineFile), garbage).ok());
  const std::vector<ProgramRunRecord> runs = ReadProgramRuns(out);
  ASSERT_THAT(runs, SizeIs(1));
  EXPECT_THAT(runs[0].damage,
              ElementsAre(AllOf(HasSubstr("13 lines are no timeline points "
                                          "(the first: line 1)"),
                                HasSubstr("; it names no backend"))));
  RemoveTree(out);
}

// Every record is read with a bound: an outcome file that is a link to
// /dev/zero or a FIFO (which would block the read), and a timeline past 64
// MiB, are damage, not read.
TEST(RunRecordsTest, ARecordPastItsBoundIsDamageNotRead) {
  const std::string out = FreshDir("bound");
  const std::string run = out + "/stats/run-1000-1";
  const std::string programs = out + "/stats/programs-2000-2";
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(MakeDirs(programs).ok());
  ASSERT_EQ(symlink("/dev/zero", (run + "/1.outcomes").c_str()), 0);
  ASSERT_EQ(mkfifo((run + "/2.outcomes").c_str(), 0600), 0);
  const std::string timeline = absl::StrCat(run, "/", kTimelineFile);
  ASSERT_TRUE(WriteFile(timeline, "").ok());
  ASSERT_EQ(truncate(timeline.c_str(), (64 << 20) + 1), 0);
  ASSERT_EQ(symlink("/dev/zero",
                    absl::StrCat(programs, "/", kProgramTimelineFile).c_str()),
            0);
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(1));
  EXPECT_THAT(runs[0].damage,
              ::testing::UnorderedElementsAre(
                  timeline + " is larger than 67108864 bytes (or endless): "
                             "not read",
                  run + "/1.outcomes is not a regular file: not read",
                  run + "/2.outcomes is not a regular file: not read"));
  const std::vector<ProgramRunRecord> program_runs = ReadProgramRuns(out);
  ASSERT_THAT(program_runs, SizeIs(1));
  EXPECT_THAT(program_runs[0].damage,
              ElementsAre(HasSubstr("programs.tsv is not a regular file")));
  RemoveTree(out);
}

TEST(RunRecordsTest, NoStatsDirectoryIsNoRun) {
  EXPECT_THAT(ReadRuns(FreshDir("none")), SizeIs(0));
}

}  // namespace
}  // namespace ptxdiff
