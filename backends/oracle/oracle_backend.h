// The `oracle` backend: the CPU oracle served across the worker boundary, as
// a reference any other backend can be compared with, and as the fixture of
// the protocol's own tests and benchmarks.

#ifndef PTXDIFF_WORKER_BACKENDS_ORACLE_ORACLE_BACKEND_H_
#define PTXDIFF_WORKER_BACKENDS_ORACLE_ORACLE_BACKEND_H_

#include <memory>
#include <optional>
#include <vector>

#include "backends/backend.h"

namespace ptxdiff {

std::unique_ptr<Backend> MakeOracleBackend();

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_ORACLE_ORACLE_BACKEND_H_
