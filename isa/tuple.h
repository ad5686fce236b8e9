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

struct Tuple {
  Variant variant;
  Operands operands;

  // Operand slots past the variant's sources are compared too: callers keep
  // them zero (the decoder and the generators do).
  friend bool operator==(const Tuple& a, const Tuple& b) {
    return a.variant == b.variant && a.operands.v[0] == b.operands.v[0] &&
           a.operands.v[1] == b.operands.v[1] && a.operands.v[2] == b.operands.v[2] &&
           a.operands.v[3] == b.operands.v[3];
  }

  template <typename H>
  friend H AbslHashValue(H h, const Tuple& t) {
    return H::combine(std::move(h), t.variant, t.operands.v[0], t.operands.v[1],
                      t.operands.v[2], t.operands.v[3]);
  }
};

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_TUPLE_H_
