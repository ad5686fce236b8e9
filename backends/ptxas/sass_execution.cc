#include "backends/ptxas/sass_execution.h"

#include "sass/sass_machine.h"

namespace ptxdiff {
namespace {

// Where the output buffer is: any address works; this one is far from 0,
// so that a kernel computing an address from nothing does not hit it.
constexpr uint64_t kOutputAddress = 0x7f0000000000;
// Where the k-th input buffer is: apart from the output and each other.
constexpr uint64_t kInputAddress = 0x7e0000000000;
constexpr uint64_t kInputStride = uint64_t{1} << 32;

// Appends `value`'s low `bytes` bytes, aligned to their size; their offset.
uint32_t Append(std::vector<uint8_t>& bank, int bytes, uint64_t value) {
  while (bank.size() % bytes != 0) bank.push_back(0);
  const uint32_t offset = static_cast<uint32_t>(bank.size());
  for (int b = 0; b < bytes; ++b)
    bank.push_back(static_cast<uint8_t>(value >> (8 * b)));
  return offset;
}

}  // namespace

KernelExecutor::KernelExecutor(const SassArchInfo& arch,
                               std::span<const KernelArgument> arguments,
                               int64_t output_bytes, uint32_t thread) {
  launch_.thread = thread;
  launch_.constant_bank.reserve(arch.param_base + 8 * (arguments.size() + 2));
  launch_.constant_bank.assign(arch.param_base, 0);
  launch_.known_from = arch.param_base;
  Append(launch_.constant_bank, 8, kOutputAddress);
  places_.reserve(arguments.size());
  for (const KernelArgument& a : arguments) {
    if (a.pointee.empty()) {
      places_.push_back(
          {Append(launch_.constant_bank, a.bytes, a.value), a.bytes});
      continue;
    }
    const uint64_t address =
        kInputAddress + kInputStride * launch_.buffers.size();
    places_.push_back({Append(launch_.constant_bank, 8, address), 8});
    launch_.buffers.push_back({.address = address, .bytes = a.pointee});
  }
  // The parameter buffer ends on an 8-byte boundary; ptxas loads a 16-bit
  // parameter as a 32-bit word. The padding is taken as zeros, so that a
  // kernel that uses it runs (a bug that depends on it would not show).
  while (launch_.constant_bank.size() % 8 != 0)
    launch_.constant_bank.push_back(0);
  launch_.buffers.push_back({.address = kOutputAddress,
                             .bytes = std::vector<uint8_t>(output_bytes),
                             .writable = true});
}

void KernelExecutor::SetArgument(size_t i, uint64_t value) {
  const Place& place = places_[i];
  for (int b = 0; b < place.bytes; ++b) {
    launch_.constant_bank[place.offset + b] =
        static_cast<uint8_t>(value >> (8 * b));
  }
}

void KernelExecutor::Run(const std::vector<SassSlot>& kernel, bool trace,
                         KernelExecution& out) {
  launch_.trace = trace;
  RunSass(kernel, launch_, out.run);
  out.ran = out.run.ran;
  out.steps = out.run.steps;
  out.why_not = out.run.why_not;
  out.blocker = out.run.blocker;
  out.stores.clear();
  for (const SassStore& s : out.run.stores) {
    out.stores.push_back(
        {.offset = static_cast<int64_t>(s.address - kOutputAddress),
         .size = s.size,
         .words = s.words});
  }
}

KernelExecution ExecuteKernel(const SassArchInfo& arch,
                              const std::vector<SassSlot>& kernel,
                              std::span<const KernelArgument> arguments,
                              int64_t output_bytes, bool trace,
                              uint32_t thread) {
  KernelExecutor executor(arch, arguments, output_bytes, thread);
  KernelExecution out;
  executor.Run(kernel, trace, out);
  return out;
}

std::optional<SassDeparture> DepartureAt(
    const SassArchInfo& arch, const std::vector<SassSlot>& optimized,
    std::span<const KernelArgument> arguments, int64_t output_bytes,
    int64_t offset, const SassRun& reference, uint32_t thread) {
  const KernelExecution run = ExecuteKernel(arch, optimized, arguments,
                                            output_bytes, /*trace=*/true, thread);
  // ExecuteKernel keeps one ConstantStore per machine store, in order.
  if (!run.ran || run.stores.size() != run.run.stores.size()) {
    return std::nullopt;
  }
  for (size_t s = run.stores.size(); s-- > 0;) {
    if (run.stores[s].offset == offset) {
      return FirstDeparture(run.run, run.run.stores[s], reference);
    }
  }
  return std::nullopt;
}

std::vector<int> StoredImage(const std::vector<ConstantStore>& stores,
                             int64_t size) {
  std::vector<int> image(size, -1);
  for (const ConstantStore& s : stores) {
    for (int b = 0; b < s.size; ++b) {
      const int64_t at = s.offset + b;
      if (at < 0 || at >= size) continue;
      image[at] = static_cast<int>((s.words[b / 4] >> (8 * (b % 4))) & 0xff);
    }
  }
  return image;
}

}  // namespace ptxdiff
