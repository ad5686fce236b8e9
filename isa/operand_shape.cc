#include "isa/operand_shape.h"

#include "isa/family_table.h"

namespace ptxdiff {

uint32_t OperandShape(const Tuple& t) {
  const Variant& v = t.variant;
  uint32_t shape = 0;
  for (int i = 0; i < NumSources(v); ++i) {
    const uint64_t mask = SourceMask(v, i);
    const uint64_t x = t.operands.v[i] & mask;
    if (IsSelectorSource(v, i)) {
      if (x == DefaultSimdSelector(SimdLanes(v.family)))
        shape |= kDefaultSelectors;
      continue;
    }
    if (t.IsRuntime(i)) {  // its value is a witness, unknown to a compiler
      shape |= kRuntimeSource << i;
      continue;
    }
    shape |= uint32_t{x == 0} << i;
    shape |= uint32_t{x == 1 || x == mask} << (4 + i);
  }
  return shape;
}

}  // namespace ptxdiff
