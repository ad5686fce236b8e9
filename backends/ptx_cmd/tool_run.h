// One run of a user's PTX tool (docs/kernel-abi.md, "The command"): the
// module and the input buffer written to a fresh private directory, the
// command template run once through /bin/sh with {ptx}, {in}, {out}, {n}
// and {out_bytes} (the size {out} must have) replaced, and how it ended: the
// output buffer, a refusal, a crash or a hang. What the ptx-cmd backend and
// programs on a tool share; a module of programs run on a GPU is read as one
// (program_cuda.h).

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_TOOL_RUN_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_TOOL_RUN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "backends/run_cost_model.h"

namespace ptxdiff {

inline constexpr size_t kMaxErrorLines = 3;

// How one run of the tool ended.
struct ToolRun {
  enum End : uint8_t {
    kOk,       // exit 0 and a whole {out}
    kRefused,  // a non-zero exit status: the tool declined the module
    kCrashed,  // a signal, or exit 0 without a whole {out}
    kHung,     // the timeout
    kCut,      // stopped at the caller's deadline, before its own
               // timeout, or by a stop of this process (interrupt.h), or
               // failed by the machine (`machine_failure`)
  } end = kOk;
  std::string what;    // "exit status 1", "killed by signal 11 (SIGSEGV)"
  // kCut of a non-zero exit whose output says the machine failed the run,
  // not the module ("No space left on device"): the phrase. No verdict on
  // the module, and never a refusal (learned, it declined the variant in
  // later runs with the disk free).
  std::string machine_failure;
  // The end of what the tool printed (its last 1000 bytes), and the lines
  // below, are text to quote: each byte that is no printable ASCII is \xNN
  // (common/printable.h).
  std::string output;
  // Up to kMaxErrorLines lines of what it printed, anywhere, that say
  // "error" (any case): a parser's "kernel.ptx:12: syntax error", which a
  // tool that logs tens of KB may print long before its output ends.
  std::vector<std::string> error_lines;
  std::string out;  // {out}, for kOk
  // The command's exit status, when it exited (-1 after a signal or a
  // timeout): a caller whose command speaks in exit statuses reads it.
  int exit_status = -1;
  absl::Duration took;
  // The harness's own failure (no temporary directory, no room for the
  // module), marked IsEnvironmentFailure (common/files.h).
  absl::Status error;
};

struct ToolCall {
  std::string command;     // the template, with {ptx}, {in} and {out}
  std::string files_root;  // where the run's private directory is made
  std::string module;      // kernel.ptx
  std::string in;          // in.bin
  size_t n = 0;            // {n}: the slots the module fills
  size_t slot_bytes = 16;  // {out} must hold n of these
  // The tool's own timeout (a run past it hangs), and the most the caller
  // can wait (a run cut at it is kCut, not known to hang).
  absl::Duration timeout;
  absl::Time deadline = absl::InfiniteFuture();
};

ToolRun RunToolOnce(const ToolCall& call);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_TOOL_RUN_H_
