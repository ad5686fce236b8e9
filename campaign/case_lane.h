// A lane of cases other than tuples that the engine runs beside them (issue
// 63): programs (program/program_lane.h) today. The engine knows nothing of
// what the cases are. Each sender gives the lane a share of its time
// (CampaignOptions::lane_share), running the lane's batches on its own
// worker between tuple batches; the filer files what the lane found on the
// filer's worker, between the tuple findings it files.

#ifndef PTXDIFF_CAMPAIGN_CASE_LANE_H_
#define PTXDIFF_CAMPAIGN_CASE_LANE_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "campaign/outcome_table.h"
#include "client/worker_client.h"

namespace ptxdiff {

// What a lane counted, for the campaign's stats and summary.
struct CaseLaneCounts {
  int64_t checked = 0;  // cases run to an answer (cut ones not)
  // Of them, judged with their inputs as immediates and as runtime values.
  int64_t judged_immediate = 0, judged_runtime = 0;
  int64_t disagreements = 0;  // values the oracle refutes
  int64_t faults = 0;         // cases the backend crashed or hung on
  // Entries filed (found again: counted in them), and of them new ones;
  // findings counted in the entry of a cause filed before instead of filed
  // again; and findings taken for a filed cause without being counted in
  // any entry (a program with a variant no longer generated).
  int64_t filed = 0, filed_new = 0, known = 0, not_filed_again = 0;
  // Found and not filed (after Finish: kept in the lane's pending journal
  // for the next campaign), and of them those the journal could not keep
  // either (a full disk).
  int64_t pending = 0, unjournaled = 0;
  int64_t errors = 0;  // what the lane could not run or file
  // Writes to the triage directory that failed (a full disk): the run did
  // not keep what it found.
  int64_t write_errors = 0;
};

// Thread-safe: senders call RunBatch at once, each with its own worker,
// while the filer calls FileFound.
class CaseLane {
 public:
  virtual ~CaseLane() = default;
  // Runs and judges one batch of the lane's cases on `worker` (a sender's),
  // keeping what it finds for FileFound (journaled first: nothing found is
  // lost to a kill). False when the lane has nothing more to run.
  virtual bool RunBatch(WorkerClient& worker, absl::Time deadline) = 0;
  // Whether RunBatch found something FileFound has not taken yet.
  virtual bool HasFound() const = 0;
  // Minimizes and files one thing found, on `worker` (the filer's); past
  // `deadline` it stays in the journal.
  virtual void FileFound(WorkerClient& worker, absl::Time deadline) = 0;
  // The campaign ends: what is not filed stays in the journal. Called once,
  // after the last RunBatch and FileFound.
  virtual void Finish() = 0;
  virtual CaseLaneCounts Counts() const = 0;
  // Adds what its cases gave, by variant, to `table` (the engine's outcome
  // table, when a snapshot of it is taken); none by default.
  virtual void AddOutcomesTo(OutcomeTable& table) const {}
};

// Makes the lane once the senders' workers have said what they are (a
// worker that runs no cases of the lane's kind: FailedPrecondition, and the
// campaign runs tuples only).
using CaseLaneMaker =
    std::function<absl::StatusOr<std::unique_ptr<CaseLane>>(
        const WorkerIdentity& identity)>;

// Whose turn a sender's next batch is: the lane's while its part of the
// sender's time (running batches, and waiting for tuples: TuplesTook) is
// under `share` (1: the lane's only; 0: never). The tuples go first.
class LaneShare {
 public:
  explicit LaneShare(double share) : share_(share) {}
  bool LanesTurn() const {
    if (share_ >= 1) return true;
    return share_ > 0 && lane_ < share_ * (lane_ + tuples_);
  }
  void LaneTook(absl::Duration took) { lane_ += took; }
  void TuplesTook(absl::Duration took) { tuples_ += took; }

 private:
  double share_;
  absl::Duration lane_, tuples_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_CASE_LANE_H_
