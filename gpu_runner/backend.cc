#include "gpu_runner/backend.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gpu_runner/oracle_backend.h"
#include "gpu_runner/ptxas/ptxas_backend.h"

namespace ptxdiff {

absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(absl::string_view name,
                                                     const KeyValues& options) {
  if (name == "oracle") return MakeOracleBackend();
  if (name == "ptxas") return MakePtxasBackend(options);
  return absl::NotFoundError(
      absl::StrCat("unknown backend '", name, "'; built in: oracle, ptxas"));
}

}  // namespace ptxdiff
