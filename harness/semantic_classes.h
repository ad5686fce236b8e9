// Semantic classes: which operand classes a tuple reaches. The fuzz loop
// turns them into coverage per family, so that libFuzzer keeps inputs that
// reach a rare class even when they add no code coverage (the oracle is
// mostly branch-free); the campaign's queue favours tuples of classes it has
// not sent yet; and a minimized finding is signed by its trigger class (the
// operand classes that cause it), so that one root cause files one entry.

#ifndef PTXDIFF_HARNESS_SEMANTIC_CLASSES_H_
#define PTXDIFF_HARNESS_SEMANTIC_CLASSES_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "isa/tuple.h"
#include "oracle/oracle.h"

namespace ptxdiff {

// The classes, one bit each.
enum SemanticClass : uint32_t {
  kZeroOperand = 1 << 0,     // some operand is 0
  kAllOnesOperand = 1 << 1,  // some operand is all ones (-1)
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
  kTopBitSet = 1 << 11,   // the result's top bit is set
  kMinOperand = 1 << 12,  // some operand is its width's signed MIN
  // Two sources of one width equal, or one apart, where one is MIN, MAX or
  // all ones: what a comparison or a selection may get wrong at its ends.
  kEqualExtremes = 1 << 13,
  // A source wider than the destination at the destination's MIN or MAX
  // (signed or unsigned), or one past it (DestinationBoundaryValues).
  kDestinationBoundary = 1 << 14,
  // A SIMD video lane whose exact sum or difference of the parts its
  // selector picks is one past the destination lane's MIN or MAX.
  kLaneBoundary = 1 << 15,
  // Some source is a runtime value (isa/operand_form.h): a compiler's claim
  // for every value of it, another path than its fold. Not a trigger class:
  // a finding's signature names its runtime sources itself.
  kRuntimeSource = 1 << 16,
};
inline constexpr int kNumSemanticClasses = 17;

uint32_t SemanticClasses(const Tuple& t, const Result& oracle);

// The boundaries above as rules over the instruction table, shared with the
// systematic source (campaign/systematic_source.h), which puts tuples on
// them.

// True if source `i` of `v` is a number wider than the destination (a
// narrowing cvt, vISA SHL to a narrower type), so that its values at the
// destination's bounds are where a conversion may go wrong. A 1-bit result
// (a predicate) has no range to speak of.
bool NarrowsToDestination(const Variant& v, int i);
inline constexpr int kNumDestinationBoundaryValues = 12;
// The destination's bounds in both readings (signed MIN and MAX, unsigned 0
// and MAX), each minus one, itself and plus one, as values of source `i`'s
// width (some may repeat). Meaningful where NarrowsToDestination(v, i).
std::array<uint64_t, kNumDestinationBoundaryValues> DestinationBoundaryValues(
    const Variant& v, int i);

// A variant whose result is a part (`.hi`, `.lo`, `.wide`) of the exact
// product a * b (ProductFactorWidth): a and b chosen so that the product is
// at each edge of the part kept (its lowest bit for `.hi`, its sign bit, one
// past its top for `.lo`, the factors' width for `.wide`), at it and just
// inside, and for signed factors at the negative edge and just past it;
// exactly where the factors allow, else the nearest product on that side.
// Where the part plus c saturates (mad.hi.sat.s32), c so that the sum is at
// each s32 bound and one past it. The other sources at 0. Empty for any
// other variant. Worked out once per variant (the systematic source asks
// for them with every run of a product's tuples).
const std::vector<Operands>& ProductBoundOperands(const Variant& v);

// An integer range of a lane: its width and the values it holds.
struct LaneRange {
  int bits;
  int64_t lo, hi;
};
// A lane of `bits` bits read signed or not.
LaneRange LaneRangeOf(int bits, bool is_signed);
// The destination lane of a SIMD video variant (as .sat clamps to it; vset,
// with no destination type, unsigned).
LaneRange SimdDestinationLane(const Variant& v);
// Lane `lane`'s a and b of a SIMD video tuple: the parts of {b, a} its
// selector (source 3) picks, read as .atype and .btype read them.
std::pair<int64_t, int64_t> SimdLaneOperands(const Variant& v,
                                             const Operands& o, int lane);

// The classes that say what operands trigger a disagreement: out-of-range
// amounts, fields past the top, saturation, negative selected parts, -1 and
// MIN. Zero operands and result classes are left out: a minimized tuple has
// them by accident of minimizing, not because they cause anything.
inline constexpr uint32_t kTriggerClasses =
    kAllOnesOperand | kShiftAtLeast32 | kShiftAtLeast64 | kAbove255 |
    kFieldCrossesTop | kSaturated | kNegativeSelected | kMinOperand;

// The trigger classes among `classes` that sign a finding: kTriggerClasses,
// less MIN and all-ones operands where the result saturated (one bound,
// one cause, whichever operand reached it).
uint32_t TriggerClasses(uint32_t classes);

// "ge256_min", or "in-range" when no trigger class is reached: a stable
// token for entry names.
std::string TriggerClassName(uint32_t classes);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_SEMANTIC_CLASSES_H_
