// The literal oracle, extended-precision integer arithmetic (PTX ISA 9.7.2).
// See literal_oracle.h for why it exists and docs/spec-notes.md for every
// decision on an ambiguity. Quoted lines ("...") are the spec's own text.

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
namespace {

// ---------------------------------------------------------------------------
// Extended-precision integer arithmetic (PTX ISA 9.7.2).
// ---------------------------------------------------------------------------
//
// "These instructions reference an implicitly specified condition code
//  register (CC) having a single carry flag bit (CC.CF) holding
//  carry-in/carry-out or borrow-in/borrow-out."
//
// A tuple gives the incoming CC.CF as the last source of addc, subc and madc
// ("cf", one bit), and Result::carry is the outgoing CC.CF of every `.cc`
// variant (false without `.cc`). Both are in the spec's own words for the
// instruction: a carry for add.cc, addc, mad.cc and madc, a borrow for sub.cc
// and subc (docs/spec-notes.md, "Extended precision").
//
// AMBIGUOUS: the spec never says which bit value a borrow is in CC.CF, nor
// how a carry written by one kind is read by an instruction of the other
// kind. Here a borrow is 1 when "a borrow occurs", the natural reading.
// Hardware keeps the inverted borrow in the bit (ZLUDA PR #197). That makes
// no difference here: a tuple's CF is written and read by instructions of the
// same kind. Cross-kind chains are not tuples; the spec leaves them
// unspecified (spec-notes).
//
// The carry and the borrow are properties of the n-bit registers: they are
// computed from the registers' bits read as unsigned numbers, as
// mathematical integers. "Behavior is the same for unsigned and signed
// integers" (add.cc, addc, sub.cc).
//
// AMBIGUOUS: for .s32/.s64 the carry-out could be misread as signed
// overflow. The sentence above rules that out for add.cc, addc and sub.cc.
// subc and mad.cc/madc have no such sentence in the text retrieved, and are
// read the same way: the carry of the addition of the register bits.

// The incoming CC.CF, 0 or 1: "CC.CF" in the Semantics. Zero for an
// instruction that does not read it (add.cc, sub.cc, mad.cc).
Integer CarryFlagIn(const Variant& v, const Operands& ops) {
  if (!HasCarryIn(v)) return 0;
  return Operand(v, ops, CarryInSource(v), /*is_signed=*/false);
}

// Source `i`'s register bits as an unsigned number, whatever the type.
Integer RegisterValue(const Variant& v, const Operands& ops, int i) {
  return Operand(v, ops, i, /*is_signed=*/false);
}

// A carry-out: the exact sum of unsigned n-bit register values (and the
// carry-in) does not fit n bits.
bool CarryOut(Integer unsigned_sum, int n) {
  return unsigned_sum > MaxOf(n, /*is_signed=*/false);
}

// A borrow-out: the unsigned minuend is smaller than the exact unsigned
// subtrahend, so the n-bit subtraction has to borrow from bit n.
bool BorrowOut(Integer unsigned_minuend, Integer unsigned_subtrahend) {
  return unsigned_minuend < unsigned_subtrahend;
}

// d, written to the destination, and the outgoing CC.CF: "if .cc specified,
// carry-out [borrow-out] written to CC.CF". Without `.cc` CC.CF is not
// written, so Result::carry is false.
Result DefinedWithFlag(const Variant& v, Integer d, bool flag_out) {
  Result r = Defined(v, d);
  r.carry = v.cc && flag_out;
  return r;
}

// 9.7.2.1 add.cc and 9.7.2.2 addc.
}  // namespace

Result AddWithCarry(const Variant& v, const Operands& ops) {
  const int n = TypeWidth(v.type);
  const Integer cf = CarryFlagIn(v, ops);
  // add.cc: "d = a + b;"
  // addc:   "d = a + b + CC.CF;"
  const Integer d = Typed(v, ops, 0) + Typed(v, ops, 1) + cf;
  // add.cc: "carry-out written to CC.CF"
  // addc:   "if .cc specified, carry-out written to CC.CF"
  // "Behavior is the same for unsigned and signed integers."
  const Integer sum = RegisterValue(v, ops, 0) + RegisterValue(v, ops, 1) + cf;
  return DefinedWithFlag(v, d, CarryOut(sum, n));
}

// 9.7.2.3 sub.cc and 9.7.2.4 subc.
Result SubWithBorrow(const Variant& v, const Operands& ops) {
  const Integer cf = CarryFlagIn(v, ops);  // subc: the borrow-in
  // sub.cc: "d = a - b;"
  // subc:   "d = a - (b + CC.CF);"
  const Integer d = Typed(v, ops, 0) - (Typed(v, ops, 1) + cf);
  // sub.cc: "borrow-out written to CC.CF"
  // subc:   "if .cc specified, borrow-out written to CC.CF"
  // AMBIGUOUS: `b + CC.CF` is computed as a mathematical integer, so b =
  // 2^n - 1 with a borrow-in subtracts 2^n and always borrows. Read as an
  // n-bit register sum, it would wrap to 0 and never borrow, and a
  // multi-word subtraction would lose the borrow. ZLUDA's subc_cc2 shows the
  // exact reading on hardware.
  const Integer subtrahend = RegisterValue(v, ops, 1) + cf;
  return DefinedWithFlag(v, d, BorrowOut(RegisterValue(v, ops, 0), subtrahend));
}

// 9.7.2.5 mad.cc and 9.7.2.6 madc.
Result MadWithCarry(const Variant& v, const Operands& ops) {
  const bool is_signed = IsSigned(v.type);
  const int n = TypeWidth(v.type);
  // "t = a * b;"  (signed for .s32/.s64: the full 2n-bit product)
  const Bits128 t = Product(Typed(v, ops, 0), Typed(v, ops, 1));
  // "d = t<63..32> + c;   // for .hi variant
  //  d = t<31..0> + c;    // for .lo variant"
  // madc: "d = t<63..32> + c + CC.CF;" / "d = t<31..0> + c + CC.CF;"
  // The bit ranges are the 32-bit forms' only; for .u64/.s64 they are
  // t<2n-1..n> and t<n-1..0>, as in the general mad.
  const Bits128 part =
      v.mul_mode == MulMode::kHi ? Field(t, 2 * n - 1, n) : Field(t, n - 1, 0);
  const Integer cf = CarryFlagIn(v, ops);
  const Integer d = Value(part, n, is_signed) + Typed(v, ops, 2) + cf;
  // mad.cc: "carry-out from addition is written to CC.CF"
  // madc:   "if .cc specified, carry-out from addition is written to CC.CF"
  // The multiplication never sets the flag. Only the addition of the product
  // half, c and CC.CF does.
  // AMBIGUOUS: there is no "same for signed" note here; the product half is
  // taken as its n register bits, unsigned, as for add.cc.
  const Integer sum = UnsignedValue(part, n) + RegisterValue(v, ops, 2) + cf;
  return DefinedWithFlag(v, d, CarryOut(sum, n));
}

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
