// libptxdiff_sim_cuda.so: the simulated GPU (FakeCudaDriver) behind the C
// entry points of the CUDA driver API, so that the real loader
// (LoadCudaDriver) and everything above it (ptxdiff-worker --backend=cuda,
// the client, the CLI, triage) run end to end on a machine without a GPU:
//
//   ptxdiff sweep --backend cuda
//   --cuda-driver=<build>/worker/backends/cuda/libptxdiff_sim_cuda.so
//
// It is also the smallest example of what another implementation of the
// driver API must export for ptxdiff: cuInit, cuGetErrorName and
// cuGetProcAddress_v2, which hands out every entry point listed in
// driver_entry_points.h at the CUDA 12.0 ABI.
//
// PTXDIFF_SIM_CUDA_WRONG=add.sat.s32[,<spelling>...] makes those `.sat`
// variants wrap instead of saturating, and those `.cc` variants that read
// CC.CF (addc.cc.u32, subc.cc.s64, madc.lo.cc.u32, ...) write no CC.CF (the
// flag keeps their carry in): a driver with a bug to find.
// PTXDIFF_SIM_CUDA_TRAP=TEXT makes every kernel whose PTX contains TEXT
// (`div.u32 `) fault with CUDA_ERROR_ILLEGAL_INSTRUCTION, a sticky error;
// PTXDIFF_SIM_CUDA_HANG=TEXT makes such kernels never end.

#include <cuda.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "worker/backends/cuda/driver_api.h"
#include "worker/backends/cuda/driver_entry_points.h"
#include "worker/backends/cuda/testing/fake_cuda_driver.h"

namespace ptxdiff {
namespace {

constexpr char kWrongVariable[] = "PTXDIFF_SIM_CUDA_WRONG";
constexpr char kTrapVariable[] = "PTXDIFF_SIM_CUDA_TRAP";
constexpr char kHangVariable[] = "PTXDIFF_SIM_CUDA_HANG";

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
    ApplyFaults(made->fake);
    made->init_error_name = absl::StrCat("CUDA_ERROR_INVALID_VALUE (",
                                         made->configuration.message(), ")");
    return made;
  }();
  return *sim;
}

// A C function forwarding to the CudaDriver method `kMethod` of the
// simulated device.
template <auto kMethod>
struct EntryPoint;
template <typename... Args, CUresult (CudaDriver::*kMethod)(Args...)>
struct EntryPoint<kMethod> {
  static CUresult Call(Args... args) { return (Sim().fake.*kMethod)(args...); }
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
#define PTXDIFF_SIM_CHECK_SIGNATURE(method, symbol, type)                     \
  static_assert(                                                              \
      std::is_same_v<decltype(&EntryPoint<&CudaDriver::method>::Call), type>, \
      symbol " does not have its CUDA 12.0 signature");
PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_SIM_CHECK_SIGNATURE)
#undef PTXDIFF_SIM_CHECK_SIGNATURE

#define PTXDIFF_SIM_SYMBOL(method, symbol, type) \
  Symbol{symbol, AddressOf<&CudaDriver::method>()},
const Symbol kSymbols[] = {PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_SIM_SYMBOL)};
#undef PTXDIFF_SIM_SYMBOL

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
  } else {
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
