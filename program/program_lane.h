// Programs as a lane of the campaign engine (campaign/case_lane.h, issue
// 63): the engine's senders check batches of random programs on their own
// workers (RUN_PROGRAMS) between tuple batches, and its filer minimizes and
// files what they find on its worker. The work is the program campaign's
// own (program_search.h: generation, both input forms, refusals, the
// pending journal, cause keys, known repeats, filing), run on borrowed
// workers (WorkerProgramBackendOn) instead of a pool of its own.

#ifndef PTXDIFF_PROGRAM_PROGRAM_LANE_H_
#define PTXDIFF_PROGRAM_PROGRAM_LANE_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "campaign/case_lane.h"
#include "client/worker_client.h"
#include "program/program_backend.h"
#include "program/program_backends.h"
#include "program/program_campaign.h"

namespace ptxdiff {

// A lane of programs, and what `ptxdiff programs` says of it beside the
// engine's counts.
class ProgramLane : public CaseLane {
 public:
  // The program campaign's report: the counts so far, or once Finish was
  // called, the run's (its `seconds` not set: the caller's clock).
  virtual ProgramCampaignReport Report() const = 0;
  // What names and presents its cases (the backend's Name and Identity).
  virtual std::shared_ptr<const ProgramBackend> presenter() const = 0;
};

// The lane for workers that say they are `identity`, on `backend` (whose
// presenter, MakeProgramPresenter, names and presents the cases), ending at
// `deadline` (the campaign's). `options`' threads, max_time and on_tick are
// not used: the engine's workers and senders run the programs. `progress` gets
// a line per filing. FailedPrecondition when the worker runs no programs (its
// HELLO_REPLY has no programs=1); MakeProgramPresenter's errors.
absl::StatusOr<std::unique_ptr<ProgramLane>> MakeProgramLane(
    const WorkerIdentity& identity, const ProgramBackendOptions& backend,
    ProgramCampaignOptions options, absl::Time deadline,
    std::function<void(const std::string&)> progress);

// The lane's counts as the engine keeps them, from the program campaign's.
CaseLaneCounts ProgramLaneCounts(const ProgramCampaignReport& report);

// What a campaign of programs alone ran on, as its lane's presenter names
// it once the engine's workers said what they are.
struct ProgramsRunBackend {
  std::string name, identity;
  std::string arch;  // the target the programs were compiled for
  // What names and presents its cases (the program fuzzer's mutator asks
  // it which inputs the backend judges).
  std::shared_ptr<const ProgramBackend> presenter;
};

// `ptxdiff programs`, `ptxdiff minimize` of a program case and the program
// fuzzer's campaign (fuzzers/program_target.h): the
// program campaign `options` asks for, run on the engine as its lane alone
// (lane_share 1, no tuple producers), on `backend`'s workers (`workers`:
// ProgramWorkersFor's) a sender each of options.threads, and the filer's. It
// ends at options.max_time, at a stop of the process (Interrupted()), or once
// the lane has nothing more to run or file.
// `on_start` is told what the run is on once the workers said what they are,
// before any on_tick (with the counts so far). `progress` gets a line per
// filing. `outcomes`, if given, gets the engine's outcome table at the end:
// the programs by the variants they held (program_outcomes.h). Errors: the
// flags' (ProgramWorkersFor), a worker that does not start or runs no
// programs, the triage directory's.
absl::StatusOr<ProgramCampaignReport> RunProgramsOnEngine(
    const ProgramCampaignOptions& options, const ProgramBackendOptions& backend,
    const ProgramWorkers& workers,
    std::function<void(const std::string&)> progress,
    const std::function<void(const ProgramsRunBackend&)>& on_start = nullptr,
    OutcomeTable* outcomes = nullptr);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_LANE_H_
