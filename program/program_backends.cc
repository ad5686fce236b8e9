#include "program/program_backends.h"

#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_constants.h"
#include "client/worker_client.h"
#include "client/worker_locator.h"
#include "common/status_macros.h"
#include "program/program_cuda.h"
#include "program/program_ptxas.h"
#include "program/program_tool.h"
#include "program/worker_program_backend.h"
#include "protocol/backend_names.h"

namespace ptxdiff {

absl::StatusOr<PtxTarget> TargetOfArch(const std::string& arch) {
  int sm = 0;
  absl::string_view digits = arch;
  if (!absl::ConsumePrefix(&digits, "sm_") || !absl::SimpleAtoi(digits, &sm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--arch ", arch, ": not an sm_NN target"));
  }
  const std::optional<PtxTarget> target = TargetForDevice(sm);
  if (!target)
    return absl::InvalidArgumentError(absl::StrCat("no PTX target for ", arch));
  return *target;
}

namespace {

// Beyond a kernel's own timeout, for a GPU worker to start, load the driver
// and JIT-compile a module.
constexpr absl::Duration kGpuStartAllowance = absl::Seconds(30);

// Beyond two runs of the tool or ptxas, for a worker at work to say so
// (the evaluator between runs, a loaded machine).
constexpr absl::Duration kSilenceAllowance = absl::Seconds(5);

std::string ArchOrDefault(const ProgramBackendOptions& o) {
  return o.arch.empty() ? "sm_90" : o.arch;
}

// How to start a persistent ptxdiff-worker that checks ptxas's or a tool's
// programs (RUN_PROGRAMS).
absl::StatusOr<WorkerCommand> CompilerWorkerCommand(
    const ProgramBackendOptions& o) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::string worker, FindWorkerBinary());
  PTXDIFF_ASSIGN_OR_RETURN(WorkerCommand command,
                           CommandForBackend(o.backend, worker));
  command.hello_options.emplace_back("arch", ArchOrDefault(o));
  if (o.backend == "ptxas" && !o.ptxas.empty())
    command.hello_options.emplace_back("ptxas", o.ptxas);
  if (o.backend == "ptxas") {
    command.hello_options.emplace_back(
        kPtxasQueryTimeoutOption,
        absl::StrCat(absl::ToInt64Milliseconds(o.ptxas_query_timeout)));
  }
  command.hello_options.emplace_back(
      "timeout_ms", absl::StrCat(absl::ToInt64Milliseconds(o.timeout)));
  // A reply may hold a batch's compiles and tool runs: the worker cuts its
  // runs at the batch's deadline, this is the allowance past it.
  command.timeout = std::max(command.timeout, 2 * o.timeout);
  // Its start-up is no batch: --timeout bounds it, and the run's end.
  command.handshake_timeout = o.timeout;
  // It says it is at work after each run of the tool or ptxas (at most
  // --timeout each): silent for two and a little, it stopped answering.
  command.silence_timeout = 2 * o.timeout + kSilenceAllowance;
  command.start_deadline = o.start_deadline;
  return command;
}

// The same for a GPU's worker, which runs each module on the device it
// holds (worker/program_service.h).
absl::StatusOr<WorkerCommand> GpuWorkerCommand(const ProgramBackendOptions& o) {
  if (!o.arch.empty()) {
    PTXDIFF_RETURN_IF_ERROR(TargetOfArch(o.arch).status());
  }
  PTXDIFF_ASSIGN_OR_RETURN(const std::string worker, FindWorkerBinary());
  PTXDIFF_ASSIGN_OR_RETURN(WorkerCommand command,
                           CommandForBackend(kCudaBackend, worker));
  if (!o.driver_library.empty()) {
    command.hello_options.emplace_back("driver_library", o.driver_library);
  }
  if (!o.arch.empty()) command.hello_options.emplace_back("arch", o.arch);
  const int64_t kernel_timeout_ms = absl::ToInt64Milliseconds(o.timeout);
  command.hello_options.emplace_back("kernel_timeout_ms",
                                     absl::StrCat(kernel_timeout_ms));
  command.timeout = std::max(command.timeout, o.timeout + kGpuStartAllowance);
  // A module's load (the driver's JIT) says nothing while it lasts.
  command.silence_timeout = o.timeout + kGpuStartAllowance;
  command.start_deadline = o.start_deadline;
  return command;
}

absl::Status UnknownProgramBackend(const ProgramBackendOptions& options) {
  return absl::InvalidArgumentError(
      absl::StrCat("--backend ", options.backend,
                   ": programs run on ptxas, cuda or ptx-cmd:COMMAND"));
}

// A GPU worker's start that failed, but for a flag that is wrong: no GPU
// here, in one line (what the worker said).
absl::Status NoGpu(const absl::Status& status) {
  if (status.ok() || absl::IsInvalidArgument(status)) return status;
  return absl::FailedPreconditionError(absl::StrReplaceAll(
      absl::StripTrailingAsciiWhitespace(status.message()), {{"\n", "; "}}));
}

absl::StatusOr<std::shared_ptr<const ProgramBackend>> PtxasPresenter(
    const ProgramBackendOptions& o) {
  KeyValues where = {
      {kPtxasQueryTimeoutOption,
       absl::StrCat(absl::ToInt64Milliseconds(o.ptxas_query_timeout))}};
  if (!o.ptxas.empty()) where.emplace_back("ptxas", o.ptxas);
  // What the worker compiles with (its HELLO carries `ptxas`, and
  // $PTXDIFF_PTXAS_COMPILER reaches it): the presenter names it.
  PTXDIFF_ASSIGN_OR_RETURN(ProgramCompiler compiler,
                           PtxasProgramCompiler(where));
  const std::string arch = ArchOrDefault(o);
  PTXDIFF_RETURN_IF_ERROR(FindSassArch(arch).status());
  return std::shared_ptr<const ProgramBackend>(
      MakePtxasProgramBackend(std::move(compiler), arch, o.timeout));
}

absl::StatusOr<std::shared_ptr<const ProgramBackend>> ToolPresenter(
    absl::string_view command, const ProgramBackendOptions& o) {
  // Said as every command that starts a ptx-cmd worker says it.
  PTXDIFF_RETURN_IF_ERROR(CheckPtxCmdCommand(command));
  PTXDIFF_ASSIGN_OR_RETURN(const PtxTarget target,
                           TargetOfArch(ArchOrDefault(o)));
  return std::shared_ptr<const ProgramBackend>(
      MakeToolProgramBackend({.command = std::string(command),
                              .target = target,
                              .timeout = o.timeout}));
}

// What a GPU's cases are compiled for: --arch, else the device its worker
// holds.
std::string GpuArch(const ProgramBackendOptions& o,
                    const WorkerIdentity& identity) {
  const std::optional<int> sm = DeviceSm(identity.device);
  return !o.arch.empty() ? o.arch : sm ? absl::StrCat("sm_", *sm) : "sm_90";
}

// A GPU's presenter names the device the worker holds.
absl::StatusOr<std::shared_ptr<const ProgramBackend>> GpuPresenter(
    const ProgramBackendOptions& o, const WorkerIdentity& identity) {
  PTXDIFF_ASSIGN_OR_RETURN(const PtxTarget target,
                           TargetOfArch(GpuArch(o, identity)));
  return std::shared_ptr<const ProgramBackend>(
      MakeCudaProgramBackend({.driver_library = o.driver_library,
                              .target = target,
                              .device_name = identity.device,
                              .driver = identity.driver,
                              .kernel_timeout = o.timeout}));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ProgramBackend>> MakeProgramPresenter(
    const ProgramBackendOptions& options, const WorkerIdentity& identity) {
  if (options.backend == "ptxas") return PtxasPresenter(options);
  absl::string_view command = options.backend;
  if (absl::ConsumePrefix(&command, "ptx-cmd:"))
    return ToolPresenter(command, options);
  if (options.backend == kCudaBackend) return GpuPresenter(options, identity);
  return UnknownProgramBackend(options);
}

absl::StatusOr<ProgramWorkers> ProgramWorkersFor(
    const ProgramBackendOptions& options) {
  ProgramWorkers workers{.is_ptxas = options.backend == "ptxas"};
  absl::string_view command = options.backend;
  if (options.backend == kCudaBackend) {
    PTXDIFF_ASSIGN_OR_RETURN(workers.command, GpuWorkerCommand(options));
    return workers;
  }
  // What presents the cases says first what is wrong with the flags (no
  // ptxas, a tool command without {ptx}) before any worker starts.
  if (options.backend == "ptxas") {
    PTXDIFF_RETURN_IF_ERROR(PtxasPresenter(options).status());
  } else if (absl::ConsumePrefix(&command, "ptx-cmd:")) {
    PTXDIFF_RETURN_IF_ERROR(ToolPresenter(command, options).status());
    workers.tool_command = std::string(command);
  } else {
    return UnknownProgramBackend(options);
  }
  PTXDIFF_ASSIGN_OR_RETURN(workers.command, CompilerWorkerCommand(options));
  return workers;
}

absl::Status ProgramWorkerStartFailed(const ProgramBackendOptions& options,
                                      const absl::Status& status) {
  return options.backend == kCudaBackend ? NoGpu(status) : status;
}

std::string ProgramArch(const ProgramBackendOptions& options,
                        const WorkerIdentity& identity) {
  return options.backend == kCudaBackend ? GpuArch(options, identity)
                                         : ArchOrDefault(options);
}

namespace {

// A worker started with `workers.command`, which must run programs, and
// what presents its cases.
absl::StatusOr<ProgramWorker> StartOn(const ProgramBackendOptions& options,
                                      const ProgramWorkers& workers) {
  ProgramWorker started{.is_ptxas = workers.is_ptxas};
  PTXDIFF_ASSIGN_OR_RETURN(started.client,
                           WorkerClient::Start(workers.command));
  const WorkerIdentity& identity = started.client->identity();
  PTXDIFF_RETURN_IF_ERROR(RunsPrograms(identity));
  PTXDIFF_ASSIGN_OR_RETURN(started.presenter,
                           MakeProgramPresenter(options, identity));
  started.backend = WorkerProgramBackendOn(*started.client, started.presenter);
  started.arch = ProgramArch(options, identity);
  return started;
}

}  // namespace

absl::StatusOr<ProgramWorker> StartProgramWorker(
    const ProgramBackendOptions& options) {
  PTXDIFF_ASSIGN_OR_RETURN(const ProgramWorkers workers,
                           ProgramWorkersFor(options));
  absl::StatusOr<ProgramWorker> started = StartOn(options, workers);
  if (!started.ok()) return ProgramWorkerStartFailed(options, started.status());
  return started;
}

}  // namespace ptxdiff
