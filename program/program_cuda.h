// Programs on a GPU through the CUDA driver (the `cuda` backend): each
// module of programs (ProgramToolModule) JIT-compiled by the driver and run
// on one thread of the device, judged, halved and filed as on a tool
// (program_tool.h).
//
// Each run is one `ptxdiff-worker --backend=cuda --run-module` process
// (backends/cuda/module_run.h): after a device fault or a kernel
// that never ends the context is lost for good, and the halving that pins
// a fault on its program needs more runs. The worker's exit status says how
// the run ended: 0 the output buffer, 1 the JIT rejected the module (a
// refusal), 5 a device fault (a crash), 6 a kernel past its timeout (a
// hang).

#ifndef PTXDIFF_PROGRAM_PROGRAM_CUDA_H_
#define PTXDIFF_PROGRAM_PROGRAM_CUDA_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "backends/cuda/kernel_gen.h"
#include "program/program_backend.h"
#include "program/program_tool.h"

namespace ptxdiff {

struct ProgramGpu {
  std::string worker;          // the ptxdiff-worker that runs each module
  std::string driver_library;  // empty: NVIDIA's libcuda.so.1
  int device = 0;
  PtxTarget target;  // at most the device's SM
  // From the worker's handshake: "NVIDIA H100 (sm_90, device 0, 132 SMs)",
  // "CUDA 13.0 driver at /usr/lib/.../libcuda.so.1".
  std::string device_name, driver;
  std::string files_root;  // a private directory the runs are made in
  absl::Duration kernel_timeout = absl::Seconds(10);
};

std::unique_ptr<ProgramModuleRunner> MakeCudaModuleRunner(ProgramGpu gpu);
std::unique_ptr<ProgramBackend> MakeCudaProgramBackend(ProgramGpu gpu);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_CUDA_H_
