#include "program/program_lane.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "campaign/campaign.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "program/program_outcomes.h"
#include "program/program_search.h"
#include "program/program_ticker.h"
#include "program/worker_program_backend.h"

namespace ptxdiff {
namespace {

class SearchLane : public ProgramLane {
 public:
  SearchLane(std::unique_ptr<ProgramSearch> search,
             std::shared_ptr<const ProgramBackend> presenter, uint64_t seed,
             std::shared_ptr<const ProgramOutcomes> outcomes)
      : search_(std::move(search)),
        presenter_(std::move(presenter)),
        seed_(seed),
        outcomes_(std::move(outcomes)) {}

  bool RunBatch(WorkerClient& worker, absl::Time) override {
    if (search_->OutOfTime()) return false;
    // A generator of its own per batch: senders draw side by side.
    std::mt19937_64 rng(seed_ + batches_.fetch_add(1));
    const std::unique_ptr<ProgramBackend> on =
        WorkerProgramBackendOn(worker, presenter_);
    // What the tool was remembered refusing may be drawn again.
    search_->RecheckRefusals(*on);
    const std::vector<Program> batch = search_->NextBatch(rng);
    if (batch.empty()) return false;
    std::vector<ProgramFound> found = search_->CheckBatch(batch, *on);
    std::lock_guard<std::mutex> lock(mu_);
    for (ProgramFound& f : found) found_.push_back(std::move(f));
    return true;
  }

  bool HasFound() const override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!found_.empty()) return true;
    }
    return search_->HasBacklog();
  }

  void FileFound(WorkerClient& worker, absl::Time) override {
    // What earlier runs left first, as `ptxdiff programs` does.
    std::optional<ProgramFound> f = search_->TakeBacklog();
    if (!f) {
      std::lock_guard<std::mutex> lock(mu_);
      if (found_.empty()) return;
      f = std::move(found_.front());
      found_.pop_front();
    }
    const std::unique_ptr<ProgramBackend> on =
        WorkerProgramBackendOn(worker, presenter_);
    search_->FileMinimized(*f, *on);
  }

  void Finish() override {
    ProgramCampaignReport report = search_->TakeReport();
    std::lock_guard<std::mutex> lock(mu_);
    report_ = std::move(report);
    finished_ = true;
  }

  CaseLaneCounts Counts() const override {
    const ProgramCampaignReport report = Report();
    CaseLaneCounts counts = ProgramLaneCounts(report);
    // While it runs, what is found and not yet filed.
    if (!finished_) counts.pending = report.pending;
    return counts;
  }

  ProgramCampaignReport Report() const override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (report_) return *report_;
    }
    ProgramCampaignReport report = search_->Snapshot();
    std::lock_guard<std::mutex> lock(mu_);
    report.pending = static_cast<int64_t>(found_.size());
    return report;
  }

  void AddOutcomesTo(OutcomeTable& table) const override {
    outcomes_->AddTo(table);
  }

  std::shared_ptr<const ProgramBackend> presenter() const override {
    return presenter_;
  }

 private:
  const std::unique_ptr<ProgramSearch> search_;
  const std::shared_ptr<const ProgramBackend> presenter_;
  const uint64_t seed_;
  const std::shared_ptr<const ProgramOutcomes> outcomes_;
  std::atomic<uint64_t> batches_{0};
  mutable std::mutex mu_;
  std::deque<ProgramFound> found_;  // journaled, for FileFound
  std::optional<ProgramCampaignReport> report_;  // after Finish
  std::atomic<bool> finished_{false};
};

}  // namespace

CaseLaneCounts ProgramLaneCounts(const ProgramCampaignReport& r) {
  CaseLaneCounts c;
  c.checked = r.programs;
  c.judged_immediate = r.folded;
  c.judged_runtime = r.claimed;
  c.disagreements = r.disagreements;
  c.faults = r.crashes + r.hangs;
  c.filed = static_cast<int64_t>(r.filed.size());
  c.filed_new = std::count_if(r.filed.begin(), r.filed.end(),
                              [](const FiledProgram& f) { return f.is_new; });
  c.known = r.known_repeats;
  c.not_filed_again = r.known;
  c.pending = r.pending - r.other_backend;
  c.unjournaled = r.unjournaled;
  c.errors = static_cast<int64_t>(r.errors.size());
  c.write_errors = r.triage_write_errors;
  return c;
}

absl::StatusOr<std::unique_ptr<ProgramLane>> MakeProgramLane(
    const WorkerIdentity& identity, const ProgramBackendOptions& backend,
    ProgramCampaignOptions options, absl::Time deadline,
    std::function<void(const std::string&)> progress) {
  PTXDIFF_RETURN_IF_ERROR(RunsPrograms(identity));
  PTXDIFF_ASSIGN_OR_RETURN(std::shared_ptr<const ProgramBackend> presenter,
                           MakeProgramPresenter(backend, identity));
  options.max_time = deadline - absl::Now();
  auto outcomes = std::make_shared<ProgramOutcomes>();
  options.on_check = [outcomes](const Program& program, ProgramInputs form,
                                const ProgramCheck& check) {
    outcomes->Count(program, form, check);
  };
  PTXDIFF_ASSIGN_OR_RETURN(
      std::unique_ptr<ProgramSearch> search,
      ProgramSearch::Open(options, presenter, std::move(progress)));
  return std::unique_ptr<ProgramLane>(
      std::make_unique<SearchLane>(std::move(search), std::move(presenter),
                                   options.seed, std::move(outcomes)));
}

namespace {

// How often a campaign of programs alone looks whether it is done.
constexpr absl::Duration kDonePoll = absl::Milliseconds(20);

// The engine's options for a campaign of the lane alone: no systematic
// source, compiled lane or outcome table; the fuzz loop offers nothing.
CampaignOptions LaneAlone(const ProgramCampaignOptions& options,
                          WorkerCommand worker, absl::Time deadline,
                          CaseLaneMaker lane) {
  CampaignOptions engine;
  engine.worker = std::move(worker);
  engine.triage_dir = options.triage_dir;
  engine.in_flight = std::max(1, options.threads);
  engine.systematic = false;
  engine.compiled_lane = false;
  engine.record_outcomes = false;
  engine.reading = options.reading;
  engine.deadline = deadline;
  engine.lane = std::move(lane);
  engine.lane_share = 1;
  // What a sender finds it files before its next batch, on its worker that
  // knows the tool's costs.
  engine.lane_files_on_senders = true;
  return engine;
}

// Waits until `campaign`'s lane is done, the run's time is up or the
// process is stopped.
void WaitForTheLane(const Campaign& campaign, absl::Time deadline) {
  while (!Interrupted() && absl::Now() < deadline && !campaign.LaneFinished())
    absl::SleepFor(kDonePoll);
}

}  // namespace

absl::StatusOr<ProgramCampaignReport> RunProgramsOnEngine(
    const ProgramCampaignOptions& options, const ProgramBackendOptions& backend,
    const ProgramWorkers& workers,
    std::function<void(const std::string&)> progress,
    const std::function<void(const ProgramsRunBackend&)>& on_start,
    OutcomeTable* outcomes) {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options.max_time;
  ProgramLane* lane = nullptr;  // the engine's, made in Campaign::Start
  std::string arch;
  CaseLaneMaker maker = [&](const WorkerIdentity& identity)
      -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    PTXDIFF_ASSIGN_OR_RETURN(
        std::unique_ptr<ProgramLane> made,
        MakeProgramLane(identity, backend, options, deadline, progress));
    lane = made.get();
    arch = ProgramArch(backend, identity);
    return std::unique_ptr<CaseLane>(std::move(made));
  };
  absl::StatusOr<std::unique_ptr<Campaign>> campaign = Campaign::Start(
      LaneAlone(options, workers.command, deadline, std::move(maker)));
  if (!campaign.ok())
    return ProgramWorkerStartFailed(backend, campaign.status());
  if (lane == nullptr) {
    return absl::FailedPreconditionError(
        (*campaign)->Snapshot().lane_not_started);
  }
  if (on_start) {
    on_start({.name = lane->presenter()->Name(),
              .identity = lane->presenter()->Identity(),
              .arch = arch,
              .presenter = lane->presenter()});
  }
  {
    const Ticker ticker(
        options.tick, !options.on_tick ? std::function<void()>() : [&] {
          options.on_tick(lane->Report(), absl::Now() - start);
        });
    WaitForTheLane(**campaign, deadline);
  }
  (*campaign)->Stop();
  if (outcomes != nullptr) *outcomes = (*campaign)->OutcomesSnapshot();
  ProgramCampaignReport report = lane->Report();
  report.worker_restarts = (*campaign)->Snapshot().worker_restarts;
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return report;
}

}  // namespace ptxdiff
