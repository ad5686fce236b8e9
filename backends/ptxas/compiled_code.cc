#include "backends/ptxas/compiled_code.h"

#include <utility>

#include "isa/family_table.h"
#include "backends/ptxas/sass_calibration.h"

namespace ptxdiff {

CodeKey CodeKeyOf(const Tuple& t, int sm, int opt_level) {
  CodeKey key{.variant = t.variant,
              .runtime = static_cast<uint8_t>(
                  t.runtime & RuntimeCapableSources(t.variant)),
              .sm = sm,
              .opt_level = opt_level};
  for (int s = 0; s < NumSources(t.variant); ++s) {
    if (IsRuntimeSource(key.runtime, s)) continue;
    const int width = SourceWidth(t.variant, s);
    key.immediates[s] = width >= 64 ? t.operands.v[s]
                                    : t.operands.v[s] &
                                          ((uint64_t{1} << width) - 1);
  }
  return key;
}

size_t CompiledKernel::Bytes() const {
  size_t bytes = sizeof(*this) + code.capacity() * sizeof(SassSlot) +
                 compiled_for.capacity() * sizeof(Tuple) +
                 layout.slots.capacity() * sizeof(ResultSlot) +
                 layout.kernel_begin.capacity() * sizeof(int);
  for (const SassSlot& s : code) bytes += s.why_not.capacity();
  for (const std::string& k : layout.kernels) bytes += sizeof(k) + k.capacity();
  return bytes;
}

CompiledKernel KernelOf(const PtxModule& module, int k,
                        std::span<const Tuple> tuples,
                        std::vector<SassSlot> code) {
  CompiledKernel kernel;
  kernel.code = std::move(code);
  const int begin = module.kernel_begin[k], end = module.kernel_begin[k + 1];
  kernel.compiled_for.assign(tuples.begin(), tuples.end());
  for (int t = begin; t < end; ++t) {
    ResultSlot slot = module.slots[t];
    slot.kernel = 0;
    kernel.layout.slots.push_back(slot);
  }
  kernel.layout.kernels = {module.kernels[k]};
  kernel.layout.kernel_begin = {0, end - begin};
  kernel.output_bytes = module.slots[end - 1].offset + 16;
  return kernel;
}

std::vector<KernelArgument> RunArguments(const CompiledKernel& kernel,
                                         std::span<const int> slots,
                                         std::span<const Tuple* const> at) {
  std::vector<const Tuple*> by_slot(kernel.compiled_for.size());
  for (size_t s = 0; s < by_slot.size(); ++s) {
    by_slot[s] = &kernel.compiled_for[s];
  }
  for (size_t k = 0; k < slots.size(); ++k) by_slot[slots[k]] = at[k];
  std::vector<KernelArgument> args;
  args.reserve(by_slot.size() * kMaxSources);
  for (const Tuple* t : by_slot) AppendRuntimeArguments(*t, args);
  return args;
}

std::optional<std::vector<SlotValue>> RunCompiled(
    const SassArchInfo& arch, const CompiledKernel& kernel,
    std::span<const int> slots, std::span<const Tuple* const> at,
    std::string& why) {
  CompiledKernelRunner runner(arch, kernel);
  const std::vector<SlotValue>* values = runner.Run(slots, at, why);
  if (values == nullptr) return std::nullopt;
  return *values;
}

namespace {

// The arguments of `kernel`'s own tuples, and where each slot's begin.
std::vector<KernelArgument> SlotArguments(const CompiledKernel& kernel,
                                          std::vector<int>& first) {
  std::vector<KernelArgument> args;
  for (const Tuple& t : kernel.compiled_for) {
    first.push_back(static_cast<int>(args.size()));
    AppendRuntimeArguments(t, args);
  }
  first.push_back(static_cast<int>(args.size()));
  return args;
}

}  // namespace

CompiledKernelRunner::CompiledKernelRunner(const SassArchInfo& arch,
                                           const CompiledKernel& kernel)
    : arch_(arch),
      kernel_(kernel),
      executor_(arch, SlotArguments(kernel, first_argument_),
                kernel.output_bytes) {}

bool CompiledKernelRunner::Place(int slot, const Tuple& t) {
  const Tuple& own = kernel_.compiled_for[slot];
  if (!(t.variant == own.variant) || t.runtime != own.runtime) return false;
  // AppendRuntimeArguments' order: the runtime sources, first to last.
  int argument = first_argument_[slot];
  for (int s = 0; s < NumSources(t.variant); ++s) {
    if (t.IsRuntime(s)) executor_.SetArgument(argument++, t.operands.v[s]);
  }
  return true;
}

KernelExecution& CompiledKernelRunner::Execute(std::span<const int> slots,
                                               std::span<const Tuple* const> at,
                                               bool trace) {
  size_t placed = 0;
  while (placed < slots.size() && Place(slots[placed], *at[placed])) ++placed;
  if (placed == slots.size()) {
    executor_.Run(kernel_.code, trace, execution_);
  } else {
    // A tuple whose arguments are laid out otherwise: a launch of its own.
    execution_ =
        ExecuteKernel(arch_, kernel_.code, RunArguments(kernel_, slots, at),
                      kernel_.output_bytes, trace);
  }
  for (size_t k = 0; k < placed; ++k) {
    Place(slots[k], kernel_.compiled_for[slots[k]]);
  }
  return execution_;
}

const std::vector<SlotValue>* CompiledKernelRunner::Run(
    std::span<const int> slots, std::span<const Tuple* const> at,
    std::string& why) {
  const KernelExecution& run = Execute(slots, at);
  if (!run.ran) {
    why = run.why_not;
    return nullptr;
  }
  const std::vector<SlotValue>* values = Results();
  if (values == nullptr) why = "its stores are not the tuples' results";
  return values;
}

const std::vector<SlotValue>* CompiledKernelRunner::Results() {
  if (!ReadKernelResults(kernel_.layout, 0, execution_.stores, image_,
                         values_)) {
    return nullptr;
  }
  return &values_;
}

const CachedCode* CompiledCodeCache::Find(const CodeKey& key) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  return &it->second;
}

void CompiledCodeCache::Insert(const CodeKey& key, CachedCode code) {
  const CompiledKernel* kernel = code.kernel.get();
  const size_t slot_bytes = code.slots.capacity() * sizeof(int);
  if (!entries_.try_emplace(key, std::move(code)).second) return;
  order_.push_back(key);
  ++stats_.keys;
  stats_.bytes += static_cast<int64_t>(sizeof(CodeKey) + sizeof(CachedCode) +
                                       slot_bytes);
  if (kernel != nullptr && keys_of_kernel_[kernel]++ == 0) {
    ++stats_.kernels;
    stats_.bytes += static_cast<int64_t>(kernel->Bytes());
  }
  while (stats_.bytes > static_cast<int64_t>(max_bytes_) && !order_.empty()) {
    const auto oldest = entries_.find(order_.front());
    order_.pop_front();
    stats_.bytes -= static_cast<int64_t>(
        sizeof(CodeKey) + sizeof(CachedCode) +
        oldest->second.slots.capacity() * sizeof(int));
    // Keep the kernel alive until its bytes are counted off.
    const std::shared_ptr<const CompiledKernel> held = oldest->second.kernel;
    entries_.erase(oldest);
    --stats_.keys;
    ++stats_.evicted;
    if (held != nullptr) Release(held.get());
  }
}

void CompiledCodeCache::Release(const CompiledKernel* kernel) {
  const auto it = keys_of_kernel_.find(kernel);
  if (--it->second > 0) return;
  keys_of_kernel_.erase(it);
  --stats_.kernels;
  stats_.bytes -= static_cast<int64_t>(kernel->Bytes());
}

}  // namespace ptxdiff
