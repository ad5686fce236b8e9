#include "harness/judge.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "isa/family_table.h"

namespace ptxdiff {

absl::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kAgree:
      return "agree";
    case Verdict::kMismatch:
      return "mismatch";
    case Verdict::kDeclined:
      return "declined";
    case Verdict::kUnspecified:
      return "unspecified";
    case Verdict::kOtherReading:
      return "other-reading";
    case Verdict::kFault:
      return "fault";
  }
  return "?";
}

bool SameAnswer(const Variant& v, const Result& oracle,
                const TupleResult& backend) {
  return backend.bits == oracle.bits &&
         (!HasCarryOut(v) || backend.carry == oracle.carry);
}

Verdict Judge(const Variant& v, const Result& oracle,
              const TupleResult& backend) {
  if (backend.kind == ResultKind::kDecline) return Verdict::kDeclined;
  // Before definedness: a crash on a division by zero is still a crash (the
  // spec leaves the value open, not the machine's behaviour).
  if (backend.kind == ResultKind::kFault) return Verdict::kFault;
  if (!oracle.defined()) return Verdict::kUnspecified;
  return SameAnswer(v, oracle, backend) ? Verdict::kAgree : Verdict::kMismatch;
}

bool NotRun(const TupleResult& r, const std::vector<std::string>& messages) {
  return r.kind == ResultKind::kDecline && r.message < messages.size() &&
         absl::StartsWith(messages[r.message], kNotRunPrefix);
}

Judgement JudgeTuple(const Tuple& tuple, const TupleResult& backend,
                     Reading reading) {
  Judgement j;
  const ReadResult read = Read(reading, tuple.variant, tuple.operands);
  j.oracle = read.result;
  j.erratum = read.erratum;
  j.verdict = Judge(tuple.variant, j.oracle, backend);
  j.backend_bits = backend.bits;
  j.backend_carry = HasCarryOut(tuple.variant) && backend.carry;
  if (j.verdict == Verdict::kMismatch) {
    const Reading other =
        reading == Reading::kSpec ? Reading::kHardware : Reading::kSpec;
    const ReadResult alt = Read(other, tuple.variant, tuple.operands);
    if (alt.result.defined() &&
        SameAnswer(tuple.variant, alt.result, backend)) {
      j.verdict = Verdict::kOtherReading;
      j.erratum = alt.erratum != nullptr ? alt.erratum : read.erratum;
    }
  }
  return j;
}

void JudgeCounts::Count(Verdict v) {
  switch (v) {
    case Verdict::kAgree:
      ++agreed;
      break;
    case Verdict::kMismatch:
      ++mismatched;
      break;
    case Verdict::kDeclined:
      ++declined;
      break;
    case Verdict::kUnspecified:
      ++unspecified;
      break;
    case Verdict::kOtherReading:
      ++other_reading;
      break;
    case Verdict::kFault:
      ++faulted;
      break;
  }
}

JudgeCounts& JudgeCounts::operator+=(const JudgeCounts& o) {
  tuples += o.tuples, agreed += o.agreed, mismatched += o.mismatched;
  declined += o.declined, unspecified += o.unspecified,
      other_reading += o.other_reading;
  faulty_batches += o.faulty_batches, faulted += o.faulted;
  return *this;
}

void DeclineReasons::Add(absl::string_view message, int64_t tuples) {
  const absl::string_view reason = message.substr(0, message.find('\n'));
  auto it = tuples_.find(reason);
  if (it != tuples_.end()) {
    it->second += tuples;
  } else if (tuples_.size() < kMaxReasons) {
    tuples_.emplace(reason, tuples);
  }
}

std::pair<std::string, int64_t> DeclineReasons::Top() const {
  std::pair<std::string, int64_t> top;
  for (const auto& [reason, n] : tuples_) {
    // Ties go to the first in sorted order, so that the answer is stable.
    if (n > top.second || (n == top.second && reason < top.first))
      top = {reason, n};
  }
  return top;
}

std::string NothingTestedError(const JudgeCounts& counts,
                               absl::string_view top_decline,
                               int64_t top_decline_count) {
  if (counts.tested() > 0) return "";
  if (counts.tuples == 0)
    return "nothing was tested: no tuple came back from the backend (none "
           "was sent, or its first batches were still running when the run "
           "ended)";
  const int64_t faulted = counts.tuples - counts.judged();  // in faulty batches
  const std::string batches = absl::StrCat(
      counts.faulty_batches, counts.faulty_batches == 1 ? " batch" : " batches",
      " (", faulted, " tuples)");
  std::string why;
  if (counts.faulty_batches == 0) {
    why = absl::StrCat("the backend declined all ", counts.declined,
                       " tuples sent");
  } else if (counts.declined == 0) {
    why = absl::StrCat("every batch sent faulted the worker: ", batches);
  } else {
    why = absl::StrCat("the backend declined ", counts.declined, " tuples and ",
                       batches, " faulted the worker");
  }
  if (counts.declined > 0 && !top_decline.empty()) {
    absl::StrAppend(&why, " (most often, ", top_decline_count,
                    " tuples: ", top_decline.substr(0, top_decline.find('\n')),
                    ")");
  }
  return absl::StrCat("nothing was tested: ", why);
}

}  // namespace ptxdiff
