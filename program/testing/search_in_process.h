// The program search (program_search.h) on one in-process backend, one batch
// after another, for the tests whose fake backends no worker can run (a
// check that waits for the run's deadline, one that agrees with everything
// and keeps what it was given). A campaign runs on the engine's workers
// (RunProgramsOnEngine, program_lane.h): tests of what it does go there.

#ifndef PTXDIFF_PROGRAM_TESTING_SEARCH_IN_PROCESS_H_
#define PTXDIFF_PROGRAM_TESTING_SEARCH_IN_PROCESS_H_

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "program/program_backend.h"
#include "program/program_campaign.h"
#include "program/program_search.h"

namespace ptxdiff {

// What earlier runs left first, then batches until the run ends, what each
// finds filed before the next.
inline absl::StatusOr<ProgramCampaignReport> SearchInProcess(
    const ProgramCampaignOptions& options,
    std::shared_ptr<ProgramBackend> backend) {
  const absl::Time start = absl::Now();
  PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<ProgramSearch> search,
                           ProgramSearch::Open(options, backend, nullptr));
  while (std::optional<ProgramFound> f = search->TakeBacklog())
    search->FileMinimized(*f, *backend);
  std::mt19937_64 rng(options.seed);
  while (!search->OutOfTime()) {
    const std::vector<Program> batch = search->NextBatch(rng);
    if (batch.empty()) break;
    for (const ProgramFound& f : search->CheckBatch(batch, *backend))
      search->FileMinimized(f, *backend);
  }
  ProgramCampaignReport report = search->TakeReport();
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return report;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_TESTING_SEARCH_IN_PROCESS_H_
