#include "backends/cuda/jit.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

// The JIT options that capture both logs. The driver writes into the buffers
// during every call made with the options (for a link state, until
// cuLinkDestroy), so this object outlives them all.
class JitLogs {
 public:
  JitLogs() {
    values_[0] = error_;
    values_[1] = reinterpret_cast<void*>(uintptr_t{kJitLogBytes});
    values_[2] = info_;
    values_[3] = reinterpret_cast<void*>(uintptr_t{kJitLogBytes});
  }
  JitLogs(const JitLogs&) = delete;
  JitLogs& operator=(const JitLogs&) = delete;

  unsigned int count() const { return 4; }
  CUjit_option* options() { return options_; }
  void** values() { return values_; }

  // `status` with the logs appended to its message (payloads kept).
  absl::Status Annotate(const absl::Status& status) const {
    if (status.ok()) return status;
    std::string message(status.message());
    AppendLog(message, "JIT log", error_);
    AppendLog(message, "JIT info log", info_);
    absl::Status annotated(status.code(), message);
    status.ForEachPayload(
        [&](absl::string_view url, const absl::Cord& payload) {
          annotated.SetPayload(url, payload);
        });
    return annotated;
  }

 private:
  static void AppendLog(std::string& message, absl::string_view title,
                        const char* log) {
    // strnlen: the driver NUL-terminates, but a test double or a cut log
    // might not.
    const absl::string_view text(log, strnlen(log, kJitLogBytes));
    if (!text.empty()) absl::StrAppend(&message, "\n", title, ":\n", text);
  }

  char error_[kJitLogBytes] = {};
  char info_[kJitLogBytes] = {};
  CUjit_option options_[4] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values_[4] = {};
};

// Destroys a link state on every path out of CompilePtx. Its result is
// ignored: nothing useful can be done about a failed cleanup.
class LinkStateHolder {
 public:
  explicit LinkStateHolder(CudaDriver& driver) : driver_(driver) {}
  ~LinkStateHolder() {
    if (state_ != nullptr) (void)driver_.LinkDestroy(state_);
  }
  CUlinkState* out() { return &state_; }
  CUlinkState get() const { return state_; }

 private:
  CudaDriver& driver_;
  CUlinkState state_ = nullptr;
};

absl::StatusOr<std::string> LinkPtx(CudaDriver& driver, JitLogs& logs,
                                    absl::string_view ptx) {
  LinkStateHolder link(driver);
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver, "start a JIT compilation",
      LinkCreate(logs.count(), logs.options(), logs.values(), link.out())));
  // The driver wants PTX NUL-terminated, and its size counted with the NUL.
  std::string text(ptx);
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver, "JIT-compile the kernel's PTX",
      LinkAddData(link.get(), CU_JIT_INPUT_PTX, text.data(), text.size() + 1,
                  "ptxdiff.ptx", 0, nullptr, nullptr)));
  void* image = nullptr;
  size_t size = 0;
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver, "link the kernel", LinkComplete(link.get(), &image, &size)));
  if (image == nullptr || size == 0) {
    return absl::InternalError("the JIT returned an empty image");
  }
  // The image belongs to the link state: copy it before the state goes.
  return std::string(static_cast<const char*>(image), size);
}

}  // namespace

absl::StatusOr<std::string> CompilePtx(CudaDriver& driver,
                                       absl::string_view ptx) {
  JitLogs logs;
  absl::StatusOr<std::string> image = LinkPtx(driver, logs, ptx);
  if (!image.ok()) return logs.Annotate(image.status());
  return image;
}

absl::StatusOr<CUmodule> LoadModule(CudaDriver& driver,
                                    absl::string_view image) {
  JitLogs logs;
  CUmodule module = nullptr;
  const absl::Status loaded =
      PTXDIFF_CU_CALL(driver, "load the kernel's image",
                      ModuleLoadDataEx(&module, image.data(), logs.count(),
                                       logs.options(), logs.values()));
  if (!loaded.ok()) return logs.Annotate(loaded);
  return module;
}

bool IsJitRejection(CUresult result) {
  switch (result) {
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_SOURCE:
      return true;
    default:
      return false;
  }
}

}  // namespace ptxdiff
