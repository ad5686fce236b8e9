// libptxdiff_sim_cuda.so: the simulated GPU (FakeCudaDriver) behind the C
// entry points of the CUDA driver API, so that the real loader
// (LoadCudaDriver) and everything above it (ptxdiff-worker --backend=cuda,
// the client, the CLI, triage) run end to end on a machine without a GPU:
//
//   ptxdiff sweep --backend cuda
//   --cuda-driver=<build>/backends/cuda/libptxdiff_sim_cuda.so
//
// It is also the smallest example of what another implementation of the
// driver API must export for ptxdiff, in the two ways the loader accepts.
// One object, linked three times with different linker maps:
//   - libptxdiff_sim_cuda.so (sim_cuda_driver.map) exports cuInit,
//     cuGetErrorName and cuGetProcAddress_v2, which hands out every entry
//     point listed in driver_entry_points.h at the CUDA 12.0 ABI, as
//     NVIDIA's driver does;
//   - libptxdiff_sim_cuda_plain.so (sim_cuda_driver_plain.map) exports no
//     cuGetProcAddress but every entry point under the name cuda.h gives its
//     CUDA 12.0 ABI (cuMemAlloc_v2, cuLinkCreate_v2, ...), as simulators and
//     translators do;
//   - libptxdiff_sim_cuda_partial.so (sim_cuda_driver_partial.map): the plain
//     library without cuLinkCreate_v2 and cuLaunchKernel, which the loader
//     must refuse naming them.
// And, for the tests only, compiled again with PTXDIFF_SIM_CUDA_NOISY:
//   - libptxdiff_sim_cuda_noisy.so (the plain map): prints a banner on
//     stdout when it is loaded, as GPGPU-Sim's libcudart does ("WARNING:
//     ..."), and a line on stdout in every call of an entry point: the
//     worker's protocol channel must survive both (kNoisyBanner).
//
// PTXDIFF_SIM_CUDA_WRONG=add.sat.s32[,<spelling>...] makes those `.sat`
// variants wrap instead of saturating, and those `.cc` variants that read
// CC.CF (addc.cc.u32, subc.cc.s64, madc.lo.cc.u32, ...) write no CC.CF (the
// flag keeps their carry in): a driver with a bug to find.
// PTXDIFF_SIM_CUDA_TRAP=TEXT makes every kernel whose PTX contains TEXT
// (`div.u32 `) fault with CUDA_ERROR_ILLEGAL_INSTRUCTION, a sticky error;
// PTXDIFF_SIM_CUDA_HANG=TEXT makes such kernels never end.
// PTXDIFF_SIM_CUDA_UNSUPPORTED=cuStreamQuery[,...] makes every call of those
// entry points answer CUDA_ERROR_NOT_SUPPORTED, as a partial implementation
// does; PTXDIFF_SIM_CUDA_NO_PROC_ADDRESS=cuLinkCreate[,...] makes
// cuGetProcAddress_v2 not find those.

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/driver_entry_points.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

constexpr char kWrongVariable[] = "PTXDIFF_SIM_CUDA_WRONG";
constexpr char kTrapVariable[] = "PTXDIFF_SIM_CUDA_TRAP";
constexpr char kHangVariable[] = "PTXDIFF_SIM_CUDA_HANG";
constexpr char kUnsupportedVariable[] = "PTXDIFF_SIM_CUDA_UNSUPPORTED";
constexpr char kNoProcAddressVariable[] = "PTXDIFF_SIM_CUDA_NO_PROC_ADDRESS";

// The entry points' symbols (driver_entry_points.h), and the CudaDriver
// methods they call.
struct EntryPointMethod {
  const char* symbol;
  const char* method;
};
#define PTXDIFF_SIM_METHOD(method, symbol, type, function) \
  EntryPointMethod{symbol, #method},
constexpr EntryPointMethod kMethods[] = {
    PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_SIM_METHOD)};
#undef PTXDIFF_SIM_METHOD

// The symbols listed in `variable`, each one of the entry points;
// InvalidArgument naming another.
absl::StatusOr<std::vector<std::string>> ListedEntryPoints(
    const char* variable) {
  std::vector<std::string> listed;
  const char* list = std::getenv(variable);
  if (list == nullptr) return listed;
  for (absl::string_view text : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    if (std::none_of(std::begin(kMethods), std::end(kMethods),
                     [&](const EntryPointMethod& m) {
                       return absl::string_view(m.symbol) == text;
                     })) {
      return absl::InvalidArgumentError(absl::StrCat(
          variable, ": '", text,
          "' is not an entry point of driver_entry_points.h (cuStreamQuery, "
          "cuLinkCreate, ...)"));
    }
    listed.emplace_back(text);
  }
  return listed;
}

// PTXDIFF_SIM_CUDA_UNSUPPORTED's entry points made to answer
// CUDA_ERROR_NOT_SUPPORTED in `driver`.
absl::Status ApplyUnsupported(FakeCudaDriver& driver) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::vector<std::string> unsupported,
                           ListedEntryPoints(kUnsupportedVariable));
  for (const std::string& symbol : unsupported) {
    for (const EntryPointMethod& m : kMethods) {
      if (m.symbol == symbol) {
        driver.FailEveryCall(m.method, CUDA_ERROR_NOT_SUPPORTED);
      }
    }
  }
  return absl::OkStatus();
}

// The kernels PTXDIFF_SIM_CUDA_TRAP and PTXDIFF_SIM_CUDA_HANG name, made to
// fault or never end in `driver`.
void ApplyFaults(FakeCudaDriver& driver) {
  if (const char* trap = std::getenv(kTrapVariable); trap && *trap) {
    driver.FaultOnPtxContaining(trap, CUDA_ERROR_ILLEGAL_INSTRUCTION);
  }
  if (const char* hang = std::getenv(kHangVariable); hang && *hang) {
    driver.HangOnPtxContaining(hang);
  }
}

// The variants PTXDIFF_SIM_CUDA_WRONG names, made wrong in `driver`;
// InvalidArgument for a spelling that is neither a `.sat` variant nor a
// `.cc` one that reads CC.CF.
absl::Status ApplyWrongVariants(FakeCudaDriver& driver) {
  const char* list = std::getenv(kWrongVariable);
  if (list == nullptr) return absl::OkStatus();
  for (absl::string_view text : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    absl::StatusOr<Variant> v = ParseVariant(text);
    if (v.ok() && v->sat) {
      driver.IgnoreSaturation(Spell(*v));
    } else if (v.ok() && HasCarryOut(*v) && HasCarryIn(*v)) {
      driver.LeaveCarryFlagUnwritten(Spell(*v));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(kWrongVariable, ": '", text,
                       "' is neither a .sat variant nor a .cc variant that "
                       "reads CC.CF"));
    }
  }
  return absl::OkStatus();
}

struct SimDriver {
  FakeCudaDriver fake{{.device_name = "ptxdiff simulated GPU"}};
  absl::Status configuration;
  // PTXDIFF_SIM_CUDA_NO_PROC_ADDRESS's symbols.
  std::vector<std::string> no_proc_address;
  // cuInit's error when the configuration is bad, named with the reason:
  // the loader's message quotes the name, so the user sees why.
  std::string init_error_name;
};

// One simulated device per process, never destroyed: like libcuda, the
// library stays loaded until the process exits. ptxdiff-worker calls the
// driver from one thread, as FakeCudaDriver requires.
SimDriver& Sim() {
  static SimDriver* const sim = [] {
    auto* made = new SimDriver;
    made->configuration = ApplyWrongVariants(made->fake);
    if (made->configuration.ok()) {
      made->configuration = ApplyUnsupported(made->fake);
    }
    absl::StatusOr<std::vector<std::string>> hidden =
        ListedEntryPoints(kNoProcAddressVariable);
    if (hidden.ok()) made->no_proc_address = *std::move(hidden);
    if (made->configuration.ok()) made->configuration = hidden.status();
    ApplyFaults(made->fake);
    made->init_error_name = absl::StrCat("CUDA_ERROR_INVALID_VALUE (",
                                         made->configuration.message(), ")");
    return made;
  }();
  return *sim;
}

#if defined(PTXDIFF_SIM_CUDA_NOISY)
constexpr bool kNoisy = true;
#else
constexpr bool kNoisy = false;
#endif
// What the noisy library prints on load and in each call; the tests find
// both in the worker's stderr. Flushed at once, as a library that logs
// does: buffered, it would reach the channel only at exit.
constexpr char kNoisyBanner[] =
    "WARNING: the ptxdiff simulated driver prints on stdout\n";
constexpr char kNoisyCall[] = "ptxdiff simulated driver: a call";

__attribute__((constructor)) void PrintBannerOnLoad() {
  if (!kNoisy) return;
  std::fputs(kNoisyBanner, stdout);
  std::fflush(stdout);
}

// A C function forwarding to the CudaDriver method `kMethod` of the
// simulated device.
template <auto kMethod>
struct EntryPoint;
template <typename... Args, CUresult (CudaDriver::*kMethod)(Args...)>
struct EntryPoint<kMethod> {
  static CUresult Call(Args... args) {
    if (kNoisy) std::cout << kNoisyCall << std::endl;
    return (Sim().fake.*kMethod)(args...);
  }
};

struct Symbol {
  const char* name;
  void* function;
};

template <auto kMethod>
void* AddressOf() {
  return reinterpret_cast<void*>(&EntryPoint<kMethod>::Call);
}

// Every entry point of the list, with the signature the loader asks for.
#define PTXDIFF_SIM_CHECK_SIGNATURE(method, symbol, type, function)           \
  static_assert(                                                              \
      std::is_same_v<decltype(&EntryPoint<&CudaDriver::method>::Call), type>, \
      symbol " does not have its CUDA 12.0 signature");
PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_SIM_CHECK_SIGNATURE)
#undef PTXDIFF_SIM_CHECK_SIGNATURE

#define PTXDIFF_SIM_SYMBOL(method, symbol, type, function) \
  Symbol{symbol, AddressOf<&CudaDriver::method>()},
const Symbol kSymbols[] = {PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_SIM_SYMBOL)};
#undef PTXDIFF_SIM_SYMBOL

// True if cuGetProcAddress_v2 is not to find `symbol`
// (PTXDIFF_SIM_CUDA_NO_PROC_ADDRESS).
bool Hidden(const char* symbol) {
  const std::vector<std::string>& hidden = Sim().no_proc_address;
  return std::find(hidden.begin(), hidden.end(), symbol) != hidden.end();
}

}  // namespace
}  // namespace ptxdiff

// The exported C entry points, as cuda.h declares them.

CUresult cuInit(unsigned int flags) {
  ptxdiff::SimDriver& sim = ptxdiff::Sim();
  if (!sim.configuration.ok()) return CUDA_ERROR_INVALID_VALUE;
  return sim.fake.Init(flags);
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  ptxdiff::SimDriver& sim = ptxdiff::Sim();
  if (!sim.configuration.ok() && error == CUDA_ERROR_INVALID_VALUE &&
      name != nullptr) {
    *name = sim.init_error_name.c_str();
    return CUDA_SUCCESS;
  }
  return sim.fake.GetErrorName(error, name);
}

// Hands out the CUDA 12.0 ABI of every entry point for any version from 12.0
// on: the only ABI this library has.
CUresult cuGetProcAddress_v2(const char* symbol, void** function,
                             int cuda_version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  if (function == nullptr || symbol == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *function = nullptr;
  CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (cuda_version < ptxdiff::kCudaAbiVersion) {
    found = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
  } else if (!ptxdiff::Hidden(symbol)) {
    for (const ptxdiff::Symbol& s : ptxdiff::kSymbols) {
      if (std::strcmp(s.name, symbol) == 0) {
        *function = s.function;
        found = CU_GET_PROC_ADDRESS_SUCCESS;
      }
    }
  }
  if (status != nullptr) *status = found;
  return found == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS
                                              : CUDA_ERROR_NOT_FOUND;
}

// Every entry point under its exported name, the name cuda.h gives its
// CUDA 12.0 ABI (cuda.h `#define`s cuMemAlloc to cuMemAlloc_v2, so these
// define cuMemAlloc_v2): what a library without cuGetProcAddress exports.
// The C linkage of cuda.h's declarations makes a signature that differs from
// them an error. Exported only by sim_cuda_driver_plain.map.
#define PTXDIFF_SIM_CALL(method, ...) \
  ptxdiff::EntryPoint<&ptxdiff::CudaDriver::method>::Call(__VA_ARGS__)

extern "C" {

CUresult cuDriverGetVersion(int* version) {
  return PTXDIFF_SIM_CALL(DriverGetVersion, version);
}
CUresult cuDeviceGetCount(int* count) {
  return PTXDIFF_SIM_CALL(DeviceGetCount, count);
}
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return PTXDIFF_SIM_CALL(DeviceGet, device, ordinal);
}
CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  return PTXDIFF_SIM_CALL(DeviceGetName, name, length, device);
}
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute,
                              CUdevice device) {
  return PTXDIFF_SIM_CALL(DeviceGetAttribute, value, attribute, device);
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  return PTXDIFF_SIM_CALL(DevicePrimaryCtxRetain, context, device);
}
CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  return PTXDIFF_SIM_CALL(DevicePrimaryCtxRelease, device);
}
CUresult cuCtxSetCurrent(CUcontext context) {
  return PTXDIFF_SIM_CALL(CtxSetCurrent, context);
}
CUresult cuLinkCreate(unsigned int num_options, CUjit_option* options,
                      void** option_values, CUlinkState* state) {
  return PTXDIFF_SIM_CALL(LinkCreate, num_options, options, option_values,
                          state);
}
CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data,
                       size_t size, const char* name, unsigned int num_options,
                       CUjit_option* options, void** option_values) {
  return PTXDIFF_SIM_CALL(LinkAddData, state, type, data, size, name,
                          num_options, options, option_values);
}
CUresult cuLinkComplete(CUlinkState state, void** image, size_t* size) {
  return PTXDIFF_SIM_CALL(LinkComplete, state, image, size);
}
CUresult cuLinkDestroy(CUlinkState state) {
  return PTXDIFF_SIM_CALL(LinkDestroy, state);
}
CUresult cuModuleLoadDataEx(CUmodule* module, const void* image,
                            unsigned int num_options, CUjit_option* options,
                            void** option_values) {
  return PTXDIFF_SIM_CALL(ModuleLoadDataEx, module, image, num_options, options,
                          option_values);
}
CUresult cuModuleUnload(CUmodule module) {
  return PTXDIFF_SIM_CALL(ModuleUnload, module);
}
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module,
                             const char* name) {
  return PTXDIFF_SIM_CALL(ModuleGetFunction, function, module, name);
}
CUresult cuMemAlloc(CUdeviceptr* pointer, size_t bytes) {
  return PTXDIFF_SIM_CALL(MemAlloc, pointer, bytes);
}
CUresult cuMemFree(CUdeviceptr pointer) {
  return PTXDIFF_SIM_CALL(MemFree, pointer);
}
CUresult cuMemHostAlloc(void** pointer, size_t bytes, unsigned int flags) {
  return PTXDIFF_SIM_CALL(MemHostAlloc, pointer, bytes, flags);
}
CUresult cuMemFreeHost(void* pointer) {
  return PTXDIFF_SIM_CALL(MemFreeHost, pointer);
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr destination, const void* source,
                           size_t bytes, CUstream stream) {
  return PTXDIFF_SIM_CALL(MemcpyHtoDAsync, destination, source, bytes, stream);
}
CUresult cuMemcpyDtoHAsync(void* destination, CUdeviceptr source, size_t bytes,
                           CUstream stream) {
  return PTXDIFF_SIM_CALL(MemcpyDtoHAsync, destination, source, bytes, stream);
}
CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  return PTXDIFF_SIM_CALL(StreamCreate, stream, flags);
}
CUresult cuStreamDestroy(CUstream stream) {
  return PTXDIFF_SIM_CALL(StreamDestroy, stream);
}
CUresult cuStreamQuery(CUstream stream) {
  return PTXDIFF_SIM_CALL(StreamQuery, stream);
}
CUresult cuStreamSynchronize(CUstream stream) {
  return PTXDIFF_SIM_CALL(StreamSynchronize, stream);
}
CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x,
                        unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y,
                        unsigned int block_z, unsigned int shared_bytes,
                        CUstream stream, void** params, void** extra) {
  return PTXDIFF_SIM_CALL(LaunchKernel, function, grid_x, grid_y, grid_z,
                          block_x, block_y, block_z, shared_bytes, stream,
                          params, extra);
}

}  // extern "C"
