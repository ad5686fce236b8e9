// Semantic classes: which operand classes a tuple reaches. The fuzz loop
// turns them into coverage per family, so that libFuzzer keeps inputs that
// reach a rare class even when they add no code coverage (the oracle is
// mostly branch-free); the campaign's queue favours tuples of classes it has
// not sent yet; and a minimized finding is signed by its trigger class (the
// operand classes that cause it), so that one root cause files one entry.

#ifndef PTXDIFF_HARNESS_SEMANTIC_CLASSES_H_
#define PTXDIFF_HARNESS_SEMANTIC_CLASSES_H_

#include <cstdint>
#include <string>

#include "isa/tuple.h"
#include "oracle/oracle.h"

namespace ptxdiff {

// The classes, one bit each.
enum SemanticClass : uint32_t {
  kZeroOperand = 1 << 0,       // some operand is 0
  kAllOnesOperand = 1 << 1,    // some operand is all ones (-1)
  // Amounts only (IsAmountSource: shift amounts, positions, lengths).
  kShiftAtLeast32 = 1 << 2,    // some amount in [32, 64)
  kShiftAtLeast64 = 1 << 3,    // some amount in [64, 256)
  kAbove255 = 1 << 4,          // some amount in [256, 2^16)
  kFieldCrossesTop = 1 << 5,   // bfe/bfi position + length past the msb
  kSaturated = 1 << 6,         // .sat/.relu clamped the result
  kNegativeSelected = 1 << 7,  // a video selector picked a negative part
  kUndefined = 1 << 8,         // the spec leaves the result open
  kResultZero = 1 << 9,
  kResultAllOnes = 1 << 10,
  kTopBitSet = 1 << 11,        // the result's top bit is set
  kMinOperand = 1 << 12,       // some operand is its width's signed MIN
};
inline constexpr int kNumSemanticClasses = 13;

uint32_t SemanticClasses(const Tuple& t, const Result& oracle);

// The classes that say what operands trigger a disagreement: out-of-range
// amounts, fields past the top, saturation, negative selected parts, -1 and
// MIN. Zero operands and result classes are left out: a minimized tuple has
// them by accident of minimizing, not because they cause anything.
inline constexpr uint32_t kTriggerClasses = kAllOnesOperand | kShiftAtLeast32 |
                                            kShiftAtLeast64 | kAbove255 | kFieldCrossesTop |
                                            kSaturated | kNegativeSelected | kMinOperand;

// The trigger classes among `classes` that sign a finding: kTriggerClasses,
// less MIN and all-ones operands where the result saturated (one bound,
// one cause, whichever operand reached it).
uint32_t TriggerClasses(uint32_t classes);

// "ge256_min", or "in-range" when no trigger class is reached: a stable
// token for entry names.
std::string TriggerClassName(uint32_t classes);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_SEMANTIC_CLASSES_H_
