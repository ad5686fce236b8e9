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
#include "common/status_macros.h"
#include "program/program_search.h"
#include "program/worker_program_backend.h"

namespace ptxdiff {
namespace {

class ProgramLane : public CaseLane {
 public:
  ProgramLane(std::unique_ptr<ProgramSearch> search,
              std::shared_ptr<const ProgramBackend> presenter, uint64_t seed)
      : search_(std::move(search)),
        presenter_(std::move(presenter)),
        seed_(seed) {}

  bool RunBatch(WorkerClient& worker, absl::Time) override {
    if (search_->OutOfTime()) return false;
    // A generator of its own per batch: senders draw side by side.
    std::mt19937_64 rng(seed_ + batches_.fetch_add(1));
    const std::vector<Program> batch = search_->NextBatch(rng);
    if (batch.empty()) return false;
    const std::unique_ptr<ProgramBackend> on =
        WorkerProgramBackendOn(worker, presenter_);
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
  }

  CaseLaneCounts Counts() const override {
    std::optional<ProgramCampaignReport> report;
    int64_t unfiled = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      report = report_;
      unfiled = static_cast<int64_t>(found_.size());
    }
    if (report) return ProgramLaneCounts(*report);
    CaseLaneCounts counts = ProgramLaneCounts(search_->Snapshot());
    counts.pending = unfiled;
    return counts;
  }

 private:
  const std::unique_ptr<ProgramSearch> search_;
  const std::shared_ptr<const ProgramBackend> presenter_;
  const uint64_t seed_;
  std::atomic<uint64_t> batches_{0};
  mutable std::mutex mu_;
  std::deque<ProgramFound> found_;  // journaled, for FileFound
  std::optional<ProgramCampaignReport> report_;  // after Finish
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
  c.known = r.known + r.known_repeats;
  c.pending = r.pending - r.other_backend;
  c.errors = static_cast<int64_t>(r.errors.size());
  return c;
}

absl::StatusOr<std::unique_ptr<CaseLane>> MakeProgramLane(
    const WorkerIdentity& identity, const ProgramBackendOptions& backend,
    ProgramCampaignOptions options, absl::Time deadline,
    std::function<void(const std::string&)> progress) {
  if (!identity.programs) {
    return absl::FailedPreconditionError(
        absl::StrCat("the worker (", identity.Describe(),
                     ") runs no programs: its HELLO_REPLY has no programs=1"));
  }
  PTXDIFF_ASSIGN_OR_RETURN(std::shared_ptr<const ProgramBackend> presenter,
                           MakeProgramPresenter(backend, identity));
  options.max_time = deadline - absl::Now();
  PTXDIFF_ASSIGN_OR_RETURN(
      std::unique_ptr<ProgramSearch> search,
      ProgramSearch::Open(options, presenter, std::move(progress)));
  return std::unique_ptr<CaseLane>(std::make_unique<ProgramLane>(
      std::move(search), std::move(presenter), options.seed));
}

}  // namespace ptxdiff
