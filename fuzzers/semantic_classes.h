// Semantic coverage: which operand classes a tuple reaches, per family, so
// that libFuzzer keeps inputs that reach a rare class even when they add no
// code coverage (the oracle is mostly branch-free).

#ifndef PTXDIFF_FUZZERS_SEMANTIC_CLASSES_H_
#define PTXDIFF_FUZZERS_SEMANTIC_CLASSES_H_

#include <cstdint>

#include "gpu_runner/worker_client.h"
#include "oracle/oracle.h"

namespace ptxdiff {

// The classes, one bit each.
enum SemanticClass : uint32_t {
  kZeroOperand = 1 << 0,       // some operand is 0
  kAllOnesOperand = 1 << 1,    // some operand is all ones (-1)
  kShiftAtLeast32 = 1 << 2,    // some operand in [32, 64): shifts, positions
  kShiftAtLeast64 = 1 << 3,    // some operand in [64, 256)
  kAbove255 = 1 << 4,          // some operand in [256, 2^16)
  kFieldCrossesTop = 1 << 5,   // bfe/bfi position + length past the msb
  kSaturated = 1 << 6,         // .sat/.relu clamped the result
  kNegativeSelected = 1 << 7,  // a video selector picked a negative part
  kUndefined = 1 << 8,         // the spec leaves the result open
  kResultZero = 1 << 9,
  kResultAllOnes = 1 << 10,
  kTopBitSet = 1 << 11,        // the result's top bit is set
};
inline constexpr int kNumSemanticClasses = 12;

uint32_t SemanticClasses(const Tuple& t, const Result& oracle);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_SEMANTIC_CLASSES_H_
