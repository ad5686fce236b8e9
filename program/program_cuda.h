// Programs on a GPU through the CUDA driver (the `cuda` backend): each
// module of programs (ProgramToolModule) JIT-compiled by the driver and run
// on a block of threads of the device, judged, halved and filed as on a
// tool (program_tool.h).
//
// The runs are the cuda worker's (worker/program_service.h): its backend
// runs each module on the context it holds (Backend::RunModule). A device
// fault or a kernel past its timeout loses the context, and the worker
// exits with it (status 5 or 6); the client starts a fresh one and halves
// the batch down to the program that faults it (client/program_runs.cc),
// filed as a crash or a hang. Here, in the harness, the same backend only
// presents what the worker found.

#ifndef PTXDIFF_PROGRAM_PROGRAM_CUDA_H_
#define PTXDIFF_PROGRAM_PROGRAM_CUDA_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "backends/cuda/kernel_gen.h"
#include "program/program_backend.h"
#include "program/program_tool.h"

namespace ptxdiff {

// One module run on the device: the worker's Backend::RunModule.
using GpuModuleRun = std::function<absl::StatusOr<ModuleRun>(
    const std::string& module, const std::string& in, size_t n)>;

struct ProgramGpu {
  // Runs a module; empty where the backend only presents (the harness's
  // side), whose Check is then the harness's error.
  GpuModuleRun run;
  std::string driver_library;  // empty: NVIDIA's libcuda.so.1
  int device = 0;
  PtxTarget target;  // at most the device's SM
  // From the worker's handshake: "NVIDIA H100 (sm_90, device 0, 132 SMs)",
  // "CUDA 13.0 driver at /usr/lib/.../libcuda.so.1".
  std::string device_name, driver;
  absl::Duration kernel_timeout = absl::Seconds(10);
};

std::unique_ptr<ProgramModuleRunner> MakeCudaModuleRunner(ProgramGpu gpu);
std::unique_ptr<ProgramBackend> MakeCudaProgramBackend(ProgramGpu gpu);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_CUDA_H_
