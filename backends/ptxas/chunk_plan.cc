#include "backends/ptxas/chunk_plan.h"

#include <algorithm>
#include <cmath>

namespace ptxdiff {
namespace {

// `kernels`, in order, in about `runs` chunks of about equal cost
// (`total_cost` in tuples, each kernel kKernelCost + its size): a chunk
// closes once it reaches its share or kMaxKernelsPerModule kernels.
std::vector<Chunk> PackIntoRuns(std::span<const std::span<const int>> kernels,
                                size_t total_cost, size_t runs) {
  const size_t target = (total_cost + runs - 1) / runs;
  std::vector<Chunk> chunks;
  size_t chunk_cost = 0;
  for (std::span<const int> kernel : kernels) {
    if (chunks.empty() || chunk_cost >= target ||
        chunks.back().kernel_sizes.size() == kMaxKernelsPerModule) {
      chunks.emplace_back();
      chunk_cost = 0;
    }
    chunks.back().AddKernel(kernel);
    chunk_cost += kKernelCost + kernel.size();
  }
  return chunks;
}

}  // namespace

Chunk WithoutPositions(const Chunk& chunk, const std::vector<bool>& dropped) {
  Chunk kept;
  size_t p = 0;
  for (int size : chunk.kernel_sizes) {
    std::vector<int> kernel;
    for (int i = 0; i < size; ++i, ++p) {
      if (!dropped[p]) kernel.push_back(chunk.tuples[p]);
    }
    if (!kernel.empty()) kept.AddKernel(kernel);
  }
  return kept;
}

std::pair<Chunk, Chunk> Halves(const Chunk& chunk) {
  std::pair<Chunk, Chunk> halves;
  if (chunk.kernel_sizes.size() == 1) {
    const std::span<const int> all = chunk.tuples;
    const size_t half = all.size() / 2;
    halves.first.AddKernel(all.first(half));
    halves.second.AddKernel(all.subspan(half));
    return halves;
  }
  size_t p = 0;
  for (size_t k = 0; k < chunk.kernel_sizes.size(); ++k) {
    Chunk& half =
        k < chunk.kernel_sizes.size() / 2 ? halves.first : halves.second;
    half.AddKernel(
        std::span<const int>(chunk.tuples).subspan(p, chunk.kernel_sizes[k]));
    p += chunk.kernel_sizes[k];
  }
  return halves;
}

std::vector<Chunk> PlanChunks(std::vector<SizedTuple> sized,
                              const ChunkLimits& limits) {
  std::stable_sort(
      sized.begin(), sized.end(),
      [](const SizedTuple& a, const SizedTuple& b) { return a.size > b.size; });
  std::vector<std::vector<int>> kernels;
  size_t total = 0;  // cost, in tuples
  for (size_t i = 0; i < sized.size();) {
    std::vector<int>& kernel = kernels.emplace_back();
    const int size = sized[i].size;
    for (; i < sized.size() && static_cast<int>(kernel.size()) < size &&
           sized[i].size == size;
         ++i) {
      kernel.push_back(sized[i].tuple);
    }
    total += kKernelCost + kernel.size();
  }
  if (kernels.empty()) return {};
  // Every job gets the same share of the cost.
  const size_t jobs = limits.jobs;
  const size_t module =
      limits.kernels_per_module * (kKernelCost + limits.tuples_per_kernel);
  size_t runs = (total + module - 1) / module;
  runs = (runs + jobs - 1) / jobs * jobs;
  return PackIntoRuns(
      std::vector<std::span<const int>>(kernels.begin(), kernels.end()), total,
      runs);
}

std::vector<Chunk> PlanHalves(const std::vector<std::vector<int>>& failed,
                              int jobs) {
  std::vector<std::span<const int>> halves;
  size_t total = 0;  // cost, in tuples
  for (const std::vector<int>& kernel : failed) {
    const std::span<const int> all = kernel;
    const size_t half = (all.size() + 1) / 2;
    for (std::span<const int> h : {all.first(half), all.subspan(half)}) {
      if (h.empty()) continue;
      halves.push_back(h);
      total += kKernelCost + h.size();
    }
  }
  if (halves.empty()) return {};
  const size_t runs = std::max(
      (halves.size() + kMaxKernelsPerModule - 1) / kMaxKernelsPerModule,
      std::min<size_t>(jobs, halves.size()));
  return PackIntoRuns(halves, total, runs);
}

int KernelSizes::Of(const Variant& v, uint32_t shape) const {
  const Stats* s = Find(v, shape);
  if (s == nullptr || s->tuples < kMinShapeTuples) s = Find(v, kAnyShape);
  // Two folds of prior: a variant not seen yet gets the largest kernels.
  const double p = s == nullptr ? 1.0 : (s->folded + 2) / (s->tuples + 2);
  int best = max_;
  for (int k = 1; k < max_; k *= 2) {
    if (Cost(k, p) < Cost(best, p)) best = k;
  }
  return best;
}

void KernelSizes::Learn(const Variant& v, uint32_t shape, int folded,
                        int tuples, int spurious) {
  Add(stats_[{v, shape}], folded, tuples + spurious);
  Add(stats_[{v, kAnyShape}], folded, tuples + spurious);
}

void KernelSizes::Add(Stats& s, int folded, int tuples) {
  s.folded += folded;
  s.tuples += tuples;
  if (s.tuples > 4096) {  // forget slowly: operands change over a campaign
    s.folded /= 2;
    s.tuples /= 2;
  }
}

const KernelSizes::Stats* KernelSizes::Find(const Variant& v,
                                            uint32_t shape) const {
  const auto it = stats_.find(std::make_pair(v, shape));
  return it == stats_.end() ? nullptr : &it->second;
}

// Per tuple, for k a power of two: its share of the kernel and of every
// half a bisection compiles. A half of m tuples is compiled when the kernel
// of 2m it came from did not decode, which happens unless all 2m fold.
double KernelSizes::Cost(int k, double p) {
  double cost = static_cast<double>(kKernelCost + k) / k;
  for (int m = k / 2; m >= 1; m /= 2) {
    cost += static_cast<double>(kKernelCost + m) / m * (1 - std::pow(p, 2 * m));
  }
  return cost;
}

}  // namespace ptxdiff
