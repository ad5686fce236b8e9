#include "program/composed_oracle.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
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

// The steps in order: each loop's body its trip count times, each if's
// branch its condition takes. Under a condition the spec leaves open,
// neither branch runs and whatever either sets is undefined after it.
void RunSteps(const std::vector<ProgramStep>& steps, Machine& machine) {
  const std::vector<ProgramBlock> blocks = BlocksOf(steps);
  std::vector<int> left(steps.size());  // at a `}`: the trips still to run
  for (size_t pc = 0; pc < steps.size(); ++pc) {
    const ProgramStep& step = steps[pc];
    const ProgramBlock& block = blocks[pc];
    switch (step.kind) {
      case ProgramStep::kInstruction:
      case ProgramStep::kMove:
        machine.Guarded(step);
        break;
      case ProgramStep::kLoopBegin:
        if (step.trip == 0) {
          pc = block.end;
        } else {
          left[block.end] = step.trip;
        }
        break;
      case ProgramStep::kLoopEnd:
        if (--left[pc] > 0) pc = block.begin;
        break;
      case ProgramStep::kIfBegin:
        if (const std::optional<bool> then = TakesThen(step, machine)) {
          if (!*then) pc = block.else_at;
          break;
        }
        for (size_t i = block.begin; i < block.end; ++i) {
          if (SetsRegister(steps[i])) machine.Poison(steps[i]);
        }
        pc = block.end;
        break;
      case ProgramStep::kElse:  // the end of the branch taken
        pc = block.end;
        break;
      case ProgramStep::kIfEnd:
        break;
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<ProgramValue>> EvaluateProgram(
    const Program& program, std::span<const uint64_t> inputs, Reading reading,
    const StepObserver* observer) {
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
  RunSteps(program.steps, machine);
  std::vector<ProgramValue> outputs;
  for (const std::string& name : program.outputs)
    outputs.push_back(machine.Get(name));
  return outputs;
}

bool Disagrees(std::span<const ProgramValue> oracle,
               std::span<const uint64_t> claimed) {
  for (size_t k = 0; k < oracle.size(); ++k) {
    if (oracle[k].defined && oracle[k].bits != claimed[k]) return true;
  }
  return false;
}

std::vector<ProgramValue> EvaluateAtWitness(const Program& program,
                                            Reading reading) {
  return *EvaluateProgram(program, WitnessInputs(program), reading);
}

namespace {
std::string Hex(uint64_t bits, int width) {
  return absl::StrFormat("0x%0*x", width == 1 ? 1 : width / 4, bits);
}
}  // namespace

std::string OutputsText(const Program& p,
                        std::span<const ProgramValue> values) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < p.outputs.size() && k < values.size(); ++k) {
    const int width = RegisterWidth(p, p.outputs[k]);
    parts.push_back(
        absl::StrCat("%", p.outputs[k], " = ", Hex(values[k].bits, width),
                     values[k].defined ? "" : " (undefined: not judged)"));
  }
  return absl::StrJoin(parts, ", ");
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
  return parts.empty() ? "no inputs" : absl::StrJoin(parts, ", ");
}

}  // namespace ptxdiff
