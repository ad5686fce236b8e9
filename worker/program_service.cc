#include "worker/program_service.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "common/status_macros.h"
#include "program/program_backends.h"
#include "program/program_cuda.h"
#include "program/program_ptxas.h"
#include "program/program_tool.h"
#include "program/program_wire.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

// HELLO `timeout_ms`: one run of ptxas or of the tool (the CLI's --timeout).
absl::StatusOr<absl::Duration> RunTimeout(absl::string_view backend,
                                          const KeyValues& options) {
  int timeout_ms = 10000;
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, backend, "timeout_ms", 1,
                                    24 * 3600 * 1000, timeout_ms));
  return absl::Milliseconds(timeout_ms);
}

// The GPU's programs, each module run on `backend`'s context; for the
// target named by HELLO `arch`, else the device's own.
absl::StatusOr<std::unique_ptr<ProgramBackend>> OnTheDevice(
    const KeyValues& options, Backend& backend) {
  const WorkerIdentity identity = backend.Identity();
  const std::optional<std::string> arch = OptionValue(options, "arch");
  const std::optional<int> sm = DeviceSm(identity.device);
  PTXDIFF_ASSIGN_OR_RETURN(
      const PtxTarget target,
      TargetOfArch(arch ? *arch : absl::StrCat("sm_", sm.value_or(0))));
  // The kernel timeout is the backend's own (it parsed kernel_timeout_ms);
  // what only presents a case (replay flags, a reproducer's command line)
  // is the harness's, never asked here.
  return MakeCudaProgramBackend(
      {.run = [&backend](const std::string& module, const std::string& in,
                         size_t n) { return backend.RunModule(module, in, n); },
       .target = target,
       .device_name = identity.device,
       .driver = identity.driver});
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProgramService>> ProgramService::Make(
    absl::string_view name, const KeyValues& options, Backend& backend) {
  const std::string arch = OptionValue(options, "arch").value_or("sm_90");
  if (name == kPtxasBackend) {
    // The tuple backend's compiler: nvJitLink in-process where it loads,
    // no ptxas process a module (a hang there is this worker's, the
    // client's timeout ends it).
    PTXDIFF_ASSIGN_OR_RETURN(ProgramCompiler compiler,
                             PtxasProgramCompiler(options));
    PTXDIFF_ASSIGN_OR_RETURN(const absl::Duration timeout,
                             RunTimeout(name, options));
    return std::unique_ptr<ProgramService>(new ProgramService(
        MakePtxasProgramBackend(std::move(compiler), arch, timeout), nullptr));
  }
  if (name == kPtxCmdBackend) {
    PTXDIFF_ASSIGN_OR_RETURN(const PtxTarget target, TargetOfArch(arch));
    PTXDIFF_ASSIGN_OR_RETURN(const absl::Duration timeout,
                             RunTimeout(name, options));
    PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> files,
                             TempDir::Create("ptxdiff-programs"));
    std::unique_ptr<ProgramBackend> tool = MakeToolProgramBackend(
        {.command = OptionValue(options, "command").value_or(""),
         .files_root = files->path(),
         .target = target,
         .timeout = timeout});
    return std::unique_ptr<ProgramService>(
        new ProgramService(std::move(tool), std::move(files)));
  }
  if (name == kCudaBackend) {
    PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<ProgramBackend> gpu,
                             OnTheDevice(options, backend));
    return std::unique_ptr<ProgramService>(
        new ProgramService(std::move(gpu), nullptr));
  }
  return nullptr;
}

absl::StatusOr<std::string> ProgramService::Answer(absl::string_view payload) {
  PTXDIFF_ASSIGN_OR_RETURN(const ProgramRunRequest request,
                           DecodeProgramRunRequest(payload));
  PTXDIFF_ASSIGN_OR_RETURN(const ProgramBatch batch, ProgramBatchOf(request));
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::vector<ProgramCheck> checks,
      batch.until_fault
          ? backend_->CheckUntilFault(batch.programs, batch.form, batch.reading,
                                      batch.deadline)
          : backend_->Check(batch.programs, batch.form, batch.reading,
                            batch.deadline));
  if (checks.size() != batch.programs.size()) {
    return absl::InternalError(absl::StrCat(
        checks.size(), " checks for ", batch.programs.size(), " programs"));
  }
  ProgramRunReply reply;
  reply.checks.reserve(checks.size());
  for (const ProgramCheck& c : checks) {
    reply.checks.push_back(EncodeProgramCheck(c));
  }
  return EncodeProgramRunReply(reply);
}

}  // namespace ptxdiff
