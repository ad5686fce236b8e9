#include "program/program_lane.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "campaign/campaign.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling_table.h"
#include "program/program_outcomes.h"
#include "program/testing/programs.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

// The ptx-cmd tests' interpreter as the tool, wrong on xor.b32.
constexpr char kWrongXor[] = " --flip-on=xor.b32 {ptx} {in} {out}";

class ProgramLaneTest : public testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("program-lane");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::move(*dir);
  }

  // A campaign on the worker of `backend` (ptx-cmd: the interpreter), no
  // tuples of its own (no systematic source, nothing offered), whose
  // program lane checks `programs` once each at `share` of the time.
  absl::StatusOr<std::unique_ptr<Campaign>> Start(
      const std::string& backend, std::vector<Program> programs,
      double share) {
    auto command = CommandForBackend(backend, PTXDIFF_WORKER_PATH);
    if (!command.ok()) return command.status();
    CampaignOptions o;
    o.worker = *command;
    o.triage_dir = dir_->File("triage");
    o.systematic = false;
    o.batch_size = 64;
    o.lane_share = share;
    programs_ = std::move(programs);
    o.lane = [this, backend](const WorkerIdentity& identity) {
      ProgramCampaignOptions options;
      options.triage_dir = dir_->File("triage");
      options.next = [this](std::mt19937_64&) -> std::optional<Program> {
        if (next_ == programs_.size()) return std::nullopt;
        return programs_[next_++];
      };
      return MakeProgramLane(identity, {.backend = backend}, options,
                             absl::InfiniteFuture(), nullptr);
    };
    return Campaign::Start(std::move(o));
  }

  std::unique_ptr<TempDir> dir_;
  std::vector<Program> programs_;
  size_t next_ = 0;  // under the search's lock on `next`
};

// Waits (at most two minutes) until the lane has filed `n` entries.
bool WaitUntilFiled(const Campaign& c, int64_t n) {
  const absl::Time give_up = absl::Now() + absl::Minutes(2);
  while (c.Snapshot().lane.filed < n) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

// The campaign's senders check the programs on their own workers (the
// engine's: no pool of the lane's), and its filer minimizes the wrong xor
// on its worker and files it, down to one step: as the tuple it is.
TEST_F(ProgramLaneTest, TheEnginesWorkersCheckProgramsAndItsFilerFilesThem) {
  const std::string backend =
      absl::StrCat("ptx-cmd:", PTXDIFF_INTERPRETER_PATH, kWrongXor);
  auto c = Start(backend,
                 {ProgramOf("input %a .b32 6\nadd.u32 %r0, %a, 3;\n"
                            "xor.b32 %r1, %r0, %a;\nshl.b32 %r2, %r1, 1;\n"
                            "output %r2\n"),
                  ProgramOf("input %a .b32 6\nadd.u32 %r0, %a, 3;\n"
                            "mul.lo.u32 %r1, %r0, %r0;\noutput %r1\n")},
                 /*share=*/0.5);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(WaitUntilFiled(**c, 1));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.lane_not_started, "");
  EXPECT_EQ(s.lane.checked, 2);
  EXPECT_GT(s.lane.judged_immediate + s.lane.judged_runtime, 0);
  EXPECT_EQ(s.lane.disagreements, 1);
  EXPECT_EQ(s.lane.filed, 1);
  EXPECT_EQ(s.lane.filed_new, 1);
  EXPECT_EQ(s.lane.pending, 0);
  auto store = TriageStore::Open(dir_->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].signature.backend, "ptx-cmd");
  EXPECT_EQ((*entries)[0].signature.spelling, "xor.b32");
  // The engine's outcome table counts the programs that held each variant,
  // by form (the one that disagreed with immediate inputs is not run
  // again with runtime inputs); the minimizer's candidates are not counted.
  const OutcomeTable table = (*c)->OutcomesSnapshot();
  auto n = [&](const char* spelling, OutcomeForm form, Outcome o) {
    return table.count(VariantIndex(*VariantSpelled(spelling)), form, o);
  };
  EXPECT_EQ(n("add.u32", OutcomeForm::kProgramImmediate, Outcome::kMismatch),
            1);
  EXPECT_EQ(n("add.u32", OutcomeForm::kProgramImmediate, Outcome::kAgree), 1);
  EXPECT_EQ(n("add.u32", OutcomeForm::kProgramRuntime, Outcome::kAgree), 1);
  EXPECT_EQ(n("xor.b32", OutcomeForm::kProgramImmediate, Outcome::kMismatch),
            1);
  EXPECT_EQ(n("xor.b32", OutcomeForm::kProgramRuntime, Outcome::kMismatch) +
                n("xor.b32", OutcomeForm::kProgramRuntime, Outcome::kAgree),
            0);
  EXPECT_EQ(n("mul.lo.u32", OutcomeForm::kProgramRuntime, Outcome::kAgree), 1);
  // No tuple was sent: the tuple forms are untouched.
  EXPECT_EQ(n("add.u32", OutcomeForm::kImmediate, Outcome::kAgree), 0);
}

// A program counts once for each variant it holds, however many of its
// steps have it, by how its check ended.
TEST(ProgramOutcomesTest, AProgramCountsOnceAVariantByHowItsCheckEnded) {
  const Program p = ProgramOf(
      "input %a .b32 6\nadd.u32 %r0, %a, 3;\nadd.u32 %r1, %r0, %r0;\n"
      "xor.b32 %r2, %r1, %a;\noutput %r2\n");
  ProgramOutcomes outcomes;
  outcomes.Count(p, ProgramInputs::kImmediate, {.judged = true});
  ProgramCheck hung;
  hung.fault = ProgramFault{.kind = CaseFault::kHang};
  outcomes.Count(p, ProgramInputs::kRuntime, hung);
  outcomes.Count(p, ProgramInputs::kRuntime, {.refused = true});
  OutcomeTable table;
  outcomes.AddTo(table);
  const int add = VariantIndex(*VariantSpelled("add.u32"));
  EXPECT_EQ(table.count(add, OutcomeForm::kProgramImmediate, Outcome::kAgree),
            1);
  EXPECT_EQ(table.count(add, OutcomeForm::kProgramRuntime, Outcome::kHang), 1);
  EXPECT_EQ(
      table.count(add, OutcomeForm::kProgramRuntime, Outcome::kUnsupported), 1);
  EXPECT_EQ(ProgramOutcomeOf({.cut = true}), Outcome::kNotRun);
  EXPECT_EQ(ProgramOutcomeOf({.nothing_defined = true}), Outcome::kUnspecified);
  EXPECT_EQ(ProgramOutcomeOf({.why_not = "kept code that reads the inputs"}),
            Outcome::kNotEvaluable);
}

// The oracle's worker runs no programs: the campaign says so and runs its
// tuples alone.
TEST_F(ProgramLaneTest, AWorkerThatRunsNoProgramsGetsNoLane) {
  auto c = Start("oracle", {}, /*share=*/0.5);
  ASSERT_TRUE(c.ok()) << c.status();
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_THAT(s.lane_not_started, HasSubstr("runs no programs"));
  EXPECT_EQ(s.lane.checked, 0);
}

}  // namespace
}  // namespace ptxdiff
