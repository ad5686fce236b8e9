// Minimizing a disagreement: from a failing tuple (or a failing batch) to
// the simplest tuple that still disagrees.
//
// Any value mismatch counts, not only one with the same differing bits: the
// aim is the plainest variant of the family and the fewest operand bits that
// still show the cause, so that one root cause reached from many tuples
// (`bfe.s64` and `bfe.u64`, large positions and large lengths) ends in one
// signature (finding.h). Each round sends every candidate
// simplification to the backend in one batch (a worker round trip is the
// unit of cost) and keeps the simplest candidate that still disagrees the
// same way; rounds end when none does (the loop is
// common/minimize_rounds.h's, which programs share). Candidates are strictly simpler, so
// it ends, and the order is fixed, so it is deterministic. The result is
// re-run to confirm it; one that does not repeat is marked flaky.

#ifndef PTXDIFF_TRIAGE_MINIMIZER_H_
#define PTXDIFF_TRIAGE_MINIMIZER_H_

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/worker_client.h"
#include "triage/finding.h"

namespace ptxdiff {

// The candidate simplifications of `t`, each strictly simpler (Complexity):
// a runtime source made an immediate, plainer modifiers (no .sat, .relu,
// .shiftamt, selectors, secondary operation, negation, .po, scale; unsigned
// types for signed ones) and operands toward 0 and fewer set bits.
std::vector<Tuple> Simplifications(const Tuple& t);

// A measure that every simplification decreases: runtime sources, then
// modifiers that are not the plainest, then set bits, then operand values.
struct Complexity {
  int runtime_sources;  // fewest first: a claim with fewer unknowns is plainer
  int modifiers;
  int set_bits;
  uint64_t value_sum;
  friend auto operator<=>(const Complexity&, const Complexity&) = default;
};
Complexity ComplexityOf(const Tuple& t);

// `t` with every source that may be a runtime value one, if any of those is
// an immediate: the contrast of a mismatch seen with immediates.
std::optional<Tuple> InRegisters(const Tuple& t);
// The cause of a mismatch of `t` (the backend gave `backend_bits`) whose
// contrast (InRegisters) agrees (Finding::cause): "64-bit immediates read
// as their low 32 bits (the same operands in registers agree)" where the
// oracle gives exactly the backend's value so (", sign-extended" if that
// way), one cause across families; else "wrong only with 32-bit
// immediates in slct (...)", the widest immediate's width and the family:
// a compiler's folds are wrong one operation at a time.
std::string ImmediatesCause(const Tuple& t, uint64_t backend_bits,
                            Reading reading);

// Minimizes a value mismatch of `failing` on `client`, or a tuple the
// implementation crashes on (ResultKind::kFault: simpler tuples must crash
// too; a hang is filed as found, since each candidate that hangs costs a
// timeout). FailedPrecondition if `failing` neither disagrees with a
// defined oracle result nor faults on this backend (it may have been
// flaky); a backend fault while minimizing is returned as a status too.
// `reading` is the oracle reading judged against (judge.h).
absl::StatusOr<Finding> MinimizeMismatch(WorkerClient& client,
                                         const Tuple& failing,
                                         Reading reading = Reading::kSpec);

// Bisects a batch that faults (crash, hang, protocol error) down to the
// smallest part that still faults, and returns it as a finding; nullopt-like
// FailedPrecondition if the batch no longer faults. It starts no run at or
// after `deadline` (a campaign's end), and a client told to stop
// (WorkerClient::Interrupt) ends it: either is DeadlineExceeded, the fault
// not narrowed (a run cut short blames nothing).
absl::StatusOr<Finding> IsolateFault(
    WorkerClient& client, std::span<const Tuple> batch,
    absl::Time deadline = absl::InfiniteFuture());

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_MINIMIZER_H_
