// The program backends by name, as `--backend` and PTXDIFF_BACKEND give
// them: `ptxas` (what it folds or claims constant, and its code run on the
// CPU), `ptx-cmd:COMMAND` (a tool that runs PTX, docs/kernel-abi.md
// "Programs") or `cuda` (a GPU). Each checks on persistent ptxdiff-workers
// (worker_program_backend.h). The CLI's program commands and the program
// fuzzer choose them here.

#ifndef PTXDIFF_PROGRAM_PROGRAM_BACKENDS_H_
#define PTXDIFF_PROGRAM_PROGRAM_BACKENDS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "client/worker_client.h"
#include "common/files.h"
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

struct ChosenProgramBackend {
  std::shared_ptr<ProgramBackend> backend;
  // Where a tool's runs are made (removed with it); null for ptxas.
  std::unique_ptr<TempDir> files;
  bool is_ptxas = true;
  std::string arch;  // the target the programs are compiled for
  // ptx-cmd: the tool's command (its refusal memory's name); else empty.
  std::string tool_command;
};

// The PTX target of "sm_90"; InvalidArgument for anything else.
absl::StatusOr<PtxTarget> TargetOfArch(const std::string& arch);

// The backend `options` name. InvalidArgument naming what is wrong: an
// unknown backend, a tool command without {ptx}, {in} or {out}, an arch
// with no PTX target; FailedPrecondition where there is no ptxas, or no GPU
// for `cuda` (in one line, saying why).
absl::StatusOr<ChosenProgramBackend> MakeProgramBackend(
    const ProgramBackendOptions& options);

// What presents the cases of `options`' backend (names, finding classes,
// reproducers; it runs nothing) beside a worker already started, which says
// it is `identity`, that checks them: the fuzz campaign's program lane
// (program_lane.h), whose workers are the campaign's. Errors as
// MakeProgramBackend's.
absl::StatusOr<std::shared_ptr<const ProgramBackend>> MakeProgramPresenter(
    const ProgramBackendOptions& options, const WorkerIdentity& identity);

// How to start the workers that check `options`' programs, none started: a
// campaign on the engine starts them (program_engine_run.h).
struct ProgramWorkers {
  WorkerCommand command;
  bool is_ptxas = true;
  std::string tool_command;  // ptx-cmd: the tool's command; else empty
};
// Errors as MakeProgramBackend's, but those only a started worker tells.
absl::StatusOr<ProgramWorkers> ProgramWorkersFor(
    const ProgramBackendOptions& options);
// Such a worker's start that failed, said as MakeProgramBackend says it (a
// GPU's: one line).
absl::Status ProgramWorkerStartFailed(const ProgramBackendOptions& options,
                                      const absl::Status& status);
// The target the programs are compiled for, on the worker that says it is
// `identity` (a GPU's device, where --arch does not say).
std::string ProgramArch(const ProgramBackendOptions& options,
                        const WorkerIdentity& identity);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_BACKENDS_H_
