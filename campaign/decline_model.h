// What the backend declines, learned from its answers, so that a campaign
// stops sending what it cannot check.
//
// Backends decline by operand class, not only by variant: ptxas folds
// `div.u32` only when an operand is 0 or ±1, `dp4a` only when a
// multiplicand is 0, `szext` only when the result equals the input, and
// compiles every tuple it does not fold alone to prove it — the campaign's
// dominant cost on ptxas. So the model counts answers per (variant, decline
// class), where the class says which sources are 0, which are 1 or all ones,
// whether the result equals source a, whether a carry comes out (ptxas folds
// carry chains only when none passes along) and whether a SIMD selector is
// the default (the only one ptxas folds). A class answered at least
// kMinAnswers times and declined at least 15/16 of the time is *declining*:
// the campaign then sends its kKeepOneIn-th tuple, then its 2 x kKeepOneIn-th,
// 4 x ..., enough to notice if that changes without letting a generator that
// offers 10^5 tuples a second keep the backend busy with it. So does a
// variant declined that often over kMinVariantAnswers answers (some never
// fold, whatever the operands). A variant whose every answer was
// "unsupported" is not sent at all. A variant that has faulted the
// implementation kMinVariantFaults times, in more than one class, and never
// answered a value (a tool that aborts on every `sad`) is probed as a whole
// on the same schedule: its classes number in the hundreds, and quarantining
// them one by one cost a crash and its isolation each. Learning is quick on
// purpose: on ptxas every decline costs a compile of its own. For the same
// reason a class not yet learned, in a variant that declines more than half of
// its tuples, has at most kMinAnswers tuples in flight until their answers are
// in.
//
// Counters live in a fixed table of atomics indexed by a hash of the key
// (collisions only blur two classes' rates), so the fuzz loop, the
// systematic source and the senders use it without a lock. A variant's
// classes are counted from its first decline on: until then every class's
// rate is 0, and neither the table (a cache miss in 24 MB per answer, a
// tenth of the oracle campaign's time when it was written on every answer)
// nor the class itself is needed.

#ifndef PTXDIFF_CAMPAIGN_DECLINE_MODEL_H_
#define PTXDIFF_CAMPAIGN_DECLINE_MODEL_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "common/zeroed_pages.h"
#include "isa/tuple.h"
#include "oracle/oracle.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// The decline class of a tuple (kDeclineClassBits bits): its OperandShape
// (sources that are 0, sources that are 1 or all ones, whether a SIMD video
// selector is the default one, which sources are runtime values); bit 15, an
// immediate 64-bit source is not 0 but its low 32 bits are (where 64-bit
// arithmetic done in 32-bit halves, or a lexer that keeps 32 bits of a
// constant, divides by zero or takes a wrong branch: one such crash must not
// quarantine the variant's ordinary tuples); and of its result: bit 8,
// result == source a; bit 9, the carry-out. A tuple whose result the spec
// leaves open is of one class per variant, kUndefinedResultClass, whatever its
// operands: its value is never judged, so all there is to learn of it is
// whether the backend declines it or faults on it (a tool that crashes on a
// division by zero does so in every operand shape, and each shape cost a crash
// to learn when they were apart).
inline constexpr int kDeclineClassBits = 17;
inline constexpr uint32_t kZeroLowHalfImmediate = 1u << 15;
inline constexpr uint32_t kUndefinedResultClass = 1u << 16;
uint32_t DeclineClass(const Tuple& t, const Result& oracle);

class DeclineModel {
 public:
  static constexpr int32_t kMinAnswers = 4;
  static constexpr int32_t kMinVariantAnswers = 64;
  static constexpr int64_t kKeepOneIn = 256;
  static constexpr int32_t kMinVariantFaults = 4;

  DeclineModel();

  // The tuple's decline class, asked for only when the model needs it.
  using ClassOf = absl::FunctionRef<uint32_t()>;

  // Records the backend's answer to a tuple of the variant at `index`
  // (VariantIndex) in decline class `cls()`.
  void Learn(int index, const TupleResult& answer, ClassOf cls);
  // A tuple of this variant and class crashed or hung the implementation
  // (filed): the class is treated as declining from now on (probed at its
  // kKeepOneIn-th skipped tuple, then twice as far, ...), so that the
  // tuples like it, which likely fault too and cost an isolation each, are
  // not sent again and again.
  void Quarantine(int index, ClassOf cls);

  // True if a tuple of this (variant, class) is worth sending now: always,
  // unless the class is declining (then at its kKeepOneIn x 2^k-th call
  // only), not yet learned in a mostly declined variant (then while fewer
  // than kMinAnswers are in flight) or the variant unsupported (never).
  bool Worth(int index, ClassOf cls);

  // The variant answered only "unsupported variant" so far (after a few).
  bool Unsupported(int index) const;
  // The variant faulted kMinVariantFaults times, in two classes or more,
  // and has answered no value yet.
  bool FaultsOnEverything(int index) const;

  int64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }

 private:
  // Zero-filled from the kernel, used through std::atomic_ref (At()).
  struct Slot {
    int32_t answered, declined;
    int32_t probes;   // sent while the class was not learned
    int64_t skipped;  // while it was declining
  };
  template <typename T>
  static std::atomic_ref<T> At(T& counter) {
    return std::atomic_ref<T>(counter);
  }
  Slot& SlotFor(int index, uint32_t cls);
  static bool Declining(int32_t answered, int64_t declined,
                        int32_t min_answers);
  // True at the kKeepOneIn x 2^k-th call for `skipped`'s count.
  bool Probe(int64_t& skipped);

  // A variant's faults (FaultsOnEverything): how many, the first's class,
  // whether another class faulted too.
  struct VariantFaults {
    int32_t faults = 0;
    uint32_t first_class = 0;
    bool other_class = false;
    int64_t skipped = 0;  // while it faulted on everything
  };

  ZeroedArray<Slot> slots_;
  std::vector<std::atomic<int32_t>> variant_answered_, variant_declined_,
      variant_unsupported_;
  // Whether the variant ever answered a value: read on every answer, so a
  // byte a variant (the oracle campaign's hot path), not in VariantFaults.
  std::vector<std::atomic<bool>> variant_valued_;
  // Read and written through At(), as the slots are (mutable: const
  // readers load through it too).
  mutable std::vector<VariantFaults> variant_faults_;
  std::atomic<int64_t> skipped_{0};
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_DECLINE_MODEL_H_
