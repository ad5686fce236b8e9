#include "program/program_campaign.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "program/program_backends.h"
#include "program/program_lane.h"
#include "program/program_minimizer.h"
#include "program/program_ptxas.h"
#include "program/program_tool.h"
#include "program/testing/programs.h"
#include "program/testing/search_in_process.h"
#include "triage/text_case.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

// What a backend does to the checks after its first finding: waits for the
// run's deadline (the time limit falls inside minimizing on any machine,
// however fast or loaded), or fails the next one as a full TMPDIR fails the
// harness's own files, the checks after it passing (files removed, room),
// or judges none of them, as a tool that fails every module for a while.
enum class AfterTheFinding {
  kWaitForTheDeadline,
  kDiskFullOnce,
  kToolDown,
  kToolCrashes,
};

class TroubleDuringMinimizing : public ProgramBackend {
 public:
  TroubleDuringMinimizing(std::shared_ptr<ProgramBackend> inner,
                          AfterTheFinding what)
      : inner_(std::move(inner)), what_(what) {}
  std::string Name() const override { return inner_->Name(); }
  std::string Identity() const override { return inner_->Identity(); }
  absl::StatusOr<std::vector<ProgramCheck>> Check(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    // (A check of no programs is the found one's other form, skipped.)
    if (found_ && !programs.empty() &&
        what_ == AfterTheFinding::kWaitForTheDeadline)
      absl::SleepFor(deadline - absl::Now() + absl::Milliseconds(1));
    if (found_ && what_ == AfterTheFinding::kToolDown) {
      return std::vector<ProgramCheck>(
          programs.size(),
          ProgramCheck{.why_not = "exit status 1; its output ends: error: "
                                  "cannot check out a license"});
    }
    if (found_ && what_ == AfterTheFinding::kToolCrashes) {
      return std::vector<ProgramCheck>(
          programs.size(),
          ProgramCheck{.fault = ProgramFault{CaseFault::kCrash,
                                             "killed by signal 11 (SIGSEGV)"}});
    }
    if (found_ && !programs.empty() &&
        what_ == AfterTheFinding::kDiskFullOnce && !failed_) {
      failed_ = true;
      return EnvironmentFailure(absl::InternalError(
          "cannot write kernel.ptx: No space left on device"));
    }
    auto checks = inner_->Check(programs, form, reading, deadline);
    if (checks.ok()) {
      for (const ProgramCheck& c : *checks) found_ |= c.mismatch.has_value();
    }
    return checks;
  }
  std::string Describe(const Program& p,
                       const ProgramMismatch& m) const override {
    return inner_->Describe(p, m);
  }
  std::string FindingClass(ProgramInputs form) const override {
    return inner_->FindingClass(form);
  }
  std::string FindingName(ProgramInputs form) const override {
    return inner_->FindingName(form);
  }
  std::string MismatchClass(const ProgramMismatch& m) const override {
    return inner_->MismatchClass(m);
  }
  std::string MismatchName(const ProgramMismatch& m) const override {
    return inner_->MismatchName(m);
  }
  std::string ReproModule(const Program& p,
                          ProgramInputs form) const override {
    return inner_->ReproModule(p, form);
  }
  std::string ReproInput(const Program& p) const override {
    return inner_->ReproInput(p);
  }
  std::string ReplayFlags() const override { return inner_->ReplayFlags(); }

 private:
  std::shared_ptr<ProgramBackend> inner_;
  const AfterTheFinding what_;
  bool found_ = false;
  bool failed_ = false;
};

class ProgramCampaignTest : public testing::Test {
 protected:
  void SetUp() override {
    auto found = FindPtxas({});
    if (!found.ok()) GTEST_SKIP() << "no ptxas: " << found.status();
    auto dir = TempDir::Create("program-campaign");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::move(*dir);
    ptxas_ = *found;
    // In process: what a test's fake backend wraps (SearchInProcess).
    ptxas_backend_ = MakePtxasProgramBackend(ptxas_, "sm_90");
    options_.threads = 1;
    options_.max_time = absl::Seconds(120);
    options_.triage_dir = dir_->File("triage");
  }
  // Runs the campaign on `programs`, each once, on the engine's workers of
  // backend_ (ptxas, or a tool).
  ProgramCampaignReport Run(std::vector<Program> programs) {
    Give(programs);
    auto workers = ProgramWorkersFor(backend_);
    EXPECT_TRUE(workers.ok()) << workers.status();
    if (!workers.ok()) return ProgramCampaignReport{};
    auto report = RunProgramsOnEngine(options_, backend_, *workers, nullptr);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : ProgramCampaignReport{};
  }
  // The same in this process, on a fake backend no worker runs.
  ProgramCampaignReport RunInProcess(std::vector<Program> programs,
                                     std::shared_ptr<ProgramBackend> backend) {
    Give(programs);
    auto report = SearchInProcess(options_, std::move(backend));
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : ProgramCampaignReport{};
  }
  // The programs the next run checks, each once.
  void Give(const std::vector<Program>& programs) {
    auto next = std::make_shared<size_t>(0);
    options_.next = [programs,
                     next](std::mt19937_64&) -> std::optional<Program> {
      if (*next == programs.size()) return std::nullopt;
      return programs[(*next)++];
    };
  }
  // The checked-in entry `entry` (triage/entries/) copied into the
  // campaign's triage directory, as the tuple campaign filed it.
  bool CopyCheckedInEntry(const std::string& entry) {
    return MakeDirs(options_.triage_dir).ok() &&
           std::system(absl::StrCat("cp -r '", PTXDIFF_SOURCE_DIR,
                                    "/triage/entries/", entry, "' '",
                                    options_.triage_dir, "/'")
                           .c_str()) == 0;
  }
  std::vector<EntryInfo> EntriesIn(const std::string& dir) {
    auto store = TriageStore::Open(dir, false);
    if (!store.ok()) return {};
    return store->List().value_or(std::vector<EntryInfo>{});
  }
  // The journals in the triage directory's .pending/.
  std::vector<std::string> PendingJournals() {
    std::vector<std::string> out;
    DIR* d = opendir((options_.triage_dir + "/.pending").c_str());
    if (d == nullptr) return out;
    while (const dirent* e = readdir(d)) {
      if (absl::EndsWith(e->d_name, ".journal")) out.push_back(e->d_name);
    }
    closedir(d);
    return out;
  }
  static Program Testdata(const std::string& name) {
    auto p = TestdataProgram(name);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : Program{};
  }
  std::unique_ptr<TempDir> dir_;
  std::string ptxas_;
  std::shared_ptr<ProgramBackend> ptxas_backend_;
  ProgramBackendOptions backend_;  // ptxas
  ProgramCampaignOptions options_;
};

// m025's claim is minimized and filed once: a case that replays it (a
// program of few steps, its witness where the oracle refutes the claim), a
// repro.ptx that ptxas miscompiles, and a line saying what it is. Found
// again, it is a known repeat of its cause (issue 64), counted in the same
// entry without being minimized again.
// The twenty-first fault run: `programs` on a full disk exited 0 where its
// findings were neither filed nor journaled, the deadline having come
// before a filing could fail. Either loss fails the run.
TEST(ProgramCampaignReportTest, AFindingTheJournalCouldNotKeepIsLost) {
  ProgramCampaignReport r;
  EXPECT_FALSE(r.LostFindings());
  r.pending = 8;
  EXPECT_FALSE(r.LostFindings()) << "kept for the next run";
  r.unjournaled = 8;
  EXPECT_TRUE(r.LostFindings());
  r.unjournaled = 0;
  r.triage_write_errors = 1;
  EXPECT_TRUE(r.LostFindings());
}

TEST_F(ProgramCampaignTest, FilesADisagreementMinimizedAndCountsItsRepeats) {
  const Program m025 = Testdata("fuzzx-m025.ptxprog");
  ProgramCampaignReport report = Run({m025, m025});
  EXPECT_EQ(report.programs, 2);
  EXPECT_EQ(report.disagreements, 2);
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_TRUE(report.filed[0].is_new);
  EXPECT_EQ(report.known_repeats, 1);
  EXPECT_EQ(report.repeats[report.filed[0].cause], 1);
  EXPECT_LE(report.filed[0].steps, 5);
  EXPECT_THAT(report.filed[0].what, testing::StartsWith("runtime claim, "));
  EXPECT_THAT(report.errors, testing::IsEmpty());

  auto store = TriageStore::Open(options_.triage_dir, false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  const EntryInfo& e = entries->front();
  EXPECT_TRUE(NamesAProgram(e.signature)) << e.name;
  EXPECT_EQ(e.signature.disagreement_class, "runtime-claim");
  EXPECT_EQ(e.count(), 2);
  EXPECT_THAT(e.damage, testing::IsEmpty());
  EXPECT_EQ(e.meta.at("what"), report.filed[0].what);

  const std::string entry = absl::StrCat(options_.triage_dir, "/", e.name);
  auto text = ReadFile(entry + "/case.txt");
  ASSERT_TRUE(text.ok());
  auto filed = ParseProgram(*text);
  ASSERT_TRUE(filed.ok()) << filed.status();
  auto check = CheckProgram(ptxas_, "sm_90", *filed, ProgramInputs::kRuntime,
                            Reading::kSpec);
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE(check->mismatch.has_value()) << *text;
  EXPECT_EQ(check->mismatch->inputs, WitnessInputs(*filed))
      << "the witness refutes the claim";
  EXPECT_EQ(ProgramSignatureName(ProgramSignature(*filed)),
            e.signature.spelling);

  auto repro = ReadFile(entry + "/repro.ptx");
  ASSERT_TRUE(repro.ok());
  auto assembled = RunPtxas(ptxas_, "sm_90", *repro);
  ASSERT_TRUE(assembled.ok());
  EXPECT_TRUE(assembled->ok) << LogSummary(assembled->log);
}

// Two programs whose executed code departs at one instruction (a clamp
// after `neg`, after `abs`) are two entries of one root cause: the report
// and meta.txt name where the code departs, and GroupByRootCause joins them.
TEST_F(ProgramCampaignTest, ExecutedEntriesAreGroupedWhereTheirCodeDeparts) {
  // Each in a run of its own: in one, the second is a known repeat of the
  // first's cause (below).
  const std::string sel =
      "executed code that departs first at `SEL R, R, 0xffff, !P`";
  for (const char* name :
       {"found-neg-cvt-sat-u16.ptxprog", "found-abs-cvt-sat-u16.ptxprog"}) {
    options_.triage_dir = dir_->File(name);
    ProgramCampaignReport report = Run({Testdata(name)});
    ASSERT_EQ(report.filed.size(), 1u) << name;
    EXPECT_EQ(report.filed[0].cause, sel) << report.filed[0].what;
  }
  const std::string both = dir_->File("both");
  ASSERT_EQ(std::system(absl::StrCat("mkdir -p '", both, "' && cp -r '",
                                     dir_->File("found-neg-cvt-sat-u16.ptxprog"),
                                     "'/value-* '",
                                     dir_->File("found-abs-cvt-sat-u16.ptxprog"),
                                     "'/value-* '", both, "'")
                            .c_str()),
            0);
  const std::vector<EntryInfo> entries = EntriesIn(both);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].meta.at("cause"), sel);
  for (const char* file : {"/case.txt", "/repro.ptx"}) {
    auto text = ReadFile(
        absl::StrCat(options_.triage_dir, "/", entries[0].name, file));
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_THAT(*text, testing::HasSubstr("the code departs first at +0x"))
        << file;
  }
  const std::vector<RootCause> causes = GroupByRootCause(entries);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].entries.size(), 2u);
}

// In one run the second departs where the first's filed cause does: a
// known repeat, counted in the first's entry, not minimized.
TEST_F(ProgramCampaignTest, AProgramDepartingAtAFiledCauseIsAKnownRepeat) {
  ProgramCampaignReport report =
      Run({Testdata("found-neg-cvt-sat-u16.ptxprog"),
           Testdata("found-abs-cvt-sat-u16.ptxprog")});
  EXPECT_EQ(report.disagreements, 2);
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_EQ(report.known_repeats, 1);
  const std::vector<EntryInfo> entries = EntriesIn(options_.triage_dir);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].count(), 2);
}

// Programs ptxas gets right file nothing, and are counted.
TEST_F(ProgramCampaignTest, AgreeingProgramsFileNothing) {
  const Program p =
      ProgramOf("input %a .b32 3\nadd.u32 %r, %a, 1;\noutput %r\n");
  ProgramCampaignReport report = Run({p, p, p});
  EXPECT_EQ(report.programs, 3);
  EXPECT_EQ(report.folded, 3);
  EXPECT_EQ(report.claimed, 3);
  EXPECT_EQ(report.executed, 3) << "the runtime form runs ptxas's code";
  EXPECT_EQ(report.disagreements, 0);
  EXPECT_THAT(report.filed, testing::IsEmpty());
}

// A report's timeline (`ptxdiff programs --out`) is fed while the run goes
// on: counts that only grow, and none past the run's own.
TEST_F(ProgramCampaignTest, TheCountsSoFarAreGivenWhileTheRunGoesOn) {
  const Program p =
      ProgramOf("input %a .b32 3\nadd.u32 %r, %a, 1;\noutput %r\n");
  std::vector<int64_t> seen;
  options_.tick = absl::Milliseconds(10);
  options_.on_tick = [&](const ProgramCampaignReport& so_far,
                         absl::Duration elapsed) {
    EXPECT_GT(elapsed, absl::ZeroDuration());
    seen.push_back(so_far.programs);
  };
  ProgramCampaignReport report = Run(std::vector<Program>(4, p));
  EXPECT_EQ(report.programs, 4);
  ASSERT_THAT(seen, testing::Not(testing::IsEmpty()))
      << "no tick in a run of four ptxas runs";
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_LE(seen.back(), 4);
}

// A cause that minimizes to one instruction (m016's slct fold) is filed,
// and its variant is no longer generated.
TEST_F(ProgramCampaignTest, ASingleInstructionCauseIsSuppressed) {
  ProgramCampaignReport report = Run({Testdata("fuzzx-m016.ptxprog")});
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_EQ(report.filed[0].steps, 1);
  EXPECT_EQ(report.filed[0].cause, "slct.s32.s32")
      << "one instruction is its variant's tuple cause";
  EXPECT_THAT(report.suppressed, testing::Contains("slct.s32.s32"));
  // Filed as its tuple (issue 63: one case type), under the name the tuple
  // campaign files it under (the checked-in entry), its case a tuple's.
  const std::vector<EntryInfo> entries = EntriesIn(options_.triage_dir);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, "value-mismatch~ptxas~in-range~slct.s32.s32");
  auto text = ReadFile(
      absl::StrCat(options_.triage_dir, "/", entries[0].name, "/case.txt"));
  ASSERT_TRUE(text.ok());
  auto tuple = ParseTextCase(*text);
  ASSERT_TRUE(tuple.ok()) << *text;
  EXPECT_THAT(*text, testing::HasSubstr("backend-result: "));
  EXPECT_THAT(entries[0].meta.at("found_as"),
              testing::HasSubstr("slct.s32.s32"))
      << "what the program was found as";
}


// Issue 42, item 12: a cause the triage directory holds as one
// instruction (the tuple campaign's slct.s32.s32 entry) was filed again as a
// program entry, one root cause counted twice. Its variant is not generated,
// and a program that shows it is a known repeat, counted in its entry.
TEST_F(ProgramCampaignTest, ACauseFiledAsOneInstructionIsNotFiledAgain) {
  ASSERT_TRUE(CopyCheckedInEntry(
      "value-mismatch~ptxas~in-range~slct.s32.s32"));
  const int64_t before = EntriesIn(options_.triage_dir)[0].count();
  ProgramCampaignReport report = Run({Testdata("fuzzx-m016.ptxprog")});
  EXPECT_EQ(report.programs, 1);
  EXPECT_EQ(report.known_repeats, 1);
  EXPECT_THAT(report.filed, testing::IsEmpty());
  EXPECT_THAT(report.suppressed, testing::Contains("slct.s32.s32"));
  const std::vector<EntryInfo> entries = EntriesIn(options_.triage_dir);
  ASSERT_THAT(entries, testing::SizeIs(1));
  EXPECT_EQ(entries[0].count(), before + 1);
}

// Issue 64: bfe.s32 with a field past the top, which ptxas 13.0 takes to be
// all ones, through three shapes a campaign filed as three causes (an exit,
// a guarded sub after a compare, a bare label). The first is minimized and
// filed under its culprit's key, the variant; the others are recognized by
// that key and counted in its entry, not minimized again.
TEST_F(ProgramCampaignTest, OneCauseThroughSeveralShapesIsFiledOnceAndCounted) {
  ProgramCampaignReport report =
      Run({ProgramOf("input %in0 .b32 0x0\n"
                     "setp.lt.u32 %p0, 0x0, 0x1;\n"
                     "@!%p0 exit;\n"
                     "bfe.s32 %r6, %in0, 0xff, 0x1;\n"
                     "output %r6\n"),
           ProgramOf("mov.b32 %r1, 0x0;\n"
                     "setp.lt.u32 %p3, 0x0, 0x1;\n"
                     "@!%p3 sub.u32 %r1, 0x0, 0x1;\n"
                     "bfe.s32 %r7, %r1, 0x3e, 0x1;\n"
                     "output %r7\n"),
           Testdata("found-label-bfe-s32-past-top.ptxprog")});
  EXPECT_EQ(report.disagreements, 3);
  ASSERT_EQ(report.filed.size(), 1u)
      << (report.filed.empty() ? "none" : report.filed.back().what);
  EXPECT_EQ(report.filed[0].cause, "bfe.s32") << report.filed[0].what;
  EXPECT_EQ(report.known_repeats, 2);
  EXPECT_EQ(report.repeats["bfe.s32"], 2);
  const std::vector<EntryInfo> entries = EntriesIn(options_.triage_dir);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].count(), 3);
  EXPECT_EQ(entries[0].meta.at("cause"), "bfe.s32");
  EXPECT_THAT(entries[0].meta.at("assumed"),
              testing::HasSubstr("if `bfe.s32` of "));
}

// The low bits of a square read through a shl after it (ptxas 13.0 claims
// 0x40000000 where the square is 0): the shl carries ptxas's constant, and
// run alone on ptxas it gives the oracle's value, so the cause is the
// square's, filed first from m025 (issue 64): one root cause, counted.
TEST_F(ProgramCampaignTest, ASquareReadThroughAShlIsTheSquaresCause) {
  ProgramCampaignReport report =
      Run({Testdata("fuzzx-m025.ptxprog"),
           ProgramOf("input %a .b32 0x0\n"
                     "or.b32 %r1, 0x1f, %a;\n"
                     "shl.b32 %r2, %r1, 21;\n"
                     "mul.lo.u32 %r3, %r2, %r2;\n"
                     "shl.b32 %r4, %r3, 20;\n"
                     "output %r4\n")});
  EXPECT_EQ(report.disagreements, 2);
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_EQ(report.filed[0].cause, "mul.lo.u32") << report.filed[0].what;
  EXPECT_EQ(report.known_repeats, 1);
  EXPECT_EQ(report.repeats["mul.lo.u32"], 1);
}

// A program whose constant slct explains, where the triage directory holds
// the tuple campaign's slct.s32.s32 entry, is counted in that entry: no
// program cause duplicates a tuple cause.
TEST_F(ProgramCampaignTest, ACulpritTheDirectoryHoldsIsCountedInItsEntry) {
  ASSERT_TRUE(CopyCheckedInEntry(
      "value-mismatch~ptxas~in-range~slct.s32.s32"));
  const int64_t before = EntriesIn(options_.triage_dir)[0].count();
  ProgramCampaignReport report =
      Run({ProgramOf("mov.b32 %r1, 0x7fffffff;\n"
                     "slct.s32.s32 %r1, 0x0, 0x1, %r1;\n"
                     "output %r1\n")});
  EXPECT_EQ(report.disagreements, 1);
  EXPECT_EQ(report.known_repeats, 1);
  EXPECT_THAT(report.filed, testing::IsEmpty());
  const std::vector<EntryInfo> entries = EntriesIn(options_.triage_dir);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].count(), before + 1);
  EXPECT_THAT(entries[0].meta.at("found_as"),
              testing::HasSubstr("mov then slct.s32.s32"));
}

// The run ends at its time limit, minimizing included (issue 42, item 5:
// what was still being minimized then was filed as found, a new root cause
// that was not one). It stays in the pending journal, and the next run on
// the directory files it minimized.
// In process: no worker runs TroubleDuringMinimizing, and the next run
// adopts only what was found on its own backend's identity.
TEST_F(ProgramCampaignTest, MaxTimeBoundsMinimizingAndTheNextRunFinishesIt) {
  options_.max_time = absl::Seconds(8);  // room for the first check
  ProgramCampaignReport report =
      RunInProcess({Testdata("fuzzx-m037.ptxprog")},
                   std::make_shared<TroubleDuringMinimizing>(
                       ptxas_backend_, AfterTheFinding::kWaitForTheDeadline));
  EXPECT_EQ(report.programs, 1);
  EXPECT_EQ(report.disagreements, 1);
  EXPECT_THAT(report.filed, testing::IsEmpty());
  EXPECT_EQ(report.pending, 1);
  EXPECT_LT(report.seconds, 30);
  EXPECT_THAT(EntriesIn(options_.triage_dir), testing::IsEmpty());

  options_.max_time = absl::Seconds(120);
  report = RunInProcess({}, ptxas_backend_);
  EXPECT_EQ(report.adopted, 1);
  EXPECT_EQ(report.pending, 0);
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_LE(report.filed[0].steps, 5);
  EXPECT_THAT(PendingJournals(), testing::IsEmpty());
}

// The sixteenth fault run: a TMPDIR that filled while a finding was
// minimized, and had room again for its last check, had it filed whole,
// unminimized (a new root cause that is not one). The run stops for the
// environment; the finding stays in the journal for the next run.
TEST_F(ProgramCampaignTest, AFullDiskWhileMinimizingFilesNothingHalfDone) {
  ProgramCampaignReport report =
      RunInProcess({Testdata("fuzzx-m037.ptxprog")},
                   std::make_shared<TroubleDuringMinimizing>(
                       ptxas_backend_, AfterTheFinding::kDiskFullOnce));
  EXPECT_EQ(report.disagreements, 1);
  EXPECT_THAT(report.filed, testing::IsEmpty());
  EXPECT_THAT(report.environment_failure,
              testing::HasSubstr("No space left on device"));
  EXPECT_EQ(report.pending, 1);
  EXPECT_THAT(EntriesIn(options_.triage_dir), testing::IsEmpty());
}

// A finding whose last check says nothing of it stays in the journal for
// the next run, said, where it was dropped as "did not show again": the
// seventeenth fault run's tool failing every module for a while (a licence
// server down: the check not judged), and the eighteenth's tool crashing on
// everything (the check a fault). Only a last check that agrees says it is
// gone.
TEST_F(ProgramCampaignTest, AFindingTheToolCannotCheckAgainIsKept) {
  const std::pair<AfterTheFinding, const char*> cases[] = {
      {AfterTheFinding::kToolDown,
       "could not be checked again (exit status 1; its output ends: error: "
       "cannot check out a license): kept"},
      {AfterTheFinding::kToolCrashes,
       "could not be checked again (it crashed: killed by signal 11 "
       "(SIGSEGV)): kept"},
  };
  for (const auto& [after, said] : cases) {
    options_.triage_dir = dir_->File(absl::StrCat("triage-", int(after)));
    ProgramCampaignReport report = RunInProcess(
        {Testdata("fuzzx-m037.ptxprog")},
        std::make_shared<TroubleDuringMinimizing>(ptxas_backend_, after));
    EXPECT_EQ(report.disagreements, 1) << said;
    EXPECT_THAT(report.filed, testing::IsEmpty()) << said;
    EXPECT_EQ(report.pending, 1) << said;
    EXPECT_EQ(report.unchecked, 1) << said;
    EXPECT_THAT(report.errors, testing::Contains(testing::HasSubstr(said)));
    EXPECT_THAT(report.errors, testing::Not(testing::Contains(
                                   testing::HasSubstr("did not show again"))));
  }
}

// Issue 42, item 1: a finding whose filing failed (a full disk; here a
// regular file where its entry's directory goes) was lost. It is kept in
// the journal, the run stops there (it would only find it again), and the
// next run files it once it can.
TEST_F(ProgramCampaignTest, AFilingThatFailsKeepsTheFindingForTheNextRun) {
  const Program m016 = Testdata("fuzzx-m016.ptxprog");
  const std::string triage = options_.triage_dir;
  options_.triage_dir = dir_->File("scratch");
  ASSERT_EQ(Run({m016}).filed.size(), 1u);
  const std::vector<EntryInfo> scratch = EntriesIn(options_.triage_dir);
  ASSERT_EQ(scratch.size(), 1u);
  options_.triage_dir = triage;
  ASSERT_TRUE(MakeDirs(triage).ok());
  const std::string blocked = absl::StrCat(triage, "/", scratch[0].name);
  ASSERT_TRUE(WriteFile(blocked, "in the way\n").ok());

  ProgramCampaignReport report = Run({m016, m016, m016});
  EXPECT_EQ(report.disagreements, 3);
  EXPECT_THAT(report.filed, testing::IsEmpty());
  ASSERT_FALSE(report.errors.empty());
  EXPECT_THAT(report.errors[0], testing::StartsWith("could not file "));
  EXPECT_EQ(report.pending, 3);
  EXPECT_EQ(report.unjournaled, 0);
  EXPECT_THAT(PendingJournals(), testing::SizeIs(1));

  ASSERT_EQ(unlink(blocked.c_str()), 0);  // room again
  report = Run({});
  EXPECT_EQ(report.adopted, 3);
  EXPECT_EQ(report.pending, 0);
  EXPECT_THAT(report.errors, testing::IsEmpty());
  const std::vector<EntryInfo> entries = EntriesIn(triage);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, scratch[0].name);
  // One instruction (slct): filed once, the others then counted as known,
  // as in a run that found them itself.
  EXPECT_EQ(entries[0].count(), 1);
  EXPECT_EQ(report.known, 2);
  EXPECT_THAT(PendingJournals(), testing::IsEmpty());
}

// A directory short of space may take an entry and not its INDEX.md (here
// a directory in INDEX.md's place makes its rename fail, for root too).
// The entry is filed, but the run must say the directory could not be
// written: it ended with exit 0 and nothing on the terminal.
TEST_F(ProgramCampaignTest, AnIndexThatCannotBeRewrittenIsAWriteError) {
  ASSERT_TRUE(MakeDirs(options_.triage_dir + "/INDEX.md/in-the-way").ok());
  ProgramCampaignReport report = Run({Testdata("fuzzx-m016.ptxprog")});
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_EQ(report.triage_write_errors, 1);
  ASSERT_EQ(report.errors.size(), 1u);
  EXPECT_THAT(report.errors[0],
              testing::HasSubstr("but INDEX.md was not rewritten"));
  EXPECT_THAT(PendingJournals(), testing::IsEmpty());
}

// Issue 42, item 1: a process killed while it minimizes (SIGKILL, here of a
// forked copy of this one, by its pid) leaves its finding in the journal,
// and the next run files it. In process, as the test above.
TEST_F(ProgramCampaignTest, AKillDuringMinimizingLosesNothing) {
  const pid_t child = fork();
  if (child == 0) {
    // Its minimizing waits for the run's deadline: it is still minimizing
    // when it is killed, on any machine.
    RunInProcess({Testdata("fuzzx-m037.ptxprog")},
                 std::make_shared<TroubleDuringMinimizing>(
                     ptxas_backend_, AfterTheFinding::kWaitForTheDeadline));
    _exit(0);
  }
  // Killed once its finding is journaled, not after a guessed time.
  const std::string journal = absl::StrCat(options_.triage_dir, "/.pending/",
                                           child, ".programs.journal");
  bool journaled = false;
  for (const absl::Time give_up = absl::Now() + absl::Seconds(60);
       !journaled && absl::Now() < give_up;
       absl::SleepFor(absl::Milliseconds(10))) {
    journaled = absl::StrContains(ReadFile(journal).value_or(""), "M 0 ");
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(journaled) << "nothing journaled in 60 s";
  ASSERT_TRUE(WIFSIGNALED(status)) << "it ended before it was killed";
  EXPECT_THAT(EntriesIn(options_.triage_dir), testing::IsEmpty());

  ProgramCampaignReport report = RunInProcess({}, ptxas_backend_);
  EXPECT_EQ(report.adopted, 1);
  ASSERT_EQ(report.filed.size(), 1u);
  EXPECT_LE(report.filed[0].steps, 5);
  EXPECT_THAT(PendingJournals(), testing::IsEmpty());
}

// A stand-in tool that hangs on every module (its sleep is killed with it).
// A tool that hangs, noting each run as a line of `dir`'s runs.txt.
std::string HangingTool(const TempDir& dir) {
  const std::string tool = dir.File("hang.sh");
  EXPECT_TRUE(WriteFile(tool, absl::StrCat("#!/bin/sh\necho run >> ",
                                           dir.File("runs.txt"),
                                           "\nexec sleep 600\n"))
                  .ok());
  chmod(tool.c_str(), 0755);
  return tool + " {ptx} {in} {out}";
}

// Issue 42, item 8: a tool that hangs on every module gave "0 programs
// checked" and filed nothing, where `fuzz` files an unisolated hang. The
// module's hang is filed when the run's end cuts its halving, with the
// module and its input to rerun the tool on.
TEST_F(ProgramCampaignTest, AModuleThatHangsUnisolatedIsFiledAsTheModules) {
  backend_ = {.backend = absl::StrCat("ptx-cmd:", HangingTool(*dir_)),
              .timeout = absl::Seconds(1)};
  options_.max_time = absl::Milliseconds(2500);
  const Program p = ProgramOf("mov.b32 %r, 1;\noutput %r\n");
  const absl::Time start = absl::Now();
  ProgramCampaignReport report = Run(std::vector<Program>(8, p));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(report.programs, 0);
  EXPECT_EQ(report.hangs, 1);
  ASSERT_EQ(report.filed.size(), 1u) << testing::PrintToString(report.errors);
  EXPECT_THAT(report.filed[0].entry,
              testing::StartsWith("hang~ptx-cmd~unisolated-hang~program-"));
  EXPECT_THAT(report.filed[0].what,
              testing::HasSubstr("unisolated hang of a module of 8 programs"));
  const std::string entry =
      absl::StrCat(options_.triage_dir, "/", report.filed[0].entry);
  EXPECT_TRUE(ParseProgram(*ReadFile(entry + "/case.txt")).ok());
  // `repro` of the entry runs its first program on the tool it hung.
  EXPECT_THAT(*ReadFile(entry + "/case.txt"),
              testing::HasSubstr("# Replay: ptxdiff program case.txt "
                                 "--backend 'ptx-cmd:"));
  EXPECT_EQ(ReadFile(entry + "/input.bin")->size(),
            ProgramInputBuffer(std::vector<Program>(8, p)).size());
  EXPECT_THAT(EntriesIn(options_.triage_dir), testing::SizeIs(1));
}

// Issue 42, items 4 and 5: a hang seen of a program alone was run again to
// confirm it (the tool's timeout once more, past --max-time) or, at the
// run's end, not filed. It is filed as seen.
TEST_F(ProgramCampaignTest, AHangSeenAloneIsFiledWithoutAnotherRun) {
  backend_ = {.backend = absl::StrCat("ptx-cmd:", HangingTool(*dir_)),
              .timeout = absl::Seconds(1)};
  options_.max_time = absl::Seconds(6);
  const Program p = ProgramOf("mov.b32 %r, 1;\noutput %r\n");
  ProgramCampaignReport report = Run({p, p});
  // Three runs (the module, then each alone), not five.
  const absl::StatusOr<std::string> runs = ReadFile(dir_->File("runs.txt"));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(std::count(runs->begin(), runs->end(), '\n'), 3) << *runs;
  EXPECT_EQ(report.hangs, 2);
  ASSERT_EQ(report.filed.size(), 2u) << testing::PrintToString(report.errors);
  EXPECT_THAT(report.filed[0].entry,
              testing::StartsWith("hang~ptx-cmd~immediate-inputs~program-"));
  EXPECT_EQ(report.filed[0].entry, report.filed[1].entry);
  EXPECT_EQ(report.pending, 0);
}

// A backend that agrees with every program, keeping those it was given
// with runtime inputs, and says whether it judges thread and loaded inputs.
class AgreeingBackend : public ProgramBackend {
 public:
  explicit AgreeingBackend(bool judges_thread_inputs)
      : judges_thread_inputs_(judges_thread_inputs) {}
  std::string Name() const override { return "agreeing"; }
  std::string Identity() const override { return "agreeing"; }
  absl::StatusOr<std::vector<ProgramCheck>> Check(
      std::span<const Program> programs, ProgramInputs form, Reading,
      absl::Time) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (form == ProgramInputs::kRuntime) {
      checked_.insert(checked_.end(), programs.begin(), programs.end());
    }
    return std::vector<ProgramCheck>(programs.size(), {.judged = true});
  }
  std::string Describe(const Program&, const ProgramMismatch&) const override {
    return "";
  }
  std::string FindingClass(ProgramInputs) const override { return "agree"; }
  std::string FindingName(ProgramInputs) const override { return "agree"; }
  std::string ReproModule(const Program&, ProgramInputs) const override {
    return "";
  }
  std::string ReplayFlags() const override { return ""; }
  bool JudgesThreadInputs() const override { return judges_thread_inputs_; }
  bool JudgesLoadedInputs() const override { return judges_thread_inputs_; }

  std::vector<Program> checked() {
    std::lock_guard<std::mutex> lock(mu_);
    return checked_;
  }

 private:
  const bool judges_thread_inputs_;
  std::mutex mu_;
  std::vector<Program> checked_;
};

// The campaign generates programs with thread inputs (and inputs loaded
// from memory) for a backend that judges them (one in 8 or so each), and
// none for one that would only say "not judged". In process: no worker runs
// a backend that keeps what it was given.
TEST(ProgramCampaignShapeTest, ThreadInputsOnlyForABackendThatJudgesThem) {
  auto dir = TempDir::Create("program-campaign-shape");
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (const bool judges : {true, false}) {
    SCOPED_TRACE(judges ? "judges thread inputs" : "does not");
    auto backend = std::make_shared<AgreeingBackend>(judges);
    ProgramCampaignOptions options{
        // Long enough for 300 programs on a loaded machine under ASan.
        .max_time = absl::Seconds(3),
        .threads = 1,
        .triage_dir = (*dir)->File(judges ? "judges" : "not"),
    };
    auto report = SearchInProcess(options, backend);
    ASSERT_TRUE(report.ok()) << report.status();
    const std::vector<Program> checked = backend->checked();
    ASSERT_GT(checked.size(), 300u);
    size_t with_threads = 0, with_loads = 0;
    for (const Program& p : checked) {
      with_threads += HasThreadInputs(p);
      with_loads += HasLoadedInputs(p);
    }
    EXPECT_EQ(report->with_thread_inputs, static_cast<int64_t>(with_threads));
    EXPECT_EQ(report->with_loaded_inputs, static_cast<int64_t>(with_loads));
    if (judges) {
      EXPECT_GT(with_threads, checked.size() / 16) << checked.size();
      EXPECT_LT(with_threads, checked.size() / 5) << checked.size();
      EXPECT_GT(with_loads, checked.size() / 16) << checked.size();
      EXPECT_LT(with_loads, checked.size() / 5) << checked.size();
    } else {
      EXPECT_EQ(with_threads, 0u);
      EXPECT_EQ(with_loads, 0u);
    }
  }
}

// A pending finding is written whole and read back; a torn or foreign
// record is not read.
TEST(ProgramJournalRecordTest, ReadsBackWhatItWrote) {
  const Program p = ProgramOf(
      "input %a .b32 0x80000000\nloop 2 {\n  abs.s32 %r, %a;\n}\n"
      "output %r\n");
  const std::string record =
      ProgramJournalRecord("ptx-cmd sm_90: tool {ptx}", p,
                           ProgramInputs::kRuntime, CaseFault::kCrash);
  EXPECT_EQ(record.find('\n'), std::string::npos);
  const std::optional<PendingProgram> back = ParseProgramJournalRecord(record);
  ASSERT_TRUE(back.has_value()) << record;
  EXPECT_EQ(back->identity, "ptx-cmd sm_90: tool {ptx}");
  EXPECT_EQ(FormatProgram(back->program), FormatProgram(p));
  EXPECT_EQ(back->form, ProgramInputs::kRuntime);
  EXPECT_EQ(back->fault, CaseFault::kCrash);
  EXPECT_FALSE(ParseProgramJournalRecord(record.substr(0, record.size() - 3)));
  EXPECT_FALSE(ParseProgramJournalRecord("6162 runtime mismatch"));
  EXPECT_FALSE(ParseProgramJournalRecord("6162 sideways mismatch 6162"));
}

}  // namespace
}  // namespace ptxdiff

#ifdef PTXDIFF_INTERPRETER_PATH
namespace ptxdiff {
namespace {

// On a tool that runs PTX (the ptx-cmd tests' interpreter with a planted
// wrong xor and a crash in clz), a campaign files the wrong value and the
// crash, each minimized to the one step that has it, with the module and
// its input buffer to rerun the tool on.
TEST_F(ProgramCampaignTest, OnAToolWrongValuesAndCrashesAreFiledMinimized) {
  const std::string command =
      absl::StrCat(PTXDIFF_INTERPRETER_PATH,
                   " --flip-on=xor.b32 --crash-on=clz.b32 {ptx} {in} {out}");
  backend_ = {.backend = absl::StrCat("ptx-cmd:", command)};
  ProgramCampaignReport report = Run({
      ProgramOf("input %a .b32 6\nadd.u32 %r0, %a, 3;\nxor.b32 %r1, %r0, "
                "%a;\nshl.b32 %r2, %r1, 1;\n"
                "output %r2\n"),
      ProgramOf("input %a .b32 6\nadd.u32 %r0, %a, 3;\nmul.lo.u32 %r1, %r0, "
                "%r0;\noutput %r1\n"),
      ProgramOf("input %a .b32 0x100\nnot.b32 %r0, %a;\nclz.b32 %r1, "
                "%r0;\nadd.u32 %r2, %r1, 1;\n"
                "output %r2\n"),
  });
  EXPECT_EQ(report.programs, 3);
  ASSERT_EQ(report.filed.size(), 2u)
      << testing::PrintToString(report.errors) << " disagreements "
      << report.disagreements << " known " << report.known << " first "
      << (report.filed.empty() ? "" : report.filed[0].what);
  auto store = TriageStore::Open(options_.triage_dir, false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  for (const EntryInfo& e : *entries) {
    EXPECT_EQ(e.signature.backend, "ptx-cmd");
    EXPECT_THAT(e.damage, testing::IsEmpty());
    const std::string dir = absl::StrCat(options_.triage_dir, "/", e.name);
    auto text = ReadFile(dir + "/case.txt");
    ASSERT_TRUE(text.ok());
    if (e.signature.kind == FindingKind::kValueMismatch) {
      // One instruction: filed as its tuple (issue 63), as the tuple
      // campaign on the tool files it.
      EXPECT_FALSE(NamesAProgram(e.signature)) << e.name;
      EXPECT_EQ(e.signature.spelling, "xor.b32");
      EXPECT_TRUE(ParseTextCase(*text).ok()) << *text;
      continue;
    }
    auto filed = ParseProgram(*text);
    ASSERT_TRUE(filed.ok()) << filed.status();
    EXPECT_EQ(CountSteps(*filed), 1) << *text;
    EXPECT_TRUE(ReadFile(dir + "/input.bin").ok()) << e.name;
    EXPECT_THAT(*ReadFile(dir + "/repro.ptx"),
                testing::HasSubstr(".entry ptxdiff_register"));
    EXPECT_EQ(e.signature.kind, FindingKind::kCrash);
    EXPECT_THAT(*text, testing::HasSubstr("clz.b32"));
    EXPECT_THAT(e.meta.at("what"), testing::HasSubstr("SIGSEGV"));
  }
}

// A program that hangs a tool is filed as the one instruction that hangs
// alone, found in a few runs (issue 41, item 5: hangs were filed
// unminimized, and all of a tool's as one cause), and that variant is no
// longer generated.
TEST_F(ProgramCampaignTest, AHangIsFiledAsTheInstructionThatHangsAlone) {
  backend_ = {.backend = absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH,
                                      " --hang-on=clz.b32 {ptx} {in} {out}"),
              .timeout = absl::Seconds(2)};
  ProgramCampaignReport report = Run(
      {ProgramOf("input %a .b32 0x100\nnot.b32 %r0, %a;\nclz.b32 %r1, %r0;\n"
                 "add.u32 %r2, %r1, 1;\noutput %r2\n")});
  EXPECT_GE(report.hangs, 1);
  ASSERT_THAT(report.filed, testing::Not(testing::IsEmpty()))
      << testing::PrintToString(report.errors);
  for (const FiledProgram& f : report.filed) {
    EXPECT_THAT(f.entry, testing::StartsWith("hang~ptx-cmd~"));
    EXPECT_EQ(f.steps, 1) << f.what;
    // One cause with the tuple campaign's hangs of the family.
    EXPECT_EQ(f.cause, "hang in clz") << f.what;
    const absl::StatusOr<std::string> text =
        ReadFile(absl::StrCat(options_.triage_dir, "/", f.entry, "/case.txt"));
    ASSERT_TRUE(text.ok());
    // At the operand it had in the program: not.b32 of 0x100.
    EXPECT_THAT(*text, testing::HasSubstr("clz.b32 %d, %in0;"));
    EXPECT_THAT(*text, testing::HasSubstr("0xfffffeff"));
  }
  EXPECT_THAT(report.suppressed, testing::Contains("clz.b32"));
  EXPECT_EQ(report.pending, 0);
}

}  // namespace
}  // namespace ptxdiff
#endif  // PTXDIFF_INTERPRETER_PATH
