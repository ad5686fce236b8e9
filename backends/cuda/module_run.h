// One module of kernel ABI 2 (entry ptxdiff_register(in, out, n): a batch
// module, or a module of programs, docs/kernel-abi.md "Programs") run once
// on the device, on one block of kModuleRunThreads threads, and how it
// ended.
//
// This is what `ptxdiff-worker --backend=cuda --run-module` does for the
// program backend on a GPU (program/program_cuda.h), one process per run:
// after a device fault (a sticky error) or a kernel that never ends, the
// context is lost for good, and only a new process can run the next module.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_MODULE_RUN_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_MODULE_RUN_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/cuda/driver_api.h"

namespace ptxdiff {

struct CudaModuleRun {
  enum End : uint8_t {
    kOk,           // `out` holds the output buffer
    kRejected,     // the driver's JIT rejected the module
    kDeviceFault,  // a sticky error: the context is lost
    kTimeout,      // the kernel ran past the timeout
  } end = kOk;
  std::string out;   // n x kBatchResultBytes, for kOk
  std::string what;  // for the others: the error, with the JIT log
};

// The threads a module runs on: one warp, so that a module of programs
// runs those with thread inputs on each lane (program/program_ptx.h); a
// batch module's grid-stride loop runs its tuples on any.
inline constexpr unsigned kModuleRunThreads = 32;

// Runs `ptx`'s ptxdiff_register on a block of kModuleRunThreads threads of
// the current context's device, with `in` as its input buffer and `n` slots of
// output. An error for a failure that is neither the module's nor the device's
// (an allocation, a non-sticky launch error).
absl::StatusOr<CudaModuleRun> RunModuleOnDevice(CudaDriver& driver,
                                                absl::string_view ptx,
                                                absl::string_view in, size_t n,
                                                absl::Duration timeout);

// Exit statuses of `ptxdiff-worker --backend=cuda --run-module`, beside
// worker_main.cc's 2 (bad command line) and 3 (cannot run here), and the
// backend's kExitDeviceFault (5) and kExitKernelTimeout (6).
inline constexpr int kExitModuleRejected = 1;
inline constexpr int kExitModuleRunFailed = 7;

// ptxdiff-worker --backend=cuda --run-module PTX IN OUT N [KEY=VALUE...]:
// the module in file PTX run on the input in file IN, its output written
// to file OUT. KEY=VALUE are the backend's options (driver_library,
// device, kernel_timeout_ms; cuda_backend.h). Returns the exit status, 0
// when OUT is written; the others with one line on stderr. `driver`:
// nullptr for LoadCudaDriver(driver_library).
int RunModuleCommand(std::span<const std::string> args,
                     std::unique_ptr<CudaDriver> driver = nullptr);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_MODULE_RUN_H_
