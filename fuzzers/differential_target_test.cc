#include "fuzzers/differential_target.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "campaign/outcome_table.h"
#include "common/files.h"
#include "common/testing/text.h"
#include "fuzzers/cause_frames.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/difft_" + name + "_" + std::to_string(getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

// A wrapper script: the faulty worker, wrong on every vadd.
std::string WrongVaddBackend(const std::string& dir) {
  std::system(("mkdir -p '" + dir + "'").c_str());
  const std::string script = dir + "/worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=wrong-on=vadd. \"$@\"\n";
  chmod(script.c_str(), 0755);
  return "exec:" + script;
}

std::string Input(const char* spelling, std::vector<Operands> tuples) {
  return EncodeFuzzInput(*ParseVariant(spelling), tuples);
}

int Feed(DifferentialTarget& t, const std::string& input) {
  return t.RunInput(reinterpret_cast<const uint8_t*>(input.data()),
                    input.size());
}

TEST(FuzzConfigTest, ParsesAndRejectsSettings) {
  auto c = FuzzConfigFromPairs({{"PTXDIFF_BACKEND", "oracle"},
                                {"PTXDIFF_MODE", "crash"},
                                {"PTXDIFF_FAMILIES", "vadd, shf"},
                                {"PTXDIFF_TIMEOUT", "5"}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->mode, FuzzConfig::Mode::kCrash);
  EXPECT_EQ(c->filter.include.size(), 2u);
  EXPECT_THAT(
      FuzzConfigFromPairs({{"PTXDIFF_MODE", "fast"}}).status().message(),
      HasSubstr("campaign or crash"));
  EXPECT_THAT(
      FuzzConfigFromPairs({{"PTXDIFF_FAMILIES", "vaddd"}}).status().message(),
      HasSubstr("unknown family 'vaddd'"));
  EXPECT_THAT(
      FuzzConfigFromPairs({{"PTXDIFF_TIMEOUT", "-1"}}).status().message(),
      HasSubstr("PTXDIFF_TIMEOUT"));
  EXPECT_EQ(FuzzConfigFromPairs({{"PTXDIFF_PROGRAMS", "0.25"}})->programs_share,
            0.25);
  for (const char* share : {"1.5", "-0.1", "nan", "some"}) {
    EXPECT_THAT(
        FuzzConfigFromPairs({{"PTXDIFF_PROGRAMS", share}}).status().message(),
        HasSubstr("PTXDIFF_PROGRAMS"))
        << share;
  }
}

// What `ptxdiff fuzz` writes into the fuzz processes' environment reads
// back as the same configuration, every setting included.
TEST(FuzzConfigTest, PairsRoundTrip) {
  FuzzConfig c;
  c.backend = "exec:/opt/w";
  c.arch = "sm_80";
  c.cuda_driver = "/opt/libcuda.so";
  c.triage_dir = "t";
  c.mode = FuzzConfig::Mode::kCrash;
  c.filter.include = {Family::kBfe, Family::kVisaShl};
  c.filter.exclude = {Family::kVadd};
  c.timeout_seconds = 2.5;
  c.stats_dir = "s";
  c.worker = "/w";
  c.in_flight = 3;
  c.batch_size = 777;
  c.systematic = false;
  c.reading = Reading::kHardware;
  c.deadline_unix_seconds = 1790000000;
  c.findings_dir = "out/findings";
  c.programs_share = 0.3;
  const auto pairs = FuzzConfigToPairs(c);
  auto back = FuzzConfigFromPairs(pairs);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FuzzConfigToPairs(*back), pairs);
  EXPECT_EQ(back->filter.include, c.filter.include);
  EXPECT_EQ(back->mode, FuzzConfig::Mode::kCrash);
  EXPECT_EQ(back->reading, Reading::kHardware);
  EXPECT_EQ(back->batch_size, 777);
  EXPECT_EQ(back->deadline_unix_seconds, 1790000000);
  // The defaults survive the trip too (batch 0 means "by backend").
  auto defaults = FuzzConfigFromPairs(FuzzConfigToPairs(FuzzConfig{}));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(FuzzConfigToPairs(*defaults), FuzzConfigToPairs(FuzzConfig{}));
}

// libFuzzer's clock starts after start-up; the deadline of `ptxdiff fuzz
// --max-time` does not: what is left of it replaces -max_total_time, which
// it never lengthens (a -fork job's share stays its own). libFuzzer stops
// only once more than max_total_time whole seconds have passed, so what is
// left is a second less than the whole seconds to the deadline (it was the
// seconds to the deadline from the last whole second: a 45 s run took 48).
TEST(FuzzConfigTest, MaxTotalTimeIsWhatIsLeftOfTheDeadline) {
  const absl::Time now = absl::FromUnixSeconds(1000);
  EXPECT_EQ(MaxTotalTimeBy(0, 60, now), 60);     // no deadline
  EXPECT_EQ(MaxTotalTimeBy(1048, 60, now), 47);  // 12 s of start-up
  EXPECT_EQ(MaxTotalTimeBy(1100, 60, now), 60);  // a -fork job's shorter share
  EXPECT_EQ(MaxTotalTimeBy(990, 60, now),
            1);  // start-up outlasted it: end soon
  EXPECT_EQ(MaxTotalTimeBy(1030, 0, now),
            29);  // no limit given: the deadline's
  // 29.9 s left: libFuzzer stops at 29 s, ending before the deadline.
  EXPECT_EQ(MaxTotalTimeBy(1030, 0, now + absl::Milliseconds(100)), 28);
  EXPECT_THAT(
      FuzzConfigFromPairs({{"PTXDIFF_DEADLINE", "soon"}}).status().message(),
      HasSubstr("PTXDIFF_DEADLINE"));
}

// What one process writes, `ptxdiff fuzz` reads back; two processes' files
// add up (supported_variants is the same for both, reached bitmaps OR).
TEST(StatsFileTest, TwoProcessesAddUp) {
  StatsFile one;
  one.stats.inputs = 5;
  one.stats.counts.tuples = 100;
  one.stats.counts.other_reading = 7;
  one.stats.supported_variants = 103;
  one.stats.declined_operand_form = 2;
  one.stats.other_reading_by_erratum["bfe-bfi-64-unmasked"] = 7;
  one.backend = "ptxas 1 (x, sm_90)";
  one.reached = {true, false, false, false, false, true};
  one.reached_runtime = {false, false, false, false, false, true};
  one.explored = {2, 0, 5};
  StatsFile two = one;
  two.reached = {false, true};
  two.reached_runtime = {};
  two.explored = {1, 3, 0, 4};
  StatsFile sum;
  AddStatsFile(FormatStatsFile(one), sum);
  AddStatsFile(FormatStatsFile(two), sum);
  EXPECT_EQ(sum.stats.inputs, 10);
  EXPECT_EQ(sum.stats.counts.tuples, 200);
  EXPECT_EQ(sum.stats.supported_variants, 103);
  EXPECT_EQ(sum.stats.declined_operand_form, 4);
  EXPECT_EQ(sum.stats.other_reading_by_erratum["bfe-bfi-64-unmasked"], 14);
  EXPECT_EQ(sum.backend, "ptxas 1 (x, sm_90)");
  EXPECT_EQ(std::count(sum.reached.begin(), sum.reached.end(), true), 3);
  EXPECT_TRUE(sum.reached[0] && sum.reached[1] && sum.reached[5]);
  EXPECT_EQ(
      std::count(sum.reached_runtime.begin(), sum.reached_runtime.end(), true),
      1);
  EXPECT_TRUE(sum.reached_runtime[5]);
  EXPECT_THAT(sum.explored, ElementsAre(3, 3, 5, 4));
}

// The program lane's counts add up over the processes, and why none ran is
// kept (issue 63).
TEST(StatsFileTest, ProgramCountsAddUp) {
  StatsFile one;
  one.stats.programs = 30;
  one.stats.programs_judged_immediate = 28;
  one.stats.programs_judged_runtime = 25;
  one.stats.program_disagreements = 2;
  one.stats.program_faults = 1;
  one.stats.programs_filed = 2;
  one.stats.programs_filed_new = 1;
  one.stats.programs_known = 1;
  one.stats.programs_not_filed_again = 3;
  one.stats.programs_pending = 1;
  StatsFile two = one;
  two.stats.programs_not_started = "the worker runs no programs\nsecond line";
  StatsFile sum;
  AddStatsFile(FormatStatsFile(one), sum);
  AddStatsFile(FormatStatsFile(two), sum);
  EXPECT_EQ(sum.stats.programs, 60);
  EXPECT_EQ(sum.stats.programs_judged_immediate, 56);
  EXPECT_EQ(sum.stats.programs_judged_runtime, 50);
  EXPECT_EQ(sum.stats.program_disagreements, 4);
  EXPECT_EQ(sum.stats.program_faults, 2);
  EXPECT_EQ(sum.stats.programs_filed, 4);
  EXPECT_EQ(sum.stats.programs_filed_new, 2);
  EXPECT_EQ(sum.stats.programs_known, 2);
  EXPECT_EQ(sum.stats.programs_not_filed_again, 6);
  EXPECT_EQ(sum.stats.programs_pending, 2);
  EXPECT_EQ(sum.stats.programs_not_started, "the worker runs no programs");
}

// Each process calibrates at its own start: the campaign's figure is the
// longest, not a sum.
TEST(StatsFileTest, CalibrationIsTheLongestOfTheProcesses) {
  StatsFile one, two;
  one.stats.calibration_ms = 3900;
  one.stats.families_timed = 42;
  two.stats.calibration_ms = 4100;
  two.stats.families_timed = 41;
  StatsFile sum;
  for (const StatsFile* f : {&one, &two})
    AddStatsFile(FormatStatsFile(*f), sum);
  EXPECT_EQ(sum.stats.calibration_ms, 4100);
  EXPECT_EQ(sum.stats.families_timed, 42);
}

// The first mismatch of a campaign is the earliest of its processes': in
// tuples and in time, a process that has none (0) never counting.
TEST(StatsFileTest, TheFirstMismatchIsTheEarliestOfTheProcesses) {
  StatsFile none, late, early;
  late.stats.first_mismatch_after = 900;
  late.stats.first_mismatch_unix_ms = 1'800'000'000'500;
  early.stats.first_mismatch_after = 300;
  early.stats.first_mismatch_unix_ms = 1'800'000'000'100;
  StatsFile sum;
  for (const StatsFile* f : {&none, &late, &early})
    AddStatsFile(FormatStatsFile(*f), sum);
  EXPECT_EQ(sum.stats.first_mismatch_after, 300);
  EXPECT_EQ(sum.stats.first_mismatch_unix_ms, 1'800'000'000'100);
}

// What a stats file carries for the summary's errors: the failed writes,
// the findings not filed, and the last filing error (on one line).
TEST(StatsFileTest, FilingErrorsReadBack) {
  StatsFile full, fine;
  full.stats.filing_errors = 6;
  full.stats.unfiled = 6;
  full.stats.filing_error = "cannot create x: No space left on device\nmore";
  fine.stats.unfiled = 1;
  StatsFile sum;
  for (const StatsFile* f : {&full, &fine})
    AddStatsFile(FormatStatsFile(*f), sum);
  EXPECT_EQ(sum.stats.filing_errors, 6);
  EXPECT_EQ(sum.stats.unfiled, 7);
  EXPECT_EQ(sum.stats.filing_error, "cannot create x: No space left on device");
}

// The decline reason most tuples gave, of any one process, read back on one
// line with its count: why, if nothing was tested.
TEST(StatsFileTest, TheTopDeclineReasonIsThatOfTheMostTuples) {
  StatsFile declining, other, none;
  declining.stats.top_decline =
      "ptx-cmd: command 'false' failed on add.s32: exit status 1\nits output";
  declining.stats.top_decline_count = 16;
  other.stats.top_decline = "rarer";
  other.stats.top_decline_count = 3;
  StatsFile sum;
  for (const StatsFile* f : {&other, &declining, &none})
    AddStatsFile(FormatStatsFile(*f), sum);
  EXPECT_EQ(sum.stats.top_decline,
            "ptx-cmd: command 'false' failed on add.s32: exit status 1");
  EXPECT_EQ(sum.stats.top_decline_count, 16);
}

// A backend that declines everything (a ptx-cmd tool that always fails):
// nothing is tested, and the stats say why, for `ptxdiff fuzz` (issue 28).
TEST(DifferentialTargetTest, TheStatsSayWhyNothingWasTested) {
  const std::string dir = FreshDir("declined");
  std::system(("mkdir -p '" + dir + "'").c_str());
  FuzzConfig config;
  config.backend = "ptx-cmd:/bin/false {ptx} {in} {out}";
  config.worker = PTXDIFF_WORKER_PATH;
  config.triage_dir = dir + "/triage";
  config.stats_dir = dir;
  config.systematic = false;
  config.filter.include = {Family::kAdd};
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(Feed(**target, Input("add.s32", {{{1, 2, 0, 0}}, {{3, 4, 0, 0}}})),
            0);
  ASSERT_TRUE((*target)->Flush());
  (*target)->Stop();
  const FuzzStats s = (*target)->stats();
  EXPECT_EQ(s.counts.tuples, 2);
  EXPECT_EQ(s.counts.tested(), 0);
  EXPECT_EQ(s.top_decline_count, 2);
  EXPECT_THAT(s.top_decline,
              HasSubstr("failed on add.s32 (2 tuples): exit status 1"));
  std::ifstream stats(dir + "/" + std::to_string(getpid()) + ".stats");
  const std::string text((std::istreambuf_iterator<char>(stats)), {});
  EXPECT_THAT(text, HasSubstr("top_decline=2 ptx-cmd: command '/bin/false"));
}

// The eighth fault run: libFuzzer's -fork parent runs no input, yet its
// campaign judges the systematic tuples; its stats file was written only at
// its Stop, so `fuzz --jobs 2` showed none of its counts while it ran, and
// none at all once it was killed ("0 new" beside the entry it had filed).
// KeepStatsWritten writes them every second, no input fed. (The wait gives
// up after 60 s, where the file never comes without it.)
TEST(DifferentialTargetTest, AProcessThatRunsNoInputKeepsItsStatsWritten) {
  const std::string dir = FreshDir("no_input");
  std::system(("mkdir -p '" + dir + "'").c_str());
  FuzzConfig config;
  config.backend = "oracle";
  config.worker = PTXDIFF_WORKER_PATH;
  config.triage_dir = dir + "/triage";
  config.stats_dir = dir;
  config.systematic = true;  // what such a process judges
  config.filter.include = {Family::kAdd};
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  (*target)->KeepStatsWritten();
  const std::string path = absl::StrCat(dir, "/", getpid(), ".stats");
  // Written with some tuples judged: "tuples=N", N > 0.
  const auto judged_some = [](const std::string& text) {
    return absl::StrContains(text, "\ntuples=") &&
           !absl::StrContains(text, "\ntuples=0\n");
  };
  std::string text;
  for (const absl::Time give_up = absl::Now() + absl::Seconds(60);
       absl::Now() < give_up && !judged_some(text);
       absl::SleepFor(absl::Milliseconds(100))) {
    text = ReadFile(path).value_or("");
  }
  EXPECT_TRUE(judged_some(text)) << path << " holds: " << text;
  (*target)->Stop();
}

// Crash mode counts the variants the backend supports and the declines by
// code, as a campaign does, so that its summary does not say "of the 0
// variants" beside a declines breakdown of zeros (issue 28, item 6).
TEST(DifferentialTargetTest,
     CrashModeCountsTheSupportedVariantsAndTheDeclinesByCode) {
  const std::string dir = FreshDir("crash_declined");
  std::system(("mkdir -p '" + dir + "'").c_str());
  FuzzConfig config;
  config.backend = "ptx-cmd:/bin/false {ptx} {in} {out}";
  config.worker = PTXDIFF_WORKER_PATH;
  config.triage_dir = dir + "/triage";
  config.mode = FuzzConfig::Mode::kCrash;
  config.filter.include = {Family::kAdd};
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(Feed(**target, Input("add.s32", {{{1, 2, 0, 0}}, {{3, 4, 0, 0}}})),
            0);
  const FuzzStats s = (*target)->stats();
  EXPECT_EQ(s.counts.declined, 2);
  EXPECT_EQ(s.declined_unsupported + s.declined_not_evaluable +
                s.declined_operand_form + s.declined_other + s.declined_not_run,
            s.counts.declined);
  int64_t add_variants = 0;
  for (const Variant& v : AllVariants())
    add_variants += v.family == Family::kAdd;
  EXPECT_GT(s.supported_variants, 0);
  EXPECT_LE(s.supported_variants, add_variants);
}

// A stats file that cannot be written (a full disk under --out) would leave
// the summary short without a word: the first failure is said on stderr,
// in the form `ptxdiff fuzz` watches for (fuzzer_output.h; issue 28, item 2).
TEST(DifferentialTargetTest, AStatsFileThatCannotBeWrittenIsSaidOnce) {
  const std::string dir = FreshDir("stats_unwritable");
  FuzzConfig config;
  config.backend = "oracle";
  config.worker = PTXDIFF_WORKER_PATH;
  config.triage_dir = dir + "/triage";
  config.stats_dir = "/dev/full/stats";  // not a directory: every write fails
  config.mode = FuzzConfig::Mode::kCrash;
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  ::testing::internal::CaptureStderr();
  (*target)->WriteStats();
  (*target)->WriteStats();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, ::testing::StartsWith(
                        absl::StrCat("ptxdiff: cannot write /dev/full/stats/",
                                     getpid(), ".stats: ")));
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
}

// Issue 45: outcome records that cannot be written (a full disk) are said
// once; the campaign goes on, and its stats and findings are kept apart.
TEST(DifferentialTargetTest, OutcomesThatCannotBeWrittenAreSaidOnce) {
  const std::string dir = FreshDir("outcomes_unwritable");
  FuzzConfig config;
  config.backend = "oracle";
  config.worker = PTXDIFF_WORKER_PATH;
  config.triage_dir = dir + "/triage";
  config.stats_dir = "/dev/full/stats";  // not a directory: every write fails
  config.systematic = false;
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(Feed(**target, Input("add.s32", {{{1, 2, 0, 0}}})), 0);
  ASSERT_TRUE((*target)->Flush());
  (*target)->Stop();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(Occurrences(said, absl::StrCat("cannot write /dev/full/stats/", getpid(),
                                     ".outcomes: ")),
            1)
      << said;
  EXPECT_EQ((*target)->stats().counts.agreed, 1);
}

TEST(DifferentialTargetTest, CampaignFilesOnceAndCountsRepeats) {
  const std::string dir = FreshDir("campaign");
  FuzzConfig config;
  config.backend = WrongVaddBackend(dir);
  config.triage_dir = dir + "/triage";
  config.stats_dir = dir;
  config.systematic = false;  // only what the inputs hold
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  DifferentialTarget& t = **target;
  EXPECT_EQ(Feed(t, Input("add.s32", {{{1, 2, 0, 0}}})), 0);
  ASSERT_TRUE(t.Flush());
  EXPECT_EQ(t.stats().counts.agreed, 1);
  EXPECT_EQ(Feed(t, Input("vadd.u32.u32.u32.sat d.b1, a.h0, b, c",
                          {{{0x12345678, 0x9abc, 0x77, 0}}})),
            0);
  ASSERT_TRUE(t.Flush());
  EXPECT_EQ(t.stats().new_findings, 1);
  // The same tuple again is not sent again (deduplicated); another tuple of
  // the same cause is a repeat, counted without minimizing.
  const std::string again = Input("vadd.u32.u32.u32.sat d.b1, a.h0, b, c",
                                  {{{0x12345679, 0x9abd, 0x78, 0}}});
  EXPECT_EQ(Feed(t, again), 0);
  ASSERT_TRUE(t.Flush());
  EXPECT_EQ(t.stats().known_findings, 1);
  EXPECT_EQ(Feed(t, "garbage input"), -1);
  t.WriteStats();
  std::ifstream stats(dir + "/" + std::to_string(getpid()) + ".stats");
  std::string text((std::istreambuf_iterator<char>(stats)), {});
  EXPECT_THAT(text, HasSubstr("new_findings=1\n"));
  EXPECT_THAT(text, HasSubstr("tuples=3\n"));
  auto store = TriageStore::Open(config.triage_dir, false);
  auto entries = store->List();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name,
            "value-mismatch~faulty~in-range~vadd.u32.u32.u32");
  EXPECT_EQ((*entries)[0].count(), 2);

  // Issue 45: at its stop the process leaves its outcomes by variant and
  // form beside its stats, every tuple judged counted under its variant.
  t.Stop();
  const absl::StatusOr<std::string> outcomes =
      ReadFile(absl::StrCat(dir, "/", getpid(), ".outcomes"));
  ASSERT_TRUE(outcomes.ok()) << outcomes.status();
  const absl::StatusOr<OutcomeFile> file = ParseOutcomeFile(*outcomes);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->damage, ::testing::IsEmpty());
  EXPECT_THAT(file->backend, HasSubstr("faulty"));
  std::map<std::string, OutcomeCounts> counted;
  for (const OutcomeFile::Row& row : file->rows) {
    for (int o = 0; o < kNumOutcomes; ++o)
      counted[row.spelling][o] += row.counts[o];
  }
  EXPECT_EQ(counted["add.s32"][static_cast<int>(Outcome::kAgree)], 1);
  EXPECT_EQ(counted["vadd.u32.u32.u32.sat d.b1, a.h0, b, c"]
                   [static_cast<int>(Outcome::kMismatch)],
            2);
}

TEST(DifferentialTargetTest, FamiliesOutsideTheFilterAreRejected) {
  const std::string dir = FreshDir("filter");
  FuzzConfig config;
  config.backend = "oracle";
  config.worker = PTXDIFF_WORKER_PATH;
  config.triage_dir = dir;
  config.filter.include = {Family::kShf};
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(Feed(**target, Input("add.s32", {{{1, 2, 0, 0}}})), -1);
  EXPECT_EQ(Feed(**target, Input("shf.l.wrap.b32", {{{1, 2, 40, 0}}})), 0);
}

// A campaign configuration against a faulty worker that serves the oracle
// for the variants in `supports` (its supports lines) only, in `dir`.
FuzzConfig SupportingOnly(const std::string& dir, const std::string& supports) {
  std::system(("mkdir -p '" + dir + "'").c_str());
  const std::string script = dir + "/worker.sh";
  std::ofstream(script) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                        << " --fault=none --supports=" << supports
                        << " \"$@\"\n";
  chmod(script.c_str(), 0755);
  FuzzConfig config;
  config.backend = "exec:" + script;
  config.triage_dir = dir + "/triage";
  config.systematic = false;
  return config;
}

// The fuzz loop keeps to the families the backend runs: an input of another
// family is rejected (and the mutator is given the narrowed filter).
TEST(DifferentialTargetTest, FamiliesTheBackendDoesNotRunAreRejected) {
  const FuzzConfig config = SupportingOnly(FreshDir("supports"), "add.s32,shf");
  auto target = DifferentialTarget::Create(config);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ((*target)->config().filter.include,
            (std::vector<Family>{Family::kAdd, Family::kShf}));
  EXPECT_EQ(Feed(**target, Input("bfe.u32", {{{1, 2, 3, 0}}})), -1);
  EXPECT_EQ(Feed(**target, Input("add.s32", {{{1, 2, 0, 0}}})), 0);
  EXPECT_EQ(Feed(**target, Input("shf.l.wrap.b32", {{{1, 2, 40, 0}}})), 0);
}

// A campaign over families the backend runs none of would check nothing: it
// is refused at once, naming them and where to see why.
TEST(DifferentialTargetTest, NoSupportedFamilyIsAClearError) {
  FuzzConfig config = SupportingOnly(FreshDir("nothing"), "add.s32");
  config.filter.include = {Family::kPrmt, Family::kLop3};
  auto target = DifferentialTarget::Create(config);
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      target.status().message(),
      HasSubstr("runs no variant of the families asked for (lop3, prmt)"));
  EXPECT_THAT(target.status().message(), HasSubstr("--family lop3 --tuples 1"));
}

TEST(DifferentialTargetDeathTest, CrashModeAbortsWithAOneLineSignature) {
  const std::string dir = FreshDir("crash");
  FuzzConfig config;
  config.backend = WrongVaddBackend(dir);
  config.triage_dir = dir + "/triage";
  config.mode = FuzzConfig::Mode::kCrash;
  EXPECT_DEATH(
      {
        auto target = DifferentialTarget::Create(config);
        Feed(**target, Input("vadd.u32.u32.u32", {{{1, 2, 0, 0}}}));
      },
      "ptxdiff: value-mismatch faulty vadd.u32.u32.u32 in-range; cause: "
      "value-mismatch in vadd\n");
}

// Each (family, kind) aborts through frames of its own names: ClusterFuzz
// files one issue per crash state (cause_frames.h; the fuzz build's
// cause_frames_test.sh checks the symbolized stacks themselves).
TEST(CauseFramesTest, EveryFamilyAndKindHasAFrameOfItsOwn) {
  std::set<std::string> names;
  for (const FamilyInfo& info : AllFamilies()) {
    names.insert(cause::FamilyFrameName(info.family));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kNumFamilies));
  for (FindingKind kind :
       {FindingKind::kValueMismatch, FindingKind::kCrash, FindingKind::kHang,
        FindingKind::kProtocolError, FindingKind::kDeviceFault}) {
    EXPECT_TRUE(names.insert(cause::KindFrameName(kind)).second)
        << cause::KindFrameName(kind);
  }
  EXPECT_EQ(cause::FamilyFrameName(Family::kVisaShl),
            "ptxdiff::cause::InFamilyVisaShl");
  EXPECT_EQ(cause::CauseText(FindingKind::kHang, Family::kVisaShl),
            "hang in visa.shl");
}

// A crash file holds the input alone, so that `repro` without --backend
// would replay it on the default backend and say "agree": crash mode
// records where each crash was found, beside the crash files (issue 28,
// item 8).
TEST(DifferentialTargetDeathTest, CrashModeRecordsTheBackendOfEachCrash) {
  const std::string dir = FreshDir("crash_origin");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/findings'").c_str()), 0);
  FuzzConfig config;
  config.backend = WrongVaddBackend(dir);
  config.triage_dir = dir + "/triage";
  config.mode = FuzzConfig::Mode::kCrash;
  config.findings_dir = dir + "/findings";
  const std::string input = Input("vadd.u32.u32.u32", {{{1, 2, 0, 0}}});
  EXPECT_DEATH(
      {
        auto target = DifferentialTarget::Create(config);
        Feed(**target, input);
      },
      "ptxdiff: value-mismatch faulty vadd.u32.u32.u32 in-range");
  const std::optional<CrashOrigin> origin =
      FindCrashOrigin(dir + "/findings", input);
  ASSERT_TRUE(origin.has_value());
  EXPECT_EQ(origin->backend, config.backend);
  EXPECT_EQ(origin->signature,
            "value-mismatch faulty vadd.u32.u32.u32 in-range");
  EXPECT_FALSE(FindCrashOrigin(dir + "/findings", input + "x").has_value());
  EXPECT_FALSE(FindCrashOrigin(dir + "/none", input).has_value());
}

// Tenth fault run: a FIFO at crash-backends.txt went unwritten without a
// word. The crash says it on the line the CLI reads as a failed write.
TEST(DifferentialTargetDeathTest, ACrashOriginsFileNotWrittenIsSaid) {
  const std::string dir = FreshDir("crash_origin_fifo");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/findings'").c_str()), 0);
  const std::string fifo = dir + "/findings/crash-backends.txt";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  FuzzConfig config;
  config.backend = WrongVaddBackend(dir);
  config.triage_dir = dir + "/triage";
  config.mode = FuzzConfig::Mode::kCrash;
  config.findings_dir = dir + "/findings";
  EXPECT_DEATH(
      {
        auto target = DifferentialTarget::Create(config);
        Feed(**target, Input("vadd.u32.u32.u32", {{{1, 2, 0, 0}}}));
      },
      "ptxdiff: cannot write " + fifo + ": .*is a FIFO");
}

// Third fault run: `repro CRASH` read crash-backends.txt beside it whole
// (3 GB sparse: 44 s, 4.2 GB), and blocked for ever on a FIFO of that name.
TEST(DifferentialTargetTest, ACrashOriginsFileTooLargeOrNoFileIsNotRead) {
  const std::string dir = FreshDir("crash_origin_bound");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string file = dir + "/crash-backends.txt";
  const std::string input = Input("vadd.u32.u32.u32", {{{1, 2, 0, 0}}});
  // Its one record past the bound (the head a hole, ended): not read.
  std::ofstream(file).close();
  ASSERT_EQ(truncate(file.c_str(), kMaxCrashOriginsBytes), 0);
  std::ofstream(file, std::ios::app)
      << "\n"
      << CrashOriginLine(input, {"crash faulty vadd.u32.u32.u32 crash",
                                 "oracle"});
  ASSERT_FALSE(FindCrashOrigin(dir, input).has_value());
  ASSERT_EQ(unlink(file.c_str()), 0);
  ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
  EXPECT_FALSE(FindCrashOrigin(dir, input).has_value());
}

// Seventeenth fault run: a crash-backends.txt saved with CRLF line ends
// kept the \r in the backend's command (its tool ran with "{out}\r").
TEST(DifferentialTargetTest, ACrashOriginsFileWithCrlfLineEndsIsRead) {
  const std::string dir = FreshDir("crash_origin_crlf");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string input = Input("vadd.u32.u32.u32", {{{1, 2, 0, 0}}});
  std::string line = CrashOriginLine(
      input, {"crash ptx-cmd vadd.u32.u32.u32 crash", "ptx-cmd:t {ptx} {out}"});
  line.insert(line.size() - 1, "\r");
  std::ofstream(dir + "/crash-backends.txt") << line;
  const std::optional<CrashOrigin> origin = FindCrashOrigin(dir, input);
  ASSERT_TRUE(origin.has_value());
  EXPECT_EQ(origin->backend, "ptx-cmd:t {ptx} {out}");
}

TEST(DifferentialTargetTest, BadBackendIsAClearError) {
  FuzzConfig config;
  config.backend = "exec:/nonexistent/worker";
  config.triage_dir = FreshDir("bad");
  auto target = DifferentialTarget::Create(config);
  ASSERT_FALSE(target.ok());
  EXPECT_THAT(target.status().message(), HasSubstr("cannot start worker"));
}

}  // namespace
}  // namespace ptxdiff
