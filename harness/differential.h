// The differential check: a backend's answer to a tuple against the oracle's.
//
// A mismatch is a backend value that differs from a *defined* oracle result;
// a decline or an oracle-undefined result is never one. The fuzzers, the
// sweep command and (later) triage all judge tuples here.

#ifndef PTXDIFF_HARNESS_DIFFERENTIAL_H_
#define PTXDIFF_HARNESS_DIFFERENTIAL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gpu_runner/worker_client.h"
#include "oracle/oracle.h"

namespace ptxdiff {

enum class Verdict : uint8_t {
  kAgree,        // the backend's value equals the defined oracle result
  kMismatch,     // it differs: a finding
  kDeclined,     // the backend gave no value
  kUnspecified,  // the spec leaves the result open; nothing to compare
};
absl::string_view VerdictName(Verdict v);

Verdict Judge(const Result& oracle, const TupleResult& backend);

// Counts over many tuples, and the mismatches themselves.
struct DiffSummary {
  int64_t tuples = 0, agreed = 0, mismatched = 0, declined = 0, unspecified = 0;
  int64_t faulty_batches = 0;
  std::vector<std::string> mismatches;  // replay lines, at most kMaxListed
  std::vector<std::string> faults;      // one line per faulty batch
  static constexpr size_t kMaxListed = 20;
};

// Runs `tuples` on `client` in batches of `batch_size`, judges each against
// the oracle, and adds to `summary`.
void RunDifferential(WorkerClient& client, std::span<const Tuple> tuples,
                     size_t batch_size, DiffSummary& summary);

// "ptxdiff eval 'add.s32' 0x1 0x2  # oracle 0x3, ptxas 0x4"
std::string MismatchLine(const Tuple& t, const Result& oracle, uint64_t backend_bits,
                         absl::string_view backend_name);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_DIFFERENTIAL_H_
