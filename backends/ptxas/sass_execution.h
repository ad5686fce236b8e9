// Running one of ptxdiff's compiled kernels on the CPU (sass/sass_machine.h):
// the bridge between a kernel's PTX parameters and the machine's constant
// bank, and between the machine's stores and the offsets from the output
// pointer that the ptxas backend and the program backends read.
//
// Every kernel ptxdiff compiles takes the output pointer as its first
// parameter, then its runtime operands or inputs, each aligned to its size
// (the PTX ABI); the output pointer is given a buffer of `output_bytes`
// here, and a store anywhere else stops the run.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_EXECUTION_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_EXECUTION_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/ptxas/sass_constants.h"
#include "sass/sass_decoder.h"
#include "sass/sass_departure.h"
#include "sass/sass_instruction.h"
#include "sass/sass_machine.h"

namespace ptxdiff {

// A kernel parameter after the output pointer: its size in bytes (2, 4 or
// 8) and value.
struct KernelArgument {
  int bytes = 4;
  uint64_t value = 0;
  // Where not empty, the argument is a global pointer (8 bytes, `value`
  // unused) to a read-only buffer of these bytes, as a kernel's input.
  std::vector<uint8_t> pointee;
};

// What a run of a kernel stored, as ConstantStores from the output pointer
// (in program order; a later store to the same bytes is a later entry).
struct KernelExecution {
  bool ran = false;
  std::vector<ConstantStore> stores;
  int64_t steps = 0;
  std::string why_not;  // when not run: why, and the census key
  std::string blocker;
  SassRun run;  // the machine's own account (its trace where asked for)
};

// A kernel's launch laid out once and run again and again, arguments
// changed between runs: the constant bank, the buffers and the stores keep
// their memory, so that a kernel run for many inputs allocates nothing per
// run once warm. ExecuteKernel is one run of one.
class KernelExecutor {
 public:
  // The launch of `arguments` (after the output pointer, as ExecuteKernel
  // lays them out), `output_bytes` of output; `thread` is the %tid.x (and
  // %laneid) of the thread run.
  KernelExecutor(const SassArchInfo& arch,
                 std::span<const KernelArgument> arguments,
                 int64_t output_bytes, uint32_t thread = 0);

  // Argument `i`, which is not a pointer, is `value` from the next run on.
  void SetArgument(size_t i, uint64_t value);

  // Runs `kernel` into `out`, whose memory is reused.
  void Run(const std::vector<SassSlot>& kernel, bool trace,
           KernelExecution& out);

 private:
  // Where an argument's bytes are in the constant bank.
  struct Place {
    uint32_t offset = 0;
    int bytes = 0;
  };

  SassLaunch launch_;
  std::vector<Place> places_;  // one per argument
};

// `thread` is the %tid.x (and %laneid) of the thread run.
KernelExecution ExecuteKernel(const SassArchInfo& arch,
                              const std::vector<SassSlot>& kernel,
                              std::span<const KernelArgument> arguments,
                              int64_t output_bytes, bool trace = false,
                              uint32_t thread = 0);

// Where `optimized`, run traced with `arguments`, departs from `reference`
// (a traced run of right code at the same inputs) on the way to its last
// store at `offset` from the output pointer (sass/sass_departure.h);
// nullopt where it does not run to the end or stores nothing there.
std::optional<SassDeparture> DepartureAt(
    const SassArchInfo& arch, const std::vector<SassSlot>& optimized,
    std::span<const KernelArgument> arguments, int64_t output_bytes,
    int64_t offset, const SassRun& reference, uint32_t thread = 0);

// The last value stored to each byte of [0, size) of the output, -1 where
// nothing was: how the stores of a run read as the buffer they leave.
std::vector<int> StoredImage(const std::vector<ConstantStore>& stores,
                             int64_t size);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_EXECUTION_H_
