#include "program/program_tool.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

// A program's share of {in} and of {out}: two of the ABI's slots.
constexpr size_t kInBytes = 2 * kTupleBytes, kOutBytes = 2 * kBatchResultBytes;

// The input buffer: program k's inputs little-endian at 64k + 8j.
std::string InputBuffer(std::span<const Program> programs) {
  std::string in(programs.size() * kInBytes, '\0');
  for (size_t k = 0; k < programs.size(); ++k) {
    for (size_t j = 0; j < programs[k].inputs.size(); ++j) {
      const uint64_t v = programs[k].inputs[j].witness;
      std::memcpy(&in[k * kInBytes + 8 * j], &v, 8);
    }
  }
  return in;
}

std::string HowItEnded(const ToolRun& run) {
  return run.output.empty() ? run.what : absl::StrCat(run.what, "; its output ends:\n", run.output);
}

absl::Status RunInto(const ProgramTool& tool, std::span<const Program> programs,
                     ProgramInputs inputs, ProgramToolRun* results) {
  const ToolRun run = RunToolOnce({.command = tool.command,
                                   .files_root = tool.files_root,
                                   .module = ProgramToolModule(programs, tool.target, inputs),
                                   .in = InputBuffer(programs),
                                   .n = 2 * programs.size(),
                                   .slot_bytes = kBatchResultBytes,
                                   .timeout = tool.timeout});
  PTXDIFF_RETURN_IF_ERROR(run.error);
  if (run.end == ToolRun::kOk) {
    for (size_t k = 0; k < programs.size(); ++k) {
      for (size_t j = 0; j < programs[k].outputs.size(); ++j) {
        uint64_t v;
        std::memcpy(&v, &run.out[k * kOutBytes + 8 * j], 8);
        results[k].outputs.push_back(v);
      }
    }
    return absl::OkStatus();
  }
  if (programs.size() == 1) {
    results[0] = {.end = run.end, .what = HowItEnded(run)};
    return absl::OkStatus();
  }
  const size_t half = programs.size() / 2;
  PTXDIFF_RETURN_IF_ERROR(RunInto(tool, programs.first(half), inputs, results));
  return RunInto(tool, programs.subspan(half), inputs, results + half);
}

}  // namespace

absl::StatusOr<std::vector<ProgramToolRun>> RunProgramsOnTool(const ProgramTool& tool,
                                                              std::span<const Program> programs,
                                                              ProgramInputs inputs) {
  std::vector<ProgramToolRun> results(programs.size());
  // Programs the buffer has no room for are refused; the others run.
  std::vector<Program> runnable;
  std::vector<size_t> index;
  for (size_t k = 0; k < programs.size(); ++k) {
    if (programs[k].inputs.size() > kMaxToolProgramInputs) {
      results[k] = {.end = ToolRun::kRefused,
                    .what = absl::StrCat("a program on a tool takes at most ",
                                         kMaxToolProgramInputs, " inputs; it has ",
                                         programs[k].inputs.size())};
      continue;
    }
    runnable.push_back(programs[k]);
    index.push_back(k);
  }
  if (runnable.empty()) return results;
  std::vector<ProgramToolRun> ran(runnable.size());
  PTXDIFF_RETURN_IF_ERROR(RunInto(tool, runnable, inputs, ran.data()));
  for (size_t j = 0; j < ran.size(); ++j) results[index[j]] = std::move(ran[j]);
  return results;
}

}  // namespace ptxdiff
