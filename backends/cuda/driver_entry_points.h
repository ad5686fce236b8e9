// The driver entry points the CUDA backend resolves, as one list: the loader
// (driver_api.cc, entry_point_lookup.h) and the simulated driver library
// (testing/sim_cuda_driver.cc), which must provide exactly these, expand the
// same list.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_ENTRY_POINTS_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_ENTRY_POINTS_H_

#include <cuda.h>
#include <cudaTypedefs.h>

// With per-thread default streams, cuda.h names the stream functions
// cuMemcpyHtoDAsync_v2_ptsz etc.: another ABI than the one the types below
// describe, and than the one cuGetProcAddress hands out by default.
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "ptxdiff's CUDA backend uses the legacy default stream ABI"
#endif

// Every entry point besides cuInit and cuGetErrorName, which are found by
// their exported names first (neither has ever changed ABI), so that a
// library whose other entry points cannot be found still explains itself
// through cuInit. Columns:
//   - the CudaDriver method;
//   - the symbol without its ABI suffix, as cuGetProcAddress_v2 takes it (it
//     picks the suffix from kCudaAbiVersion, CUDA 12.0);
//   - the function type of the CUDA 12.0 ABI;
//   - the function as cuda.h declares it: cuda.h `#define`s cuMemAlloc to
//     cuMemAlloc_v2 and so on, so PTXDIFF_CUDA_EXPORTED_NAME(function) is the
//     name the library exports that ABI under (what a library without
//     cuGetProcAddress is asked for), and decltype(&function) its type, which
//     driver_api.cc checks is the CUDA 12.0 one.
#define PTXDIFF_CUDA_ENTRY_POINTS(X)                                          \
  X(DriverGetVersion, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020,     \
    cuDriverGetVersion)                                                       \
  X(DeviceGetCount, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000,           \
    cuDeviceGetCount)                                                         \
  X(DeviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000, cuDeviceGet)             \
  X(DeviceGetName, "cuDeviceGetName", PFN_cuDeviceGetName_v2000,              \
    cuDeviceGetName)                                                          \
  X(DeviceGetAttribute, "cuDeviceGetAttribute",                               \
    PFN_cuDeviceGetAttribute_v2000, cuDeviceGetAttribute)                     \
  X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",                       \
    PFN_cuDevicePrimaryCtxRetain_v7000, cuDevicePrimaryCtxRetain)             \
  X(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease",                     \
    PFN_cuDevicePrimaryCtxRelease_v11000, cuDevicePrimaryCtxRelease)          \
  X(CtxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000,              \
    cuCtxSetCurrent)                                                          \
  X(LinkCreate, "cuLinkCreate", PFN_cuLinkCreate_v6050, cuLinkCreate)         \
  X(LinkAddData, "cuLinkAddData", PFN_cuLinkAddData_v6050, cuLinkAddData)     \
  X(LinkComplete, "cuLinkComplete", PFN_cuLinkComplete_v5050, cuLinkComplete) \
  X(LinkDestroy, "cuLinkDestroy", PFN_cuLinkDestroy_v5050, cuLinkDestroy)     \
  X(ModuleLoadDataEx, "cuModuleLoadDataEx", PFN_cuModuleLoadDataEx_v2010,     \
    cuModuleLoadDataEx)                                                       \
  X(ModuleUnload, "cuModuleUnload", PFN_cuModuleUnload_v2000, cuModuleUnload) \
  X(ModuleGetFunction, "cuModuleGetFunction", PFN_cuModuleGetFunction_v2000,  \
    cuModuleGetFunction)                                                      \
  X(MemAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020, cuMemAlloc)                 \
  X(MemFree, "cuMemFree", PFN_cuMemFree_v3020, cuMemFree)                     \
  X(MemHostAlloc, "cuMemHostAlloc", PFN_cuMemHostAlloc_v2020, cuMemHostAlloc) \
  X(MemFreeHost, "cuMemFreeHost", PFN_cuMemFreeHost_v2000, cuMemFreeHost)     \
  X(MemcpyHtoDAsync, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020,        \
    cuMemcpyHtoDAsync)                                                        \
  X(MemcpyDtoHAsync, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020,        \
    cuMemcpyDtoHAsync)                                                        \
  X(StreamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000, cuStreamCreate) \
  X(StreamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000,              \
    cuStreamDestroy)                                                          \
  X(StreamQuery, "cuStreamQuery", PFN_cuStreamQuery_v2000, cuStreamQuery)     \
  X(StreamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000,  \
    cuStreamSynchronize)                                                      \
  X(LaunchKernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000, cuLaunchKernel)

// "cuMemAlloc_v2" for cuMemAlloc: `function` after cuda.h's `#define`s.
#define PTXDIFF_CUDA_EXPORTED_NAME(function) \
  PTXDIFF_CUDA_EXPORTED_NAME_INNER_(function)
#define PTXDIFF_CUDA_EXPORTED_NAME_INNER_(function) #function

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_DRIVER_ENTRY_POINTS_H_
