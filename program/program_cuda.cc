#include "program/program_cuda.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/tool_run.h"
#include "common/subprocess.h"

namespace ptxdiff {
namespace {

class CudaModuleRunner : public ProgramModuleRunner {
 public:
  explicit CudaModuleRunner(ProgramGpu gpu) : gpu_(std::move(gpu)) {}

  ToolRun Run(const std::string& module, const std::string& in, size_t n,
              absl::Time deadline) const override {
    if (!gpu_.run) {
      return {.error = absl::FailedPreconditionError(
                  "programs on the GPU run in its worker")};
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<ModuleRun> run = gpu_.run(module, in, n);
    if (!run.ok()) return {.error = run.status()};
    if (run->refused) {
      return {.end = ToolRun::kRefused,
              .what = *std::move(run->refused),
              .took = absl::Now() - start};
    }
    return {.out = std::move(run->out), .took = absl::Now() - start};
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
