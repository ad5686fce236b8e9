#include "program/program_campaign.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "program/program_search.h"
#include "program/program_ticker.h"

namespace ptxdiff {
namespace {

// One of the campaign's threads: what earlier runs left first, then batches
// of programs until the run ends, what each finds filed before the next.
void SearchOn(ProgramSearch& search, ProgramBackend& backend, uint64_t seed) {
  while (std::optional<ProgramFound> f = search.TakeBacklog())
    search.FileMinimized(*f, backend);
  std::mt19937_64 rng(seed);
  while (!search.OutOfTime()) {
    const std::vector<Program> batch = search.NextBatch(rng);
    if (batch.empty()) return;
    for (const ProgramFound& f : search.CheckBatch(batch, backend))
      search.FileMinimized(f, backend);
  }
}

}  // namespace

absl::StatusOr<ProgramCampaignReport> RunProgramCampaign(
    const ProgramCampaignOptions& options,
    const std::function<void(const std::string&)>& progress) {
  if (options.backend == nullptr)
    return absl::InvalidArgumentError("no backend for programs");
  const absl::Time start = absl::Now();
  PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<ProgramSearch> search,
                           ProgramSearch::Open(options, options.backend,
                                               progress));
  {
    const Ticker ticker(
        options.tick, !options.on_tick ? std::function<void()>() : [&] {
          options.on_tick(search->Snapshot(), absl::Now() - start);
        });
    std::vector<std::thread> pool;
    for (int t = 0; t < std::max(1, options.threads); ++t) {
      pool.emplace_back([&search, &options, t] {
        SearchOn(*search, *options.backend, options.seed + t);
      });
    }
    for (std::thread& t : pool) t.join();
  }
  ProgramCampaignReport report = search->TakeReport();
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return report;
}

}  // namespace ptxdiff
