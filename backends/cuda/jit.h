// PTX to device code through the driver's JIT, with its logs kept.
//
// CompilePtx runs the driver's JIT (cuLinkCreate/AddData/Complete) and returns
// the image (a cubin for the current context's device), which can be stored
// and loaded again later without compiling (module_cache.h). LoadModule loads
// an image into the current context. Both pass the JIT's error and info log
// buffers, and a failure carries the log in its message: a kernel the JIT
// rejects says why, with the PTX line number.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_JIT_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_JIT_H_

#include <cuda.h>

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/cuda/driver_api.h"

namespace ptxdiff {

// The size of each JIT log buffer; longer logs are cut.
inline constexpr size_t kJitLogBytes = 16 * 1024;

// The device image of `ptx` for the current context. A JIT error is the
// driver's status (CUDA_ERROR_INVALID_PTX, ...) with "JIT log:" and the log
// appended to its message.
absl::StatusOr<std::string> CompilePtx(CudaDriver& driver,
                                       absl::string_view ptx);

// Loads `image` (from CompilePtx) into the current context.
absl::StatusOr<CUmodule> LoadModule(CudaDriver& driver,
                                    absl::string_view image);

// True for the results that mean the JIT rejected the code itself (not that
// the driver or device failed): the variant is declined rather than the
// batch failed.
bool IsJitRejection(CUresult result);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_JIT_H_
