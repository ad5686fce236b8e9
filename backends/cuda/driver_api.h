// The CUDA driver API calls the CUDA backend makes, behind an interface.
//
// CudaDriver mirrors the handful of driver entry points the backend uses, one
// virtual method per call with the C signature (types from cuda.h), so that
// the backend's host logic is tested with a test double
// (testing/fake_cuda_driver.h) on machines without a GPU. The real
// implementation (LoadCudaDriver) opens libcuda.so.1 (or another
// implementation of the driver API) at run time and finds every entry point
// through cuGetProcAddress or by its exported name (entry_point_lookup.h):
// binaries never link libcuda and build and start where there is no driver.
//
// Every call site checks its result once, through PTXDIFF_CU_CALL, which turns
// a failure into
//   Failed to <what>: cu<call text> returned CUDA_ERROR_<NAME> (<file>:<line>)
// with the CUresult attached to the status (CudaResultOf), so callers can tell
// a context-destroying fault from an ordinary error.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_API_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_API_H_

#include <cuda.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {

// The driver entry points used, named after the C functions without `cu`.
// Arguments and results are exactly the driver's (see cuda.h).
class CudaDriver {
 public:
  virtual ~CudaDriver() = default;

  // The path of the library the driver was loaded from, as the dynamic
  // loader resolved it; empty for an in-process test double.
  virtual std::string Location() const { return ""; }
  // How the entry points were found ("entry points: 26 by
  // cuGetProcAddress": EntryPointReport::Summary); empty for a test double.
  virtual std::string EntryPoints() const { return ""; }

  virtual CUresult Init(unsigned int flags) = 0;
  virtual CUresult DriverGetVersion(int* version) = 0;
  // `*name` is a static string such as "CUDA_ERROR_NO_DEVICE".
  virtual CUresult GetErrorName(CUresult error, const char** name) = 0;

  virtual CUresult DeviceGetCount(int* count) = 0;
  virtual CUresult DeviceGet(CUdevice* device, int ordinal) = 0;
  virtual CUresult DeviceGetName(char* name, int length, CUdevice device) = 0;
  virtual CUresult DeviceGetAttribute(int* value, CUdevice_attribute attribute,
                                      CUdevice device) = 0;
  virtual CUresult DevicePrimaryCtxRetain(CUcontext* context,
                                          CUdevice device) = 0;
  virtual CUresult DevicePrimaryCtxRelease(CUdevice device) = 0;
  virtual CUresult CtxSetCurrent(CUcontext context) = 0;

  // PTX to a device image (cubin), with the JIT's logs in option buffers.
  virtual CUresult LinkCreate(unsigned int num_options, CUjit_option* options,
                              void** option_values, CUlinkState* state) = 0;
  virtual CUresult LinkAddData(CUlinkState state, CUjitInputType type,
                               void* data, size_t size, const char* name,
                               unsigned int num_options, CUjit_option* options,
                               void** option_values) = 0;
  // `*image` stays owned by `state` until LinkDestroy.
  virtual CUresult LinkComplete(CUlinkState state, void** image,
                                size_t* size) = 0;
  virtual CUresult LinkDestroy(CUlinkState state) = 0;

  virtual CUresult ModuleLoadDataEx(CUmodule* module, const void* image,
                                    unsigned int num_options,
                                    CUjit_option* options,
                                    void** option_values) = 0;
  virtual CUresult ModuleUnload(CUmodule module) = 0;
  virtual CUresult ModuleGetFunction(CUfunction* function, CUmodule module,
                                     const char* name) = 0;

  virtual CUresult MemAlloc(CUdeviceptr* pointer, size_t bytes) = 0;
  virtual CUresult MemFree(CUdeviceptr pointer) = 0;
  // Page-locked host memory, so that async copies really are asynchronous.
  virtual CUresult MemHostAlloc(void** pointer, size_t bytes,
                                unsigned int flags) = 0;
  virtual CUresult MemFreeHost(void* pointer) = 0;
  virtual CUresult MemcpyHtoDAsync(CUdeviceptr destination, const void* source,
                                   size_t bytes, CUstream stream) = 0;
  virtual CUresult MemcpyDtoHAsync(void* destination, CUdeviceptr source,
                                   size_t bytes, CUstream stream) = 0;

  virtual CUresult StreamCreate(CUstream* stream, unsigned int flags) = 0;
  virtual CUresult StreamDestroy(CUstream stream) = 0;
  // CUDA_SUCCESS when all work is done, CUDA_ERROR_NOT_READY while it runs.
  virtual CUresult StreamQuery(CUstream stream) = 0;
  virtual CUresult StreamSynchronize(CUstream stream) = 0;

  // The driver copies the values `params` point to before returning.
  virtual CUresult LaunchKernel(CUfunction function, unsigned int grid_x,
                                unsigned int grid_y, unsigned int grid_z,
                                unsigned int block_x, unsigned int block_y,
                                unsigned int block_z, unsigned int shared_bytes,
                                CUstream stream, void** params,
                                void** extra) = 0;
};

// NVIDIA's driver, as the dynamic loader finds it.
inline constexpr char kDefaultCudaDriverLibrary[] = "libcuda.so.1";

// The real driver: dlopen(`library`), cuInit and cuGetErrorName by their
// exported names, cuInit(0) (so that the error names the machine's actual
// problem), then every entry point of driver_entry_points.h at the ABI of
// CUDA 12.0 (kCudaAbiVersion), whose signatures the methods above have:
// through cuGetProcAddress_v2 where the library has it, else (or where it
// fails) by exported name (entry_point_lookup.h). `library` may be any
// implementation of the driver API (a path or a name the loader searches
// for). Fails with FailedPrecondition:
//   - "cannot load libcuda.so.1 (<dlerror>): no NVIDIA driver on this machine"
//     ("cannot load the CUDA driver library <library> (<dlerror>)" for
//     another library);
//   - "<library> exports neither cuInit nor cuGetErrorName: it is not the
//     CUDA driver" (or names the one it lacks);
//   - "... returned CUDA_ERROR_NO_DEVICE" / "CUDA_ERROR_STUB_LIBRARY" / ...
//     (cuInit's error name) when the driver is there but unusable;
//   - "<library> lacks 2 of the 26 CUDA driver entry points ...: <names>;
//     it seems to be <what the library seems>" (MissingEntryPointsError).
absl::StatusOr<std::unique_ptr<CudaDriver>> LoadCudaDriver(
    const std::string& library = kDefaultCudaDriverLibrary);

// The driver ABI the entry points are requested at (CUDA 12.0).
inline constexpr int kCudaAbiVersion = 12000;

// "CUDA_ERROR_NO_DEVICE", or "CUDA error 999" when the driver cannot name it.
std::string CudaErrorName(CudaDriver& driver, CUresult result);

// OK for CUDA_SUCCESS, else the status described at the top of this file.
// Codes: FailedPrecondition where the machine cannot run CUDA (no device, no
// or stub driver, driver too old), ResourceExhausted for out of memory,
// Internal otherwise. Call it through PTXDIFF_CU_CALL.
absl::Status CheckCudaResult(CudaDriver& driver, CUresult result,
                             absl::string_view what, absl::string_view call,
                             absl::string_view file, int line);

// The CUresult of a status made by CheckCudaResult; nullopt for others.
std::optional<CUresult> CudaResultOf(const absl::Status& status);

// True for the errors with which a driver answers a call it does not support
// (CUDA_ERROR_NOT_SUPPORTED, as partial implementations of the driver API
// answer what they do not implement; CUDA_ERROR_STUB_LIBRARY): asking again
// will not help, whatever is asked.
bool IsUnsupportedCudaError(CUresult result);

// The driver function a status made by CheckCudaResult is about
// ("cuStreamQuery"); nullopt for other statuses.
std::optional<std::string> CudaCallOf(const absl::Status& status);

// For a status of a call the driver does not support (IsUnsupportedCudaError
// of its CudaResultOf), one line naming the entry point, the library and the
// call it failed in:
//   cuStreamQuery is not supported by the CUDA driver library <path>: Failed
//   to run the batch's kernels: cuStreamQuery(stream) returned
//   CUDA_ERROR_NOT_SUPPORTED (backends/cuda/pipeline.cc:123)
// (the status message's first line: no JIT log); nullopt for other statuses.
std::optional<std::string> DescribeUnsupportedCall(const CudaDriver& driver,
                                                   const absl::Status& status);

// True for the errors after which the context is unusable (illegal
// instruction or address, launch failure, device-side trap, ECC, ...): every
// later call fails, so the worker must exit and be restarted.
bool IsStickyCudaError(CUresult result);

}  // namespace ptxdiff

// Makes one driver call and checks it:
//   PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(driver, "allocate device memory",
//                                           MemAlloc(&pointer, bytes)));
// `call` is a CudaDriver method call; its text (with `cu` prefixed) goes into
// the error.
#define PTXDIFF_CU_CALL(driver, what, call)                               \
  ::ptxdiff::CheckCudaResult((driver), (driver).call, (what), "cu" #call, \
                             __FILE__, __LINE__)

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_API_H_
