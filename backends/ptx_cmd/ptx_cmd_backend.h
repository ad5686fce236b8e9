// The `ptx-cmd` backend: a tool that runs PTX modules (an emulator, a
// translator, a simulator) as the implementation under test.
//
// For each batch it writes one module (kernel ABI 2: a segment per
// variant, each the register-mode loop the cuda backend runs, from
// backends/cuda/kernel_gen.h) and the batch's operand tuples to files
// in a private temporary directory, runs the user's command template there
// once through `/bin/sh -c` with {ptx}, {in} and {out} replaced by those
// files' paths (and {n} by the tuple count), and reads one 16-byte result
// slot per tuple from {out}. With abi=1, one module and one run per variant
// (8 bytes a tuple, 16 for `.cc`). docs/kernel-abi.md is the contract a
// tool implements.
//
// A run that fails is split in halves and the halves run again, until:
//   - a non-zero exit status (a refusal: the tool cannot take the module)
//     is pinned on one variant, whose tuples are declined with code 1 and
//     the tool's message, now and in every later batch; the segment on the
//     line the tool's error names is tried alone first; and the refusal,
//     with what the tool said, is a hypothesis about the classes the
//     variant is in (refusal_classes.h), confirmed on a few variants of
//     the class run alone, after which the whole class is declined without
//     a run (and re-checked now and then);
//   - a signal, a missing or short {out} (a crash) or the timeout (a hang)
//     is pinned on single tuples, answered as ResultKind::kFault: findings.
// Every other tuple gets its value. The timeout adapts to the tool (4x a
// run's expected time, learned from the runs that succeeded, plus 1 s, at
// most timeout_ms); the batch's runs, isolation included, stop at
// batch_timeout_ms, and what is left is declined saying so. Unknown
// variants, non-PTX families and variants above `arch` are declined with
// code 1 (and left out of the handshake's `supports`).
//
// Options (HELLO key-values):
//   command           required: the template, e.g. `my-tool {ptx} {in} {out}`
//   arch              sm_90: the kernels' `.target` (the newest target the
//                     generator knows that is not above it)
//   abi               2: a module per batch; 1: a module per variant
//   timeout_ms        10000: the most one run of the command may take
//   batch_timeout_ms  45000: all runs of one batch (keep it below the
//                     client's --timeout, 60 s by default)
//   jobs              2: runs of the command at once
//   refusals_dir      where the variants and classes the tool refuses are
//                     remembered across runs (refusal_memory.h): those it
//                     refused in every shape are left out of the handshake's
//                     `supports`; unset, nowhere
//
// Its files: ptx_cmd_backend.cc runs a batch (the parts to run, what each
// run's end teaches); ptx_cmd_config.h parses the options; module_parts.h
// cuts a batch into modules and a failed one into smaller ones;
// fault_pacing.h holds a variant that faults the tool apart; tool_run.h
// runs the tool once; refusal_classes.h learns the classes it refuses, and
// refusal_memory.h remembers what it refused.

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_BACKEND_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// InvalidArgument for a missing or malformed option (a command without
// {ptx}, {in} or {out}, an arch that is not sm_NN, ...).
absl::StatusOr<std::unique_ptr<Backend>> MakePtxCmdBackend(
    const KeyValues& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_BACKEND_H_
