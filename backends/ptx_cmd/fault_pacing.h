// How the ptx-cmd backend paces a variant that crashes or hangs the tool:
// it runs apart from the others, in parts of a size of its own (ApartSize),
// released a few at a time (HeldApartParts), and once it has faulted enough
// in a batch (BatchFaults), the rest of its tuples there are left unrun
// (FaultedEnough): each fault costs a run, a hang a whole timeout.

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_FAULT_PACING_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_FAULT_PACING_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "backends/backend.h"
#include "backends/ptx_cmd/module_parts.h"
#include "isa/variant.h"

namespace ptxdiff {
namespace ptx_cmd_internal {

// A variant that has crashed or hung the tool runs apart from the others,
// so that its next faults cost a few small runs and the clean variants keep
// their big ones, in parts of a size of its own (ApartSize): first
// kFirstApartPartTuples, twice that after each part that ran clean, half
// after each tuple that crashed, so that a variant that faults on every
// tuple runs them one by one and one whose faulting class is no longer sent
// soon runs in big parts again. A part that hangs costs a timeout at each
// halving, so a variant's part that hung makes its parts one tuple each
// (each hanging run then isolates a tuple: a tool that hangs on a whole
// class of inputs spent its hang cap on parts of 4, batch after batch,
// isolating none), growing back to at most 16.
inline constexpr size_t kFirstApartPartTuples = 4;
inline constexpr size_t kMaxApartPartTuples = 256;
inline constexpr size_t kMaxApartPartTuplesAfterAHang = 16;

// A variant that faults the tool this often in one batch has the rest of
// its tuples in that batch left unrun: each would cost a run, a hang a
// whole timeout, and a tool that faults on a class of inputs faults on most
// of them (the campaign quarantines the classes that faulted). Counted as
// tuples found faulting, and as runs of its tuples alone that crashed, or
// hung (each a timeout spent).
inline constexpr int kFaultsPerVariantInBatch = 3;
inline constexpr int kCrashRunsPerVariantInBatch = 12;
inline constexpr int kHangRunsPerVariantInBatch = 4;
// And a family whose variants hung the tool this often (bfind's 8 variants
// hanging on one class of inputs would cost 32 timeouts a batch).
inline constexpr int kHangRunsPerFamilyInBatch = 8;

// How a variant that faulted runs apart (see kFirstApartPartTuples).
struct ApartSize {
  size_t tuples = kFirstApartPartTuples;
  bool hung = false;

  void Clean() {
    tuples = std::min(
        2 * tuples, hung ? kMaxApartPartTuplesAfterAHang : kMaxApartPartTuples);
  }
  void Faulted(bool hang) {
    hung |= hang;
    tuples = hang ? 1 : std::max<size_t>(1, tuples / 2);
  }
};

// A variant's faults in the batch being run.
struct BatchFaults {
  int tuples = 0;
  int crash_runs = 0, hang_runs = 0;
  bool Enough() const {
    return tuples >= kFaultsPerVariantInBatch ||
           crash_runs >= kCrashRunsPerVariantInBatch ||
           hang_runs >= kHangRunsPerVariantInBatch;
  }
};

// Why `v`'s tuples are left unrun in this batch, if it faulted the tool
// enough in it (BatchFaults::Enough), or its family hung it enough.
std::optional<std::string> FaultedEnough(
    const Variant& v, const absl::flat_hash_map<Variant, BatchFaults>& faults,
    const absl::flat_hash_map<Family, int>& family_hang_runs);

// `parts` without the segments of variants that faulted the tool enough in
// this batch (FaultedEnough): those are declined as not run.
std::vector<Part> WithoutFaultyVariants(
    std::vector<Part> parts,
    const absl::flat_hash_map<Variant, BatchFaults>& faults,
    const absl::flat_hash_map<Family, int>& family_hang_runs,
    Declines& declines);

// A faulting variant's parts apart, released to the runs a few at a time:
// the first kFaultsPerVariantInBatch, then twice as many each round, so that
// the batch's fault cap (BatchFaults::Enough) stops a variant that faults on
// every tuple after a few runs. All at once, a `sad` that aborts the tool on
// every tuple cost a crashing run for each of its tuples in the batch.
class HeldApartParts {
 public:
  // Takes the apart parts out of `parts`, in their order.
  explicit HeldApartParts(std::vector<Part>& parts);

  bool empty() const { return held_.empty(); }

  // Moves the next parts of each variant into `parts`; those of variants
  // that `enough` says faulted enough in this batch are declined as not run.
  void Release(
      std::vector<Part>& parts,
      absl::FunctionRef<std::optional<std::string>(const Variant&)> enough,
      Declines& declines);

  // Declines every part still held.
  void DeclineHeld(DeclineCode code, const std::string& why,
                   Declines& declines);

 private:
  struct Held {
    Variant variant;
    std::deque<Part> parts;
    size_t release = kFaultsPerVariantInBatch;
  };
  std::vector<Held> held_;
};

}  // namespace ptx_cmd_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_FAULT_PACING_H_
