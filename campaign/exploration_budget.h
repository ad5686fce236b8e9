// How the fuzz stage's tuples spread over the variants, and where the next
// fuzz input is wanted (issue 43, item 3).
//
// The systematic source gives every variant its tiers (extremes, relations,
// narrowing points, middle values) by family, so a video variant among
// tens of thousands gets few tuples, all planned. What lies between those
// values is the fuzz stage's to find, and libFuzzer's corpus holds a small
// share of the variants: without a budget, the fuzz inputs stayed on
// those, and most variants got none. The budget counts, per variant, the tuples
// from fuzz inputs the campaign queued for the backend, and walks the
// variants in a fixed shuffled order, a pass at a time: each pass raises
// every variant's budget by kTuplesPerPass, and Next gives the variants of
// the pass still under it. The mutator moves an input whose variant has had
// its share (HadItsShare) to the next such variant, so each pass gives
// every variant a steered fuzz input, and none is left with its planned
// tuples alone.
//
// One thread (the fuzz loop's) counts and asks; Histogram may be read from
// any.

#ifndef PTXDIFF_CAMPAIGN_EXPLORATION_BUDGET_H_
#define PTXDIFF_CAMPAIGN_EXPLORATION_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"

namespace ptxdiff {

// Variants by how many fuzz-input tuples each got: bucket b < 64 holds those
// with exactly b, bucket 64 + k those with 2^(6+k) to 2^(7+k) - 1.
inline constexpr int kExactExploredBuckets = 64;
inline constexpr int kExploredBuckets = kExactExploredBuckets + 26;
int ExploredBucket(uint32_t tuples);
// The fewest and the most tuples of bucket `b`.
uint32_t ExploredBucketLow(int b);
uint32_t ExploredBucketHigh(int b);

class ExplorationBudget {
 public:
  // What a pass adds to every variant's budget: a steered input's tuples,
  // and room for a few more from mutations of one the corpus kept.
  static constexpr uint32_t kTuplesPerPass = 8;

  // Over the variants `indices` (VariantIndex values, each once) of a table
  // of `num_variants`, in an order shuffled by `seed`.
  ExplorationBudget(std::vector<int> indices, size_t num_variants,
                    uint64_t seed = 0);

  // A fuzz-input tuple of variant `index` was queued for the backend.
  void Count(int index);
  uint32_t tuples(int index) const { return tuples_[index]; }

  // True if variant `index` has had its share of this pass (or is not one
  // of the budget's).
  bool HadItsShare(int index) const;

  // The next variant of the order still under its budget for which
  // `wanted` holds, moving past it (each is given at most once a pass); a
  // pass that ends raises the budget. -1 if no variant is wanted.
  int Next(absl::FunctionRef<bool(int index)> wanted);

  // Variants by bucket (ExploredBucket), kExploredBuckets of them.
  std::vector<int64_t> Histogram() const;

 private:
  std::vector<int> order_;        // the variants, shuffled
  std::vector<uint32_t> tuples_;  // by VariantIndex
  std::vector<uint8_t> member_;   // by VariantIndex: one of order_
  size_t cursor_ = 0;             // into order_
  uint32_t budget_ = kTuplesPerPass;
  std::unique_ptr<std::atomic<int64_t>[]> buckets_;
};

// The summary's line on the least-explored variants, from a Histogram (or
// the sum of several processes'): "least-explored variants: N of M got at
// most K tuples from fuzz inputs ..." where the N are the least-explored 1%
// (at least one) and K is what the most explored of them got; empty when the
// histogram holds no variant.
std::string LeastExploredText(const std::vector<int64_t>& histogram);

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_EXPLORATION_BUDGET_H_
