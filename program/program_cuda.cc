#include "program/program_cuda.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backends/ptx_cmd/tool_run.h"
#include "common/subprocess.h"

namespace ptxdiff {
namespace {

// The worker's exit statuses (module_run.h, cuda_backend.h).
constexpr int kRejected = 1, kDeviceFault = 5, kKernelTimeout = 6;

// Beyond the kernel's own timeout, for the worker to start, load the driver
// and JIT-compile the module; past both the worker itself hangs.
constexpr absl::Duration kStartAllowance = absl::Seconds(30);

// The worker's one line, without its "ptxdiff-worker: ".
std::string WorkerLine(absl::string_view output) {
  absl::ConsumePrefix(&output, "ptxdiff-worker: ");
  return std::string(output);
}

// A run whose worker exited non-zero, read by its exit status.
ToolRun ByExitStatus(ToolRun run) {
  switch (run.exit_status) {
    case kRejected:
      run.end = ToolRun::kRefused;
      break;
    case kDeviceFault:
      run.end = ToolRun::kCrashed;
      break;
    case kKernelTimeout:
      run.end = ToolRun::kHung;
      break;
    default:  // a bad command line, no device, a failed copy: not the module
      run.error = absl::InternalError(
          absl::StrCat("ptxdiff-worker --run-module: ", run.what, ": ",
                       WorkerLine(run.output)));
      return run;
  }
  run.what = WorkerLine(run.output);
  run.output.clear();
  return run;
}

class CudaModuleRunner : public ProgramModuleRunner {
 public:
  explicit CudaModuleRunner(ProgramGpu gpu) : gpu_(std::move(gpu)) {}

  ToolRun Run(const std::string& module, const std::string& in, size_t n,
              absl::Time deadline) const override {
    ToolRun run = RunToolOnce(
        {.command = absl::StrCat("exec ", ShellQuote(gpu_.worker),
                                 " --backend=cuda --run-module {ptx} {in} "
                                 "{out} {n}",
                                 Options()),
         .files_root = gpu_.files_root,
         .module = module,
         .in = in,
         .n = n,
         .slot_bytes = kBatchResultBytes,
         .timeout = gpu_.kernel_timeout + kStartAllowance,
         .deadline = deadline});
    if (run.error.ok() && run.end == ToolRun::kRefused) {
      return ByExitStatus(std::move(run));
    }
    return run;
  }
  const PtxTarget& target() const override { return gpu_.target; }
  std::string Name() const override { return "cuda"; }
  std::string Identity() const override {
    return absl::StrCat("cuda sm_", gpu_.target.sm, ": ", gpu_.device_name,
                        ", ", gpu_.driver);
  }
  std::string ReplayFlags() const override {
    return absl::StrCat(
        "--backend cuda",
        gpu_.driver_library.empty()
            ? ""
            : absl::StrCat(" --cuda-driver ", ShellQuote(gpu_.driver_library)),
        " --arch sm_", gpu_.target.sm);
  }
  std::string Who() const override { return "the GPU"; }
  std::string HowToRun(size_t slots) const override {
    return absl::StrCat(
        "Run: ptxdiff-worker --backend=cuda --run-module repro.ptx input.bin "
        "out.bin ",
        slots, Options());
  }
  // The worker launches the module on a block of kProgramLanes threads
  // (module_run.h's kModuleRunThreads).
  bool RunsLanes() const override { return true; }

 private:
  // The worker's KEY=VALUE options.
  std::string Options() const {
    return absl::StrCat(
        " device=", gpu_.device,
        " kernel_timeout_ms=", absl::ToInt64Milliseconds(gpu_.kernel_timeout),
        gpu_.driver_library.empty()
            ? ""
            : absl::StrCat(" ", ShellQuote(absl::StrCat("driver_library=",
                                                        gpu_.driver_library))));
  }

  ProgramGpu gpu_;
};

}  // namespace

std::unique_ptr<ProgramModuleRunner> MakeCudaModuleRunner(ProgramGpu gpu) {
  return std::make_unique<CudaModuleRunner>(std::move(gpu));
}

std::unique_ptr<ProgramBackend> MakeCudaProgramBackend(ProgramGpu gpu) {
  return MakeRunnerProgramBackend(MakeCudaModuleRunner(std::move(gpu)));
}

}  // namespace ptxdiff
