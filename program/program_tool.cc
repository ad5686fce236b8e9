#include "program/program_tool.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/run_by_halves.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "oracle/edge_operands.h"
#include "program/composed_oracle.h"
#include "program/program_encoding.h"

namespace ptxdiff {

// A program on lanes fills 2 x kProgramLanes slots of {in}: room for its
// loaded inputs' lane words (8 bytes at most a lane).
static_assert(LaneWordsOffset(kMaxProgramInputs) <=
              2 * kProgramLanes * kTupleBytes);

std::string ProgramInputBuffer(std::span<const Program> programs, bool lanes) {
  const ProgramSlots slots = SlotsOf(programs, lanes);
  std::string in(slots.total() * kTupleBytes, '\0');
  for (size_t k = 0; k < programs.size(); ++k) {
    const size_t base = slots.first[k] * kTupleBytes;
    for (size_t j = 0; j < programs[k].inputs.size(); ++j) {
      const ProgramInput& input = programs[k].inputs[j];
      const uint64_t v = input.witness;
      std::memcpy(&in[base + 8 * j], &v, 8);
      if (!input.loaded || !slots.OnLanes(programs[k])) continue;
      // Every lane loads the witness, as the oracle takes it at each lane.
      const size_t bytes = input.width / 8;
      for (size_t lane = 0; lane < kProgramLanes; ++lane) {
        std::memcpy(&in[base + LaneWordsOffset(j) + bytes * lane], &v, bytes);
      }
    }
  }
  return in;
}

namespace {

// What a run's end says, and what the tool printed: its error lines where
// its output's end does not hold them (a tool that logs tens of KB says
// "error" long before it ends), then that end.
std::string HowItEnded(const ToolRun& run) {
  std::string said = run.what;
  std::vector<std::string> errors;
  for (const std::string& line : run.error_lines) {
    if (!absl::StrContains(run.output, line)) errors.push_back(line);
  }
  if (!errors.empty())
    absl::StrAppend(&said, kToolSaid, absl::StrJoin(errors, "\n"), "\n");
  if (!run.output.empty())
    absl::StrAppend(&said, "; its output ends:\n", run.output);
  return said;
}

// How a run of programs goes: to each program's end, or (a minimizer of a
// crash or a hang) only up to the first program that crashes or hangs.
struct RunPlan {
  ProgramInputs inputs;
  absl::Time deadline;
  bool stop_at_fault = false;
  bool faulted = false;  // a program has crashed or hung
  // The program each one run is a copy of (by index; empty: each its own).
  std::vector<size_t> owner;

  // Whether the runs [begin, end) are all copies of one program (a
  // backend's input vectors of it): then a hang of their module is that
  // program's, and halving it would only cost a timeout a run.
  bool OneProgram(size_t begin, size_t end) const {
    if (end - begin == 1) return true;
    if (owner.empty()) return false;
    return std::all_of(owner.begin() + begin, owner.begin() + end,
                       [&](size_t o) { return o == owner[begin]; });
  }
};

// Marks `programs`' results as not run, saying why.
void NotRun(size_t programs, const std::string& why, ProgramToolRun* results) {
  for (size_t k = 0; k < programs; ++k) {
    results[k] = {.end = ToolRun::kCut, .what = why};
  }
}

// The outputs of the program at `first` slot (2 slots of {out} a lane).
std::vector<uint64_t> OutputsAt(const std::string& out, size_t first,
                                size_t outputs) {
  std::vector<uint64_t> values(outputs);
  for (size_t j = 0; j < outputs; ++j)
    std::memcpy(&values[j], &out[first * kBatchResultBytes + 8 * j], 8);
  return values;
}

// Each program's outputs from a run of their module that ended well.
void TakeOutputs(std::span<const Program> programs, const ProgramSlots& slots,
                 const std::string& out, ProgramToolRun* results) {
  for (size_t k = 0; k < programs.size(); ++k) {
    const size_t outputs = programs[k].outputs.size();
    results[k].outputs = OutputsAt(out, slots.first[k], outputs);
    if (!slots.OnLanes(programs[k])) continue;
    for (int lane = 0; lane < kProgramLanes; ++lane) {
      results[k].lanes.push_back(
          OutputsAt(out, slots.first[k] + 2 * lane, outputs));
    }
  }
}

// Runs `programs` by halves (common/run_by_halves.h): a module that failed
// as a whole is run again as its halves, down to the program it fails on.
absl::Status RunModules(const ProgramModuleRunner& runner,
                        std::span<const Program> programs, RunPlan& plan,
                        ProgramToolRun* results) {
  // How the innermost module that hung around each program ended, for
  // those the deadline then cut before their own run.
  std::vector<std::string> hung_module(programs.size());
  const bool lanes = runner.RunsLanes();
  auto run_part = [&](size_t begin, size_t end) -> absl::StatusOr<PartEnd> {
    std::span<const Program> part = programs.subspan(begin, end - begin);
    if (plan.stop_at_fault && plan.faulted) {
      NotRun(part.size(), "not run: a program before it crashed or hung",
             results + begin);
      return PartEnd::kDone;
    }
    const ProgramSlots slots = SlotsOf(part, lanes);
    const ToolRun run = runner.Run(
        ProgramToolModule(part, runner.target(), plan.inputs, lanes),
        ProgramInputBuffer(part, lanes), slots.total(), plan.deadline);
    PTXDIFF_RETURN_IF_ERROR(run.error);
    if (run.end == ToolRun::kOk) {
      TakeOutputs(part, slots, run.out, results + begin);
      return PartEnd::kDone;
    }
    // Past the deadline every smaller run would be cut too; a hang of one
    // program's copies is its hang, however many.
    if (run.end == ToolRun::kCut ||
        (run.end == ToolRun::kHung && plan.OneProgram(begin, end)) ||
        part.size() == 1) {
      for (size_t k = begin; k < end; ++k) {
        results[k] = {.end = run.end, .what = HowItEnded(run)};
      }
      plan.faulted |= run.end == ToolRun::kCrashed || run.end == ToolRun::kHung;
      return PartEnd::kDone;
    }
    if (run.end == ToolRun::kHung) {
      for (size_t k = begin; k < end; ++k) hung_module[k] = HowItEnded(run);
    }
    return PartEnd::kHalve;
  };
  PTXDIFF_RETURN_IF_ERROR(RunByHalves(0, programs.size(), run_part));
  // Those the halving did not reach before the deadline are known to be in
  // a module that hung, and no more. A run that stops at its first fault
  // wants that fault alone: what it cut says nothing.
  if (plan.stop_at_fault && plan.faulted) return absl::OkStatus();
  for (size_t k = 0; k < programs.size(); ++k) {
    if (results[k].end == ToolRun::kCut && !hung_module[k].empty())
      results[k].hung_in_module = std::move(hung_module[k]);
  }
  return absl::OkStatus();
}

class ToolModuleRunner : public ProgramModuleRunner {
 public:
  explicit ToolModuleRunner(ProgramTool tool) : tool_(std::move(tool)) {}

  // The timeout adapts to the tool as the ptx-cmd backend's does: a hang
  // costs a few times a run, not tool_.timeout (its ceiling).
  ToolRun Run(const std::string& module, const std::string& in, size_t n,
              absl::Time deadline) const override {
    ToolRun run =
        RunToolOnce({.command = tool_.command,
                     .files_root = tool_.files_root,
                     .module = module,
                     .in = in,
                     .n = n,
                     .slot_bytes = kBatchResultBytes,
                     .timeout = absl::Trunc(cost_.Timeout(n, tool_.timeout),
                                            absl::Milliseconds(1)),
                     .deadline = std::min(deadline, tool_.deadline)});
    if (run.error.ok() && run.end == ToolRun::kOk) cost_.Learn(n, run.took);
    return run;
  }
  const PtxTarget& target() const override { return tool_.target; }
  std::string Name() const override { return "ptx-cmd"; }
  std::string Identity() const override {
    return absl::StrCat("ptx-cmd sm_", tool_.target.sm, ": ", tool_.command);
  }
  std::string ReplayFlags() const override {
    return absl::StrCat("--backend ",
                        ShellQuote(absl::StrCat("ptx-cmd:", tool_.command)));
  }
  std::string Who() const override { return "the tool"; }
  std::string HowToRun(size_t slots) const override {
    return absl::StrCat("Run: ", tool_.command,
                        " with {in} = input.bin and {n} = ", slots);
  }

 private:
  ProgramTool tool_;
  mutable ToolCostModel cost_;
};

}  // namespace

absl::StatusOr<std::vector<ProgramToolRun>> RunPrograms(
    const ProgramModuleRunner& runner, std::span<const Program> programs,
    ProgramInputs inputs, absl::Time deadline, bool stop_at_fault,
    std::span<const size_t> copy_of) {
  std::vector<ProgramToolRun> results(programs.size());
  // Programs the buffer has no room for are refused; the others run.
  std::vector<Program> runnable;
  std::vector<size_t> index;
  for (size_t k = 0; k < programs.size(); ++k) {
    if (programs[k].inputs.size() > kMaxToolProgramInputs) {
      results[k] = {
          .end = ToolRun::kRefused,
          .what = absl::StrCat("a program run as a module (a tool's or a "
                               "GPU's, docs/kernel-abi.md) takes at most ",
                               kMaxToolProgramInputs, " inputs; it has ",
                               programs[k].inputs.size())};
      continue;
    }
    runnable.push_back(programs[k]);
    index.push_back(k);
  }
  if (runnable.empty()) return results;
  std::vector<ProgramToolRun> ran(runnable.size());
  RunPlan plan{
      .inputs = inputs, .deadline = deadline, .stop_at_fault = stop_at_fault};
  if (!copy_of.empty()) {
    for (size_t k : index) plan.owner.push_back(copy_of[k]);
  }
  PTXDIFF_RETURN_IF_ERROR(RunModules(runner, runnable, plan, ran.data()));
  for (size_t j = 0; j < ran.size(); ++j) results[index[j]] = std::move(ran[j]);
  return results;
}

absl::StatusOr<std::vector<ProgramToolRun>> RunProgramsOnTool(
    const ProgramTool& tool, std::span<const Program> programs,
    ProgramInputs inputs) {
  return RunPrograms(ToolModuleRunner(tool), programs, inputs, tool.deadline);
}

namespace {

// Input vectors per program beside its witness, with runtime inputs.
constexpr int kMoreVectors = 3;

// `p` at its witness, then (runtime inputs) at kMoreVectors vectors where
// each input takes an edge value of its width.
std::vector<Program> AtVectors(const Program& p, ProgramInputs form,
                               std::mt19937_64& rng) {
  std::vector<Program> out = {p};
  if (form == ProgramInputs::kImmediate || p.inputs.empty()) return out;
  for (int v = 0; v < kMoreVectors; ++v) {
    Program copy = p;
    for (ProgramInput& in : copy.inputs) {
      if (in.thread != ThreadInput::kNone) continue;  // every lane runs
      const std::vector<uint64_t> edges =
          EdgeValues(in.width == 1 ? 1 : in.width);
      in.witness = edges[rng() % edges.size()];
    }
    out.push_back(std::move(copy));
  }
  return out;
}

// One program's check from the runs of its copies.
ProgramCheck Judge(std::span<const Program> copies,
                   std::span<const ProgramToolRun> runs, ProgramInputs form,
                   Reading reading, absl::Time deadline) {
  ProgramCheck check;
  bool only_exits = true;  // of the runs where the oracle defined nothing
  for (size_t c = 0; c < copies.size(); ++c) {
    const ProgramToolRun& run = runs[c];
    if (run.end == ToolRun::kCrashed || run.end == ToolRun::kHung) {
      check.fault = ProgramFault{
          run.end == ToolRun::kCrashed ? CaseFault::kCrash : CaseFault::kHang,
          run.what};
      check.judged = false;
      check.mismatch.reset();
      return check;
    }
    if (run.end != ToolRun::kOk) {
      check.why_not = run.what;
      check.cut |= run.end == ToolRun::kCut;
      // The tool's refusal, not the harness's limit on inputs (no run).
      check.refused |= run.end == ToolRun::kRefused &&
                       copies[c].inputs.size() <= kMaxToolProgramInputs;
      if (!run.hung_in_module.empty())
        check.hung_in_module = run.hung_in_module;
      continue;
    }
    // Each lane it ran on, at the copy's inputs there.
    const std::vector<uint64_t> witness = WitnessInputs(copies[c]);
    const size_t lanes = run.lanes.empty() ? 1 : run.lanes.size();
    for (size_t lane = 0; lane < lanes; ++lane) {
      const std::vector<uint64_t> inputs =
          run.lanes.empty()
              ? witness
              : AtLane(copies[c], witness, static_cast<uint32_t>(lane));
      std::vector<ProgramValue> oracle =
          *EvaluateProgram(copies[c], inputs, reading, nullptr, deadline);
      if (EvaluationStopped(deadline)) {  // not judged, not counted
        return {.why_not = "stopped before it was judged", .cut = true};
      }
      if (DefinesNoOutput(oracle)) {  // nothing there to judge
        only_exits &= ThreadExits(oracle);
        continue;
      }
      check.judged = true;
      if (check.mismatch) continue;
      const std::vector<uint64_t>& got =
          run.lanes.empty() ? run.outputs : run.lanes[lane];
      if (Disagrees(oracle, got)) {
        check.mismatch = ProgramMismatch{.form = form,
                                         .claimed = got,
                                         .inputs = inputs,
                                         .oracle = std::move(oracle)};
      }
    }
  }
  if (!check.judged && check.why_not.empty() && !check.cut) {
    check.why_not = NoOutputDefinedWhy(only_exits);
    check.nothing_defined = true;
  }
  return check;
}

class RunnerProgramBackend : public ProgramBackend {
 public:
  explicit RunnerProgramBackend(
      std::unique_ptr<const ProgramModuleRunner> runner)
      : runner_(std::move(runner)) {}

  std::string Name() const override { return runner_->Name(); }
  std::string Identity() const override { return runner_->Identity(); }

  absl::StatusOr<std::vector<ProgramCheck>> Check(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    return CheckOn(programs, form, reading, deadline, false);
  }
  absl::StatusOr<std::vector<ProgramCheck>> CheckUntilFault(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) override {
    return CheckOn(programs, form, reading, deadline, true);
  }

  absl::StatusOr<std::vector<ProgramCheck>> CheckOn(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline, bool stop_at_fault) {
    std::mt19937_64 rng(1);
    std::vector<Program> copies;
    std::vector<size_t> first;  // program k's copies start at first[k]
    std::vector<size_t> copy_of;  // the program each copy is of
    for (size_t k = 0; k < programs.size(); ++k) {
      const Program& p = programs[k];
      first.push_back(copies.size());
      // A tool runs programs on one thread: one with thread inputs has no
      // copies there, and is not judged.
      if (HasThreadInputs(p) && !runner_->RunsLanes()) continue;
      for (Program& c : AtVectors(p, form, rng)) {
        copies.push_back(std::move(c));
        copy_of.push_back(k);
      }
    }
    first.push_back(copies.size());
    PTXDIFF_ASSIGN_OR_RETURN(const std::vector<ProgramToolRun> runs,
                             RunPrograms(*runner_, copies, form, deadline,
                                         stop_at_fault, copy_of));
    std::vector<ProgramCheck> checks;
    for (size_t k = 0; k < programs.size(); ++k) {
      if (HasThreadInputs(programs[k]) && !runner_->RunsLanes()) {
        checks.push_back({.why_not = kThreadInputsNotRun});
        continue;
      }
      const size_t n = first[k + 1] - first[k];
      checks.push_back(Judge(std::span(copies).subspan(first[k], n),
                             std::span(runs).subspan(first[k], n), form,
                             reading, deadline));
    }
    return checks;
  }

  std::string Describe(const Program& p,
                       const ProgramMismatch& m) const override {
    return absl::StrCat(
        runner_->Who(), " gives ", ClaimedText(p, m.claimed), " at ",
        InputsText(p, m.inputs),
        m.form == ProgramInputs::kImmediate ? " (as immediates)" : "",
        "; the composed oracle gives ", OutputsText(p, m.oracle));
  }

  std::string FindingClass(ProgramInputs form) const override {
    return form == ProgramInputs::kImmediate ? "immediate-inputs"
                                             : "runtime-inputs";
  }
  std::string FindingName(ProgramInputs form) const override {
    return form == ProgramInputs::kImmediate ? "immediate inputs"
                                             : "runtime inputs";
  }

  std::string ReproModule(const Program& p, ProgramInputs form) const override {
    return ReproModuleOf({&p, 1}, form);
  }
  std::string ReproInput(const Program& p) const override {
    return ProgramInputBuffer({&p, 1}, runner_->RunsLanes());
  }
  std::string ReproModuleOf(std::span<const Program> programs,
                            ProgramInputs form) const override {
    const bool lanes = runner_->RunsLanes();
    return absl::StrCat(
        "// ", runner_->HowToRun(SlotsOf(programs, lanes).total()),
        " (docs/kernel-abi.md, \"Programs\")\n",
        ProgramToolModule(programs, runner_->target(), form, lanes));
  }
  std::string ReproInputOf(std::span<const Program> programs) const override {
    return ProgramInputBuffer(programs, runner_->RunsLanes());
  }
  bool JudgesThreadInputs() const override { return runner_->RunsLanes(); }

  std::string ReplayFlags() const override { return runner_->ReplayFlags(); }

 private:
  std::unique_ptr<const ProgramModuleRunner> runner_;
};

}  // namespace

std::unique_ptr<ProgramBackend> MakeRunnerProgramBackend(
    std::unique_ptr<const ProgramModuleRunner> runner) {
  return std::make_unique<RunnerProgramBackend>(std::move(runner));
}

std::unique_ptr<ProgramModuleRunner> MakeToolModuleRunner(ProgramTool tool) {
  return std::make_unique<ToolModuleRunner>(std::move(tool));
}

std::unique_ptr<ProgramBackend> MakeToolProgramBackend(ProgramTool tool) {
  return MakeRunnerProgramBackend(MakeToolModuleRunner(std::move(tool)));
}

}  // namespace ptxdiff
