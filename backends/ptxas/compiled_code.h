// Compile once, run every input: the code ptxas emitted for a tuple's
// kernel, kept for the whole run and run again for every tuple that shares
// its key.
//
// A tuple's runtime sources are kernel parameters (isa/operand_form.h), so
// its kernel does not depend on their values: the variant, which sources are
// runtime values and the immediates (cut to their widths) determine it, for
// one arch and -O level. A kernel holds several tuples (ptx_module.h), each
// at its own slot; a kernel compiled for tuples of keys K1..Kn answers a
// tuple of key Ki by a run with that tuple's arguments at one of Ki's slots
// (the other slots keep the arguments they were compiled with). Runs are
// grouped: one run answers a tuple at every slot it can fill.
//
// The cache holds each key's kernel and slots, or, where ptxas stored a
// constant for every value of the runtime sources (a claim), that value. It
// is bounded in bytes; past the bound the oldest keys go first (a kernel's
// bytes are freed with its last key). A key never serves a tuple of another
// key: the key is compared whole, arch and -O level included.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_COMPILED_CODE_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_COMPILED_CODE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/sass_execution.h"
#include "isa/operand_form.h"
#include "isa/tuple.h"
#include "sass/sass_decoder.h"

namespace ptxdiff {

// What determines a tuple's compiled kernel: its variant, which sources are
// runtime values, the immediates (cut to their widths; 0 at runtime
// sources), and the arch and -O level it is compiled for.
struct CodeKey {
  Variant variant;
  uint8_t runtime = 0;
  int sm = 0;
  int opt_level = 0;
  std::array<uint64_t, kMaxSources> immediates = {};

  friend bool operator==(const CodeKey&, const CodeKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const CodeKey& k) {
    return H::combine(std::move(h), k.variant, k.runtime, k.sm, k.opt_level,
                      k.immediates);
  }
};

// `t`'s key, compiled for sm_`sm` at -O`opt_level`. Sources past the
// variant's are left out, so that stray bits there do not split a key.
CodeKey CodeKeyOf(const Tuple& t, int sm, int opt_level);

// A kernel the evaluator ran: its decoded SASS, the tuples it was compiled
// for (slot by slot: their arguments fill the slots a run leaves), and
// where each slot's result is stored.
struct CompiledKernel {
  std::vector<SassSlot> code;
  std::vector<Tuple> compiled_for;
  PtxModule layout;  // slots and kernel_begin only, one kernel
  int64_t output_bytes = 0;

  // What it holds in memory, for the cache's bound.
  size_t Bytes() const;
};

// Kernel `k` of `module`, compiled for `tuples` (the kernel's own, in
// order), with its decoded `code`.
CompiledKernel KernelOf(const PtxModule& module, int k,
                        std::span<const Tuple> tuples,
                        std::vector<SassSlot> code);

// The kernel parameters of one run: the kernel's own tuples' arguments,
// with `at[k]` in slot `slots[k]` instead.
std::vector<KernelArgument> RunArguments(const CompiledKernel& kernel,
                                         std::span<const int> slots,
                                         std::span<const Tuple* const> at);

// One run of `kernel` with `at[k]` in slot `slots[k]`: each slot's result,
// or nullopt with why (a stop of the evaluator, stores that are not the
// slots' results).
std::optional<std::vector<SlotValue>> RunCompiled(
    const SassArchInfo& arch, const CompiledKernel& kernel,
    std::span<const int> slots, std::span<const Tuple* const> at,
    std::string& why);

// RunCompiled for many runs of one kernel: its launch is laid out once, and
// a run writes only the arguments of the slots it fills (and puts the
// compiled tuples' back after), so that it allocates nothing once warm.
// `arch` and `kernel` must outlive it.
class CompiledKernelRunner {
 public:
  CompiledKernelRunner(const SassArchInfo& arch, const CompiledKernel& kernel);

  // One run with `at[k]` in slot `slots[k]`, traced if asked; valid until
  // the next run.
  KernelExecution& Execute(std::span<const int> slots,
                           std::span<const Tuple* const> at,
                           bool trace = false);

  // The last run's result of each slot, or null where its stores are not
  // the slots' results; valid until the next run.
  const std::vector<SlotValue>* Results();

  // As RunCompiled: each slot's result, or null with why; valid until the
  // next run.
  const std::vector<SlotValue>* Run(std::span<const int> slots,
                                    std::span<const Tuple* const> at,
                                    std::string& why);

  const SassArchInfo& arch() const { return arch_; }
  const CompiledKernel& kernel() const { return kernel_; }

 private:
  // Writes `t`'s runtime values into `slot`'s arguments; false, writing
  // nothing, where `t` is not of the slot's variant and form (its
  // arguments laid out otherwise).
  bool Place(int slot, const Tuple& t);

  const SassArchInfo& arch_;
  const CompiledKernel& kernel_;
  std::vector<int> first_argument_;  // per slot, then one past the last
  KernelExecutor executor_;
  KernelExecution execution_;
  std::vector<int> image_;  // ReadKernelResults' scratch
  std::vector<SlotValue> values_;
};

// What the cache answers for a key: a kernel and the slots compiled for it,
// or the value (and a `.cc` variant's carry) ptxas claimed for every value
// of the runtime sources.
struct CachedCode {
  std::shared_ptr<const CompiledKernel> kernel;  // null for a claim
  std::vector<int> slots;                        // of `kernel`, for the key
  uint64_t claimed_bits = 0;                     // where kernel is null
  bool claimed_carry = false;
};

struct CodeCacheStats {
  int64_t hits = 0;    // Find calls that found the key
  int64_t misses = 0;  // and that did not
  int64_t keys = 0;    // held now
  int64_t kernels = 0;
  int64_t bytes = 0;
  int64_t evicted = 0;  // keys dropped for the bound
};

class CompiledCodeCache {
 public:
  explicit CompiledCodeCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The key's code, or null; the pointer is valid until the next Insert.
  const CachedCode* Find(const CodeKey& key);

  // Keeps `code` for `key` (a key already held keeps its first code), then
  // drops the oldest keys while the bytes are over the bound.
  void Insert(const CodeKey& key, CachedCode code);

  const CodeCacheStats& stats() const { return stats_; }

 private:
  void Release(const CompiledKernel* kernel);

  size_t max_bytes_;
  absl::flat_hash_map<CodeKey, CachedCode> entries_;
  std::deque<CodeKey> order_;  // insertion order, oldest first
  // Keys per kernel: its bytes count once, and go with its last key.
  absl::flat_hash_map<const CompiledKernel*, int> keys_of_kernel_;
  CodeCacheStats stats_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_COMPILED_CODE_H_
