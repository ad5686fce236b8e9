#include "harness/judge.h"

namespace ptxdiff {

absl::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAgree: return "agree";
    case Verdict::kMismatch: return "mismatch";
    case Verdict::kDeclined: return "declined";
    case Verdict::kUnspecified: return "unspecified";
  }
  return "?";
}

Verdict Judge(const Result& oracle, const TupleResult& backend) {
  if (backend.kind == ResultKind::kDecline) return Verdict::kDeclined;
  if (!oracle.defined()) return Verdict::kUnspecified;
  return backend.bits == oracle.bits ? Verdict::kAgree : Verdict::kMismatch;
}

Judgement JudgeTuple(const Tuple& tuple, const TupleResult& backend) {
  Judgement j;
  j.oracle = Evaluate(tuple.variant, tuple.operands);
  j.verdict = Judge(j.oracle, backend);
  j.backend_bits = backend.bits;
  return j;
}

void JudgeCounts::Count(Verdict v) {
  switch (v) {
    case Verdict::kAgree: ++agreed; break;
    case Verdict::kMismatch: ++mismatched; break;
    case Verdict::kDeclined: ++declined; break;
    case Verdict::kUnspecified: ++unspecified; break;
  }
}

JudgeCounts& JudgeCounts::operator+=(const JudgeCounts& o) {
  tuples += o.tuples, agreed += o.agreed, mismatched += o.mismatched;
  declined += o.declined, unspecified += o.unspecified;
  faulty_batches += o.faulty_batches;
  return *this;
}

}  // namespace ptxdiff
