#include "backends/cuda/driver_api.h"

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "backends/cuda/driver_entry_points.h"
#include "backends/cuda/entry_point_lookup.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kResultPayload = "ptxdiff/cuda-result";
constexpr absl::string_view kCallPayload = "ptxdiff/cuda-call";

// The name a library without cuGetProcAddress exports each entry point's
// CUDA 12.0 ABI under is cuda.h's (PTXDIFF_CUDA_EXPORTED_NAME), which is the
// newest ABI of the toolkit built with: should a newer toolkit give one of
// them another signature, this stops the build rather than calling it with
// the wrong one.
#define PTXDIFF_CHECK_EXPORTED_ABI(method, symbol, type, function) \
  static_assert(std::is_same_v<decltype(&function), type>,          \
                "cuda.h's " PTXDIFF_CUDA_EXPORTED_NAME(function) " is " \
                "not the CUDA 12.0 ABI of " symbol);
PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_CHECK_EXPORTED_ABI)
#undef PTXDIFF_CHECK_EXPORTED_ABI

// The file the loader opened for `handle`, absolute and without symlinks
// (libcuda.so.1 becomes e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06),
// or `library` if it cannot say.
std::string LoadedPath(void* handle, const std::string& library) {
  const link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr || map->l_name[0] == '\0') {
    return library;
  }
  char* resolved = realpath(map->l_name, nullptr);
  if (resolved == nullptr) return map->l_name;
  std::string path = resolved;
  free(resolved);
  return path;
}

// The driver in libcuda.so.1 (or the library named instead). The library is
// never closed: the driver keeps threads and the primary context alive until
// the process exits.
class RealCudaDriver : public CudaDriver {
 public:
  CUresult Init(unsigned int flags) override { return init_(flags); }
  CUresult DriverGetVersion(int* version) override {
    return DriverGetVersion_(version);
  }
  CUresult GetErrorName(CUresult error, const char** name) override {
    return get_error_name_(error, name);
  }
  CUresult DeviceGetCount(int* count) override {
    return DeviceGetCount_(count);
  }
  CUresult DeviceGet(CUdevice* device, int ordinal) override {
    return DeviceGet_(device, ordinal);
  }
  CUresult DeviceGetName(char* name, int length, CUdevice device) override {
    return DeviceGetName_(name, length, device);
  }
  CUresult DeviceGetAttribute(int* value, CUdevice_attribute attribute,
                              CUdevice device) override {
    return DeviceGetAttribute_(value, attribute, device);
  }
  CUresult DevicePrimaryCtxRetain(CUcontext* context,
                                  CUdevice device) override {
    return DevicePrimaryCtxRetain_(context, device);
  }
  CUresult DevicePrimaryCtxRelease(CUdevice device) override {
    return DevicePrimaryCtxRelease_(device);
  }
  CUresult CtxSetCurrent(CUcontext context) override {
    return CtxSetCurrent_(context);
  }
  CUresult LinkCreate(unsigned int num_options, CUjit_option* options,
                      void** option_values, CUlinkState* state) override {
    return LinkCreate_(num_options, options, option_values, state);
  }
  CUresult LinkAddData(CUlinkState state, CUjitInputType type, void* data,
                       size_t size, const char* name, unsigned int num_options,
                       CUjit_option* options, void** option_values) override {
    return LinkAddData_(state, type, data, size, name, num_options, options,
                        option_values);
  }
  CUresult LinkComplete(CUlinkState state, void** image,
                        size_t* size) override {
    return LinkComplete_(state, image, size);
  }
  CUresult LinkDestroy(CUlinkState state) override {
    return LinkDestroy_(state);
  }
  CUresult ModuleLoadDataEx(CUmodule* module, const void* image,
                            unsigned int num_options, CUjit_option* options,
                            void** option_values) override {
    return ModuleLoadDataEx_(module, image, num_options, options,
                             option_values);
  }
  CUresult ModuleUnload(CUmodule module) override {
    return ModuleUnload_(module);
  }
  CUresult ModuleGetFunction(CUfunction* function, CUmodule module,
                             const char* name) override {
    return ModuleGetFunction_(function, module, name);
  }
  CUresult MemAlloc(CUdeviceptr* pointer, size_t bytes) override {
    return MemAlloc_(pointer, bytes);
  }
  CUresult MemFree(CUdeviceptr pointer) override { return MemFree_(pointer); }
  CUresult MemHostAlloc(void** pointer, size_t bytes,
                        unsigned int flags) override {
    return MemHostAlloc_(pointer, bytes, flags);
  }
  CUresult MemFreeHost(void* pointer) override { return MemFreeHost_(pointer); }
  CUresult MemcpyHtoDAsync(CUdeviceptr destination, const void* source,
                           size_t bytes, CUstream stream) override {
    return MemcpyHtoDAsync_(destination, source, bytes, stream);
  }
  CUresult MemcpyDtoHAsync(void* destination, CUdeviceptr source, size_t bytes,
                           CUstream stream) override {
    return MemcpyDtoHAsync_(destination, source, bytes, stream);
  }
  CUresult StreamCreate(CUstream* stream, unsigned int flags) override {
    return StreamCreate_(stream, flags);
  }
  CUresult StreamDestroy(CUstream stream) override {
    return StreamDestroy_(stream);
  }
  CUresult StreamQuery(CUstream stream) override {
    return StreamQuery_(stream);
  }
  CUresult StreamSynchronize(CUstream stream) override {
    return StreamSynchronize_(stream);
  }
  CUresult LaunchKernel(CUfunction function, unsigned int grid_x,
                        unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y,
                        unsigned int block_z, unsigned int shared_bytes,
                        CUstream stream, void** params, void** extra) override {
    return LaunchKernel_(function, grid_x, grid_y, grid_z, block_x, block_y,
                         block_z, shared_bytes, stream, params, extra);
  }

  std::string Location() const override { return location_; }
  std::string EntryPoints() const override { return entry_points_; }

  // Fills the entry points from `library`, as LoadCudaDriver describes.
  absl::Status Load(const std::string& library);

 private:
  absl::Status ResolveEntryPoints(const std::string& library);
  // cuGetProcAddress_v2's entry point `symbol` at kCudaAbiVersion; nullptr
  // where it fails.
  void* ProcAddress(const char* symbol) const;
  void* Exported(const char* name) const { return dlsym(handle_, name); }

  void* handle_ = nullptr;
  std::string location_;
  std::string entry_points_;
  PFN_cuGetProcAddress_v12000 get_proc_address_ = nullptr;
  PFN_cuInit_v2000 init_ = nullptr;
  PFN_cuGetErrorName_v6000 get_error_name_ = nullptr;
#define PTXDIFF_DECLARE_ENTRY_POINT(method, symbol, type, function) \
  type method##_ = nullptr;
  PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_DECLARE_ENTRY_POINT)
#undef PTXDIFF_DECLARE_ENTRY_POINT
};

absl::Status RealCudaDriver::Load(const std::string& library) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    const std::string detail =
        absl::StrCat(" (", why ? why : "unknown dlopen error", ")");
    if (library == kDefaultCudaDriverLibrary) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot load ", library, detail,
                       ": no NVIDIA driver on this machine"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("cannot load the CUDA driver library ", library, detail));
  }
  location_ = LoadedPath(handle_, library);
  init_ = reinterpret_cast<PFN_cuInit_v2000>(Exported("cuInit"));
  get_error_name_ =
      reinterpret_cast<PFN_cuGetErrorName_v6000>(Exported("cuGetErrorName"));
  if (init_ == nullptr && get_error_name_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(library,
                     " exports neither cuInit nor cuGetErrorName: it is not "
                     "the CUDA driver"));
  }
  if (init_ == nullptr || get_error_name_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        library, " lacks ", init_ == nullptr ? "cuInit" : "cuGetErrorName",
        ", which every implementation of the CUDA driver API exports"));
  }
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(*this, "initialize the CUDA driver", Init(0)));
  return ResolveEntryPoints(library);
}

void* RealCudaDriver::ProcAddress(const char* symbol) const {
  void* address = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  const CUresult result = get_proc_address_(
      symbol, &address, kCudaAbiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found);
  if (result != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return address;
}

absl::Status RealCudaDriver::ResolveEntryPoints(const std::string& library) {
  get_proc_address_ = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
      Exported("cuGetProcAddress_v2"));
  SymbolLookup proc_address;
  if (get_proc_address_ != nullptr) {
    proc_address = [this](const char* symbol) { return ProcAddress(symbol); };
  }
  const SymbolLookup exported = [this](const char* name) {
    return Exported(name);
  };
  EntryPointReport report;
#define PTXDIFF_FIND_ENTRY_POINT(method, symbol, type, function)          \
  {                                                                       \
    const EntryPointNames names = {symbol,                                \
                                   PTXDIFF_CUDA_EXPORTED_NAME(function)}; \
    const FoundEntryPoint found =                                         \
        FindEntryPoint(names, proc_address, exported);                    \
    method##_ = reinterpret_cast<type>(found.address);                    \
    report.Add(names, found.source);                                      \
  }
  PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_FIND_ENTRY_POINT)
#undef PTXDIFF_FIND_ENTRY_POINT
  if (!report.complete()) {
    return MissingEntryPointsError(
        library, report,
        KindOfDriverLibrary(get_proc_address_ != nullptr,
                            Exported("cuGetProcAddress") != nullptr));
  }
  entry_points_ = report.Summary();
  return absl::OkStatus();
}

// The errors that say a machine cannot run CUDA, for drivers that cannot
// name them: the toolkit's link stub answers every call, cuGetErrorName
// included, with CUDA_ERROR_STUB_LIBRARY.
const char* SetupErrorName(CUresult result) {
  switch (result) {
    case CUDA_ERROR_NOT_INITIALIZED:
      return "CUDA_ERROR_NOT_INITIALIZED";
    case CUDA_ERROR_STUB_LIBRARY:
      return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case CUDA_ERROR_NO_DEVICE:
      return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_SYSTEM_NOT_READY:
      return "CUDA_ERROR_SYSTEM_NOT_READY";
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    default:
      return nullptr;
  }
}

}  // namespace

std::string CudaErrorName(CudaDriver& driver, CUresult result) {
  const char* name = nullptr;
  if (driver.GetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) {
    return name;
  }
  if (const char* known = SetupErrorName(result)) return known;
  return absl::StrCat("CUDA error ", static_cast<int>(result));
}

absl::Status CheckCudaResult(CudaDriver& driver, CUresult result,
                             absl::string_view what, absl::string_view call,
                             absl::string_view file, int line) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  // Paths from the repository root read the same on every machine.
  const size_t root = file.rfind("backends/");
  if (root != absl::string_view::npos) file.remove_prefix(root);
  const std::string message =
      absl::StrCat("Failed to ", what, ": ", call, " returned ",
                   CudaErrorName(driver, result), " (", file, ":", line, ")");
  absl::Status status;
  switch (result) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_INVALID_DEVICE:
      status = absl::FailedPreconditionError(message);
      break;
    case CUDA_ERROR_OUT_OF_MEMORY:
      status = absl::ResourceExhaustedError(message);
      break;
    default:
      status = absl::InternalError(message);
  }
  status.SetPayload(kResultPayload,
                    absl::Cord(absl::StrCat(static_cast<int>(result))));
  status.SetPayload(kCallPayload, absl::Cord(call.substr(0, call.find('('))));
  return status;
}

std::optional<CUresult> CudaResultOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kResultPayload);
  int value = 0;
  if (!payload.has_value() ||
      !absl::SimpleAtoi(std::string(*payload), &value)) {
    return std::nullopt;
  }
  return static_cast<CUresult>(value);
}

std::optional<std::string> CudaCallOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kCallPayload);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

bool IsUnsupportedCudaError(CUresult result) {
  return result == CUDA_ERROR_NOT_SUPPORTED ||
         result == CUDA_ERROR_STUB_LIBRARY;
}

std::optional<std::string> DescribeUnsupportedCall(const CudaDriver& driver,
                                                   const absl::Status& status) {
  const std::optional<CUresult> result = CudaResultOf(status);
  const std::optional<std::string> call = CudaCallOf(status);
  if (!result.has_value() || !IsUnsupportedCudaError(*result) ||
      !call.has_value()) {
    return std::nullopt;
  }
  const std::string location = driver.Location();
  const absl::string_view message = status.message();
  return absl::StrCat(
      *call, " is not supported by the CUDA driver",
      location.empty() ? "" : absl::StrCat(" library ", location), ": ",
      message.substr(0, message.find('\n')));
}

bool IsStickyCudaError(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    // Unknown errors after a launch have always meant a lost context; a
    // restart costs far less than results from a broken one.
    case CUDA_ERROR_UNKNOWN:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<std::unique_ptr<CudaDriver>> LoadCudaDriver(
    const std::string& library) {
  auto driver = std::make_unique<RealCudaDriver>();
  PTXDIFF_RETURN_IF_ERROR(driver->Load(library));
  return driver;
}

}  // namespace ptxdiff
