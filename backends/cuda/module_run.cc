#include "backends/cuda/module_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/device.h"
#include "backends/cuda/jit.h"
#include "backends/cuda/kernel_gen.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

// A failed step as the run's end where it is the module's (a JIT
// rejection) or the device's (a sticky error); nullopt for the others.
std::optional<CudaModuleRun> EndOf(const absl::Status& status) {
  const std::optional<CUresult> result = CudaResultOf(status);
  if (!result.has_value()) return std::nullopt;
  if (IsJitRejection(*result)) {
    return CudaModuleRun{.end = CudaModuleRun::kRejected,
                         .what = std::string(status.message())};
  }
  if (IsStickyCudaError(*result)) {
    return CudaModuleRun{.end = CudaModuleRun::kDeviceFault,
                         .what = std::string(status.message())};
  }
  return std::nullopt;
}

// The device's buffers for one run, and the pinned host memory the async
// copies go through.
struct Buffers {
  OwnedPinnedMemory host_in, host_out;
  OwnedDeviceMemory device_in, device_out;
};

absl::StatusOr<Buffers> Allocate(CudaDriver& driver, size_t in_bytes,
                                 size_t out_bytes) {
  Buffers b;
  PTXDIFF_ASSIGN_OR_RETURN(b.host_in, AllocatePinned(driver, in_bytes));
  PTXDIFF_ASSIGN_OR_RETURN(b.host_out, AllocatePinned(driver, out_bytes));
  PTXDIFF_ASSIGN_OR_RETURN(b.device_in, AllocateDevice(driver, in_bytes));
  PTXDIFF_ASSIGN_OR_RETURN(b.device_out, AllocateDevice(driver, out_bytes));
  return b;
}

// Copy in, launch on one block of kModuleRunThreads, copy out: queued on
// `stream`.
absl::Status Enqueue(CudaDriver& driver, CUstream stream, CUfunction function,
                     const Buffers& b, size_t in_bytes, size_t out_bytes,
                     uint32_t n) {
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver, "copy the input buffer to the device",
      MemcpyHtoDAsync(b.device_in.get(), b.host_in.get(), in_bytes, stream)));
  CUdeviceptr in = b.device_in.get(), out = b.device_out.get();
  void* params[] = {&in, &out, &n};
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(driver, "launch the module's kernel",
                      LaunchKernel(function, 1, 1, 1, kModuleRunThreads, 1, 1,
                                   0, stream, params, nullptr)));
  return PTXDIFF_CU_CALL(
      driver, "copy the output buffer from the device",
      MemcpyDtoHAsync(b.host_out.get(), b.device_out.get(), out_bytes, stream));
}

// Polls `stream` until its work is done, an error, or `timeout` (false).
absl::StatusOr<bool> Wait(CudaDriver& driver, CUstream stream,
                          absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const CUresult result = driver.StreamQuery(stream);
    if (result != CUDA_ERROR_NOT_READY) {
      PTXDIFF_RETURN_IF_ERROR(
          CheckCudaResult(driver, result, "run the module's kernel",
                          "cuStreamQuery(stream)", __FILE__, __LINE__));
      return true;
    }
    if (absl::Now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

absl::StatusOr<CudaModuleRun> Run(CudaDriver& driver, absl::string_view ptx,
                                  absl::string_view in, size_t n,
                                  absl::Duration timeout) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::string image, CompilePtx(driver, ptx));
  PTXDIFF_ASSIGN_OR_RETURN(const CUmodule loaded, LoadModule(driver, image));
  OwnedModule module(driver, loaded);
  CUfunction function = nullptr;
  PTXDIFF_RETURN_IF_ERROR(PTXDIFF_CU_CALL(
      driver, "find the kernel in its module",
      ModuleGetFunction(&function, module.get(), kRegisterEntry)));
  // Never empty: the driver allocates no zero bytes.
  const size_t in_bytes = std::max<size_t>(in.size(), 1);
  const size_t out_bytes = std::max<size_t>(n * kBatchResultBytes, 1);
  PTXDIFF_ASSIGN_OR_RETURN(Buffers b, Allocate(driver, in_bytes, out_bytes));
  std::memcpy(b.host_in.get(), in.data(), in.size());
  PTXDIFF_ASSIGN_OR_RETURN(OwnedStream stream, CreateStream(driver));
  PTXDIFF_RETURN_IF_ERROR(Enqueue(driver, stream.get(), function, b, in_bytes,
                                  out_bytes, static_cast<uint32_t>(n)));
  PTXDIFF_ASSIGN_OR_RETURN(const bool done,
                           Wait(driver, stream.get(), timeout));
  if (!done) {
    // The kernel still runs and uses them: freeing them would wait for it.
    for (auto* owned : {&b.host_in, &b.host_out}) owned->Abandon();
    for (auto* owned : {&b.device_in, &b.device_out}) owned->Abandon();
    stream.Abandon();
    module.Abandon();
    return CudaModuleRun{
        .end = CudaModuleRun::kTimeout,
        .what = absl::StrCat("the module's kernel ran longer than the timeout "
                             "of ",
                             absl::FormatDuration(timeout))};
  }
  return CudaModuleRun{
      .out = std::string(static_cast<const char*>(b.host_out.get()),
                         n * kBatchResultBytes)};
}

// Nothing more is asked of a lost context, not even its release, which
// would wait for a kernel that never ends: the process exits next. (Kept
// reachable, so a leak checker does not count them.)
void Forsake(std::unique_ptr<DeviceContext> context,
             std::unique_ptr<CudaDriver> driver) {
  static auto* const lost = new std::vector<
      std::pair<std::unique_ptr<DeviceContext>, std::unique_ptr<CudaDriver>>>;
  lost->emplace_back(std::move(context), std::move(driver));
}

int Fail(int exit_status, absl::string_view message) {
  std::fprintf(stderr, "ptxdiff-worker: %.*s\n",
               static_cast<int>(message.size()), message.data());
  return exit_status;
}

// Why the device cannot be used: the entry point the library does not
// support, if that is why.
std::string CannotRunHere(const CudaDriver& driver,
                          const absl::Status& status) {
  return DescribeUnsupportedCall(driver, status)
      .value_or(std::string(status.message()));
}

}  // namespace

absl::StatusOr<CudaModuleRun> RunModuleOnDevice(CudaDriver& driver,
                                                absl::string_view ptx,
                                                absl::string_view in, size_t n,
                                                absl::Duration timeout) {
  absl::StatusOr<CudaModuleRun> run = Run(driver, ptx, in, n, timeout);
  if (run.ok()) return run;
  if (std::optional<CudaModuleRun> end = EndOf(run.status())) return *end;
  return run.status();
}

int RunModuleCommand(std::span<const std::string> args,
                     std::unique_ptr<CudaDriver> driver) {
  constexpr char kUsage[] =
      "usage: ptxdiff-worker --backend=cuda --run-module PTX IN OUT N "
      "[KEY=VALUE...]";
  size_t n = 0;
  if (args.size() < 4 || !absl::SimpleAtoi(args[3], &n)) return Fail(2, kUsage);
  KeyValues options;
  for (const std::string& option : args.subspan(4)) {
    std::pair<std::string, std::string> kv =
        absl::StrSplit(option, absl::MaxSplits('=', 1));
    options.push_back(std::move(kv));
  }
  absl::StatusOr<CudaBackendOptions> parsed = ParseCudaBackendOptions(options);
  if (!parsed.ok()) return Fail(2, parsed.status().message());
  absl::StatusOr<std::string> ptx = ReadFile(args[0]);
  absl::StatusOr<std::string> in = ReadFile(args[1]);
  if (!ptx.ok() || !in.ok()) {
    return Fail(2, (ptx.ok() ? in : ptx).status().message());
  }
  if (driver == nullptr) {
    absl::StatusOr<std::unique_ptr<CudaDriver>> loaded =
        LoadCudaDriver(parsed->driver_library);
    if (!loaded.ok()) return Fail(3, loaded.status().message());
    driver = std::move(*loaded);
  }
  absl::StatusOr<std::unique_ptr<DeviceContext>> context =
      DeviceContext::Open(*driver, parsed->device);
  if (!context.ok()) return Fail(3, CannotRunHere(*driver, context.status()));
  absl::StatusOr<CudaModuleRun> run =
      RunModuleOnDevice(*driver, *ptx, *in, n, parsed->kernel_timeout);
  // A call the library does not support fails every module alike: the
  // machine cannot run them, as where the device does not open.
  if (std::optional<std::string> unsupported =
          DescribeUnsupportedCall(*driver, run.status())) {
    return Fail(3, *unsupported);
  }
  if (!run.ok()) return Fail(kExitModuleRunFailed, run.status().message());
  if (run->end == CudaModuleRun::kDeviceFault ||
      run->end == CudaModuleRun::kTimeout) {
    Forsake(*std::move(context), std::move(driver));
  }
  switch (run->end) {
    case CudaModuleRun::kOk: {
      const absl::Status written = WriteFile(args[2], run->out);
      return written.ok() ? 0 : Fail(kExitModuleRunFailed, written.message());
    }
    case CudaModuleRun::kRejected:
      return Fail(kExitModuleRejected, run->what);
    case CudaModuleRun::kDeviceFault:
      return Fail(kExitDeviceFault,
                  absl::StrCat("cuda device fault: ", run->what));
    case CudaModuleRun::kTimeout:
      return Fail(kExitKernelTimeout,
                  absl::StrCat("cuda kernel timeout: ", run->what));
  }
  return kExitModuleRunFailed;
}

}  // namespace ptxdiff
