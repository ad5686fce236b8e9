// The `cuda` backend: the GPU itself as the implementation under test.
//
// Each batch's tuples are grouped by variant; each group runs as kernels
// generated from the instruction table (kernel_gen.h), JIT-compiled by the
// driver and cached in memory and on disk (module_cache.h), through a
// double-buffered pipeline of pinned host buffers and async copies
// (pipeline.h), one launch per variant group and stage.
//
// Options (HELLO key-values; unknown keys are ignored):
//   driver_library=PATH      the CUDA driver API implementation to load
//                            (default libcuda.so.1, NVIDIA's driver)
//   device=N                 the GPU (default 0); one worker per GPU
//   mode=register|immediate  operands from memory (default) or as immediates
//   cache_dir=PATH           compiled kernels (default $XDG_CACHE_HOME/ptxdiff
//                            or ~/.cache/ptxdiff; `cache_dir=` disables it)
//   kernel_timeout_ms=N      a stage running longer is a fault (default 10000)
//   stage_tuples=N           tuples per pipeline stage (default 1048576)
//   immediate_group=N        tuples per immediate-mode kernel (default 32)
//
// Declines: variants that are not PTX, need a newer SM, or a newer PTX ISA
// than the driver's JIT accepts are left out of the handshake's `supports`
// and declined (kUnsupportedVariant) if sent anyway; a kernel the JIT rejects
// declines its tuples (kNotEvaluable; kOperandForm in immediate mode) with the
// JIT log.
//
// Faults: an error after which the context is unusable (illegal instruction
// or address, launch failure, ... see IsStickyCudaError) or a stage that runs
// past the timeout cannot be answered. The backend then calls its fatal
// handler, by default ExitWorker: one line on stderr and exit status
// kExitDeviceFault (5) or kExitKernelTimeout (6). The client sees a crash,
// starts a new worker and retries; the line names the variants in flight.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_CUDA_BACKEND_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_CUDA_BACKEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/kernel_gen.h"
#include "protocol/fault_kind.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// Exit statuses of ptxdiff-worker after a device fault (the client's
// reading of them is protocol/fault_kind.h's).
inline constexpr int kExitDeviceFault = kWorkerExitDeviceFault;
inline constexpr int kExitKernelTimeout = kWorkerExitKernelTimeout;

struct CudaBackendOptions {
  std::string driver_library = kDefaultCudaDriverLibrary;
  int device = 0;
  KernelMode mode = KernelMode::kRegister;
  std::string cache_dir;  // empty: no disk cache
  absl::Duration kernel_timeout = absl::Seconds(10);
  uint32_t stage_tuples = 1u << 20;
  int immediate_group = 32;
  size_t max_modules = 4096;  // loaded modules kept between batches
};

// The options above; InvalidArgument naming a bad value.
absl::StatusOr<CudaBackendOptions> ParseCudaBackendOptions(
    const KeyValues& options);

// Called once when the device is lost; `message` is one line.
using FatalHandler =
    std::function<void(int exit_code, const std::string& message)>;

// Writes "ptxdiff-worker: <message>" to stderr and ends the process with
// `exit_code` at once (no destructors: they would call into a lost context).
[[noreturn]] void ExitWorker(int exit_code, const std::string& message);

// The backend on `driver` (nullptr: the real driver,
// LoadCudaDriver(driver_library)). Fails at once where CUDA cannot run:
// FailedPrecondition whose message names the driver library or cuInit's
// error, and suggests --backend=ptxas.
absl::StatusOr<std::unique_ptr<Backend>> MakeCudaBackend(
    const KeyValues& options, std::unique_ptr<CudaDriver> driver = nullptr,
    FatalHandler on_fatal = ExitWorker);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_CUDA_BACKEND_H_
