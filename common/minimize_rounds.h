// Greedy minimizing in rounds: the one loop behind the tuple minimizer
// (triage/minimizer.h) and the program minimizer
// (program/program_minimizer.h), each with its own candidate set.
//
// Each round asks about every candidate simplification of the case kept so
// far in one batch (a backend round trip is the unit of cost), keeps one
// that still shows the disagreement and starts the next round from it. It
// ends when no candidate shows, the case has none, the round limit is
// reached or the candidate budget is spent. What a case is, what its
// candidates are and how they are judged are the caller's: nothing here
// knows the ISA.

#ifndef PTXDIFF_COMMON_MINIMIZE_ROUNDS_H_
#define PTXDIFF_COMMON_MINIMIZE_ROUNDS_H_

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxdiff {

struct MinimizeLimits {
  int max_rounds = std::numeric_limits<int>::max();      // batches
  int max_candidates = std::numeric_limits<int>::max();  // judged, in all
};

template <typename Case>
struct MinimizeRoundsResult {
  Case best;
  int rounds = 0;           // batches judged
  int candidates = 0;       // candidates judged
  bool budget_out = false;  // stopped at max_candidates: maybe not minimal
};

// The choice that keeps the first candidate of a batch that shows.
struct FirstThatShows {
  template <typename Case>
  bool operator()(const Case&, const Case&) const {
    return false;
  }
};

// `start` (assumed to show the disagreement) minimized in rounds:
//   - candidates(const Case&) -> std::vector<Case>: its simplifications in
//     the order tried (the budget cuts the tail); none: it is minimal.
//   - shows(std::span<Case>) -> absl::StatusOr<std::vector<bool>>: for each
//     candidate, whether it still shows the disagreement. It may note on a
//     candidate what it saw (kept with the candidate if chosen). An error
//     ends the loop and is returned.
//   - preferred(a, b) -> bool: whether `a` is kept over `b`, both showing,
//     `b` earlier in the batch; FirstThatShows keeps the first.
template <typename Case, typename Candidates, typename Shows,
          typename Preferred = FirstThatShows>
absl::StatusOr<MinimizeRoundsResult<Case>> MinimizeInRounds(
    Case start, const Candidates& candidates, const Shows& shows,
    const Preferred& preferred = {}, MinimizeLimits limits = {}) {
  MinimizeRoundsResult<Case> result{.best = std::move(start)};
  while (result.rounds < limits.max_rounds) {
    std::vector<Case> batch = candidates(std::as_const(result.best));
    if (batch.empty()) break;
    const int left = limits.max_candidates - result.candidates;
    if (left <= 0) {
      result.budget_out = true;
      break;
    }
    if (static_cast<int>(batch.size()) > left) {
      batch.erase(batch.begin() + left, batch.end());
    }
    ++result.rounds;
    result.candidates += static_cast<int>(batch.size());
    PTXDIFF_ASSIGN_OR_RETURN(const std::vector<bool> still,
                             shows(std::span<Case>(batch)));
    if (still.size() != batch.size()) {
      return absl::InternalError(
          absl::StrCat("minimizing: the batch runner judged ", still.size(),
                       " of ", batch.size(), " candidates"));
    }
    std::optional<size_t> kept;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (still[i] && (!kept || preferred(batch[i], batch[*kept]))) kept = i;
    }
    if (!kept) break;
    result.best = std::move(batch[*kept]);
  }
  return result;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_MINIMIZE_ROUNDS_H_
