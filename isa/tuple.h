// A tuple (a "case"): one instruction variant plus its operand values.
//
// This is the unit every layer exchanges: the fuzz decoder produces tuples,
// the oracle evaluates them, the worker client ships them to a backend, the
// minimizer simplifies them and the triage directory files them. The wire
// form (protocol.h's WireTuple) is the only other shape.

#ifndef PTXDIFF_ISA_TUPLE_H_
#define PTXDIFF_ISA_TUPLE_H_

#include <cstdint>

#include "isa/variant.h"

namespace ptxdiff {

// True if bit `source` of the operand form `runtime` (Tuple::runtime,
// WireTuple::runtime) is set: that source is a runtime value.
inline bool IsRuntimeSource(uint8_t runtime, int source) {
  return (runtime >> source) & 1;
}

struct Tuple {
  Variant variant;
  Operands operands;
  // The operand form (isa/operand_form.h): bit i set when source i is a
  // runtime value, which a compiler cannot know (a kernel parameter); clear
  // when it is an immediate. Its value is then the witness: the one the
  // oracle judges the backend's answer at.
  uint8_t runtime = 0;

  // True if source `source` is a runtime value in this tuple's form.
  bool IsRuntime(int source) const { return IsRuntimeSource(runtime, source); }

  // Operand slots past the variant's sources are compared too: callers keep
  // them zero (the decoder and the generators do).
  friend bool operator==(const Tuple& a, const Tuple& b) {
    return a.variant == b.variant && a.runtime == b.runtime &&
           a.operands.v[0] == b.operands.v[0] &&
           a.operands.v[1] == b.operands.v[1] &&
           a.operands.v[2] == b.operands.v[2] &&
           a.operands.v[3] == b.operands.v[3];
  }

  template <typename H>
  friend H AbslHashValue(H h, const Tuple& t) {
    return H::combine(std::move(h), t.variant, t.runtime, t.operands.v[0],
                      t.operands.v[1], t.operands.v[2], t.operands.v[3]);
  }
};

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_TUPLE_H_
