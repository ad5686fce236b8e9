// The literal oracle, Intel vISA SHL (opcode 0x24). See literal_oracle.h for
// why it exists and docs/spec-notes.md for every decision on an ambiguity.
// Quoted lines ("...") are the spec's own text.

#include <cstdint>

#include "isa/axes.h"
#include "isa/family_table.h"
#include "isa/variant.h"
#include "oracle/literal/literal_common.h"
#include "oracle/literal/literal_sections.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace literal {
// ---------------------------------------------------------------------------
// Intel vISA SHL (opcode 0x24).
// ---------------------------------------------------------------------------

// v.type is Dst's type, v.atype Src0's, v.btype Src1's.
Result VisaShl(const Variant& v, const Operands& ops) {
  const int dst_width = TypeWidth(v.type);
  const bool dst_signed = IsSigned(v.type);
  // src0, sign- or zero-extended by its own type (spec-notes).
  const Integer src0 = Operand(v, ops, 0, IsSigned(v.atype));
  // "The last 5 (or 6 for Q/UQ type destinations) LSB bits of src1 are used
  //  as an unsigned integer value for the shift operation."
  const int amount_bits = dst_width == 64 ? 6 : 5;
  const int amount = static_cast<int>(
      UnsignedValue(Field(Raw(v, ops, 1), amount_bits - 1, 0), amount_bits));
  // "dst[i] = src0[i] << src1[i];" exactly (spec-notes).
  const Integer shifted = src0 * Pow2(amount);
  if (!v.sat) return Defined(v, shifted);
  // "If saturation is enabled, the shifted result must be within 33 bits or
  //  the result is undefined." Within 33 bits: a signed 33-bit value.
  const Integer saturated = Clamp(shifted, MaxOf(dst_width, dst_signed),
                                  MinOf(dst_width, dst_signed));
  if (shifted > MaxOf(33, true) || shifted < MinOf(33, true)) {
    // AMBIGUOUS: spec-notes does not say which value to give here; this
    // saturates the exact shifted value, as the in-range case does.
    return NotDefined(v, saturated, Undefined::kVisaSatOverflow);
  }
  return Defined(v, saturated);
}

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
