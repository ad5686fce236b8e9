// The literal oracle, integer arithmetic (PTX ISA 9.7.1). See literal_oracle.h
// for why it exists and docs/spec-notes.md for every decision on an ambiguity.
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
namespace {

// ---------------------------------------------------------------------------
// Integer arithmetic (PTX ISA 9.7.1).
// ---------------------------------------------------------------------------

// 9.7.1.1 add.
}  // namespace

Result Add(const Variant& v, const Operands& ops) {
  if (IsPacked(v.type)) {
    // "iA[0] = a[0:15]; iA[1] = a[16:31]; iB[0] = b[0:15]; iB[1] = b[16:31];
    //  for (i = 0; i < 2; i++) { d[i] = iA[i] + iB[i]; }"
    const bool is_signed = IsSigned(v.type);
    const uint64_t a = Raw(v, ops, 0);
    const uint64_t b = Raw(v, ops, 1);
    Integer d[2];
    for (int i = 0; i < 2; ++i) {
      d[i] = Half(a, i, is_signed) + Half(b, i, is_signed);
    }
    return Defined(v, PackHalves(d));
  }
  // "d = a + b;"
  Integer d = Typed(v, ops, 0) + Typed(v, ops, 1);
  // ".sat limits result to MININT..MAXINT (no overflow) for the size of the
  //  operation. Applies only to .s32 type."
  if (v.sat) d = Clamp(d, MaxOf(32, true), MinOf(32, true));
  return Defined(v, d);
}

// 9.7.1.2 sub.
Result Sub(const Variant& v, const Operands& ops) {
  // "d = a - b;"
  Integer d = Typed(v, ops, 0) - Typed(v, ops, 1);
  if (v.sat) d = Clamp(d, MaxOf(32, true), MinOf(32, true));
  return Defined(v, d);
}

// 9.7.1.3 mul.
Result Mul(const Variant& v, const Operands& ops) {
  // "t = a * b;  n = bitwidth of type;"
  const Bits128 t = Product(Typed(v, ops, 0), Typed(v, ops, 1));
  const int n = TypeWidth(v.type);
  switch (v.mul_mode) {
    case MulMode::kWide:  // "d = t;            // for .wide"
      return Defined(v, UnsignedValue(Field(t, 2 * n - 1, 0), 2 * n));
    case MulMode::kHi:  // "d = t<2n-1..n>;   // for .hi variant"
      return Defined(v, UnsignedValue(Field(t, 2 * n - 1, n), n));
    default:  // "d = t<n-1..0>;   // for .lo variant"
      return Defined(v, UnsignedValue(Field(t, n - 1, 0), n));
  }
}

// 9.7.1.4 mad.
Result Mad(const Variant& v, const Operands& ops) {
  const bool is_signed = IsSigned(v.type);
  // "t = a * b;  n = bitwidth of type;"
  const Bits128 t = Product(Typed(v, ops, 0), Typed(v, ops, 1));
  const int n = TypeWidth(v.type);
  // c is 2n bits wide for .wide, n bits otherwise (SourceWidth says which).
  const Integer c = Typed(v, ops, 2);
  switch (v.mul_mode) {
    case MulMode::kWide:  // "d = t + c;           // for .wide"
      return Defined(v, Value(Field(t, 2 * n - 1, 0), 2 * n, is_signed) + c);
    case MulMode::kHi: {  // "d = t<2n-1..n> + c;  // for .hi variant"
      Integer d = Value(Field(t, 2 * n - 1, n), n, is_signed) + c;
      // ".sat limits result to MININT..MAXINT (no overflow) for the size of
      //  the operation. Applies only to .s32 type in .hi mode."
      if (v.sat) d = Clamp(d, MaxOf(32, true), MinOf(32, true));
      return Defined(v, d);
    }
    default:  // "d = t<n-1..0> + c;   // for .lo variant"
      return Defined(v, Value(Field(t, n - 1, 0), n, is_signed) + c);
  }
}

namespace {

// A mul24/mad24 source: "two 24-bit integer values held in 32-bit source
// registers". spec-notes: the low 24 bits are the operand, bits 31..24 are
// ignored.
Integer Operand24(const Variant& v, const Operands& ops, int i) {
  return Value(Field(Raw(v, ops, i), 23, 0), 24, IsSigned(v.type));
}

// The 32 bits mul24/mad24 keep of the 48-bit product t.
Bits128 Product24Part(const Variant& v, const Operands& ops) {
  // "t = a * b;"
  const Bits128 t = Product(Operand24(v, ops, 0), Operand24(v, ops, 1));
  if (v.mul_mode == MulMode::kHi) return Field(t, 47, 16);  // "t<47..16>"
  return Field(t, 31, 0);                                   // "t<31..0>"
}

// 9.7.1.5 mul24.
}  // namespace

Result Mul24(const Variant& v, const Operands& ops) {
  // "d = t<47..16>;    // for .hi variant
  //  d = t<31..0>;     // for .lo variant"
  return Defined(v, UnsignedValue(Product24Part(v, ops), 32));
}

// 9.7.1.6 mad24.
Result Mad24(const Variant& v, const Operands& ops) {
  // "d = t<47..16> + c;   // for .hi variant
  //  d = t<31..0> + c;    // for .lo variant"
  const bool is_signed = IsSigned(v.type);
  Integer d = Value(Product24Part(v, ops), 32, is_signed) + Typed(v, ops, 2);
  // ".sat limits result of 32-bit signed addition to MININT..MAXINT (no
  //  overflow). Applies only to .s32 type in .hi mode."
  if (v.sat) d = Clamp(d, MaxOf(32, true), MinOf(32, true));
  return Defined(v, d);
}

// 9.7.1.7 sad.
Result Sad(const Variant& v, const Operands& ops) {
  const Integer a = Typed(v, ops, 0);
  const Integer b = Typed(v, ops, 1);
  const Integer c = Typed(v, ops, 2);
  // "d = c + ((a<b) ? b-a : a-b);"
  return Defined(v, c + ((a < b) ? b - a : a - b));
}

// 9.7.1.8 div.
Result Div(const Variant& v, const Operands& ops) {
  const Integer a = Typed(v, ops, 0);
  const Integer b = Typed(v, ops, 1);
  // "Division by zero yields an unspecified, machine-specific value."
  // spec-notes: undefined, value 0.
  if (b == 0) return NotDefined(v, 0, Undefined::kDivisionByZero);
  // "d = a / b;" spec-notes: rounds toward zero (as C++'s / does), and
  // MIN / -1 wraps to MIN when written to the destination.
  return Defined(v, a / b);
}

namespace {

// The quotient of a / b rounded toward negative infinity: the truncated
// quotient, one lower when the exact quotient is negative and not whole.
Integer FlooredQuotient(Integer a, Integer b) {
  Integer q = a / b;
  const bool exact = q * b == a;
  const bool negative = (a < 0) != (b < 0);
  if (!exact && negative) q = q - 1;
  return q;
}

// 9.7.1.9 rem.
}  // namespace

Result Rem(const Variant& v, const Operands& ops) {
  const Integer a = Typed(v, ops, 0);
  const Integer b = Typed(v, ops, 1);
  // "the remainder of integer division": division by zero is unspecified.
  if (b == 0) return NotDefined(v, 0, Undefined::kDivisionByZero);
  // "d = a % b;"
  // "The behavior for negative numbers is machine-dependent and depends on
  //  whether divide rounds towards zero or negative infinity."
  const Integer toward_zero = a - b * (a / b);
  const Integer toward_negative_infinity = a - b * FlooredQuotient(a, b);
  if (toward_zero != toward_negative_infinity) {
    return NotDefined(v, toward_zero, Undefined::kRemainderSign);
  }
  return Defined(v, toward_zero);
}

// 9.7.1.10 abs.
Result Abs(const Variant& v, const Operands& ops) {
  // "d = |a|;" (|MIN| wraps to MIN: spec-notes).
  const Integer a = Typed(v, ops, 0);
  return Defined(v, a < 0 ? -a : a);
}

// 9.7.1.11 neg.
Result Neg(const Variant& v, const Operands& ops) {
  // "d = -a;"
  return Defined(v, -Typed(v, ops, 0));
}

namespace {

// ".relu clamps the result to 0 if negative."
Integer Relu(bool relu, Integer d) { return (relu && d < 0) ? 0 : d; }

// 9.7.1.12 min and 9.7.1.13 max: the same code with the comparison flipped.
}  // namespace

Result MinMax(const Variant& v, const Operands& ops, bool is_min) {
  const bool is_signed = IsSigned(v.type);
  // "d = (a < b) ? a : b;" for min, "d = (a > b) ? a : b;" for max.
  auto pick = [is_min](Integer a, Integer b) {
    if (is_min) return (a < b) ? a : b;
    return (a > b) ? a : b;
  };
  if (IsPacked(v.type)) {
    // "iA[0] = a[0:15]; iA[1] = a[16:31]; iB[0] = b[0:15]; iB[1] = b[16:31];
    //  for (i = 0; i < 2; i++) { d[i] = (iA[i] < iB[i]) ? iA[i] : iB[i]; }"
    const uint64_t a = Raw(v, ops, 0);
    const uint64_t b = Raw(v, ops, 1);
    Integer d[2];
    for (int i = 0; i < 2; ++i) {
      d[i] = Relu(v.relu, pick(Half(a, i, is_signed), Half(b, i, is_signed)));
    }
    return Defined(v, PackHalves(d));
  }
  return Defined(v, Relu(v.relu, pick(Typed(v, ops, 0), Typed(v, ops, 1))));
}

// 9.7.1.14 popc.
Result Popc(const Variant& v, const Operands& ops) {
  uint64_t a = Raw(v, ops, 0);
  // ".u32  d = 0;
  //  while (a != 0) {
  //     if (a & 0x1)  d++;
  //     a = a >> 1;
  //  }"
  uint32_t d = 0;
  while (a != 0) {
    if (Bit(a, 0) == 1) d++;
    a = a >> 1;
  }
  return Defined(v, d);
}

// 9.7.1.15 clz.
Result Clz(const Variant& v, const Operands& ops) {
  const int width = SourceWidth(v, 0);
  uint64_t a = Raw(v, ops, 0);
  // ".u32  d = 0;
  //  if (.type == .b32)   { max = 32; mask = 0x80000000; }
  //  else                 { max = 64; mask = 0x8000000000000000; }"
  uint32_t d = 0;
  const uint32_t max = v.type == Type::kB32 ? 32 : 64;
  const int mask_bit = v.type == Type::kB32 ? 31 : 63;
  // "while (d < max && (a&mask == 0) ) {
  //      d++;
  //      a = a << 1;
  //  }"
  // In C, `a&mask == 0` would parse as `a & (mask == 0)`, which is always 0
  // and would make d always 0; the prose ("Count the number of leading
  // zeros ... between 0 and 32") fixes the reading as `(a & mask) == 0`.
  while (d < max && Bit(a, mask_bit) == 0) {
    d++;
    a = Low(static_cast<Integer>(a) << 1, width);  // a keeps the type's width
  }
  return Defined(v, d);
}

// 9.7.1.16 bfind.
Result Bfind(const Variant& v, const Operands& ops) {
  const int width = SourceWidth(v, 0);
  uint64_t a = Raw(v, ops, 0);
  // "msb = (.type==.u32 || .type==.s32) ? 31 : 63;"
  const int msb = width - 1;
  // "// negate negative signed inputs
  //  if ( (.type==.s32 || .type==.s64) && (a & (1<<msb)) ) {
  //      a = ~a;
  //  }"
  if (IsSigned(v.type) && Bit(a, msb) == 1)
    a = Low(~static_cast<Bits128>(a), width);
  // ".u32  d = 0xffffffff;
  //  for (.s32 i=msb; i>=0; i--) {
  //      if (a & (1<<i))  { d = i; break; }
  //  }"
  uint32_t d = 0xffffffff;
  for (int32_t i = msb; i >= 0; i--) {
    if (Bit(a, i) == 1) {
      d = static_cast<uint32_t>(i);
      break;
    }
  }
  // "if (.shiftamt && d != 0xffffffff)  { d = msb - d; }"
  if (v.shiftamt && d != 0xffffffff) d = static_cast<uint32_t>(msb) - d;
  return Defined(v, d);
}

// 9.7.1.17 fns.
Result Fns(const Variant& v, const Operands& ops) {
  const uint64_t mask = Raw(v, ops, 0);
  // spec-notes: base is read as unsigned 32-bit (a negative .s32 base is a
  // value above 31).
  const Integer base = Operand(v, ops, 1, /*is_signed=*/false);
  // "Operand offset has .s32 type."
  const Integer offset = Operand(v, ops, 2, /*is_signed=*/true);
  // "Operand base must be <= 31, otherwise behavior is undefined."
  // spec-notes: undefined, value 0xffffffff.
  if (base > 31) {
    return NotDefined(v, 0xffffffff, Undefined::kFnsBaseOutOfRange);
  }
  // "d = 0xffffffff;"
  Integer d = 0xffffffff;
  if (offset == 0) {
    // "if (mask[base] == 1) { d = base; }"
    if (Bit(mask, static_cast<int>(base)) == 1) d = base;
  } else {
    // "pos = base;
    //  count = |offset| - 1;       (exact: 2^31 - 1 for offset = INT_MIN)
    //  inc = (offset > 0) ? 1 : -1;"
    Integer pos = base;
    Integer count = (offset < 0 ? -offset : offset) - 1;
    const Integer inc = (offset > 0) ? 1 : -1;
    // "while ((pos >= 0) && (pos < 32)) {
    //      if (mask[pos] == 1) {
    //          if (count == 0) { d = pos; break; }
    //          else { count = count - 1; }
    //      }
    //      pos = pos + inc;
    //  }"
    while ((pos >= 0) && (pos < 32)) {
      if (Bit(mask, static_cast<int>(pos)) == 1) {
        if (count == 0) {
          d = pos;
          break;
        } else {
          count = count - 1;
        }
      }
      pos = pos + inc;
    }
  }
  return Defined(v, d);
}

// 9.7.1.18 brev.
Result Brev(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  // "msb = (.type==.b32) ? 31 : 63;
  //  for (i=0; i<=msb; i++) { d[i] = a[msb-i]; }"
  const int msb = v.type == Type::kB32 ? 31 : 63;
  Bits128 d = 0;
  for (int i = 0; i <= msb; i++) d = WithBit(d, i, Bit(a, msb - i));
  return Defined(v, UnsignedValue(d, msb + 1));
}

// 9.7.1.19 bfe.
Result Bfe(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const uint64_t c = Raw(v, ops, 2);
  // "msb = (.type==.u32 || .type==.s32) ? 31 : 63;
  //  pos = b & 0xff;  // pos restricted to 0..255 range
  //  len = c & 0xff;  // len restricted to 0..255 range"
  const int msb = TypeWidth(v.type) - 1;
  const int pos = static_cast<int>(UnsignedValue(Field(b, 7, 0), 8));
  const int len = static_cast<int>(UnsignedValue(Field(c, 7, 0), 8));
  // "if (.type==.u32 || .type==.u64 || len==0)
  //      sbit = 0;
  //  else
  //      sbit = a[min(pos+len-1,msb)];"
  int sbit;
  if (!IsSigned(v.type) || len == 0) {
    sbit = 0;
  } else {
    const int index = pos + len - 1 < msb ? pos + len - 1 : msb;
    sbit = Bit(a, index);
  }
  // "d = 0;
  //  for (i=0; i<=msb; i++) {
  //      d[i] = (i<len && pos+i<=msb) ? a[pos+i] : sbit;
  //  }"
  Bits128 d = 0;
  for (int i = 0; i <= msb; i++) {
    d = WithBit(d, i, (i < len && pos + i <= msb) ? Bit(a, pos + i) : sbit);
  }
  return Defined(v, UnsignedValue(d, msb + 1));
}

// 9.7.1.20 bfi (operands a, b, c, d; result f).
Result Bfi(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const uint64_t c = Raw(v, ops, 2);
  const uint64_t d = Raw(v, ops, 3);
  // "msb = (.type==.b32) ? 31 : 63;
  //  pos = c & 0xff;  // pos restricted to 0..255 range
  //  len = d & 0xff;  // len restricted to 0..255 range"
  const int msb = v.type == Type::kB32 ? 31 : 63;
  const int pos = static_cast<int>(UnsignedValue(Field(c, 7, 0), 8));
  const int len = static_cast<int>(UnsignedValue(Field(d, 7, 0), 8));
  // "f = b;
  //  for (i=0; i<len && pos+i<=msb; i++) {
  //      f[pos+i] = a[i];
  //  }"
  Bits128 f = b;
  for (int i = 0; i < len && pos + i <= msb; i++) {
    f = WithBit(f, pos + i, Bit(a, i));
  }
  return Defined(v, UnsignedValue(f, msb + 1));
}

// 9.7.1.21 szext.
Result Szext(const Variant& v, const Operands& ops) {
  const uint32_t a = static_cast<uint32_t>(Raw(v, ops, 0));
  const uint32_t b = static_cast<uint32_t>(Raw(v, ops, 1));
  const bool clamp = v.shift_mode == ShiftMode::kClamp;
  // "b1        = b & 0x1f;
  //  too_large = (b >= 32 && .mode == .clamp) ? true : false;
  //  mask      = too_large ? 0 : (~0) << b1;
  //  sign_pos  = (b1 - 1) & 0x1f;"
  const uint32_t b1 = static_cast<uint32_t>(UnsignedValue(Field(b, 4, 0), 5));
  const bool too_large = (b >= 32 && clamp) ? true : false;
  const uint32_t mask = too_large ? 0 : Shl32(~0u, b1);
  const int sign_pos = static_cast<int>(Low(static_cast<Integer>(b1) - 1, 5));
  // "if (b1 == 0 || too_large || .type != .s32) {
  //      sign_bit = false;
  //  } else {
  //      sign_bit = (a >> sign_pos) & 1;
  //  }"
  bool sign_bit;
  if (b1 == 0 || too_large || v.type != Type::kS32) {
    sign_bit = false;
  } else {
    sign_bit = Bit(a, sign_pos) == 1;
  }
  // "d = (a & ~mask) | (sign_bit ? mask | 0);"
  // The missing ':' is read as `(sign_bit ? mask : 0)` (spec-notes).
  const uint32_t d = (a & ~mask) | (sign_bit ? mask : 0);
  return Defined(v, d);
}

// 9.7.1.22 bmsk.
Result Bmsk(const Variant& v, const Operands& ops) {
  const uint32_t a = static_cast<uint32_t>(Raw(v, ops, 0));
  const uint32_t b = static_cast<uint32_t>(Raw(v, ops, 1));
  // "a1    = a & 0x1f;
  //  mask0 = (~0) << a1;
  //  b1    = b & 0x1f;
  //  sum   = a1 + b1;
  //  mask1 = (~0) << sum;"
  const uint32_t a1 = static_cast<uint32_t>(UnsignedValue(Field(a, 4, 0), 5));
  uint32_t mask0 = Shl32(~0u, a1);
  const uint32_t b1 = static_cast<uint32_t>(UnsignedValue(Field(b, 4, 0), 5));
  const uint32_t sum = a1 + b1;
  uint32_t mask1 = Shl32(~0u, sum);  // sum >= 32 is replaced by 0 below
  // "sum-overflow          = sum >= 32 ? true : false;
  //  bit-position-overflow = false;
  //  bit-width-overflow    = false;"
  const bool sum_overflow = sum >= 32 ? true : false;
  bool bit_position_overflow = false;
  bool bit_width_overflow = false;
  // "if (.mode == .clamp) {
  //      if (a >= 32) { bit-position-overflow = true; mask0 = 0; }
  //      if (b >= 32) { bit-width-overflow = true; }
  //  }"
  if (v.shift_mode == ShiftMode::kClamp) {
    if (a >= 32) {
      bit_position_overflow = true;
      mask0 = 0;
    }
    if (b >= 32) bit_width_overflow = true;
  }
  // "if (sum-overflow || bit-position-overflow || bit-width-overflow) {
  //      mask1 = 0;
  //  } else if (b1 == 0) {
  //      mask1 = ~0;
  //  }
  //  d = mask0 & ~mask1;"
  if (sum_overflow || bit_position_overflow || bit_width_overflow) {
    mask1 = 0;
  } else if (b1 == 0) {
    mask1 = ~0u;
  }
  return Defined(v, mask0 & ~mask1);
}

namespace {

// extractAndSignOrZeroExt_4(x, type): the four bytes of x, byte 0 first.
void ExtractAndSignOrZeroExt4(uint64_t x, Type type, Integer (&out)[4]) {
  for (int i = 0; i < 4; ++i) {
    out[i] = Value(Field(x, 8 * i + 7, 8 * i), 8, IsSigned(type));
  }
}

// extractAndSignOrZeroExt_2(x, type): the two half-words of x, low first.
void ExtractAndSignOrZeroExt2(uint64_t x, Type type, Integer (&out)[2]) {
  for (int i = 0; i < 2; ++i) out[i] = Half(x, i, IsSigned(type));
}

// dp4a/dp2a's c: ".u32 if both .atype and .btype are .u32 else .s32".
Integer DotProductC(const Variant& v, const Operands& ops) {
  const bool c_signed = IsSigned(v.atype) || IsSigned(v.btype);
  return Operand(v, ops, 2, c_signed);
}

// 9.7.1.23 dp4a.
}  // namespace

Result Dp4a(const Variant& v, const Operands& ops) {
  // "d = c;"
  Integer d = DotProductC(v, ops);
  // "Va = extractAndSignOrZeroExt_4(a, .atype);
  //  Vb = extractAndSignOrZeroExt_4(b, .btype);"
  Integer va[4], vb[4];
  ExtractAndSignOrZeroExt4(Raw(v, ops, 0), v.atype, va);
  ExtractAndSignOrZeroExt4(Raw(v, ops, 1), v.btype, vb);
  // "for (i = 0; i < 4; ++i) { d += Va[i] * Vb[i]; }"
  for (int i = 0; i < 4; ++i) d += va[i] * vb[i];
  return Defined(v, d);
}

// 9.7.1.24 dp2a.
Result Dp2a(const Variant& v, const Operands& ops) {
  // "d = c;"
  Integer d = DotProductC(v, ops);
  // "Va = extractAndSignOrZeroExt_2(a, .atype);
  //  Vb = extractAndSignOrZeroExt_4(b, .btype);"
  Integer va[2], vb[4];
  ExtractAndSignOrZeroExt2(Raw(v, ops, 0), v.atype, va);
  ExtractAndSignOrZeroExt4(Raw(v, ops, 1), v.btype, vb);
  // "b_select = (.mode == .lo) ? 0 : 2;"
  const int b_select = (v.mul_mode == MulMode::kLo) ? 0 : 2;
  // "for (i = 0; i < 2; ++i) { d += Va[i] * Vb[b_select + i]; }"
  for (int i = 0; i < 2; ++i) d += va[i] * vb[b_select + i];
  return Defined(v, d);
}

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
