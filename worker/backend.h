// An implementation under test, as the worker process runs it.
//
// A backend evaluates a batch of tuples and answers each with a value or a
// decline; a non-OK status means the backend itself failed (the worker then
// answers ERROR). Backends live in the worker process only: the harness
// reaches them through WorkerClient, never directly, so that a crash or hang
// of the implementation under test cannot take the harness down.

#ifndef PTXDIFF_WORKER_BACKEND_H_
#define PTXDIFF_WORKER_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "protocol/protocol.h"

namespace ptxdiff {

class Backend {
 public:
  virtual ~Backend() = default;

  // Name, version, toolchain and device identity, and what it supports.
  virtual WorkerIdentity Identity() const = 0;

  // Answers every tuple of `request` in `reply` (one result per tuple, in
  // order). The spellings are canonical; an unknown one is declined.
  virtual absl::Status Run(const RunRequest& request, RunReply& reply) = 0;
};

// The backends built into ptxdiff-worker: "oracle" and "ptxas". `options`
// are HELLO's key-values (e.g. arch=sm_90). Unknown names are NotFound,
// listing the known ones; a backend that cannot work on this machine (no
// ptxas) is FailedPrecondition with what to do about it.
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(absl::string_view name,
                                                     const KeyValues& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKEND_H_
