// A record of every ptxas run the backend makes, to see where a campaign's
// compile time goes (docs/performance.md, "The main job"). With
// PTXDIFF_COMPILE_LOG=PATH in the worker's environment, each run appends a
// line to PATH.<pid> (one file a worker: the senders' workers run at once):
//
//   <unix seconds> <purpose> <-O level> <kernels> <tuples> <runtime> <ms>
//
// `runtime`: the tuples with a runtime source (a runtime form, whose code
// is kept); purpose: `check` (a batch's chunk), `halves` (kernels that did
// not decode, compiled again in halves), `reference` (the -O0 kernels an
// executed value the oracle refutes is checked on).
// Off (and free) without the variable.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_COMPILE_LOG_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_COMPILE_LOG_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ptxdiff {

struct CompileRecord {
  absl::string_view purpose = "check";
  int tuples = 0;
  int runtime_tuples = 0;
};

// The file this process logs to ("" when PTXDIFF_COMPILE_LOG is not set).
const std::string& CompileLogPath();

// Appends one line for a ptxas run of `ptx` at `opt_level` that started at
// `start` and took `took` (nothing where the log is off). Safe from the
// backend's compile threads: each line is one append.
void LogCompile(const CompileRecord& record, absl::string_view ptx,
                int opt_level, absl::Time start, absl::Duration took);
// The same, to `path` (LogCompile's, with the path CompileLogPath()).
void LogCompileTo(const std::string& path, const CompileRecord& record,
                  absl::string_view ptx, int opt_level, absl::Time start,
                  absl::Duration took);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_COMPILE_LOG_H_
