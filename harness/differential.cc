#include "harness/differential.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"

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

std::string MismatchLine(const Tuple& t, const Result& oracle, uint64_t backend_bits,
                         absl::string_view backend_name) {
  const Variant& v = t.variant;
  const int width = ResultWidth(v);
  return absl::StrCat("ptxdiff eval '", Spell(v), "' ",
                      absl::StrJoin(HexOperands(v, t.operands), " "),
                      "  # oracle ", HexOperand(oracle.bits, width), ", ",
                      backend_name, " ", HexOperand(backend_bits, width));
}

void RunDifferential(WorkerClient& client, std::span<const Tuple> tuples,
                     size_t batch_size, DiffSummary& summary) {
  const std::string backend = client.identity().name;
  for (size_t begin = 0; begin < tuples.size(); begin += batch_size) {
    const auto batch = tuples.subspan(begin, std::min(batch_size, tuples.size() - begin));
    summary.tuples += batch.size();
    const BatchOutcome out = client.Run(batch);
    if (out.fault) {
      ++summary.faulty_batches;
      summary.faults.push_back(absl::StrCat(FaultKindName(out.fault->kind), " on a batch of ",
                                            batch.size(), " tuples starting with ",
                                            Spell(batch[0].variant), ": ",
                                            out.fault->detail));
      continue;
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      const Result oracle = Evaluate(batch[i].variant, batch[i].operands);
      switch (Judge(oracle, out.results[i])) {
        case Verdict::kAgree: ++summary.agreed; break;
        case Verdict::kDeclined: ++summary.declined; break;
        case Verdict::kUnspecified: ++summary.unspecified; break;
        case Verdict::kMismatch:
          ++summary.mismatched;
          if (summary.mismatches.size() < DiffSummary::kMaxListed) {
            summary.mismatches.push_back(
                MismatchLine(batch[i], oracle, out.results[i].bits, backend));
          }
          break;
      }
    }
  }
}

}  // namespace ptxdiff
