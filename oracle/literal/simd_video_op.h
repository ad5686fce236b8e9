// A SIMD video variant (PTX ISA 9.7.18.2) as the literal SIMD video
// oracle's operation description, LiteralSimdOp (literal_simd_video.h):
//
//   LiteralSimdVideo(SimdVideoOpOf<LiteralSimdOp>(v), a, b, c, sel)
//
// is the literal oracle's answer for a tuple of `v`. A template over the
// description's type: it was written from the table alone, before the
// literal SIMD oracle existed, and wiring that oracle in was this one call
// (SimdVideo in literal_oracle.cc).

#ifndef PTXDIFF_ORACLE_LITERAL_SIMD_VIDEO_OP_H_
#define PTXDIFF_ORACLE_LITERAL_SIMD_VIDEO_OP_H_

#include <cstdint>

#include "isa/axes.h"
#include "isa/family_table.h"
#include "isa/variant.h"

namespace ptxdiff {

// The lane operation of a SIMD video family, as OpT's nested `Op` enum.
template <typename OpT>
constexpr typename OpT::Op SimdLaneOpOf(Family f) {
  using Op = typename OpT::Op;
  switch (f) {
    case Family::kVadd2:
    case Family::kVadd4:
      return Op::kAdd;
    case Family::kVsub2:
    case Family::kVsub4:
      return Op::kSub;
    case Family::kVavrg2:
    case Family::kVavrg4:
      return Op::kAvrg;
    case Family::kVabsdiff2:
    case Family::kVabsdiff4:
      return Op::kAbsdiff;
    case Family::kVmin2:
    case Family::kVmin4:
      return Op::kMin;
    case Family::kVmax2:
    case Family::kVmax4:
      return Op::kMax;
    default:
      return Op::kSet;  // vset2, vset4
  }
}

// `v` must be a legal SIMD video variant (IsSimdVideo).
template <typename OpT>
OpT SimdVideoOpOf(const Variant& v) {
  OpT op{};
  op.lanes = SimdLanes(v.family);
  op.op = SimdLaneOpOf<OpT>(v.family);
  op.d_signed = IsSigned(v.type);  // vset has no dtype: false
  op.a_signed = IsSigned(v.atype);
  op.b_signed = IsSigned(v.btype);
  op.sat = v.sat;
  op.accumulate = v.secop == SecOp::kAdd;
  op.cmp = v.cmp;  // kNone unless vset2/vset4
  op.mask_lanes = SimdMaskLanes(v.mask, op.lanes);
  return op;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_LITERAL_SIMD_VIDEO_OP_H_
