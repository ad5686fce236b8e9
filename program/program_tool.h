// Programs on an implementation that runs PTX modules of kernel ABI 2
// (docs/kernel-abi.md, "Programs"): a user's tool (the ptx-cmd backend's
// command) or a GPU (program_cuda.h). Many programs in one module, one run
// for all of them; a module the runner refuses, crashes or hangs on is
// halved until the program it fails on is alone.

#ifndef PTXDIFF_PROGRAM_PROGRAM_TOOL_H_
#define PTXDIFF_PROGRAM_PROGRAM_TOOL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptx_cmd/tool_run.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_ptx.h"

namespace ptxdiff {

inline constexpr int kMaxToolProgramInputs = 4;

// In a run's `what` (ProgramToolRun, a check's why_not): the tool's error
// lines follow, one a line, where its output's end does not hold them.
inline constexpr char kToolSaid[] = "; it said:\n";

// Where a module of programs (ProgramToolModule) runs: a user's tool (a
// command) or a GPU (program_cuda.h). The backend around it (halving a
// module that fails, judging, describing, filing) is the same for both.
class ProgramModuleRunner {
 public:
  virtual ~ProgramModuleRunner() = default;
  // One run of `module` on the input buffer `in`, filling `n` slots of
  // kBatchResultBytes: the output buffer (kOk), or a refusal, crash or hang
  // (kCut: stopped at `deadline`, not known to hang). `error` only for the
  // harness's own failure. Called from several threads at once.
  virtual ToolRun Run(const std::string& module, const std::string& in,
                      size_t n, absl::Time deadline) const = 0;
  virtual const PtxTarget& target() const = 0;
  // ProgramBackend's Name, Identity and ReplayFlags.
  virtual std::string Name() const = 0;
  virtual std::string Identity() const = 0;
  virtual std::string ReplayFlags() const = 0;
  // Who gives the outputs, in a mismatch's words: "the tool", "the GPU".
  virtual std::string Who() const = 0;
  // How to run a reproducer's module and input.bin of `slots` slots: its
  // first comment line.
  virtual std::string HowToRun(size_t slots) const = 0;
  // True if it launches a module on a block of kProgramLanes threads, so
  // that programs with thread inputs run on each lane (ProgramToolModule's
  // `lanes`): a GPU. A tool chooses its own launch (kernel ABI 2).
  virtual bool RunsLanes() const { return false; }
};

struct ProgramTool {
  std::string command;     // the template: {ptx}, {in}, {out}, optional {n}
  std::string files_root;  // a private directory the runs are made in
  PtxTarget target;
  // The most one run of the tool may take: the ceiling of a timeout that
  // adapts to what its runs cost (ToolCostModel).
  absl::Duration timeout = absl::Seconds(10);
  // Runs past it are cut (ToolRun::kCut): not known to hang.
  absl::Time deadline = absl::InfiniteFuture();
};

// How a program's run ended: its outputs (kOk), or the tool's refusal,
// crash or hang on it alone.
struct ProgramToolRun {
  ToolRun::End end = ToolRun::kOk;
  std::vector<uint64_t> outputs;  // one per output, for kOk
  // A program run on lanes (ProgramSlots::OnLanes): each lane's outputs,
  // kProgramLanes of them (`outputs` is lane 0's).
  std::vector<std::vector<uint64_t>> lanes;
  std::string what;  // how it ended, and the end of the tool's output
  // kCut, in a module the tool hung on whose halving the deadline cut: how
  // that module's run ended (an unisolated hang: no one program is known to
  // hang).
  std::string hung_in_module;
};

// Each program run once, its inputs at their witnesses (`inputs` kRuntime:
// from the input buffer; kImmediate: in the instructions), as few runs as
// the runner allows: one module for all, halved where a run fails until
// the program it fails on is alone. An error only for the harness's own
// failure (no temporary directory); a program with more than
// kMaxToolProgramInputs inputs is refused without a run. With
// `stop_at_fault` the programs after the first that crashes or hangs are
// not run (kCut): a minimizer wants the first candidate that still faults,
// and isolating every one costs runs (a hang's, the timeout each). For the
// same reason a module that hangs whose programs are all copies of one
// (`copy_of[k]`: the program that program k is a copy of; empty: none is)
// is not halved: each of them is given the hang.
absl::StatusOr<std::vector<ProgramToolRun>> RunPrograms(
    const ProgramModuleRunner& runner, std::span<const Program> programs,
    ProgramInputs inputs, absl::Time deadline, bool stop_at_fault = false,
    std::span<const size_t> copy_of = {});
// The same on `tool`, until tool.deadline.
absl::StatusOr<std::vector<ProgramToolRun>> RunProgramsOnTool(
    const ProgramTool& tool, std::span<const Program> programs,
    ProgramInputs inputs);

// The input buffer for `programs`: program k's witnesses little-endian at
// {in} + 32 slots.first[k] + 8j (64k + 8j without lanes).
std::string ProgramInputBuffer(std::span<const Program> programs,
                               bool lanes = false);

// The runner as a program backend: each program run at its witness and,
// with runtime inputs, at a few more input vectors (edge values of each
// input), all in one module; judged against the composed oracle there.
std::unique_ptr<ProgramBackend> MakeRunnerProgramBackend(
    std::unique_ptr<const ProgramModuleRunner> runner);

// A user's tool: each run one run of its command (RunToolOnce).
std::unique_ptr<ProgramModuleRunner> MakeToolModuleRunner(ProgramTool tool);
std::unique_ptr<ProgramBackend> MakeToolProgramBackend(ProgramTool tool);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_TOOL_H_
