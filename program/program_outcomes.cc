#include "program/program_outcomes.h"

#include "absl/container/flat_hash_set.h"
#include "isa/family_table.h"

namespace ptxdiff {

Outcome ProgramOutcomeOf(const ProgramCheck& check) {
  if (check.mismatch) return Outcome::kMismatch;
  if (check.fault) {
    return check.fault->kind == CaseFault::kHang ? Outcome::kHang
                                                 : Outcome::kCrash;
  }
  if (check.judged) return Outcome::kAgree;
  if (check.cut) return Outcome::kNotRun;
  if (check.refused) return Outcome::kUnsupported;
  if (check.nothing_defined) return Outcome::kUnspecified;
  // Not judged otherwise: ptxas kept code that reads the inputs, the
  // evaluator stopped, the harness's limits.
  return Outcome::kNotEvaluable;
}

void ProgramOutcomes::Count(const Program& program, ProgramInputs form,
                            const ProgramCheck& check) {
  absl::flat_hash_set<int> variants;
  for (const ProgramStep& step : program.steps) {
    if (step.kind != ProgramStep::kInstruction) continue;
    if (const int index = VariantIndex(step.variant); index >= 0)
      variants.insert(index);
  }
  const int outcome = static_cast<int>(ProgramOutcomeOf(check));
  const int f = form == ProgramInputs::kImmediate ? 0 : 1;
  std::lock_guard<std::mutex> lock(mu_);
  for (int index : variants) ++by_variant_[index][f][outcome];
}

void ProgramOutcomes::AddTo(OutcomeTable& table) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [index, counts] : by_variant_) {
    for (int f = 0; f < 2; ++f) {
      const OutcomeForm form = f == 0 ? OutcomeForm::kProgramImmediate
                                      : OutcomeForm::kProgramRuntime;
      for (int o = 0; o < kNumOutcomes; ++o) {
        if (counts[f][o] > 0)
          table.Count(index, form, static_cast<Outcome>(o),
                      static_cast<uint32_t>(counts[f][o]));
      }
    }
  }
}

}  // namespace ptxdiff
