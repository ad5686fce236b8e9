// The shape of a tuple's operands: what a backend's ability to answer may
// depend on, from the operands alone. ptxas folds by it: a carry chain only
// when no carry passes along it, a SIMD video instruction only with the
// default selectors, `div` only when an operand is 0 or 1
// (docs/ptxas-folding-research.md §8, §9). The campaign's decline model
// counts answers by it (with facts of the result added, DeclineClass), and
// the ptxas backend sizes its kernels by it.

#ifndef PTXDIFF_ISA_OPERAND_SHAPE_H_
#define PTXDIFF_ISA_OPERAND_SHAPE_H_

#include <cstdint>

#include "isa/tuple.h"

namespace ptxdiff {

// Bit i (i < 4): source i is 0. Bit 4 + i: source i is 1 or all ones (in its
// width). kDefaultSelectors: the SIMD video selector is the default one.
// Bit 11 + i (kRuntimeSource << i): source i is a runtime value
// (operand_form.h), whose value the shape then leaves out. Bits 8 and 9 are
// never set: DeclineClass keeps them for the result.
inline constexpr uint32_t kDefaultSelectors = 1u << 10;
inline constexpr uint32_t kRuntimeSource = 1u << 11;
uint32_t OperandShape(const Tuple& t);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_OPERAND_SHAPE_H_
