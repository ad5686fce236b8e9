#include "report/report_data.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "common/files.h"
#include "common/testing/fifo_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "report/report_html.h"
#include "triage/testing/findings.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

std::string FreshDir(const std::string& name) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/report_", name, "_", getpid());
  RemoveTree(dir);
  return dir;
}

int IndexOf(absl::string_view spelling) {
  return VariantIndex(*ParseVariant(spelling));
}

// Writes one process's outcomes for `backend` into a run of `out`.
void WriteRun(const std::string& out, int64_t start, const std::string& backend,
              const OutcomeTable& table, const std::vector<bool>& supported) {
  const std::string dir = absl::StrCat(out, "/stats/run-", start, "-1");
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFile(dir + "/1.outcomes", table.Format(backend, supported)).ok());
}

// Writes the timeline of a `programs` run on "faulty 1" (40 programs in
// 5 s) into `run`, a run's directory under --out's stats.
void WriteProgramsTimeline(const std::string& run) {
  ASSERT_TRUE(MakeDirs(run).ok());
  ASSERT_TRUE(WriteFile(absl::StrCat(run, "/", kTimelineFile),
                        TimelineHeader(RunKind::kPrograms, "faulty 1") +
                            FormatTimelinePoint(RunKind::kPrograms,
                                                {.seconds = 5, .checked = 40}))
                  .ok());
}

TEST(ReportDataTest, SumsRunsPerBackendAndGivesEachItsFindings) {
  const std::string out = FreshDir("sum");
  std::vector<bool> supported(AllVariants().size());
  const int add = IndexOf("add.u32");
  supported[add] = supported[IndexOf("sub.u32")] = true;
  OutcomeTable first, second, other;
  first.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  second.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  second.Count(add, OutcomeForm::kRuntime, Outcome::kMismatch);
  other.Count(add, OutcomeForm::kImmediate, Outcome::kHang);
  WriteRun(out, 1000, "faulty 1", first, supported);
  WriteRun(out, 2000, "faulty 1", second, supported);
  WriteRun(out, 3000, "slow 2", other, supported);
  auto store = TriageStore::Open(out + "/triage", /*create=*/true);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->File(AValueMismatch("add.u32", 1, 3, "faulty 1")).ok());
  ASSERT_TRUE(store->File(AValueMismatch("sub.u32", 1, 3, "gone 0")).ok());

  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->implementations, SizeIs(2));
  const Implementation& faulty = data->implementations[0];
  EXPECT_EQ(faulty.backend, "faulty 1");
  EXPECT_THAT(faulty.runs, SizeIs(2));
  EXPECT_EQ(faulty.counts[add * 2][static_cast<int>(Outcome::kAgree)], 2);
  EXPECT_EQ(faulty.counts[add * 2 + 1][static_cast<int>(Outcome::kMismatch)], 1);
  EXPECT_TRUE(faulty.supported[IndexOf("sub.u32")]);
  EXPECT_FALSE(faulty.supported[IndexOf("sub.s32")]);
  ASSERT_THAT(faulty.entries, SizeIs(1));
  EXPECT_EQ(faulty.entries[0].signature.spelling, "add.u32");
  EXPECT_EQ(data->implementations[1].backend, "slow 2");
  EXPECT_EQ(data->implementations[1].counts[add * 2]
                                            [static_cast<int>(Outcome::kHang)],
            1);
  // The entry of a backend no run here had: listed apart, not dropped.
  ASSERT_THAT(data->other_entries, SizeIs(1));
  EXPECT_EQ(data->other_entries[0].entries[0].signature.spelling, "sub.u32");

  const std::string json = ReportJson(*data);
  EXPECT_THAT(json, HasSubstr("\"backend\":\"faulty 1\""));
  EXPECT_THAT(json, HasSubstr("ptxdiff repro '" + out + "/triage/"));
  // add.u32's row: 2 agree as immediates, 1 mismatch with runtime operands.
  EXPECT_THAT(json, HasSubstr("[[2],[0,1]]"));
  RemoveTree(out);
}

// The programs a run's program lane checked, by the variants they held:
// summed over runs apart from the tuples' counts, and no variant is
// supported by a program's line alone.
TEST(ReportDataTest, ProgramCountsAreSummedApartFromTheTuples) {
  const std::string out = FreshDir("programs");
  std::vector<bool> supported(AllVariants().size());
  const int add = IndexOf("add.u32"), xor_b32 = IndexOf("xor.b32");
  supported[add] = true;
  OutcomeTable first, second;
  first.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  first.Count(add, OutcomeForm::kProgramImmediate, Outcome::kAgree, 5);
  second.Count(add, OutcomeForm::kProgramImmediate, Outcome::kAgree, 2);
  second.Count(xor_b32, OutcomeForm::kProgramRuntime, Outcome::kMismatch);
  WriteRun(out, 1000, "faulty 1", first, supported);
  WriteRun(out, 2000, "faulty 1", second, supported);
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->implementations, SizeIs(1));
  const Implementation& impl = data->implementations[0];
  ASSERT_EQ(impl.program_counts.size(), 2u);
  EXPECT_EQ(impl.program_counts.at(add)[0][static_cast<int>(Outcome::kAgree)],
            7);
  EXPECT_EQ(
      impl.program_counts.at(xor_b32)[1][static_cast<int>(Outcome::kMismatch)],
      1);
  EXPECT_EQ(
      impl.counts[add * kNumTupleForms][static_cast<int>(Outcome::kAgree)], 1);
  EXPECT_FALSE(impl.supported[xor_b32]);
  const std::string json = ReportJson(*data);
  EXPECT_THAT(json, HasSubstr(absl::StrCat("\"program_variants\":{\"", add,
                                           "\":[[7],[]],\"", xor_b32,
                                           "\":[[],[0,1]]}")));
  RemoveTree(out);
}

// A crash shows how it ended and what the tool printed last, also for an
// entry filed before the output had a file of its own (from its case).
TEST(ReportDataTest, ACrashShowsHowItEndedAndTheToolsLastOutput) {
  const std::string out = FreshDir("crash");
  std::vector<bool> supported(AllVariants().size());
  supported[IndexOf("div.u32")] = true;
  WriteRun(out, 1000, "faulty 1", OutcomeTable(), supported);
  auto store = TriageStore::Open(out + "/triage", /*create=*/true);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->File(ACrashWithOutput(
                              "loading kernel\nFloating point exception"))
                  .ok());
  const auto json = [&] {
    const absl::StatusOr<ReportData> data =
        ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
    EXPECT_TRUE(data.ok()) << data.status();
    return data.ok() ? ReportJson(*data) : "";
  };
  const std::string shown = json();
  EXPECT_THAT(shown, HasSubstr("\"how\":\"killed by signal 8 (SIGFPE)\""));
  EXPECT_THAT(
      shown,
      HasSubstr("\"output\":\"loading kernel\\nFloating point exception\""));
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_THAT(*entries, SizeIs(1));
  ASSERT_EQ(unlink(absl::StrCat(out, "/triage/", (*entries)[0].name, "/",
                                kFaultOutputFile)
                       .c_str()),
            0);
  EXPECT_THAT(
      json(),
      HasSubstr("\"output\":\"loading kernel\\nFloating point exception\""));
  // Tenth fault run: a FIFO for the output or the case blocked the report
  // for ever. Each is said, unread.
  const std::string entry = absl::StrCat(out, "/triage/", (*entries)[0].name);
  ASSERT_EQ(unlink((entry + "/case.txt").c_str()), 0);
  {
    const LateFifoReader output(entry + "/" + kFaultOutputFile,
                                absl::Seconds(5), O_WRONLY);
    const LateFifoReader case_file(entry + "/case.txt", absl::Seconds(5),
                                   O_WRONLY);
    ASSERT_TRUE(output.made() && case_file.made());
    const std::string shown = json();
    EXPECT_FALSE(output.opened() || case_file.opened())
        << "the report waited on a FIFO";
    EXPECT_THAT(shown, HasSubstr("is not a regular file: not read"));
  }
  RemoveTree(out);
}

// A directory with only `ptxdiff programs` runs is a report too: each
// backend's runs and the entries it filed (programs, and the tuples of
// programs minimized to one instruction), apart from entries of backends
// no run here used.
TEST(ReportDataTest, ProgramCampaignsHaveTheirRunsAndTheirEntries) {
  const std::string out = FreshDir("programs");
  const std::string run = out + "/stats/run-1000-1";
  WriteProgramsTimeline(run);
  // Its programs by the variants they held; a tuple line (no programs run
  // writes one) is not counted, and does not make the run a tuple run's.
  OutcomeTable held;
  const int add = IndexOf("add.u32");
  held.Count(add, OutcomeForm::kProgramImmediate, Outcome::kMismatch, 4);
  held.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  ASSERT_TRUE(WriteFile(run + "/1.outcomes", held.Format("faulty 1", {})).ok());
  auto store = TriageStore::Open(out + "/triage", /*create=*/true);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->File(AProgramMismatch()).ok());
  // A program minimized to one instruction, filed as its tuple by the
  // program campaign; and a tuple entry of a backend no run here used.
  ASSERT_TRUE(store->File(AValueMismatch("mul.lo.u32", 1, 3)).ok());
  ASSERT_TRUE(store->File(AValueMismatch("sub.u32", 1, 3, "faulty 2")).ok());

  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->implementations, SizeIs(1));
  const Implementation& programs = data->implementations[0];
  EXPECT_EQ(programs.kind, RunKind::kPrograms);
  EXPECT_EQ(programs.backend, "faulty 1");
  ASSERT_THAT(programs.runs, SizeIs(1));
  EXPECT_EQ(programs.runs[0].timeline[0].checked, 40);
  ASSERT_EQ(programs.program_counts.size(), 1u);
  EXPECT_EQ(
      programs.program_counts.at(add)[0][static_cast<int>(Outcome::kMismatch)],
      4);
  EXPECT_THAT(programs.counts, testing::IsEmpty());
  ASSERT_THAT(programs.entries, SizeIs(2));
  EXPECT_TRUE(NamesAProgram(programs.entries[0].signature) !=
              NamesAProgram(programs.entries[1].signature))
      << "the program entry and the one-step program's tuple entry";
  // The tuple entry of another backend: no campaign of it ran here, so it
  // is listed apart.
  ASSERT_THAT(data->other_entries, SizeIs(1));
  EXPECT_EQ(data->other_entries[0].entries[0].signature.spelling, "sub.u32");
  EXPECT_THAT(absl::StrJoin(data->notes, "\n"),
              Not(HasSubstr("no run with records")));
  EXPECT_THAT(ReportJson(*data),
              HasSubstr("\"implementations\":[],\"program_implementations\":"
                        "[{\"backend\":\"faulty 1\""));
  EXPECT_THAT(ReportJson(*data),
              HasSubstr(absl::StrCat("\"program_variants\":{\"", add,
                                     "\":[[0,4],[]]}")));
  RemoveTree(out);
}

// A program's entry is the campaign's that filed it: a `fuzz --programs`
// run's (its tuple campaign's program lane) or a `programs` run's, by which
// of them had started when it was first filed. The twentieth fault run: a
// `programs` run that filed nothing was given the entries of the
// `fuzz --programs` runs before it; without it they were listed apart.
TEST(ReportDataTest, AProgramEntryIsTheCampaignsThatFiledIt) {
  const std::string out = FreshDir("program_filer");
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  std::vector<bool> supported(AllVariants().size());
  const int add = IndexOf("add.u32");
  supported[add] = true;
  OutcomeTable lane;  // a tuple run whose program lane checked programs
  lane.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  lane.Count(add, OutcomeForm::kProgramImmediate, Outcome::kMismatch);
  WriteRun(out, now - 100, "faulty 1", lane, supported);
  auto store = TriageStore::Open(out + "/triage", /*create=*/true);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->File(AProgramMismatch()).ok());
  const auto entries_of = [&](RunKind kind) -> int64_t {
    const absl::StatusOr<ReportData> data =
        ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
    EXPECT_TRUE(data.ok()) << data.status();
    if (!data.ok()) return -1;
    EXPECT_THAT(data->other_entries, testing::IsEmpty());
    for (const Implementation& impl : data->implementations)
      if (impl.kind == kind) return impl.entries.size();
    return -1;
  };
  EXPECT_EQ(entries_of(RunKind::kTuples), 1) << "the lane's run filed it";
  // A `programs` run after the entry was filed.
  const std::string later = absl::StrCat(out, "/stats/run-", now + 100, "-2");
  WriteProgramsTimeline(later);
  EXPECT_EQ(entries_of(RunKind::kTuples), 1);
  EXPECT_EQ(entries_of(RunKind::kPrograms), 0);
  // The same `programs` run before it: its entry.
  ASSERT_EQ(rename(later.c_str(),
                   absl::StrCat(out, "/stats/run-", now - 50, "-2").c_str()),
            0);
  EXPECT_EQ(entries_of(RunKind::kTuples), 0);
  EXPECT_EQ(entries_of(RunKind::kPrograms), 1);
  RemoveTree(out);
}

// The records d15de9c wrote (report/testdata: a `fuzz` run and a `programs`
// run, before they had one record) make the report they made then: a
// column for the tuple run, a program campaign for the program run, each
// timeline in its kind's columns.
TEST(ReportDataTest, AnEarlierVersionsRecordsMakeTheSameReport) {
  const std::string out =
      absl::StrCat(PTXDIFF_SOURCE_DIR, "/report/testdata/d15de9c");
  const absl::StatusOr<ReportData> data = ReadReport(
      {{.out_dir = out, .triage_dir = FreshDir("no_triage") + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->implementations, SizeIs(2));
  EXPECT_EQ(data->implementations[0].kind, RunKind::kTuples);
  EXPECT_EQ(data->implementations[1].kind, RunKind::kPrograms);
  for (const Implementation& i : data->implementations)
    EXPECT_THAT(i.damage, SizeIs(0)) << i.backend;
  EXPECT_THAT(data->damage, SizeIs(0));
  const std::string json = ReportJson(*data);
  EXPECT_THAT(json, HasSubstr("\"timeline\":[[5.0,1024,84,0,0,0,0],"
                              "[5.5,1024,84,0,0,0,0]]"));
  EXPECT_THAT(json, HasSubstr("\"program_implementations\":[{\"backend\":"
                              "\"ptxas sm_90 (/usr/local/cuda/bin/ptxas;"));
  EXPECT_THAT(json, HasSubstr("\"timeline\":[[5.0,473,473,468,1,0,1],"
                              "[5.0,473,473,468,1,0,1]]"));
}

// The triage directories older runs of an --out filed in, which the report
// does not show, are said with how to see them.
TEST(ReportDataTest, TheOtherTriageDirectoriesOfOlderRunsAreSaid) {
  const std::string out =
      absl::StrCat(PTXDIFF_SOURCE_DIR, "/report/testdata/d15de9c");
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out,
                   .triage_dir = FreshDir("newest") + "/triage",
                   .also_recorded = {"/tmp/older/triage", "/tmp/oldest/t"}}});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->notes,
              ::testing::Contains(absl::StrCat(
                  out,
                  ": older runs filed in other triage directories too, "
                  "not shown here: /tmp/older/triage, /tmp/oldest/t "
                  "(`ptxdiff report ",
                  out, " --dir DIR` shows one)")));
}

// The report parses a program entry's case.txt as `triage list` does: one
// that does not read back as a program is shown as damage.
TEST(ReportDataTest, AProgramCaseThatDoesNotParseIsDamage) {
  const std::string out = FreshDir("damaged_program");
  auto store = TriageStore::Open(out + "/triage", /*create=*/true);
  ASSERT_TRUE(store.ok());
  const absl::StatusOr<FileResult> filed = store->File(AProgramMismatch());
  ASSERT_TRUE(filed.ok()) << filed.status();
  ASSERT_TRUE(WriteFile(out + "/triage/" + filed->entry + "/case.txt",
                        "# ptxdiff program 1\nnot.an.instruction %r;\n")
                  .ok());

  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->other_entries, SizeIs(1));
  ASSERT_THAT(data->other_entries[0].entries, SizeIs(1));
  EXPECT_THAT(data->other_entries[0].entries[0].damage,
              ElementsAre(HasSubstr("case.txt does not parse")));
  RemoveTree(out);
}

TEST(ReportDataTest, SaysWhatItCouldNotShow) {
  const std::string out = FreshDir("empty");
  ASSERT_TRUE(MakeDirs(out + "/stats/run-1000-1").ok());
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->implementations, SizeIs(0));
  const std::string notes = absl::StrJoin(data->notes, "\n");
  EXPECT_THAT(notes, HasSubstr("1 run stopped before its first record"));
  EXPECT_THAT(notes, HasSubstr("no triage directory there"));
  EXPECT_FALSE(ReadReport({{.out_dir = out + "/missing"}}).ok());
  RemoveTree(out);
}

// Fifth fault run: a `programs` run stopped before its first record (its
// timeline.tsv empty: a full disk) was listed among runs with "no outcome
// records (runs of an older ptxdiff…)", though a program run never has
// any. A run with no record at all is said to have stopped before its
// first; a tuple run with a timeline but no outcome records is as before.
TEST(ReportDataTest, ARunWithNoRecordIsSaidToHaveStoppedBeforeItsFirst) {
  const std::string out = FreshDir("unrecorded");
  ASSERT_TRUE(MakeDirs(out + "/stats/run-1000-1").ok());
  ASSERT_TRUE(WriteFile(out + "/stats/run-1000-1/timeline.tsv", "").ok());
  ASSERT_TRUE(MakeDirs(out + "/stats/run-1001-1").ok());
  ASSERT_TRUE(
      WriteFile(out + "/stats/run-1001-1/timeline.tsv",
                TimelineHeader(RunKind::kTuples) + "1.0\t5\t1\t0\t0\t0\t0\n")
          .ok());
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  const std::string notes = absl::StrJoin(data->notes, "\n");
  EXPECT_THAT(notes,
              HasSubstr(out + ": 1 run stopped before its first "
                              "record (stopped at once, or a full disk)"));
  EXPECT_THAT(notes, HasSubstr(out + ": 1 run has no outcome records (runs "
                                     "of an older ptxdiff"));
  RemoveTree(out);
}

// Fault run of issue 65: a run whose one outcome record was random bytes
// was said to be "of an older ptxdiff", its damage nowhere. It is damage,
// said with its file, in the notes and in the JSON the page shows.
TEST(ReportDataTest, ARunWhoseEveryRecordIsDamagedIsCalledDamaged) {
  const std::string out = FreshDir("all_damaged");
  const std::string outcomes = out + "/stats/run-1000-1/1.outcomes";
  ASSERT_TRUE(MakeDirs(out + "/stats/run-1000-1").ok());
  ASSERT_TRUE(WriteFile(outcomes, std::string("\x8f\x01\xfe random\n", 11)).ok());
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->implementations, SizeIs(0));
  const std::string notes = absl::StrJoin(data->notes, "\n");
  EXPECT_THAT(notes, Not(HasSubstr("older ptxdiff")));
  EXPECT_THAT(notes, HasSubstr("1 run has no outcome record that can be read "
                               "(damaged records"));
  EXPECT_THAT(ReportJson(*data),
              HasSubstr(absl::StrCat("\"damage\":[\"", outcomes, ": ")));
  RemoveTree(out);
}

// A progress line each second reading counters written every two: the
// totals step by 1,600 every other second, and the rate between neighbours
// alternated between 0 and 1,600. The plot's rate is a moving average: 800
// once its 10-second window has filled.
// What a tool refused is in the report as a line per class and per
// message: the class's variants counted, the variants it holds not again
// among those refused alone.
TEST(ReportDataTest, WhatAToolRefusedIsALinePerClassAndPerMessage) {
  const std::string out = FreshDir("refusals");
  WriteRun(out, 1000, "ptx-cmd 1", OutcomeTable(),
           std::vector<bool>(AllVariants().size()));
  const RefusalMemory memory(out + "/refusals", "sim {ptx} {in} {out}",
                             "sm_90");
  const RefusalClass family{.family = Family::kShf,
                            .feature = {.kind = ClassFeature::kFamily},
                            .message = "error: <instruction> not implemented",
                            .sampled = 3};
  ASSERT_TRUE(memory.RememberClass(family).ok());
  ASSERT_TRUE(memory
                  .Remember({*ParseVariant("shf.l.clamp.b32"), false},
                            "error: <instruction> not implemented")
                  .ok());
  for (const char* v : {"lop3.b32", "bmsk.clamp.b32"}) {
    ASSERT_TRUE(
        memory.Remember({*ParseVariant(v), true}, "syntax error").ok());
  }
  absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->refusals, SizeIs(1));
  const ToolRefusals& t = data->refusals[0];
  EXPECT_EQ(t.command, "sim {ptx} {in} {out}");
  EXPECT_EQ(t.target, "sm_90");
  const int64_t shf = static_cast<int64_t>(VariantsOf(Family::kShf).size());
  ASSERT_THAT(t.classes, SizeIs(1));
  EXPECT_EQ(t.classes[0].variants, shf);
  EXPECT_EQ(t.classes[0].sampled, 3);
  // shf.l.clamp.b32 alone is in the class: only the two syntax errors.
  ASSERT_THAT(t.messages, SizeIs(1));
  EXPECT_EQ(t.messages[0].variants, 2);
  EXPECT_THAT(t.messages[0].examples,
              ElementsAre("bmsk.clamp.b32 (as written)", "lop3.b32 (as written)"));
  EXPECT_EQ(t.variants_refused, shf + 2);
  EXPECT_THAT(ReportJson(*data),
              HasSubstr(absl::StrCat("\"refusals\":[{\"out_dir\":\"", out,
                                     "\",\"tool\":\"sim {ptx} {in} {out}\"")));
}

// Fault run of issue 65: a refusal memory the report could not read (a
// FIFO, a file past its bound) was left out of the page without a word.
// It is damage, said with its file.
TEST(ReportDataTest, ARefusalMemoryThatCannotBeReadIsDamage) {
  const std::string out = FreshDir("refusals_unread");
  WriteRun(out, 1000, "ptx-cmd 1", OutcomeTable(),
           std::vector<bool>(AllVariants().size()));
  ASSERT_TRUE(MakeDirs(out + "/refusals").ok());
  const std::string fifo = out + "/refusals/ptx-cmd-0123456789abcdef.tsv";
  const std::string huge = out + "/refusals/ptx-cmd-1123456789abcdef.tsv";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFile(huge, "# what the tool refused\n").ok());
  ASSERT_EQ(truncate(huge.c_str(), off_t{1} << 30), 0);  // sparse
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->refusals, SizeIs(0));
  const std::string json = ReportJson(*data);
  EXPECT_THAT(json, HasSubstr(absl::StrCat("\"", fifo, " is ")));
  EXPECT_THAT(json, HasSubstr(absl::StrCat("\"", huge, " is larger than")));
  RemoveTree(out);
}

TEST(SmoothedRateTest, AveragesCountersWrittenAtAnotherPace) {
  std::vector<std::pair<double, int64_t>> totals;
  for (int s = 1; s <= 60; ++s) totals.emplace_back(s, 1600 * (s / 2));
  const std::vector<RatePoint> rate = SmoothedRate(totals);
  ASSERT_THAT(rate, SizeIs(60));
  for (size_t i = 10; i < rate.size(); ++i) {
    EXPECT_EQ(rate[i].seconds, i + 1);
    EXPECT_NEAR(rate[i].per_second, 800, 80) << "at " << rate[i].seconds;
  }
  // 100 a second, then a pause: across the 80-second gap, the rate over it.
  std::vector<std::pair<double, int64_t>> paused;
  for (int s = 1; s <= 20; ++s) paused.emplace_back(s, 100 * s);
  paused.emplace_back(100, 6000);
  paused.emplace_back(100, 7000);  // not forward in time: skipped
  const std::vector<RatePoint> across = SmoothedRate(paused);
  ASSERT_THAT(across, SizeIs(21));
  EXPECT_EQ(across[19].per_second, 100);
  EXPECT_EQ(across[20].per_second, 50);
  EXPECT_THAT(SmoothedRate({}), SizeIs(0));
}

// The JSON gives each run the rate its plot draws.
TEST(ReportDataTest, EachRunHasItsSmoothedRate) {
  const std::string out = FreshDir("rate");
  const std::string run = out + "/stats/run-1000-1";
  ASSERT_TRUE(MakeDirs(run).ok());
  std::string timeline = TimelineHeader(RunKind::kTuples);
  for (int s = 1; s <= 12; ++s) {
    timeline += FormatTimelinePoint(
        RunKind::kTuples,
        {.seconds = static_cast<double>(s), .checked = 1600 * (s / 2)});
  }
  ASSERT_TRUE(WriteFile(absl::StrCat(run, "/", kTimelineFile), timeline).ok());
  ASSERT_TRUE(WriteFile(run + "/1.outcomes",
                        OutcomeTable().Format("faulty 1", {})).ok());
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(ReportJson(*data),
              HasSubstr(",\"rate\":[[1.0,0.0],[2.0,800.0],[3.0,533.3],"));
  EXPECT_THAT(ReportJson(*data), HasSubstr("[11.0,800.0],[12.0,800.0]]}"));
  RemoveTree(out);
}

TEST(ReportHtmlTest, TheDataCannotEndItsScript) {
  const std::string html =
      ReportHtml("{\"case\":\"</script><script>alert(1)</script><!--\"}");
  EXPECT_THAT(html, Not(HasSubstr("</script><script>alert")));
  EXPECT_THAT(html, HasSubstr("<\\/script><script>alert(1)<\\/script>"));
  EXPECT_THAT(html, Not(HasSubstr("/*PTXDIFF_REPORT_DATA*/")));
  EXPECT_THAT(html, HasSubstr("<title>ptxdiff conformance report</title>"));
}

}  // namespace
}  // namespace ptxdiff
