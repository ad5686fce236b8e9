// Programs checked by a worker process (RUN_PROGRAMS): the harness's side
// of the one backend seam. Each Check goes to a persistent ptxdiff-worker,
// which runs the backend's ProgramBackend (worker/program_service.h); a
// program that crashes or hangs the worker is restarted past and pinned by
// the client (WorkerClient::RunPrograms) and comes back as a ProgramFault,
// as a tuple's does. What only presents a case (Describe, ReproModule, the
// finding's class) needs no run and is answered here by `presenter`.

#ifndef PTXDIFF_PROGRAM_WORKER_PROGRAM_BACKEND_H_
#define PTXDIFF_PROGRAM_WORKER_PROGRAM_BACKEND_H_

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "client/worker_client.h"
#include "program/program_backend.h"

namespace ptxdiff {

// What presents the cases of the worker that says it is `identity` (a
// GPU's presenter names its device).
using PresenterOf =
    std::function<absl::StatusOr<std::shared_ptr<const ProgramBackend>>(
        const WorkerIdentity& identity)>;

// A worker per thread that checks at once (a campaign's), started with
// `command` as it is first needed and kept for the backend's life.
// FailedPrecondition if the first worker does not run programs.
absl::StatusOr<std::unique_ptr<ProgramBackend>> MakeWorkerProgramBackend(
    WorkerCommand command, std::shared_ptr<const ProgramBackend> presenter);
absl::StatusOr<std::unique_ptr<ProgramBackend>> MakeWorkerProgramBackend(
    WorkerCommand command, const PresenterOf& presenter_of);

// Every check on `worker`, which runs programs (its identity().programs:
// the caller's to check), borrowed for the backend's life: how a campaign's
// program lane runs on the workers its senders and filer hold
// (program_lane.h).
std::unique_ptr<ProgramBackend> WorkerProgramBackendOn(
    WorkerClient& worker, std::shared_ptr<const ProgramBackend> presenter);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_WORKER_PROGRAM_BACKEND_H_
