// The `ptx-cmd` backend: a tool that runs PTX modules (an emulator, a
// translator, a simulator) as the implementation under test.
//
// For each variant in a batch it writes the variant's register-mode kernel
// (worker/backends/cuda/kernel_gen.h, exactly what the cuda backend sends to
// the driver) and the variant's operand tuples to files in a private
// temporary directory, runs the user's command template there through
// `/bin/sh -c` with {ptx}, {in} and {out} replaced by those files' paths
// (and {n} by the tuple count), and reads one 8-byte result per tuple from
// {out}. docs/kernel-abi.md is the contract a tool implements.
//
// A command that fails — a non-zero exit, a signal, the timeout, an output
// file missing or of the wrong size — declines its tuples with code 4
// (other) and a message naming the command, the variant, how it ended and
// the end of its output; the worker goes on with the next variant and batch.
// Unknown variants, non-PTX families and variants above `arch` are declined
// with code 1 (and left out of the handshake's `supports`).
//
// Options (HELLO key-values):
//   command           required: the template, e.g. `my-tool {ptx} {in} {out}`
//   arch              sm_90: the kernels' `.target` (the newest target the
//                     generator knows that is not above it)
//   timeout_ms        10000: one run of the command
//   batch_timeout_ms  45000: all runs of one batch; variants not started when
//                     it is spent are declined (keep it below the client's
//                     --timeout, 60 s by default)
//   jobs              2: runs of the command at once

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_BACKEND_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "protocol/protocol.h"
#include "worker/backend.h"

namespace ptxdiff {

// InvalidArgument for a missing or malformed option (a command without
// {ptx}, {in} or {out}, an arch that is not sm_NN, ...).
absl::StatusOr<std::unique_ptr<Backend>> MakePtxCmdBackend(
    const KeyValues& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_BACKEND_H_
