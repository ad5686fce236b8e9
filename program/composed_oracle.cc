#include "program/composed_oracle.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/interrupt.h"
#include "common/progress.h"
#include "isa/family_table.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

// CC.CF between steps: which kind of step set it, and its value as that
// kind reads it (a carry, or a borrow).
struct Flag {
  enum Kind : uint8_t { kUnset, kCarry, kBorrow } kind = kUnset;
  bool value = false;
};

// What a thread holds at a point: its registers and CC.CF.
struct MachineState {
  absl::flat_hash_map<std::string, ProgramValue> registers;
  Flag flag;
  bool flag_defined = false;
};

// Where two paths join: a value holds after the join only where both paths
// hold it, defined; anything else is undefined, as is a register one path
// never set.
MachineState Join(const MachineState& a, const MachineState& b) {
  MachineState out;
  for (const auto& [name, value] : a.registers) {
    auto it = b.registers.find(name);
    const bool same = it != b.registers.end() && it->second == value;
    out.registers[name] = {.bits = value.bits,
                           .defined = same && value.defined};
  }
  for (const auto& [name, value] : b.registers) {
    if (!a.registers.contains(name)) {
      out.registers[name] = {.bits = value.bits, .defined = false};
    }
  }
  const bool same_flag = a.flag.kind == b.flag.kind &&
                         a.flag.value == b.flag.value &&
                         a.flag_defined == b.flag_defined;
  out.flag = a.flag.kind != Flag::kUnset ? a.flag : b.flag;
  out.flag_defined = same_flag && a.flag_defined;
  return out;
}

class Machine {
 public:
  Machine(Reading reading, const StepObserver* observer)
      : reading_(reading), observer_(observer) {}

  void Set(const std::string& name, ProgramValue value) {
    registers_[name] = value;
  }

  void Run(const ProgramStep& step) {
    const Variant& v = step.variant;
    Operands operands;
    bool defined = true;
    for (int i = 0; i < NumSources(v); ++i) {
      const ProgramOperand& o = step.sources[i];
      if (IsCarryInSource(v, i)) {
        const ProgramValue flag = ReadFlag(v);
        operands.v[i] = flag.bits;
        defined &= flag.defined;
      } else if (o.is_register) {
        const ProgramValue r = Get(o.name);
        operands.v[i] = r.bits & SourceMask(v, i);
        defined &= r.defined;
      } else {
        operands.v[i] = o.value & SourceMask(v, i);
      }
    }
    const Result result = EvaluateWithReading(reading_, v, operands);
    if (observer_ != nullptr) (*observer_)(v, operands, result);
    registers_[step.dst] = {.bits = result.bits,
                            .defined = defined && result.defined()};
    if (HasCarryOut(v)) {
      flag_ = {.kind = CarryIsBorrow(v) ? Flag::kBorrow : Flag::kCarry,
               .value = result.carry};
      flag_defined_ = defined && result.defined();
    }
  }

  // A move: the source's bits (masked to `width`) and definedness.
  void Move(const ProgramStep& step) {
    const ProgramOperand& src = step.sources[0];
    const uint64_t mask = WidthMask(step.width);
    registers_[step.dst] = src.is_register
                               ? Get(src.name)
                               : ProgramValue{.bits = src.value & mask};
  }

  // A step under its guard: run where the guard holds, skipped where it
  // does not (its destination keeps its value), and its destination
  // undefined where the guard is.
  void Guarded(const ProgramStep& step) {
    if (!step.guard.empty()) {
      const ProgramValue guard = Get(step.guard);
      if (!guard.defined) {
        Poison(step);
        return;
      }
      if (((guard.bits & 1) != 0) == step.guard_negated) return;
    }
    if (step.kind == ProgramStep::kMove) {
      Move(step);
    } else {
      Run(step);
    }
  }

  // What step `step` may set, undefined: whether it ran is not known.
  void Poison(const ProgramStep& step) {
    registers_[step.dst] = {.bits = Get(step.dst).bits, .defined = false};
    if (step.kind == ProgramStep::kInstruction && HasCarryOut(step.variant)) {
      flag_defined_ = false;
    }
  }

  MachineState State() const {
    return {.registers = registers_, .flag = flag_,
            .flag_defined = flag_defined_};
  }
  void SetState(MachineState state) {
    registers_ = std::move(state.registers);
    flag_ = state.flag;
    flag_defined_ = state.flag_defined;
  }

  // Whether a branch's or an exit's guard holds: true without one, nullopt
  // where the guard is undefined.
  std::optional<bool> GuardHolds(const ProgramStep& step) const {
    if (step.guard.empty()) return true;
    const ProgramValue guard = Get(step.guard);
    if (!guard.defined) return std::nullopt;
    return ((guard.bits & 1) != 0) != step.guard_negated;
  }

  // A register no step has set yet (one set only in a loop that did not
  // run) holds nothing the spec defines.
  ProgramValue Get(const std::string& name) const {
    auto it = registers_.find(name);
    return it == registers_.end() ? ProgramValue{.defined = false} : it->second;
  }

 private:
  // The incoming CC.CF of carry-in variant `v`, as `v`'s kind reads it.
  ProgramValue ReadFlag(const Variant& v) const {
    const Flag::Kind wants = CarryIsBorrow(v) ? Flag::kBorrow : Flag::kCarry;
    if (flag_.kind == Flag::kUnset) return {.bits = 0, .defined = false};
    if (flag_.kind == wants)
      return {.bits = flag_.value, .defined = flag_defined_};
    // Across kinds: open in the spec; on hardware the one bit is the
    // adder's carry-out, so a borrow reads as NOT carry and back.
    return {.bits = !flag_.value,
            .defined = flag_defined_ && reading_ == Reading::kHardware};
  }

  Reading reading_;
  const StepObserver* observer_;
  absl::flat_hash_map<std::string, ProgramValue> registers_;
  Flag flag_;
  bool flag_defined_ = false;
};

// Whether an if's branch taken is its first, the step at `begin` its
// `if %p {`; nullopt when the condition is undefined.
std::optional<bool> TakesThen(const ProgramStep& begin,
                              const Machine& machine) {
  const ProgramValue condition = machine.Get(begin.guard);
  if (!condition.defined) return std::nullopt;
  return ((condition.bits & 1) != 0) != begin.guard_negated;
}

// True if an exit lies between steps `begin` and `end`.
bool ExitsWithin(const std::vector<ProgramStep>& steps, size_t begin,
                 size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (steps[i].kind == ProgramStep::kExit) return true;
  }
  return false;
}

// One thread's walk through the steps: each loop's body its trip count
// times, each if's branch its condition takes. Under a condition the spec
// leaves open, neither branch runs and whatever either sets is undefined
// after it. A branch taken leaves the path dead up to its label, where the
// state it carried joins the path that fell through (a guard the spec
// leaves open: both go on, and join there). Blocks are skipped on a dead
// path: no branch enters one.
class Walk {
 public:
  Walk(const std::vector<ProgramStep>& steps, Machine& machine,
       absl::Time deadline)
      : steps_(steps),
        machine_(machine),
        deadline_(deadline),
        blocks_(BlocksOf(steps)),
        targets_(BranchTargets(steps)),
        left_(steps.size()) {}

  // Runs the steps; true if the thread exits (or may: its exit's guard is
  // undefined) before the end.
  bool Run() {
    for (size_t pc = 0; pc < steps_.size(); ++pc) {
      pc = Step(pc);
      // A program's loops may run millions of steps: a stop or the deadline
      // ends the walk, seen every few thousand steps.
      if (++walked_ % kStepsBetweenChecks == 0 && EvaluationStopped(deadline_)) {
        stopped_ = true;
        break;
      }
    }
    return exits_;
  }

  // Whether Run ended at a stop or the deadline, not at the end.
  bool stopped() const { return stopped_; }

 private:
  // Runs the step at `pc`; the index of the step before the next to run.
  size_t Step(size_t pc) {
    const ProgramStep& step = steps_[pc];
    const ProgramBlock& block = blocks_[pc];
    switch (step.kind) {
      case ProgramStep::kInstruction:
      case ProgramStep::kMove:
        if (live_) machine_.Guarded(step);
        return pc;
      case ProgramStep::kLoopBegin:
        if (!live_ || step.trip == 0) return block.end;
        left_[block.end] = step.trip;
        return pc;
      case ProgramStep::kLoopEnd:
        return live_ && --left_[pc] > 0 ? block.begin : pc;
      case ProgramStep::kIfBegin:
        return live_ ? If(step, block) : block.end;
      case ProgramStep::kElse:  // the end of the branch taken
        return block.end;
      case ProgramStep::kIfEnd:
        return pc;
      case ProgramStep::kLabel:
        Arrive(pc);
        return pc;
      case ProgramStep::kBranch:
        if (live_) Branch(step, targets_[pc]);
        return pc;
      case ProgramStep::kExit:
        if (live_) Exit(step);
        return pc;
    }
    return pc;
  }

  size_t If(const ProgramStep& step, const ProgramBlock& block) {
    if (const std::optional<bool> then = TakesThen(step, machine_)) {
      return *then ? block.begin : block.else_at;
    }
    for (size_t i = block.begin; i < block.end; ++i) {
      if (SetsRegister(steps_[i])) machine_.Poison(steps_[i]);
    }
    exits_ |= ExitsWithin(steps_, block.begin, block.end);
    return block.end;
  }

  void Branch(const ProgramStep& step, size_t target) {
    const std::optional<bool> taken = machine_.GuardHolds(step);
    if (taken == false) return;
    auto [it, first] = pending_.try_emplace(target, machine_.State());
    if (!first) it->second = Join(it->second, machine_.State());
    if (taken == true) live_ = false;
  }

  void Exit(const ProgramStep& step) {
    const std::optional<bool> taken = machine_.GuardHolds(step);
    if (taken == false) return;
    exits_ = true;
    if (taken == true) live_ = false;
  }

  // A label: the paths that branched to it join the one that fell through.
  void Arrive(size_t pc) {
    auto it = pending_.find(pc);
    if (it == pending_.end()) return;
    machine_.SetState(live_ ? Join(machine_.State(), it->second)
                            : std::move(it->second));
    pending_.erase(it);
    live_ = true;
  }

  static constexpr int64_t kStepsBetweenChecks = 4096;

  const std::vector<ProgramStep>& steps_;
  Machine& machine_;
  const absl::Time deadline_;
  int64_t walked_ = 0;
  bool stopped_ = false;
  const std::vector<ProgramBlock> blocks_;
  const std::vector<size_t> targets_;
  std::vector<int> left_;  // at a loop's `}`: the trips still to run
  absl::flat_hash_map<size_t, MachineState> pending_;  // at labels
  bool live_ = true;  // false after a branch taken, up to its label
  bool exits_ = false;
};

}  // namespace

absl::StatusOr<std::vector<ProgramValue>> EvaluateProgram(
    const Program& program, std::span<const uint64_t> inputs, Reading reading,
    const StepObserver* observer, absl::Time deadline) {
  if (inputs.size() != program.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the program has ", program.inputs.size(), " inputs; ",
                     inputs.size(), " given"));
  }
  Machine machine(reading, observer);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int width = program.inputs[k].width;
    const uint64_t mask = WidthMask(width);
    machine.Set(program.inputs[k].name, {.bits = inputs[k] & mask});
  }
  Walk walk(program.steps, machine, deadline);
  const bool exits = walk.Run();
  std::vector<ProgramValue> outputs;
  for (const std::string& name : program.outputs) {
    outputs.push_back(walk.stopped() ? ProgramValue{.defined = false}
                      : exits ? ProgramValue{.defined = false, .exits = true}
                              : machine.Get(name));
  }
  return outputs;
}

bool Disagrees(std::span<const ProgramValue> oracle,
               std::span<const uint64_t> claimed) {
  for (size_t k = 0; k < oracle.size(); ++k) {
    if (oracle[k].defined && oracle[k].bits != claimed[k]) return true;
  }
  return false;
}

bool ThreadExits(std::span<const ProgramValue> outputs) {
  return !outputs.empty() && outputs.front().exits;
}

bool EvaluationStopped(absl::Time deadline) {
  NoteProgress();  // looked at often in long evaluations: they go on
  return Interrupted() || absl::Now() >= deadline;
}

bool DefinesNoOutput(std::span<const ProgramValue> outputs) {
  return std::none_of(outputs.begin(), outputs.end(),
                      [](const ProgramValue& v) { return v.defined; });
}

std::string NoOutputDefinedWhy(bool exits) {
  return exits ? "the thread exits at every input vector tried: no output "
                 "is stored to judge"
               : "the oracle defines no output at any input vector tried "
                 "(the spec leaves them open, as for a division by zero): "
                 "nothing to judge";
}

std::vector<ProgramValue> EvaluateAtWitness(const Program& program,
                                            Reading reading) {
  return *EvaluateProgram(program, WitnessInputs(program), reading);
}

namespace {
std::string Hex(uint64_t bits, int width) {
  return absl::StrFormat("0x%0*x", width == 1 ? 1 : width / 4, bits);
}

// The first kMaxValuesNamed of `parts` joined, and how many more there
// are: a line a person reads, not 25 KB for 1,001 inputs (the case file
// holds them all).
constexpr size_t kMaxValuesNamed = 16;
std::string JoinNamed(const std::vector<std::string>& parts,
                      absl::string_view what) {
  if (parts.size() <= kMaxValuesNamed) return absl::StrJoin(parts, ", ");
  return absl::StrCat(
      absl::StrJoin(parts.begin(), parts.begin() + kMaxValuesNamed, ", "),
      " and ", parts.size() - kMaxValuesNamed, " more ", what);
}
}  // namespace

std::string OutputsText(const Program& p,
                        std::span<const ProgramValue> values) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < p.outputs.size() && k < values.size(); ++k) {
    const int width = RegisterWidth(p, p.outputs[k]);
    parts.push_back(
        absl::StrCat("%", p.outputs[k], " = ", Hex(values[k].bits, width),
                     values[k].exits     ? " (not stored: the thread exits)"
                     : values[k].defined ? ""
                                         : " (undefined: not judged)"));
  }
  return JoinNamed(parts, "outputs");
}

std::string ClaimedText(const Program& p, std::span<const uint64_t> claimed) {
  std::vector<ProgramValue> values;
  for (uint64_t bits : claimed) values.push_back({.bits = bits});
  return OutputsText(p, values);
}

std::string InputsText(const Program& p, std::span<const uint64_t> inputs) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < p.inputs.size() && k < inputs.size(); ++k) {
    const ProgramInput& in = p.inputs[k];
    if (in.thread != ThreadInput::kNone) {  // a lane, as PTX shows it
      parts.push_back(absl::StrCat("%", in.name, " = ",
                                   ThreadInputName(in.thread), " = ",
                                   inputs[k]));
      continue;
    }
    parts.push_back(absl::StrCat("%", in.name, " = ",
                                 Hex(inputs[k], in.width)));
  }
  return parts.empty() ? "no inputs" : JoinNamed(parts, "inputs");
}

}  // namespace ptxdiff
