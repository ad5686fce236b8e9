// The judge: one backend answer to one tuple against the oracle's result.
//
// A mismatch is a backend value that differs from a *defined* oracle result;
// a decline or an oracle-undefined result is never one. Everything that
// compares a backend with the oracle (the fuzz target, the campaign's
// sender, `sweep`, `repro`, the minimizer) judges here and counts in
// JudgeCounts, so the words and the numbers mean the same everywhere.
//
// Judging is against one reading of the oracle (oracle/errata.h): the spec's
// (the default: where an implementation departs from the PTX ISA text) or
// the hardware's (the spec corrected by known NVIDIA hardware errata, for
// emulators that must match a GPU). A value that only the other reading
// explains is classified as such, never as a bug.

#ifndef PTXDIFF_HARNESS_JUDGE_H_
#define PTXDIFF_HARNESS_JUDGE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "isa/tuple.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "protocol/protocol.h"

namespace ptxdiff {

enum class Verdict : uint8_t {
  kAgree,        // the backend's value equals the defined oracle result
  kMismatch,     // it differs: a finding
  kDeclined,     // the backend gave no value
  kUnspecified,  // the spec leaves the result open; nothing to compare
  // It differs from the reading judged against but is exactly what the other
  // reading gives: a documented difference between the spec and known
  // hardware (oracle/errata.h), not an implementation bug. Counted, not filed.
  kOtherReading,
  // The implementation crashed or hung on this tuple alone (ResultKind::
  // kFault): a finding of kind crash or hang, whatever the oracle says.
  kFault,
};
absl::string_view VerdictName(Verdict v);

// A backend's value equals the oracle's: the bits, and for a variant that
// writes CC.CF (HasCarryOut) the carry too. For every other variant the
// carry flag of the reply is ignored (the decoder cannot tell them apart;
// docs/worker-protocol.md).
bool SameAnswer(const Variant& v, const Result& oracle,
                const TupleResult& backend);

Verdict Judge(const Variant& v, const Result& oracle,
              const TupleResult& backend);

// A verdict with what it was reached from, so that nobody evaluates the
// oracle again to report it. `oracle` is the result under the reading
// judged against (spec by default, or hardware: oracle/errata.h).
struct Judgement {
  Verdict verdict = Verdict::kAgree;
  Result oracle;
  uint64_t backend_bits = 0;  // meaningful unless declined
  // The backend's outgoing CC.CF; meaningful for `.cc` variants
  // (HasCarryOut), false for the others whatever the reply said.
  bool backend_carry = false;
  const Erratum* erratum = nullptr;  // for kOtherReading, or a hardware value
};
Judgement JudgeTuple(const Tuple& tuple, const TupleResult& backend,
                     Reading reading = Reading::kSpec);

// A decline saying the tuple was not evaluated at all (kNotRunPrefix: a time
// budget or a fault cap left it): sent again, up to kMaxSendsAgain times,
// before it is judged declined.
bool NotRun(const TupleResult& r, const std::vector<std::string>& messages);

// Counts over many judged tuples. `tuples` counts every tuple sent to the
// backend, including those of faulty batches (which get no verdict).
struct JudgeCounts {
  int64_t tuples = 0, agreed = 0, mismatched = 0, declined = 0, unspecified = 0;
  int64_t other_reading = 0;  // kOtherReading: spec vs hardware, not a bug
  int64_t faulty_batches = 0;
  int64_t faulted = 0;  // kFault: tuples the implementation died on

  void Count(Verdict v);
  // Tuples that got a verdict (all but those of faulty batches).
  int64_t judged() const {
    return agreed + mismatched + declined + unspecified + other_reading +
           faulted;
  }
  // Tuples the backend answered with a value: what was tested. A run where
  // this is 0 (all declined, every batch faulty, or nothing sent) says
  // nothing about the backend, whatever else it counted.
  int64_t tested() const { return judged() - declined; }
  JudgeCounts& operator+=(const JudgeCounts& other);
};

// Why a backend declined, counted by reason (a message's first line: the
// rest is a tool's output). At most kMaxReasons distinct reasons are kept,
// since a backend may name the variant or the batch in each; later ones
// are dropped, which can only hide a rare reason.
class DeclineReasons {
 public:
  static constexpr size_t kMaxReasons = 256;
  void Add(absl::string_view message, int64_t tuples = 1);
  // The most common reason and its tuples; {"", 0} if none.
  std::pair<std::string, int64_t> Top() const;

 private:
  absl::flat_hash_map<std::string, int64_t> tuples_;
};

// For a run that tested nothing (`counts.tested()` is 0), what to tell the
// user, e.g. "nothing was tested: the backend declined all 272 tuples sent
// (most often, 16 tuples: <top_decline>)"; empty for a run that tested
// something. `top_decline` (DeclineReasons::Top; only its first line is
// shown) may be empty.
std::string NothingTestedError(const JudgeCounts& counts,
                               absl::string_view top_decline,
                               int64_t top_decline_count);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_JUDGE_H_
