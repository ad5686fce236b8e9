#include "client/worker_locator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

bool IsExecutable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

std::string SelfDirectory() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  const std::string path(buf, n);
  return path.substr(0, path.rfind('/'));
}

// A GPU is usable when a device node and the driver library are both there.
bool HaveGpu() {
  if (access("/dev/nvidia0", F_OK) != 0 &&
      access("/dev/nvidiactl", F_OK) != 0) {
    return false;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return false;
  dlclose(lib);
  return true;
}

}  // namespace

absl::StatusOr<std::string> FindWorkerBinary() {
  if (const char* env = std::getenv("PTXDIFF_WORKER"); env && *env) {
    if (IsExecutable(env)) return std::string(env);
    return absl::NotFoundError(
        absl::StrCat("PTXDIFF_WORKER=", env, " is not an executable"));
  }
  const std::string dir = SelfDirectory();
  for (const std::string& candidate :
       {dir + "/ptxdiff-worker", dir + "/../worker/ptxdiff-worker"}) {
    if (IsExecutable(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "ptxdiff-worker not found beside ", dir,
      " or in ../worker/; build it (cmake --build --preset release) or set "
      "PTXDIFF_WORKER"));
}

std::string FindPtxas() {
  if (const char* p = std::getenv("PTXAS"); p && IsExecutable(p)) return p;
  if (const char* home = std::getenv("CUDA_HOME")) {
    const std::string path = absl::StrCat(home, "/bin/ptxas");
    if (IsExecutable(path)) return path;
  }
  return IsExecutable("/usr/local/cuda/bin/ptxas") ? "/usr/local/cuda/bin/ptxas"
                                                   : "";
}

DefaultBackend ChooseDefaultBackend() {
  if (HaveGpu())
    return {std::string(kCudaBackend),
            "an NVIDIA GPU and its driver are present"};
  if (const std::string ptxas = FindPtxas(); !ptxas.empty()) {
    return {std::string(kPtxasBackend),
            absl::StrCat("no GPU here; the CUDA toolkit's ", ptxas,
                         " compiles each case, and what it folds, claims or "
                         "(sm_90) emits as code run on the CPU is judged")};
  }
  return {std::string(kOracleBackend),
          "no GPU and no CUDA toolkit here: only the oracle's self-check runs "
          "(install the CUDA toolkit for --backend=ptxas)"};
}

}  // namespace ptxdiff
