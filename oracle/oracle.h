// The CPU oracle: what the specification says an instruction variant computes.
//
// Evaluate() gives the result bits of one tuple (variant + operands) and
// whether the specification defines them. Where the spec leaves a result
// unspecified or machine-dependent, or where two readings of the spec text
// give different results, the Result carries the reason, and a backend that
// returns something else there has not found a bug. The ambiguities and the
// choices made are in docs/spec-notes.md.
//
// This is the fast implementation; oracle/literal/ holds a deliberately
// literal transcription of the spec's pseudocode that the tests compare it
// with.

#ifndef PTXDIFF_ORACLE_ORACLE_H_
#define PTXDIFF_ORACLE_ORACLE_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/strings/string_view.h"
#include "isa/variant.h"
#include "oracle/copy.h"

namespace ptxdiff {

// Why a result is not defined by the specification. kDefined means it is.
enum class Undefined : uint8_t {
  kDefined = 0,
  // div/rem by zero: "an unspecified, machine-specific value".
  kDivisionByZero,
  // rem where truncating and flooring division disagree: "machine-dependent".
  kRemainderSign,
  // fns with base > 31: "behavior is undefined".
  kFnsBaseOutOfRange,
  // vmad where the pseudocode and the prose give different results (the sign
  // of a negated c, or a 64-bit-masked value under .sat).
  kVmadAmbiguous,
  // vISA SHL.sat whose shifted value does not fit 33 bits: "undefined".
  kVisaSatOverflow,
  // A SIMD video `.add` (accumulate) where the pseudocode's sum of the exact
  // lane results and the prose's sum of the "half-word [byte] results" (each
  // cut to its lane and read as .dtype) differ (docs/spec-notes.md).
  kSimdAccumulateAmbiguous,
};
inline constexpr int kNumUndefinedReasons =
    static_cast<int>(Undefined::kSimdAccumulateAmbiguous) + 1;

inline namespace PTXDIFF_ORACLE_COPY {
// One line naming the spec's words, for reports ("division by zero: ...").
absl::string_view Describe(Undefined why);
// A short stable token ("division-by-zero"), for machine-readable output.
absl::string_view Token(Undefined why);
}  // namespace PTXDIFF_ORACLE_COPY

struct Result {
  // The destination's bits, zero-extended from ResultWidth(variant). Where
  // the result is undefined this is still a deterministic value (the most
  // common reading), but nothing may be concluded from a mismatch on it.
  uint64_t bits = 0;
  Undefined undefined = Undefined::kDefined;
  // The outgoing CC.CF of a variant with `.cc` (HasCarryOut): for add.cc,
  // addc.cc, mad.cc and madc.cc the unsigned carry out of the full-precision
  // sum, for sub.cc and subc.cc the borrow (1 when a < b (+ cf) as unsigned
  // full-precision values). False for every other variant.
  bool carry = false;

  bool defined() const { return undefined == Undefined::kDefined; }
  friend bool operator==(const Result&, const Result&) = default;
};

inline namespace PTXDIFF_ORACLE_COPY {

// One line that replays a tuple and shows a result:
// "ptxdiff eval 'add.s32' 0x00000001 0x00000002 -> 0x00000003 (defined)",
// "ptxdiff eval 'add.cc.u32' 0xffffffff 0x00000001 -> 0x00000000 cf=1
// (defined)" (ResultText).
std::string ReplayLine(const Variant& v, const Operands& operands,
                       const Result& result);

// Evaluates one tuple. `v` must be legal (IsLegal).
Result Evaluate(const Variant& v, const Operands& operands);

// Evaluates many tuples of one variant: the speed path for fuzzers and
// sweeps. `results` must be at least as long as `operands`.
void EvaluateBatch(const Variant& v, std::span<const Operands> operands,
                   std::span<Result> results);

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_ORACLE_H_
