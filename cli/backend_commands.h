// The parts of the CLI that run a backend: finding ptxdiff-worker, starting
// a worker from --backend/--arch/--timeout, `eval --backend`, and `sweep`.

#ifndef PTXDIFF_CLI_BACKEND_COMMANDS_H_
#define PTXDIFF_CLI_BACKEND_COMMANDS_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "client/worker_client.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"

namespace ptxdiff {

// The variants of the --family flags (all when none), or an error naming an
// unknown family.
absl::StatusOr<std::vector<Variant>> SelectVariants(const ParsedArgs& args);

// The worker for --backend (default: ChooseDefaultBackend()), with --arch
// and --timeout.
absl::StatusOr<std::unique_ptr<WorkerClient>> StartBackend(
    const ParsedArgs& args);

// --cuda-driver PATH: the CUDA driver library the cuda backend loads instead
// of libcuda.so.1 (HELLO's driver_library); "" when not given.
// InvalidArgument with a backend other than cuda.
absl::StatusOr<std::string> CudaDriverFlag(const ParsedArgs& args,
                                           absl::string_view backend);

// --reading (spec, the default, or hardware): the oracle reading judged
// against; InvalidArgument for anything else.
absl::StatusOr<Reading> ReadingFlag(const ParsedArgs& args);

// Prints the oracle's and the backend's answers and the verdict under
// `reading`; returns the exit code (0 agree/declined/unspecified/other
// reading, 1 mismatch, 2 fault).
int PrintBackendEval(const Tuple& tuple, Reading reading, WorkerClient& client,
                     const BatchOutcome& outcome, std::ostream& out);

// `ptxdiff sweep`
int RunSweep(const std::vector<std::string>& args, std::ostream& out,
             std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_BACKEND_COMMANDS_H_
