#include "program/composed_oracle.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
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
  explicit Machine(Reading reading) : reading_(reading) {}

  void Set(const std::string& name, ProgramValue value) { registers_[name] = value; }

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
        const ProgramValue& r = registers_.at(o.name);
        operands.v[i] = r.bits & SourceMask(v, i);
        defined &= r.defined;
      } else {
        operands.v[i] = o.value & SourceMask(v, i);
      }
    }
    const Result result = EvaluateWithReading(reading_, v, operands);
    registers_[step.dst] = {.bits = result.bits, .defined = defined && result.defined()};
    if (HasCarryOut(v)) {
      flag_ = {.kind = CarryIsBorrow(v) ? Flag::kBorrow : Flag::kCarry,
               .value = result.carry};
      flag_defined_ = defined && result.defined();
    }
  }

  const ProgramValue& Get(const std::string& name) const { return registers_.at(name); }

 private:
  // The incoming CC.CF of carry-in variant `v`, as `v`'s kind reads it.
  ProgramValue ReadFlag(const Variant& v) const {
    const Flag::Kind wants = CarryIsBorrow(v) ? Flag::kBorrow : Flag::kCarry;
    if (flag_.kind == Flag::kUnset) return {.bits = 0, .defined = false};
    if (flag_.kind == wants) return {.bits = flag_.value, .defined = flag_defined_};
    // Across kinds: open in the spec; on hardware the one bit is the
    // adder's carry-out, so a borrow reads as NOT carry and back.
    return {.bits = !flag_.value,
            .defined = flag_defined_ && reading_ == Reading::kHardware};
  }

  Reading reading_;
  absl::flat_hash_map<std::string, ProgramValue> registers_;
  Flag flag_;
  bool flag_defined_ = false;
};

}  // namespace

absl::StatusOr<std::vector<ProgramValue>> EvaluateProgram(
    const Program& program, std::span<const uint64_t> inputs, Reading reading) {
  if (inputs.size() != program.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the program has ", program.inputs.size(),
                                                   " inputs; ", inputs.size(), " given"));
  }
  Machine machine(reading);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int width = program.inputs[k].width;
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    machine.Set(program.inputs[k].name, {.bits = inputs[k] & mask});
  }
  for (const ProgramStep& step : program.steps) machine.Run(step);
  std::vector<ProgramValue> outputs;
  for (const std::string& name : program.outputs) outputs.push_back(machine.Get(name));
  return outputs;
}

std::vector<ProgramValue> EvaluateAtWitness(const Program& program, Reading reading) {
  std::vector<uint64_t> inputs;
  for (const ProgramInput& in : program.inputs) inputs.push_back(in.witness);
  return *EvaluateProgram(program, inputs, reading);
}

}  // namespace ptxdiff
