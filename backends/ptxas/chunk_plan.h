// The ptxas backend's plan of its ptxas runs: how many tuples go into one
// kernel (learned per variant and operand shape), which kernels go into one
// module (a chunk: one ptxas run), and how the kernels that did not decode
// are compiled again in halves. Pure: tuples are indices into a batch, and
// the backend (ptxas_backend.cc) compiles the chunks and reads them back.
//
// A kernel decodes only if all its tuples folded, so large kernels are cheap
// where tuples fold and costly where they do not: a kernel that did not
// decode is compiled again in halves, down to one tuple per kernel.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_CHUNK_PLAN_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_CHUNK_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "isa/variant.h"

namespace ptxdiff {

// ptxas spends about as long on a kernel's own overhead as on this many
// folded tuples: the unit of the plan's cost estimates.
inline constexpr size_t kKernelCost = 20;
// Tuples with runtime sources per kernel at most: their kernels are
// compiled into code, and ptxas compiles small kernels of such tuples
// faster per tuple than kernels of 64 (docs/performance.md, "The main
// job").
inline constexpr int kRuntimeTuplesPerKernel = 16;
// Enough to keep a cubin's section count (four per kernel) within ELF's
// 65280 without extended numbering.
inline constexpr size_t kMaxKernelsPerModule = 4096;

// Tuples (indices into the batch) compiled in one ptxas run, cut into
// kernels of kernel_sizes[0], kernel_sizes[1], ... tuples. Kernels of
// different sizes share a run: where starting ptxas is costly, a run per
// kernel size (and per bisection round and size) left too few tuples per
// run.
struct Chunk {
  std::vector<int> tuples;
  std::vector<int> kernel_sizes;

  void AddKernel(std::span<const int> kernel) {
    tuples.insert(tuples.end(), kernel.begin(), kernel.end());
    kernel_sizes.push_back(static_cast<int>(kernel.size()));
  }
};

// The chunk without the tuples at the positions `dropped` says (one flag
// per tuple of the chunk), its kernels shrunk to match and left out once
// empty: what is compiled again after ptxas rejected those tuples' lines.
Chunk WithoutPositions(const Chunk& chunk, const std::vector<bool>& dropped);

// The chunk's first and second halves: by kernels where it has several,
// else its one kernel's tuples in two kernels. For a run that failed
// without naming a tuple.
std::pair<Chunk, Chunk> Halves(const Chunk& chunk);

// How large the runs of a batch may be (the backend's options).
struct ChunkLimits {
  int tuples_per_kernel = 64;
  int kernels_per_module = 64;
  int jobs = 1;  // runs at once: the runs come in multiples of it
};

// A tuple and the kernel size it goes into (KernelSizes::Of).
struct SizedTuple {
  int size;
  int tuple;
};

// A batch's first runs: the tuples grouped by kernel size, largest first,
// in their order within a size (the backend sorts them by variant, so that
// a variant ptxas does not fold spoils only its own kernels), cut into
// kernels of that size; then in as many runs of about equal cost as full
// modules (`kernels_per_module` kernels of `tuples_per_kernel` tuples)
// would take, rounded up to a multiple of `jobs`.
std::vector<Chunk> PlanChunks(std::vector<SizedTuple> sized,
                              const ChunkLimits& limits);

// One bisection round: each of the `failed` kernels (the tuples of a kernel
// that did not decode) in two halves, the first the larger, all in as few
// runs as the module limit allows but at least `jobs` where there are
// enough halves, of about equal cost.
std::vector<Chunk> PlanHalves(const std::vector<std::vector<int>>& failed,
                              int jobs);

// How many tuples go into one kernel, learned across batches. Each tuple
// gets the kernel size with the least expected cost per tuple (its kernel,
// and the halves compiled where the kernel did not decode) for the rate at
// which tuples like it fold, counting as a failure a kernel that did not
// decode though all its tuples fold alone. "Like it" is its variant and
// operand shape (isa/operand_shape.h: ptxas folds a carry chain only
// without a carry, `div` only by 0 or 1, ...), or its variant alone while
// that shape has few answers yet. This changes only the speed, never an
// answer.
class KernelSizes {
 public:
  explicit KernelSizes(int max) : max_(max) {}

  // A power of two up to the max, or the max.
  int Of(const Variant& v, uint32_t shape) const;

  // In one batch, `folded` of `tuples` tuples of `v` with `shape` folded,
  // and `spurious` kernels with such tuples did not decode though every
  // tuple of theirs folded alone.
  void Learn(const Variant& v, uint32_t shape, int folded, int tuples,
             int spurious);

 private:
  struct Stats {
    double folded = 0, tuples = 0;
  };
  static constexpr uint32_t kAnyShape = ~uint32_t{0};
  // Answers of a shape before its own rate counts (a new shape goes by its
  // variant's rate: most shapes of a variant fold alike).
  static constexpr double kMinShapeTuples = 16;

  static void Add(Stats& s, int folded, int tuples);
  const Stats* Find(const Variant& v, uint32_t shape) const;
  static double Cost(int k, double p);

  int max_;
  absl::flat_hash_map<std::pair<Variant, uint32_t>, Stats> stats_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_CHUNK_PLAN_H_
