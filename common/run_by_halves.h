// Running a batch by halves: the one strategy that finds the cases a run
// fails on while keeping what the other cases give (a worker's fault, a
// module ptxas rejects or crashes on). A part is run whole; a part whose
// run failed as a whole, with more than one case in it, is run again as
// its two halves, first half first, depth first. A case that fails alone
// is so found in about 2·log2(n) runs, and every other case is answered by
// a run that worked.
//
// What a run is, what counts as failing and what is recorded (results,
// blame, "not run" past a deadline or after a stop) are the caller's: its
// run_part records them and says whether the part is done. Loops that halve
// otherwise are not this one (docs/architecture.md, "One loop of each").

#ifndef PTXDIFF_COMMON_RUN_BY_HALVES_H_
#define PTXDIFF_COMMON_RUN_BY_HALVES_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"

namespace ptxdiff {

// How a run of a part ended, as run_part tells it.
enum class PartEnd {
  kDone,   // its cases are recorded: answered, blamed or not run
  kHalve,  // it failed as a whole: its halves are run (never a part of one)
};

// Runs [begin, end) by halves: run_part(begin, end) ->
// absl::StatusOr<PartEnd> runs a part and records what it gave; an error
// ends the run and is returned (the harness's failure, not a case's).
template <typename RunPart>
absl::Status RunByHalves(size_t begin, size_t end, const RunPart& run_part) {
  if (begin == end) return absl::OkStatus();
  PTXDIFF_ASSIGN_OR_RETURN(const PartEnd how, run_part(begin, end));
  if (how == PartEnd::kDone || end - begin == 1) return absl::OkStatus();
  const size_t mid = begin + (end - begin) / 2;
  PTXDIFF_RETURN_IF_ERROR(RunByHalves(begin, mid, run_part));
  return RunByHalves(mid, end, run_part);
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_RUN_BY_HALVES_H_
