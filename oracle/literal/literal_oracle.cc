// The literal oracle's dispatch: each family to its section's transcription
// (literal_sections.h). See
// literal_oracle.h for why it exists and docs/spec-notes.md for every
// decision on an ambiguity. Quoted lines ("...") are the spec's own text.

#include "oracle/literal/literal_oracle.h"

#include <cstdint>

#include "isa/axes.h"
#include "isa/variant.h"
#include "oracle/literal/literal_sections.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {

Result LiteralEvaluate(const Variant& v, const Operands& operands) {
  switch (v.family) {
    case Family::kAdd:
      return v.cc ? literal::AddWithCarry(v, operands)
                  : literal::Add(v, operands);
    case Family::kSub:
      return v.cc ? literal::SubWithBorrow(v, operands)
                  : literal::Sub(v, operands);
    case Family::kMul:
      return literal::Mul(v, operands);
    case Family::kMad:
      return v.cc ? literal::MadWithCarry(v, operands)
                  : literal::Mad(v, operands);
    case Family::kMul24:
      return literal::Mul24(v, operands);
    case Family::kMad24:
      return literal::Mad24(v, operands);
    case Family::kSad:
      return literal::Sad(v, operands);
    case Family::kDiv:
      return literal::Div(v, operands);
    case Family::kRem:
      return literal::Rem(v, operands);
    case Family::kAbs:
      return literal::Abs(v, operands);
    case Family::kNeg:
      return literal::Neg(v, operands);
    case Family::kMin:
      return literal::MinMax(v, operands, /*is_min=*/true);
    case Family::kMax:
      return literal::MinMax(v, operands, /*is_min=*/false);
    case Family::kPopc:
      return literal::Popc(v, operands);
    case Family::kClz:
      return literal::Clz(v, operands);
    case Family::kBfind:
      return literal::Bfind(v, operands);
    case Family::kFns:
      return literal::Fns(v, operands);
    case Family::kBrev:
      return literal::Brev(v, operands);
    case Family::kBfe:
      return literal::Bfe(v, operands);
    case Family::kBfi:
      return literal::Bfi(v, operands);
    case Family::kBmsk:
      return literal::Bmsk(v, operands);
    case Family::kSzext:
      return literal::Szext(v, operands);
    case Family::kDp4a:
      return literal::Dp4a(v, operands);
    case Family::kDp2a:
      return literal::Dp2a(v, operands);
    case Family::kShf:
      return literal::Shf(v, operands);
    case Family::kAnd:
      return literal::And(v, operands);
    case Family::kOr:
      return literal::Or(v, operands);
    case Family::kXor:
      return literal::Xor(v, operands);
    case Family::kNot:
      return literal::Not(v, operands);
    case Family::kCnot:
      return literal::Cnot(v, operands);
    case Family::kLop3:
      return literal::Lop3(v, operands);
    case Family::kShl:
      return literal::Shl(v, operands);
    case Family::kShr:
      return literal::Shr(v, operands);
    case Family::kPrmt:
      return literal::Prmt(v, operands);
    case Family::kSet:
      return literal::Set(v, operands);
    case Family::kSetp:
      return literal::Setp(v, operands);
    case Family::kSelp:
      return literal::Selp(v, operands);
    case Family::kSlct:
      return literal::Slct(v, operands);
    case Family::kCvt:
      return literal::Cvt(v, operands);
    case Family::kAddc:
      return literal::AddWithCarry(v, operands);
    case Family::kSubc:
      return literal::SubWithBorrow(v, operands);
    case Family::kMadc:
      return literal::MadWithCarry(v, operands);
    case Family::kVadd:
      return literal::Vadd(v, operands);
    case Family::kVsub:
      return literal::Vsub(v, operands);
    case Family::kVabsdiff:
      return literal::Vabsdiff(v, operands);
    case Family::kVmin:
      return literal::Vmin(v, operands);
    case Family::kVmax:
      return literal::Vmax(v, operands);
    case Family::kVshl:
      return literal::Vshl(v, operands);
    case Family::kVshr:
      return literal::Vshr(v, operands);
    case Family::kVmad:
      return literal::Vmad(v, operands);
    case Family::kVset:
      return literal::Vset(v, operands);
    case Family::kVadd2:
    case Family::kVsub2:
    case Family::kVavrg2:
    case Family::kVabsdiff2:
    case Family::kVmin2:
    case Family::kVmax2:
    case Family::kVset2:
    case Family::kVadd4:
    case Family::kVsub4:
    case Family::kVavrg4:
    case Family::kVabsdiff4:
    case Family::kVmin4:
    case Family::kVmax4:
    case Family::kVset4:
      return literal::SimdVideo(v, operands);
    case Family::kVisaShl:
      return literal::VisaShl(v, operands);
  }
  return Result{};  // not reached for a legal variant
}

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
