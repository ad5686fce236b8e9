// Programs checked by a worker process (RUN_PROGRAMS): the harness's side
// of the one backend seam. Each Check goes to a persistent ptxdiff-worker,
// which runs the backend's ProgramBackend (worker/program_service.h); a
// program that crashes or hangs the worker is restarted past and pinned by
// the client (WorkerClient::RunPrograms) and comes back as a ProgramFault,
// as a tuple's does. What only presents a case (Describe, ReproModule, the
// finding's class) needs no run and is answered here by `presenter`.

#ifndef PTXDIFF_PROGRAM_WORKER_PROGRAM_BACKEND_H_
#define PTXDIFF_PROGRAM_WORKER_PROGRAM_BACKEND_H_

#include <memory>

#include "absl/status/status.h"
#include "client/worker_client.h"
#include "program/program_backend.h"

namespace ptxdiff {

// FailedPrecondition unless the worker that says it is `identity` runs
// programs (its HELLO_REPLY says programs=1).
absl::Status RunsPrograms(const WorkerIdentity& identity);

// Every check on `worker`, which runs programs (RunsPrograms: the caller's
// to check), borrowed for the backend's life: how a campaign's program lane
// runs on the workers its senders and filer hold (program_lane.h), and a
// check on a worker of its own (StartProgramWorker, program_backends.h).
std::unique_ptr<ProgramBackend> WorkerProgramBackendOn(
    WorkerClient& worker, std::shared_ptr<const ProgramBackend> presenter);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_WORKER_PROGRAM_BACKEND_H_
