#include "harness/exhaustive_sweep.h"

#include <algorithm>
#include <bit>

#include "absl/time/clock.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"

namespace ptxdiff {
namespace {

uint64_t Mix(uint64_t x) {  // SplitMix64's finalizer
  x += 0x9e3779b97f4a7c15;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
  x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
  return x ^ (x >> 31);
}

// The sources in dealing order: those in `runtime` first.
std::vector<int> DealingOrder(const Variant& v, uint8_t runtime) {
  std::vector<int> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (int s = 0; s < NumSources(v); ++s) {
      if (IsRuntimeSource(runtime, s) == (pass == 0)) order.push_back(s);
    }
  }
  return order;
}

// Inputs `begin` .. `begin + n - 1` of the sweep of `sweep`.
void AppendInputs(const VariantSweep& sweep, uint64_t seed, uint64_t begin,
                  uint64_t n, std::vector<Tuple>& out) {
  for (uint64_t i = begin; i < begin + n; ++i) {
    out.push_back({sweep.variant,
                   sweep.exhaustive ? NthInput(sweep.variant, sweep.runtime, i)
                                    : SampledInput(sweep.variant, seed, i),
                   sweep.runtime});
  }
}

}  // namespace

int InputBits(const Variant& v) {
  int bits = 0;
  for (int s = 0; s < NumSources(v); ++s) bits += std::popcount(SourceMask(v, s));
  return bits;
}

Operands NthInput(const Variant& v, uint8_t runtime, uint64_t i) {
  Operands ops;
  for (int s : DealingOrder(v, runtime)) {
    for (uint64_t mask = SourceMask(v, s); mask != 0 && i != 0;
         mask &= mask - 1, i >>= 1) {
      if (i & 1) ops.v[s] |= mask & -mask;  // the mask's lowest bit left
    }
  }
  return ops;
}

Operands SampledInput(const Variant& v, uint64_t seed, uint64_t i) {
  Operands ops;
  const uint64_t base = Mix(seed ^ Mix(StableId(v))) ^ i * kMaxSources;
  for (int s = 0; s < NumSources(v); ++s) {
    ops.v[s] = Mix(base + s) & SourceMask(v, s);
  }
  return ops;
}

std::vector<VariantSweep> PlanExhaustiveSweep(std::span<const Variant> variants,
                                              const ExhaustiveOptions& options,
                                              bool forms) {
  std::vector<VariantSweep> plan;
  for (const Variant& v : variants) {
    VariantSweep sweep{.variant = v,
                       .runtime = forms ? RuntimeCapableSources(v) : uint8_t{0},
                       .bits = InputBits(v)};
    sweep.exhaustive = sweep.bits <= options.max_bits;
    sweep.inputs = sweep.exhaustive ? uint64_t{1} << sweep.bits : options.sample;
    if (sweep.inputs > 0) plan.push_back(std::move(sweep));
  }
  return plan;
}

void RunExhaustiveSweep(
    WorkerClient& client, std::vector<VariantSweep>& plan,
    const ExhaustiveOptions& options, const std::function<bool()>& stop,
    const std::function<void(const SweepProgress&)>& progress) {
  SweepProgress at;
  for (const VariantSweep& sweep : plan) at.total += sweep.inputs;
  const absl::Time start = absl::Now();
  absl::Time next_report = start + options.progress_every;
  std::vector<Tuple> batch;
  for (VariantSweep& sweep : plan) {
    at.current = &sweep.variant;
    while (sweep.done < sweep.inputs && !stop()) {
      const uint64_t n = std::min<uint64_t>(options.batch, sweep.inputs - sweep.done);
      batch.clear();
      AppendInputs(sweep, options.seed, sweep.done, n, batch);
      DiffSummary judged;
      RunDifferential(client, batch, options.batch, judged, options.reading);
      // A batch cut short by the stop is not counted as the backend's.
      if (stop()) break;
      if (!judged.environment_failure.empty()) {  // the sweep cannot go on
        sweep.summary.environment_failure = judged.environment_failure;
        return;
      }
      sweep.summary.Merge(judged);
      sweep.done += n;
      at.done += n;
      if (absl::Now() >= next_report) {
        at.elapsed = absl::Now() - start;
        progress(at);
        next_report = absl::Now() + options.progress_every;
      }
    }
  }
  at.elapsed = absl::Now() - start;
  progress(at);
}

}  // namespace ptxdiff
