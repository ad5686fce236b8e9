#include "campaign/exploration_budget.h"

#include <bit>
#include <cstdint>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace ptxdiff {
namespace {

// A stride coprime with n: p -> p * stride mod n visits every position.
size_t CoprimeStride(size_t n, uint64_t seed) {
  if (n <= 1) return 1;
  size_t stride = (seed % n) | 1;
  while (std::gcd(stride, n) != 1) stride = (stride + 2) % n;
  return stride == 0 ? 1 : stride;
}

// "7", or "64 to 127" where the bucket is a range.
std::string BucketText(int b) {
  if (ExploredBucketLow(b) == ExploredBucketHigh(b))
    return absl::StrCat(ExploredBucketLow(b));
  return absl::StrCat(ExploredBucketLow(b), " to ", ExploredBucketHigh(b));
}

// The first bucket at which the variants counted from the least explored
// reach `n`, and how many that is.
std::pair<int, int64_t> BucketReaching(const std::vector<int64_t>& histogram,
                                       int64_t n) {
  int64_t so_far = 0;
  for (size_t b = 0; b < histogram.size(); ++b) {
    so_far += histogram[b];
    if (so_far >= n) return {static_cast<int>(b), so_far};
  }
  return {static_cast<int>(histogram.size()) - 1, so_far};
}

}  // namespace

int ExploredBucket(uint32_t tuples) {
  if (tuples < kExactExploredBuckets) return static_cast<int>(tuples);
  return kExactExploredBuckets + std::bit_width(tuples) - 7;
}

uint32_t ExploredBucketLow(int b) {
  if (b < kExactExploredBuckets) return b;
  return uint32_t{1} << (b - kExactExploredBuckets + 6);
}

uint32_t ExploredBucketHigh(int b) {
  if (b < kExactExploredBuckets) return b;
  return 2 * ExploredBucketLow(b) - 1;  // wraps to the largest at the top
}

ExplorationBudget::ExplorationBudget(std::vector<int> indices,
                                     size_t num_variants, uint64_t seed)
    : tuples_(num_variants),
      member_(num_variants),
      buckets_(new std::atomic<int64_t>[kExploredBuckets]) {
  // A fixed shuffle without a sort (every variant, on the way to the first
  // input): a stride coprime with the count.
  const size_t n = indices.size();
  const size_t stride = CoprimeStride(n, seed ^ 0x2545f4914f6cdd1dull);
  order_.resize(n);
  for (size_t p = 0; p < n; ++p) order_[p] = indices[(p * stride + seed) % n];
  for (int index : order_) member_[index] = 1;
  for (int b = 0; b < kExploredBuckets; ++b) buckets_[b] = 0;
  buckets_[0] = static_cast<int64_t>(n);
}

void ExplorationBudget::Count(int index) {
  if (!member_[index] || tuples_[index] == UINT32_MAX) return;
  const uint32_t before = tuples_[index]++;
  const int from = ExploredBucket(before), to = ExploredBucket(before + 1);
  if (from == to) return;
  buckets_[from].fetch_sub(1, std::memory_order_relaxed);
  buckets_[to].fetch_add(1, std::memory_order_relaxed);
}

bool ExplorationBudget::HadItsShare(int index) const {
  return !member_[index] || tuples_[index] >= budget_;
}

int ExplorationBudget::Next(absl::FunctionRef<bool(int index)> wanted) {
  // At most two passes: the rest of this one, then a whole one under the
  // raised budget, which finds a wanted variant if there is any.
  for (size_t step = 0; step < 2 * order_.size(); ++step) {
    if (cursor_ == order_.size()) {
      cursor_ = 0;
      budget_ += kTuplesPerPass;
    }
    const int index = order_[cursor_++];
    if (tuples_[index] < budget_ && wanted(index)) return index;
  }
  return -1;
}

std::vector<int64_t> ExplorationBudget::Histogram() const {
  std::vector<int64_t> out(kExploredBuckets);
  for (int b = 0; b < kExploredBuckets; ++b)
    out[b] = buckets_[b].load(std::memory_order_relaxed);
  return out;
}

std::string LeastExploredText(const std::vector<int64_t>& histogram) {
  const int64_t total =
      std::accumulate(histogram.begin(), histogram.end(), int64_t{0});
  if (total == 0) return "";
  const auto [least, count] = BucketReaching(histogram, (total + 99) / 100);
  const int median = BucketReaching(histogram, (total + 1) / 2).first;
  const int64_t most = ExploredBucketHigh(least);
  return absl::StrCat("least-explored variants: ", count, " of ", total,
                      most == 0 ? " got no tuples"
                                : absl::StrCat(" got at most ", most, " tuples"),
                      " from fuzz inputs beyond the systematic tiers; "
                      "the median variant got ",
                      median == 0 ? "none" : BucketText(median));
}

}  // namespace ptxdiff
