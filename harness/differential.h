// Differential runs of many tuples: batches to a worker, each tuple judged
// (judge.h), counted, and the mismatches listed as replay lines (`sweep`,
// `repro`).

#ifndef PTXDIFF_HARNESS_DIFFERENTIAL_H_
#define PTXDIFF_HARNESS_DIFFERENTIAL_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "client/worker_client.h"
#include "harness/judge.h"
#include "oracle/oracle.h"

namespace ptxdiff {

// Counts over many tuples, and the mismatches themselves.
struct DiffSummary {
  JudgeCounts counts;
  std::vector<std::string> mismatches;  // replay lines, at most kMaxListed
  // One line per faulty batch, and per tuple the implementation crashed or
  // hung on (TupleFaultLine), at most kMaxListed of those.
  std::vector<std::string> faults;
  // Why the backend declined: tuples per "family: message" (one reason of
  // many variants reads as one line per family).
  absl::flat_hash_map<std::string, int64_t> declines;
  // What the worker said when the harness's own temporary files failed
  // (FaultKind::kEnvironment): the run stopped there, its batch unjudged.
  std::string environment_failure;
  static constexpr size_t kMaxListed = 20;

  void CountDecline(Family family, absl::string_view message);
  // Adds `other`'s counts, its declines, and its lines while under
  // kMaxListed.
  void Merge(const DiffSummary& other);
  // The decline reasons, most tuples first.
  std::vector<std::pair<std::string, int64_t>> DeclinesByCount() const;
};

// Runs `tuples` on `client` in batches of `batch_size`, judges each against
// the oracle, and adds to `summary`. `stop` (none: never) is asked before
// and after each batch: once it says so, nothing more is sent and the batch
// it came during is not judged (a stop may cut it short, as a fault), so
// that summary.counts.tuples counts only the tuples of the batches judged.
// A failure of the harness's own files stops it too (environment_failure).
void RunDifferential(WorkerClient& client, std::span<const Tuple> tuples,
                     size_t batch_size, DiffSummary& summary,
                     Reading reading = Reading::kSpec,
                     const std::function<bool()>& stop = nullptr);

// "crash on ptxdiff eval 'div.u32' 0x1 0x0: <the message's first line>":
// a tuple the implementation died on (ResultKind::kFault).
std::string TupleFaultLine(const Tuple& t, const TupleResult& r,
                           const std::vector<std::string>& messages);

// "ptxdiff eval 'add.s32' 0x1 0x2  # oracle 0x3, ptxas 0x4"; for a `.cc`
// variant both results with their carry (ResultText):
// "... # oracle 0x00000000 cf=1, ptxas 0x00000000 cf=0".
std::string MismatchLine(const Tuple& t, const Result& oracle,
                         uint64_t backend_bits, absl::string_view backend_name,
                         bool backend_carry = false);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_DIFFERENTIAL_H_
