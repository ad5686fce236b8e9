// Exhaustive sweeps (`ptxdiff sweep --exhaustive`): every input of each
// variant whose inputs total at most a bound of bits, and a bounded random
// sample of the wider ones, streamed in batches to one worker and judged
// against the oracle.
//
// The sources a backend can take as runtime values are runtime values, and
// they take the low bits of an input's index: a batch's tuples then differ
// only in runtime values, one compiled kernel for a compiler that keeps its
// code (backends/ptxas/compiled_code.h), which runs it for every
// input as a GPU harness runs one module. A variant is proved when every
// input of its space was run and none disagreed, faulted or was declined.

#ifndef PTXDIFF_HARNESS_EXHAUSTIVE_SWEEP_H_
#define PTXDIFF_HARNESS_EXHAUSTIVE_SWEEP_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/time/time.h"
#include "client/worker_client.h"
#include "harness/differential.h"
#include "isa/tuple.h"
#include "isa/variant.h"
#include "oracle/errata.h"

namespace ptxdiff {

// The input bits of `v`: each source's SourceMask bits (a SIMD selector's
// canonical bits, a carry-in's one).
int InputBits(const Variant& v);

// The i-th of v's 2^InputBits inputs: the bits of i dealt out to the
// sources' mask bits, the sources in `runtime` first (lowest), each from its
// lowest mask bit up. Distinct i give distinct inputs.
Operands NthInput(const Variant& v, uint8_t runtime, uint64_t i);

// The i-th input of a sample of v's inputs: random bits under each mask,
// deterministic for (v, seed, i).
Operands SampledInput(const Variant& v, uint64_t seed, uint64_t i);

struct ExhaustiveOptions {
  int max_bits = 24;        // every input up to this many input bits
  uint64_t sample = 65536;  // inputs of each wider variant (0: none)
  uint64_t seed = 1;
  size_t batch = 65536;     // tuples per batch sent to the worker
  Reading reading = Reading::kSpec;
  // How often `progress` is called (and once at the end).
  absl::Duration progress_every = absl::Seconds(2);
};

// One variant's sweep.
struct VariantSweep {
  Variant variant;
  uint8_t runtime = 0;  // the operand form its tuples were sent in
  int bits = 0;
  bool exhaustive = false;  // every input, not a sample
  uint64_t inputs = 0;      // of its space (2^bits) or of its sample
  uint64_t done = 0;        // inputs run and judged
  DiffSummary summary;

  bool complete() const { return done == inputs; }
  bool refuted() const {
    return summary.counts.mismatched > 0 || summary.counts.faulted > 0;
  }
  // Every input run, and each agreed or is one the spec leaves open.
  bool proved() const {
    return exhaustive && complete() && !refuted() &&
           summary.counts.declined == 0 &&
           summary.counts.faulty_batches == 0 &&
           summary.counts.other_reading == 0;
  }
};

struct SweepProgress {
  uint64_t done = 0, total = 0;  // inputs over every variant
  absl::Duration elapsed;
  const Variant* current = nullptr;  // the variant being run
};

// The plan: each of `variants` with its input space (an exhaustive one up
// to options.max_bits, else a sample; none when the sample is 0), in the
// operand form `forms` allows (every runtime-capable source a runtime
// value, or all immediates).
std::vector<VariantSweep> PlanExhaustiveSweep(std::span<const Variant> variants,
                                              const ExhaustiveOptions& options,
                                              bool forms);

// Runs the plan on `client`, batch by batch, judging each input against
// the oracle; stops early (done < inputs) once `stop()` says so between
// batches. `progress` is called every options.progress_every and at the end.
void RunExhaustiveSweep(WorkerClient& client, std::vector<VariantSweep>& plan,
                        const ExhaustiveOptions& options,
                        const std::function<bool()>& stop,
                        const std::function<void(const SweepProgress&)>& progress);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_EXHAUSTIVE_SWEEP_H_
