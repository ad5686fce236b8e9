#include "backends/ptxas/nvjitlink.h"

#include <dlfcn.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/call_within.h"

// Under LeakSanitizer (the ASan builds): libnvJitLink keeps a few
// allocations of each thread that compiled for the life of the process (a
// fixed amount, which does not grow with the compiles), and LeakSanitizer
// reports them at exit.
extern "C" __attribute__((used, visibility("default"))) const char*
__lsan_default_suppressions() {
  return "leak:libnvJitLink.so\n";
}

namespace ptxdiff {

// The C API of nvJitLink.h (CUDA 12 and 13), declared here so that building
// needs no CUDA headers.
struct NvJitLink::Api {
  using Handle = void*;
  static constexpr int kSuccess = 0;
  static constexpr int kInputPtx = 2;  // NVJITLINK_INPUT_PTX
  int (*create)(Handle*, uint32_t, const char**);
  int (*destroy)(Handle*);
  int (*add_data)(Handle, int, const void*, size_t, const char*);
  int (*complete)(Handle);
  int (*cubin_size)(Handle, size_t*);
  int (*cubin)(Handle, void*);
  int (*error_log_size)(Handle, size_t*);
  int (*error_log)(Handle, char*);
  int (*version)(unsigned*, unsigned*);
};

namespace {

template <typename F>
bool Resolve(void* library, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  return fn != nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NvJitLink>> NvJitLink::Load(
    const std::string& ptxas) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(ptxas, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot resolve ", ptxas, " to find its toolkit: ", ec.message()));
  }
  const std::string path =
      (real.parent_path().parent_path() / "lib64/libnvJitLink.so").string();
  // Never closed: its own C++ runtime keeps allocations (the exception
  // emergency pool) that LeakSanitizer reports as leaks once the library is
  // unmapped, and loading it again is slow.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load ", path, ": ", dlerror()));
  }
  auto api = std::make_unique<Api>();
  const bool resolved =
      Resolve(library, "nvJitLinkCreate", api->create) &&
      Resolve(library, "nvJitLinkDestroy", api->destroy) &&
      Resolve(library, "nvJitLinkAddData", api->add_data) &&
      Resolve(library, "nvJitLinkComplete", api->complete) &&
      Resolve(library, "nvJitLinkGetLinkedCubinSize", api->cubin_size) &&
      Resolve(library, "nvJitLinkGetLinkedCubin", api->cubin) &&
      Resolve(library, "nvJitLinkGetErrorLogSize", api->error_log_size) &&
      Resolve(library, "nvJitLinkGetErrorLog", api->error_log) &&
      Resolve(library, "nvJitLinkVersion", api->version);
  unsigned major = 0, minor = 0;
  if (!resolved || api->version(&major, &minor) != Api::kSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " lacks the nvJitLink C API this worker uses"));
  }
  return std::unique_ptr<NvJitLink>(
      new NvJitLink(path, std::move(api), absl::StrCat(major, ".", minor)));
}

NvJitLink::NvJitLink(std::string path, std::unique_ptr<Api> api,
                     std::string version)
    : path_(std::move(path)),
      api_(std::move(api)),
      version_(std::move(version)) {}

NvJitLink::~NvJitLink() = default;

absl::StatusOr<PtxasOutput> NvJitLink::Compile(absl::string_view arch,
                                               absl::string_view ptx,
                                               int opt_level) const {
  const std::string arch_option = absl::StrCat("-arch=", arch);
  const std::string opt_option = absl::StrCat("-O", opt_level);
  const char* options[] = {arch_option.c_str(), opt_option.c_str()};
  // The default level is given as before, by no option: its cubins stay
  // byte for byte what they were.
  const int count = opt_level == kPtxasDefaultOptLevel ? 1 : 2;
  Api::Handle handle = nullptr;
  if (api_->create(&handle, count, options) != Api::kSuccess) {
    return absl::InternalError(
        absl::StrCat("nvJitLinkCreate failed for ", arch_option));
  }
  PtxasOutput out;
  // A PTX input is assembled as it is added; its errors are in the error log.
  out.ok = api_->add_data(handle, Api::kInputPtx, ptx.data(), ptx.size(),
                          "m.ptx") == Api::kSuccess &&
           api_->complete(handle) == Api::kSuccess;
  size_t size = 0;
  out.ok = out.ok && api_->cubin_size(handle, &size) == Api::kSuccess;
  if (out.ok) {
    out.cubin.resize(size);
    out.ok = api_->cubin(handle, out.cubin.data()) == Api::kSuccess;
  }
  if (!out.ok && api_->error_log_size(handle, &size) == Api::kSuccess &&
      size > 0) {
    out.log.resize(size);
    if (api_->error_log(handle, out.log.data()) != Api::kSuccess)
      out.log.clear();
    while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  }
  api_->destroy(&handle);
  return out;
}

absl::StatusOr<PtxasOutput> CompileWithin(
    std::shared_ptr<const NvJitLink> library, absl::string_view arch,
    absl::string_view ptx, int opt_level, absl::Duration timeout) {
  // Owned by the call: it may outlive this frame.
  auto result = std::make_shared<absl::StatusOr<PtxasOutput>>();
  const CallEnd end =
      CallWithin([library = std::move(library), arch = std::string(arch),
                  ptx = std::string(ptx), opt_level,
                  result] { *result = library->Compile(arch, ptx, opt_level); },
                 timeout);
  if (end == CallEnd::kReturned) return std::move(*result);
  PtxasOutput cut;
  cut.how.timed_out = end == CallEnd::kTimedOut;
  cut.how.interrupted = end == CallEnd::kInterrupted;
  // Not Describe's "(killed)": nothing was.
  cut.log = cut.how.timed_out ? absl::StrCat("timed out after ",
                                             absl::FormatDuration(timeout),
                                             " (in-process, left to run on)")
                              : "interrupted (in-process, left to run on)";
  return cut;
}

}  // namespace ptxdiff
