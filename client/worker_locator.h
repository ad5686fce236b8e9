// Where the harness finds ptxdiff-worker, and which backend it picks when
// the user names none: the best this machine has (cuda where a GPU and its
// driver are present, else ptxas where the CUDA toolkit is, else oracle).

#ifndef PTXDIFF_CLIENT_WORKER_LOCATOR_H_
#define PTXDIFF_CLIENT_WORKER_LOCATOR_H_

#include <string>

#include "absl/status/statusor.h"

namespace ptxdiff {

// $PTXDIFF_WORKER, else ptxdiff-worker beside the running executable, else
// in the build tree's worker/ beside its cli/ or fuzzers/.
absl::StatusOr<std::string> FindWorkerBinary();

// The ptxas the ptxas backend would use: $PTXAS, $CUDA_HOME/bin/ptxas,
// /usr/local/cuda/bin/ptxas, or "" when there is none.
std::string FindPtxas();

// "cuda", "ptxas" or "oracle", and why (one line for the user).
struct DefaultBackend {
  std::string name;
  std::string reason;
};
DefaultBackend ChooseDefaultBackend();

}  // namespace ptxdiff

#endif  // PTXDIFF_CLIENT_WORKER_LOCATOR_H_
