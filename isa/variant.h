// An instruction variant: one family plus a value on each of its axes.
//
// A Variant is a small value type (compare it, copy it, hash it). Which axis
// values a family accepts, and which combinations are legal, is decided by the
// family table (family_table.h); a Variant built by hand may be illegal, and
// IsLegal() says so. The stable identity of a variant is a hash of its
// canonical spelling (StableId), so corpora and crash files survive the table
// growing and the enums being reordered.

#ifndef PTXDIFF_ISA_VARIANT_H_
#define PTXDIFF_ISA_VARIANT_H_

#include <cstdint>
#include <string>

#include "isa/axes.h"

namespace ptxdiff {

struct Variant {
  Family family = Family::kAdd;
  // The instruction type: `.type` of the integer families, `.dtype` of the
  // video families, the destination type of Intel vISA SHL.
  Type type = Type::kNone;
  Type atype = Type::kNone;  // dp4a/dp2a/video `.atype`; vISA src0 type
  Type btype = Type::kNone;  // dp4a/dp2a/video `.btype`; vISA src1 type
  MulMode mul_mode = MulMode::kNone;
  ShiftMode shift_mode = ShiftMode::kNone;
  Direction direction = Direction::kNone;
  bool sat = false;
  bool relu = false;
  bool shiftamt = false;
  Sel asel = Sel::kNone;
  Sel bsel = Sel::kNone;
  Sel dsel = Sel::kNone;
  SecOp secop = SecOp::kNone;
  Cmp cmp = Cmp::kNone;
  Scale scale = Scale::kNone;
  VmadForm vmad_form = VmadForm::kNone;

  friend bool operator==(const Variant&, const Variant&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const Variant& v) {
    return H::combine(std::move(h), v.family, v.type, v.atype, v.btype,
                      v.mul_mode, v.shift_mode, v.direction, v.sat, v.relu,
                      v.shiftamt, v.asel, v.bsel, v.dsel, v.secop, v.cmp,
                      v.scale, v.vmad_form);
  }
};

// The most operands any variant has (bfi: a, b, c, d), not counting the
// destination.
inline constexpr int kMaxSources = 4;

// Operand values of one tuple (sources a, b, c, d in order), each in the low
// bits of a uint64_t, as wide as that source (see SourceWidth). Bits above a
// source's width and slots past NumSources are ignored.
struct Operands {
  uint64_t v[kMaxSources] = {};
};

// The identity of a variant that survives the table growing: FNV-1a 64 of its
// canonical spelling.
uint64_t StableId(const Variant& v);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_VARIANT_H_
