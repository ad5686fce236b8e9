// The sections of the literal oracle (literal_oracle.h): one file per
// section of the PTX ISA, each a transcription of its Semantics blocks;
// literal_oracle.cc dispatches a variant to its family's function here.

#ifndef PTXDIFF_ORACLE_LITERAL_LITERAL_SECTIONS_H_
#define PTXDIFF_ORACLE_LITERAL_LITERAL_SECTIONS_H_

#include "isa/variant.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace literal {

// literal_integer.cc: Integer arithmetic (PTX ISA 9.7.1).
Result Add(const Variant& v, const Operands& ops);
Result Sub(const Variant& v, const Operands& ops);
Result Mul(const Variant& v, const Operands& ops);
Result Mad(const Variant& v, const Operands& ops);
Result Mul24(const Variant& v, const Operands& ops);
Result Mad24(const Variant& v, const Operands& ops);
Result Sad(const Variant& v, const Operands& ops);
Result Div(const Variant& v, const Operands& ops);
Result Rem(const Variant& v, const Operands& ops);
Result Abs(const Variant& v, const Operands& ops);
Result Neg(const Variant& v, const Operands& ops);
Result MinMax(const Variant& v, const Operands& ops, bool is_min);
Result Popc(const Variant& v, const Operands& ops);
Result Clz(const Variant& v, const Operands& ops);
Result Bfind(const Variant& v, const Operands& ops);
Result Fns(const Variant& v, const Operands& ops);
Result Brev(const Variant& v, const Operands& ops);
Result Bfe(const Variant& v, const Operands& ops);
Result Bfi(const Variant& v, const Operands& ops);
Result Szext(const Variant& v, const Operands& ops);
Result Bmsk(const Variant& v, const Operands& ops);
Result Dp4a(const Variant& v, const Operands& ops);
Result Dp2a(const Variant& v, const Operands& ops);

// literal_carry.cc: Extended-precision integer arithmetic (PTX ISA 9.7.2).
Result AddWithCarry(const Variant& v, const Operands& ops);
Result SubWithBorrow(const Variant& v, const Operands& ops);
Result MadWithCarry(const Variant& v, const Operands& ops);

// literal_logic.cc: Funnel shift, logic and shift (PTX ISA 9.7.8) and prmt
// (9.7.9.7).
Result Shf(const Variant& v, const Operands& ops);
Result And(const Variant& v, const Operands& ops);
Result Or(const Variant& v, const Operands& ops);
Result Xor(const Variant& v, const Operands& ops);
Result Not(const Variant& v, const Operands& ops);
Result Cnot(const Variant& v, const Operands& ops);
Result Lop3(const Variant& v, const Operands& ops);
Result Shl(const Variant& v, const Operands& ops);
Result Shr(const Variant& v, const Operands& ops);
Result Prmt(const Variant& v, const Operands& ops);

// literal_compare.cc: Comparison and selection (PTX ISA 9.7.6) and integer cvt
// (9.7.9.21).
Result Set(const Variant& v, const Operands& ops);
Result Setp(const Variant& v, const Operands& ops);
Result Selp(const Variant& v, const Operands& ops);
Result Slct(const Variant& v, const Operands& ops);
Result Cvt(const Variant& v, const Operands& ops);

// literal_video.cc: scalar video instructions (PTX ISA 9.7.18.1).
Result Vadd(const Variant& v, const Operands& ops);
Result Vsub(const Variant& v, const Operands& ops);
Result Vabsdiff(const Variant& v, const Operands& ops);
Result Vmin(const Variant& v, const Operands& ops);
Result Vmax(const Variant& v, const Operands& ops);
Result Vshl(const Variant& v, const Operands& ops);
Result Vshr(const Variant& v, const Operands& ops);
Result Vset(const Variant& v, const Operands& ops);
Result Vmad(const Variant& v, const Operands& ops);

// literal_video.cc, SIMD (PTX ISA 9.7.18.2, through literal_simd_video.h):
Result SimdVideo(const Variant& v, const Operands& ops);

// literal_visa.cc: Intel vISA SHL (opcode 0x24).
Result VisaShl(const Variant& v, const Operands& ops);

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_LITERAL_LITERAL_SECTIONS_H_
