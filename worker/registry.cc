// The backends built into ptxdiff-worker (MakeBackend, declared in
// backend.h): the one place that knows them all.

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "backends/oracle/oracle_backend.h"
#include "backends/ptx_cmd/ptx_cmd_backend.h"
#include "backends/ptxas/ptxas_backend.h"
#include "protocol/backend_names.h"
#if defined(PTXDIFF_HAVE_CUDA_BACKEND)
#include "backends/cuda/cuda_backend.h"
#endif

namespace ptxdiff {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(absl::string_view name,
                                                     const KeyValues& options) {
  if (name == kOracleBackend) return MakeOracleBackend();
  if (name == kPtxasBackend) return MakePtxasBackend(options);
  if (name == kPtxCmdBackend) return MakePtxCmdBackend(options);
#if defined(PTXDIFF_HAVE_CUDA_BACKEND)
  if (name == kCudaBackend) return MakeCudaBackend(options);
#else
  if (name == kCudaBackend) {
    return absl::FailedPreconditionError(
        "this ptxdiff-worker was built without the CUDA toolkit's headers "
        "(find_package(CUDAToolkit) failed); --backend=ptxas needs no GPU");
  }
#endif
  return absl::NotFoundError(absl::StrCat(
      "unknown backend '", name, "'; built in: ", BuiltinBackendNames()));
}

}  // namespace ptxdiff
