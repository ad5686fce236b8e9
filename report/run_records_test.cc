#include "report/run_records.h"

#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::Gt;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

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
                        .checked = 1000,
                        .variants_reached = 40,
                        .variants_reached_runtime = 12,
                        .disagreements = 3,
                        .faults = 1,
                        .new_entries = 2};
  ASSERT_TRUE(WriteFile(absl::StrCat(early, "/", kTimelineFile),
                        TimelineHeader(RunKind::kTuples) +
                            FormatTimelinePoint(RunKind::kTuples, p) +
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
  EXPECT_EQ(runs[0].kind, RunKind::kTuples);
  EXPECT_EQ(runs[0].backend, "oracle 1");
  ASSERT_THAT(runs[0].timeline, SizeIs(1));
  const TimelinePoint& read = runs[0].timeline[0];
  EXPECT_DOUBLE_EQ(read.seconds, 5);
  EXPECT_EQ(read.checked, 1000);
  EXPECT_EQ(read.variants_reached, 40);
  EXPECT_EQ(read.variants_reached_runtime, 12);
  EXPECT_EQ(read.disagreements, 3);
  EXPECT_EQ(read.faults, 1);
  EXPECT_EQ(read.new_entries, 2);
  // A tuple run judges no program: its point has no programs' counts.
  EXPECT_EQ(read.judged_immediate, std::nullopt);
  EXPECT_EQ(read.judged_runtime, std::nullopt);
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

// A program run's record is a run directory as a tuple run's: its timeline
// says its kind and backend, and has the programs' counts, not the
// variants' (a program is no one variant's).
TEST(RunRecordsTest, AProgramRunIsARunWithItsKindBackendAndCounts) {
  const std::string out = FreshDir("programs");
  const std::string programs = out + "/stats/run-3000-4";
  const std::string tuples = out + "/stats/run-2000-3";
  ASSERT_TRUE(MakeDirs(programs).ok());
  ASSERT_TRUE(MakeDirs(tuples).ok());
  const TimelinePoint p{.seconds = 5,
                        .checked = 300,
                        .judged_immediate = 280,
                        .judged_runtime = 120,
                        .disagreements = 2,
                        .faults = 1,
                        .new_entries = 1};
  ASSERT_TRUE(WriteFile(absl::StrCat(programs, "/", kTimelineFile),
                        TimelineHeader(RunKind::kPrograms, "ptxas 1 (sm_90)") +
                            FormatTimelinePoint(RunKind::kPrograms, p) +
                            "5\t6\n")
                  .ok());
  ASSERT_TRUE(WriteFile(absl::StrCat(tuples, "/", kTimelineFile),
                        TimelineHeader(RunKind::kTuples) +
                            FormatTimelinePoint(RunKind::kTuples,
                                                {.seconds = 1, .checked = 9}))
                  .ok());

  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  EXPECT_EQ(runs[0].kind, RunKind::kTuples);
  EXPECT_EQ(runs[1].kind, RunKind::kPrograms);
  EXPECT_EQ(runs[1].started_unix, 3000);
  EXPECT_EQ(runs[1].backend, "ptxas 1 (sm_90)");
  ASSERT_THAT(runs[1].timeline, SizeIs(1));
  const TimelinePoint& read = runs[1].timeline[0];
  EXPECT_EQ(read.checked, 300);
  EXPECT_EQ(read.judged_immediate, 280);
  EXPECT_EQ(read.judged_runtime, 120);
  EXPECT_EQ(read.disagreements, 2);
  EXPECT_EQ(read.faults, 1);
  EXPECT_EQ(read.new_entries, 1);
  EXPECT_EQ(read.variants_reached, std::nullopt);
  EXPECT_EQ(read.variants_reached_runtime, std::nullopt);
  EXPECT_THAT(runs[1].damage,
              ElementsAre(HasSubstr("line 4 is no timeline point")));
  RemoveTree(out);
}

// Records written by d15de9c, before the two kinds of run had one record:
// a `fuzz` run's run-*/ (version 1 of timeline.tsv; its outcome file cut to
// its first rows) and a `programs` run's programs-*/programs.tsv. Both are
// read, oldest first, each with its kind's counts and its triage directory.
TEST(RunRecordsTest, ReadsTheRecordsOfAnEarlierVersion) {
  const std::string out =
      absl::StrCat(PTXDIFF_SOURCE_DIR, "/report/testdata/d15de9c");
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  const RunRecord& tuples = runs[0];
  EXPECT_EQ(tuples.kind, RunKind::kTuples);
  EXPECT_EQ(tuples.started_unix, 1796538300);
  EXPECT_THAT(tuples.backend, StartsWith("ptxas 1 (Cuda compilation tools"));
  ASSERT_THAT(tuples.timeline, SizeIs(2));
  EXPECT_DOUBLE_EQ(tuples.timeline[1].seconds, 5.5);
  EXPECT_EQ(tuples.timeline[1].checked, 1024);
  EXPECT_EQ(tuples.timeline[1].variants_reached, 84);
  EXPECT_EQ(tuples.timeline[1].variants_reached_runtime, 0);
  EXPECT_EQ(tuples.timeline[1].judged_immediate, std::nullopt);
  ASSERT_THAT(tuples.outcomes, SizeIs(1));
  EXPECT_THAT(tuples.outcomes[0].rows, SizeIs(Gt(80u)));
  EXPECT_THAT(tuples.damage, IsEmpty());

  const RunRecord& programs = runs[1];
  EXPECT_EQ(programs.kind, RunKind::kPrograms);
  EXPECT_EQ(programs.started_unix, 1796538307);
  EXPECT_THAT(programs.backend, StartsWith("ptxas sm_90 (/usr/local/cuda"));
  ASSERT_THAT(programs.timeline, SizeIs(2));
  EXPECT_EQ(programs.timeline[0].checked, 473);
  EXPECT_EQ(programs.timeline[0].judged_immediate, 473);
  EXPECT_EQ(programs.timeline[0].judged_runtime, 468);
  EXPECT_EQ(programs.timeline[0].disagreements, 1);
  EXPECT_EQ(programs.timeline[0].new_entries, 1);
  EXPECT_EQ(programs.timeline[0].variants_reached, std::nullopt);
  EXPECT_THAT(programs.outcomes, IsEmpty());
  EXPECT_THAT(programs.damage, IsEmpty());
  EXPECT_EQ(RecordedTriageDir(out), "/tmp/h78-sample/triage");
}

// Runs of one --out that filed in different triage directories: each
// directory once, the newest run's first (the fourth fault run: `report`
// showed the newest alone and said nothing of the others).
TEST(RunRecordsTest, EveryRecordedTriageDirectoryIsListedNewestFirst) {
  const std::string out = FreshDir("recorded_dirs");
  const auto run = [&out](const std::string& name, const std::string& dir) {
    const std::string run_dir = absl::StrCat(out, "/stats/", name);
    ASSERT_TRUE(MakeDirs(run_dir).ok());
    ASSERT_TRUE(RecordTriageDir(run_dir, dir).ok());
  };
  run("run-1796538300-11", "/tmp/a/triage");
  run("programs-1796538400-12", "/tmp/b/triage");
  run("run-1796538500-13", "/tmp/a/triage");
  run("run-1796538200-10", "/tmp/c/triage");
  EXPECT_THAT(RecordedTriageDirs(out),
              ::testing::ElementsAre("/tmp/a/triage", "/tmp/b/triage",
                                     "/tmp/c/triage"));
  EXPECT_EQ(RecordedTriageDir(out), "/tmp/a/triage");
  EXPECT_THAT(RecordedTriageDirs(FreshDir("no_runs")), IsEmpty());
}

// The twelfth fault run: a run whose triage-dir record could not be read
// (a FIFO, a link to a device) was skipped without a word. It is the run's
// damage; a good record, or none (an older version's run), is none.
TEST(RunRecordsTest, AnUnreadableTriageDirRecordIsDamage) {
  const std::string out = FreshDir("triage_dir_damage");
  const std::string fifo_run = out + "/stats/run-1796538300-11";
  const std::string good_run = out + "/stats/run-1796538400-12";
  const std::string old_run = out + "/stats/run-1796538500-13";
  for (const std::string& dir : {fifo_run, good_run, old_run})
    ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_EQ(mkfifo((fifo_run + "/triage-dir").c_str(), 0644), 0);
  ASSERT_TRUE(RecordTriageDir(good_run, "/tmp/a/triage").ok());
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_THAT(runs[0].damage,
              ::testing::Contains(::testing::HasSubstr(
                  fifo_run + "/triage-dir is not a regular file")));
  EXPECT_THAT(runs[1].damage, IsEmpty());
  EXPECT_THAT(runs[2].damage, IsEmpty());
}

// Each kind's point, written and read back, is what was written: the
// columns the header names are the ones its lines have.
TEST(RunRecordsTest, EachKindsTimelineReadsBackAsWritten) {
  const std::string out = FreshDir("round_trip");
  const TimelinePoint tuples{.seconds = 2.5,
                             .checked = 7,
                             .variants_reached = 6,
                             .variants_reached_runtime = 5,
                             .disagreements = 4,
                             .faults = 3,
                             .new_entries = 2};
  const TimelinePoint programs{.seconds = 3.5,
                               .checked = 17,
                               .judged_immediate = 16,
                               .judged_runtime = 15,
                               .disagreements = 14,
                               .faults = 13,
                               .new_entries = 12};
  for (const auto& [kind, point, dir] :
       {std::tuple{RunKind::kTuples, tuples, "/stats/run-1-1"},
        std::tuple{RunKind::kPrograms, programs, "/stats/run-2-2"}}) {
    ASSERT_TRUE(MakeDirs(out + dir).ok());
    ASSERT_TRUE(
        WriteFile(absl::StrCat(out, dir, "/", kTimelineFile),
                  TimelineHeader(kind, "b") + FormatTimelinePoint(kind, point))
            .ok());
  }
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  for (const RunRecord& run : runs) {
    EXPECT_THAT(run.damage, IsEmpty());
    ASSERT_THAT(run.timeline, SizeIs(1));
  }
  const auto same = [](const TimelinePoint& a, const TimelinePoint& b) {
    return std::tie(a.seconds, a.checked, a.variants_reached,
                    a.variants_reached_runtime, a.judged_immediate,
                    a.judged_runtime, a.disagreements, a.faults,
                    a.new_entries) ==
           std::tie(b.seconds, b.checked, b.variants_reached,
                    b.variants_reached_runtime, b.judged_immediate,
                    b.judged_runtime, b.disagreements, b.faults, b.new_entries);
  };
  EXPECT_TRUE(same(runs[0].timeline[0], tuples));
  EXPECT_TRUE(same(runs[1].timeline[0], programs));
  RemoveTree(out);
}

// A program run of an earlier version (programs-*/programs.tsv, a header
// the version's own): its damaged lines named; a file without its backend
// said to be one.
TEST(RunRecordsTest, AnEarlierProgramRunsDamageIsNamed) {
  const std::string out = FreshDir("programs_v1");
  const std::string run = out + "/stats/programs-3000-4";
  const std::string broken = out + "/stats/programs-4000-5";
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(MakeDirs(broken).ok());
  ASSERT_TRUE(WriteFile(run + "/programs.tsv",
                        "# ptxdiff program timeline 1: seconds programs "
                        "judged_immediate judged_runtime disagreements faults "
                        "new_entries\n# backend: ptxas 1 (sm_90)\n"
                        "5.0\t300\t280\t120\t2\t1\t1\n5\t6\n")
                  .ok());
  ASSERT_TRUE(
      WriteFile(broken + "/programs.tsv", "5.0\t300\t280\t120\t2\t1\t1\n")
          .ok());
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  EXPECT_EQ(runs[0].backend, "ptxas 1 (sm_90)");
  ASSERT_THAT(runs[0].timeline, SizeIs(1));
  EXPECT_EQ(runs[0].timeline[0].judged_runtime, 120);
  EXPECT_THAT(runs[0].damage,
              ElementsAre(HasSubstr("line 4 is no timeline point")));
  // Without a header, read as the kind its directory says.
  EXPECT_EQ(runs[1].kind, RunKind::kPrograms);
  ASSERT_THAT(runs[1].timeline, SizeIs(1));
  EXPECT_EQ(runs[1].timeline[0].judged_immediate, 280);
  EXPECT_THAT(runs[1].damage, ElementsAre(HasSubstr("it names no backend")));
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
  ASSERT_TRUE(WriteFile(run + "/programs.tsv", garbage).ok());
  const std::vector<RunRecord> runs = ReadRuns(out);
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
  ASSERT_EQ(symlink("/dev/zero", (programs + "/programs.tsv").c_str()), 0);
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(2));
  EXPECT_THAT(runs[0].damage,
              ::testing::UnorderedElementsAre(
                  timeline + " is larger than 67108864 bytes (or endless): "
                             "not read",
                  run + "/1.outcomes is not a regular file: not read",
                  run + "/2.outcomes is not a regular file: not read"));
  EXPECT_THAT(runs[1].damage,
              ElementsAre(HasSubstr("programs.tsv is not a regular file")));
  RemoveTree(out);
}

// Fifth fault run: a timeline point whose time was "nan" or "inf" was read
// as such and written into report.json as `nan` (no JSON: the page showed
// nothing); a negative count made the rate's difference overflow. Each is
// a line that is no timeline point.
TEST(RunRecordsTest, APointWithATimeNotFiniteOrANegativeCountIsDamage) {
  const std::string out = FreshDir("nonfinite");
  const std::string run = out + "/stats/run-3000-4";
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(WriteFile(absl::StrCat(run, "/", kTimelineFile),
                        TimelineHeader(RunKind::kPrograms, "ptxas") +
                            "5.0\t10\t9\t8\t0\t0\t0\n"
                            "nan\t11\t9\t8\t0\t0\t0\n"
                            "inf\t12\t9\t8\t0\t0\t0\n"
                            "1e999\t12\t9\t8\t0\t0\t0\n"
                            "-1.0\t12\t9\t8\t0\t0\t0\n"
                            "6.0\t-9223372036854775808\t9\t8\t0\t0\t0\n"
                            "7.0\t13\t9\t8\t0\t0\t0\n")
                  .ok());
  const std::vector<RunRecord> runs = ReadRuns(out);
  ASSERT_THAT(runs, SizeIs(1));
  ASSERT_THAT(runs[0].timeline, SizeIs(2));
  EXPECT_EQ(runs[0].timeline[0].checked, 10);
  EXPECT_EQ(runs[0].timeline[1].checked, 13);
  EXPECT_THAT(runs[0].damage,
              ElementsAre(HasSubstr("5 lines are no timeline points "
                                    "(the first: line 4)")));
  RemoveTree(out);
}

// Sixth fault run of issue 65: `report` of an OUT of 1,000 short fuzz runs
// held every run's outcome records at once (~17 MB each: 1.7 GB at 100
// runs, past 9 GB and 300 s at 1,000). Each run is read when its turn
// comes and dropped after: the second run's records, removed while the
// first is visited, are not read.
TEST(RunRecordsTest, ForEachRunReadsARunOnlyWhenItsTurnComes) {
  const std::string out = FreshDir("one_at_a_time");
  const std::string first = out + "/stats/run-1000-1",
                    second = out + "/stats/run-2000-2";
  const std::string outcomes =
      "# ptxdiff outcomes 1\nbackend\toracle 1\nadd.u32\timm\t-\t2\n";
  for (const std::string& dir : {first, second}) {
    ASSERT_TRUE(MakeDirs(dir).ok());
    ASSERT_TRUE(WriteFile(dir + "/1.outcomes", outcomes).ok());
  }
  std::vector<std::pair<std::string, size_t>> seen;
  ForEachRun(out, [&](RunRecord& run) {
    seen.emplace_back(run.dir, run.outcomes.size());
    unlink((second + "/1.outcomes").c_str());
  });
  EXPECT_THAT(seen, ElementsAre(std::make_pair(first, size_t{1}),
                                std::make_pair(second, size_t{0})));
  RemoveTree(out);
}

TEST(RunRecordsTest, NoStatsDirectoryIsNoRun) {
  EXPECT_THAT(ReadRuns(FreshDir("none")), SizeIs(0));
}

}  // namespace
}  // namespace ptxdiff
