// A worker's programs (RUN_PROGRAMS, docs/worker-protocol.md "Programs"):
// the ProgramBackend of the backend it serves, run in this process so that
// a program that crashes or hangs it is a worker fault, restarted and
// pinned by the client as a tuple's is.

#ifndef PTXDIFF_WORKER_PROGRAM_SERVICE_H_
#define PTXDIFF_WORKER_PROGRAM_SERVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/backend.h"
#include "common/files.h"
#include "program/program_backend.h"
#include "protocol/protocol.h"

namespace ptxdiff {

class ProgramService {
 public:
  // The programs of backend `name` with HELLO `options` (arch, ptxas,
  // timeout_ms, command): ptxas and ptx-cmd run them, cuda on `backend`'s
  // device (Backend::RunModule, which outlives the service); nullptr for a
  // backend that runs none (oracle, exec). An error where the backend would
  // run them but cannot here.
  static absl::StatusOr<std::unique_ptr<ProgramService>> Make(
      absl::string_view name, const KeyValues& options, Backend& backend);

  // The PROGRAM_RESULTS payload for a RUN_PROGRAMS payload; an error (the
  // worker answers ERROR) for a request that does not decode or a harness
  // failure of the backend.
  absl::StatusOr<std::string> Answer(absl::string_view payload);

 private:
  ProgramService(std::unique_ptr<ProgramBackend> backend,
                 std::unique_ptr<TempDir> files)
      : files_(std::move(files)), backend_(std::move(backend)) {}

  std::unique_ptr<TempDir> files_;  // a tool's runs, removed with it
  std::unique_ptr<ProgramBackend> backend_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_PROGRAM_SERVICE_H_
