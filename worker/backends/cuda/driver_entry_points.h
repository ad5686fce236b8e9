// The driver entry points the CUDA backend resolves, as one list: the loader
// (driver_api.cc) and the simulated driver library
// (testing/sim_cuda_driver.cc), which must export exactly these, expand the
// same list.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_ENTRY_POINTS_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_ENTRY_POINTS_H_

#include <cuda.h>
#include <cudaTypedefs.h>

// Every entry point resolved through cuGetProcAddress_v2: the method, the
// symbol without its ABI suffix (the driver picks the suffix from
// kCudaAbiVersion), and the function type of that ABI. cuInit,
// cuGetErrorName and cuGetProcAddress_v2 itself are found with dlsym instead
// (the first two have never changed ABI), so that a driver whose
// cuGetProcAddress does not work still explains itself through cuInit.
#define PTXDIFF_CUDA_ENTRY_POINTS(X)                                         \
  X(DriverGetVersion, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020)    \
  X(DeviceGetCount, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000)          \
  X(DeviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000)                         \
  X(DeviceGetName, "cuDeviceGetName", PFN_cuDeviceGetName_v2000)             \
  X(DeviceGetAttribute, "cuDeviceGetAttribute",                              \
    PFN_cuDeviceGetAttribute_v2000)                                          \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                      \
    PFN_cuDevicePrimaryCtxRetain_v7000)                                      \
  X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease",                    \
    PFN_cuDevicePrimaryCtxRelease_v11000)                                    \
  X(CtxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000)             \
  X(LinkCreate, "cuLinkCreate", PFN_cuLinkCreate_v6050)                      \
  X(LinkAddData, "cuLinkAddData", PFN_cuLinkAddData_v6050)                   \
  X(LinkComplete, "cuLinkComplete", PFN_cuLinkComplete_v5050)                \
  X(LinkDestroy, "cuLinkDestroy", PFN_cuLinkDestroy_v5050)                   \
  X(ModuleLoadDataEx, "cuModuleLoadDataEx", PFN_cuModuleLoadDataEx_v2010)    \
  X(ModuleUnload, "cuModuleUnload", PFN_cuModuleUnload_v2000)                \
  X(ModuleGetFunction, "cuModuleGetFunction", PFN_cuModuleGetFunction_v2000) \
  X(MemAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020)                            \
  X(MemFree, "cuMemFree", PFN_cuMemFree_v3020)                               \
  X(MemHostAlloc, "cuMemHostAlloc", PFN_cuMemHostAlloc_v2020)                \
  X(MemFreeHost, "cuMemFreeHost", PFN_cuMemFreeHost_v2000)                   \
  X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020)       \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020)       \
  X(StreamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000)                \
  X(StreamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000)             \
  X(StreamQuery, "cuStreamQuery", PFN_cuStreamQuery_v2000)                   \
  X(StreamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000) \
  X(LaunchKernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000)

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_ENTRY_POINTS_H_
