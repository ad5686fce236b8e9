#include "program/one_step_finding.h"

#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/errata.h"

namespace ptxdiff {
namespace {

// The input `name` of `p`, if it is one.
const ProgramInput* InputNamed(const Program& p, const std::string& name) {
  for (const ProgramInput& in : p.inputs) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

// True for an input a tuple's source `i` of `v` can be: a parameter as wide
// as the register the tuple path gives that source.
bool IsTupleSource(const ProgramInput& in, const Variant& v, int i) {
  return in.thread == ThreadInput::kNone && !in.loaded &&
         in.width == TupleSourceRegisterWidth(v, i);
}

}  // namespace

std::optional<Tuple> ProgramAsTuple(const Program& p, ProgramInputs form) {
  if (p.steps.size() != 1 || p.outputs.size() != 1) return std::nullopt;
  const ProgramStep& step = p.steps[0];
  const Variant& v = step.variant;
  if (step.kind != ProgramStep::kInstruction || !step.guard.empty() ||
      step.dst != p.outputs[0] || HasCarryIn(v) || HasCarryOut(v) ||
      static_cast<int>(step.sources.size()) != NumSources(v)) {
    return std::nullopt;
  }
  Tuple t{.variant = v};
  absl::flat_hash_set<std::string> read;
  for (int i = 0; i < NumSources(v); ++i) {
    const ProgramOperand& source = step.sources[i];
    if (!source.is_register) {
      t.operands.v[i] = source.value;
      continue;
    }
    const ProgramInput* in = InputNamed(p, source.name);
    if (in == nullptr || !IsTupleSource(*in, v, i) || IsSelectorSource(v, i) ||
        MustBeImmediate(v, i) || !read.insert(source.name).second) {
      return std::nullopt;  // a register read twice is not two parameters
    }
    t.operands.v[i] = in->witness & WidthMask(in->width);
    if (form == ProgramInputs::kRuntime) t.runtime |= uint8_t{1} << i;
  }
  if (read.size() != p.inputs.size()) return std::nullopt;
  return t;
}

std::optional<Finding> AsTupleFinding(const Finding& program_finding,
                                      const Program& p,
                                      const ProgramMismatch& m) {
  const std::optional<Tuple> t = ProgramAsTuple(AtMismatch(p, m), m.form);
  if (!t || m.claimed.size() != 1 ||
      program_finding.kind != FindingKind::kValueMismatch) {
    return std::nullopt;
  }
  Finding f = program_finding;
  f.program.reset();
  f.tuple = *t;
  f.oracle = EvaluateWithReading(f.reading, t->variant, t->operands);
  f.backend_bits = m.claimed[0];
  if (m.executed) {
    f.backend_note = absl::StrCat(
        "executed: ", m.departure.empty() ? "its code run on the CPU"
                                          : m.departure,
        m.listing.empty() ? "" : "\n", m.listing);
  }
  if (f.cause == Spell(t->variant)) f.cause.clear();  // the variant is it
  return f;
}

}  // namespace ptxdiff
