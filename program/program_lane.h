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

// The lane for workers that say they are `identity`, on `backend` (whose
// presenter, MakeProgramPresenter, names and presents the cases), ending at
// `deadline` (the campaign's). `options` as for RunProgramCampaign, but its
// backend, threads, max_time and on_tick are not used: the engine's workers
// and senders run the programs. `progress` gets a line per filing.
// FailedPrecondition when the worker runs no programs (its HELLO_REPLY has
// no programs=1); MakeProgramPresenter's errors.
absl::StatusOr<std::unique_ptr<CaseLane>> MakeProgramLane(
    const WorkerIdentity& identity, const ProgramBackendOptions& backend,
    ProgramCampaignOptions options, absl::Time deadline,
    std::function<void(const std::string&)> progress);

// The lane's counts as the engine keeps them, from the program campaign's.
CaseLaneCounts ProgramLaneCounts(const ProgramCampaignReport& report);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_LANE_H_
