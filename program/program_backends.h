// The program backends by name, as `--backend` and PTXDIFF_BACKEND give
// them: `ptxas` (what it folds or claims constant, and its code run on the
// CPU), `ptx-cmd:COMMAND` (a tool that runs PTX, docs/kernel-abi.md
// "Programs") or `cuda` (a GPU). Each checks on persistent ptxdiff-workers
// (worker_program_backend.h): the engine's for a campaign, or one started
// here. The CLI's program commands and the program fuzzer choose them here.

#ifndef PTXDIFF_PROGRAM_PROGRAM_BACKENDS_H_
#define PTXDIFF_PROGRAM_PROGRAM_BACKENDS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "client/worker_client.h"
#include "program/program_backend.h"

namespace ptxdiff {

struct ProgramBackendOptions {
  std::string backend = "ptxas";
  // The target programs are compiled for; empty: sm_90, and on a GPU the
  // device's own.
  std::string arch;
  // A run of ptxas or a tool; on a GPU, a kernel's.
  absl::Duration timeout = absl::Seconds(10);
  // ptxas's --version and --list-version (the command's --timeout, where
  // given: a ptxas that hangs on them costs no more).
  absl::Duration ptxas_query_timeout = kPtxasTimeout;
  std::string driver_library;  // cuda: the driver API library (empty: NVIDIA's)
  // ptxas: the executable (empty: FindPtxas's search); an OSS-Fuzz build's
  // fuzz target gives the one bundled beside it.
  std::string ptxas;
  // A run's end (--max-time): a worker's first handshake ends by then.
  absl::Time start_deadline = absl::InfiniteFuture();
};

// The PTX target of "sm_90"; InvalidArgument for anything else.
absl::StatusOr<PtxTarget> TargetOfArch(const std::string& arch);

// What presents the cases of `options`' backend (names, finding classes,
// reproducers; it runs nothing) beside a worker already started, which says
// it is `identity`, that checks them: the program lane's (program_lane.h),
// whose workers are the campaign's, and StartProgramWorker's. Errors as
// ProgramWorkersFor's.
absl::StatusOr<std::shared_ptr<const ProgramBackend>> MakeProgramPresenter(
    const ProgramBackendOptions& options, const WorkerIdentity& identity);

// How to start the workers that check `options`' programs, none started: a
// campaign on the engine starts them (RunProgramsOnEngine, program_lane.h).
struct ProgramWorkers {
  WorkerCommand command;
  bool is_ptxas = true;
  std::string tool_command;  // ptx-cmd: the tool's command; else empty
};
// InvalidArgument naming what is wrong: an unknown backend, a tool command
// without {ptx}, {in} or {out}, an arch with no PTX target;
// FailedPrecondition where there is no ptxas.
absl::StatusOr<ProgramWorkers> ProgramWorkersFor(
    const ProgramBackendOptions& options);
// Such a worker's start that failed, as it is said (a GPU's, where there is
// none: FailedPrecondition, in one line saying why).
absl::Status ProgramWorkerStartFailed(const ProgramBackendOptions& options,
                                      const absl::Status& status);

// One worker started to check `options`' programs, owned: what `ptxdiff
// program` checks one case on, and the program fuzzer's crash mode each
// input (a campaign's workers are the engine's).
struct ProgramWorker {
  std::unique_ptr<WorkerClient> client;
  // Every check on `client` (WorkerProgramBackendOn), its cases named and
  // presented by `presenter`.
  std::unique_ptr<ProgramBackend> backend;
  std::shared_ptr<const ProgramBackend> presenter;
  bool is_ptxas = true;
  std::string arch;  // the target the programs are compiled for
};
// Errors: ProgramWorkersFor's, then the worker's start
// (ProgramWorkerStartFailed), FailedPrecondition if it runs no programs.
absl::StatusOr<ProgramWorker> StartProgramWorker(
    const ProgramBackendOptions& options);
// The target the programs are compiled for, on the worker that says it is
// `identity` (a GPU's device, where --arch does not say).
std::string ProgramArch(const ProgramBackendOptions& options,
                        const WorkerIdentity& identity);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_BACKENDS_H_
