// Programs on a user's tool that runs PTX (the ptx-cmd backend's command,
// docs/kernel-abi.md, "Programs"): many programs in one module, one run of
// the tool for all of them; a module the tool refuses, crashes or hangs on
// is halved until the program it fails on is alone.

#ifndef PTXDIFF_PROGRAM_PROGRAM_TOOL_H_
#define PTXDIFF_PROGRAM_PROGRAM_TOOL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_ptx.h"
#include "worker/backends/cuda/kernel_gen.h"
#include "worker/backends/ptx_cmd/tool_run.h"

namespace ptxdiff {

inline constexpr int kMaxToolProgramInputs = 4;

struct ProgramTool {
  std::string command;     // the template: {ptx}, {in}, {out}, optional {n}
  std::string files_root;  // a private directory the runs are made in
  PtxTarget target;
  absl::Duration timeout = absl::Seconds(10);  // one run of the tool
  // Runs past it are cut (ToolRun::kCut): not known to hang.
  absl::Time deadline = absl::InfiniteFuture();
};

// How a program's run ended: its outputs (kOk), or the tool's refusal,
// crash or hang on it alone.
struct ProgramToolRun {
  ToolRun::End end = ToolRun::kOk;
  std::vector<uint64_t> outputs;  // one per output, for kOk
  std::string what;  // how it ended, and the end of the tool's output
};

// Each program run once, its inputs at their witnesses (`inputs` kRuntime:
// from the input buffer; kImmediate: in the instructions). An error only
// for the harness's own failure (no temporary directory); a program with
// more than kMaxToolProgramInputs inputs is refused without a run.
absl::StatusOr<std::vector<ProgramToolRun>> RunProgramsOnTool(
    const ProgramTool& tool, std::span<const Program> programs,
    ProgramInputs inputs);

// The tool as a program backend: each program run at its witness and, with
// runtime inputs, at a few more input vectors (edge values of each input),
// all in one module; judged against the composed oracle there.
std::unique_ptr<ProgramBackend> MakeToolProgramBackend(ProgramTool tool);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_TOOL_H_
