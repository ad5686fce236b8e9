// The literal oracle: the spec's pseudocode, transcribed. See
// literal_oracle.h for why it exists and docs/spec-notes.md for every
// decision on an ambiguity. Quoted lines ("...") are the spec's own text.

#include "oracle/literal/literal_oracle.h"

#include <cstdint>

#include "isa/axes.h"
#include "isa/family_table.h"
#include "isa/variant.h"
#include "oracle/literal/literal_simd_video.h"
#include "oracle/literal/simd_video_op.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace {

// A mathematical integer. Every intermediate in this file fits (the widest is
// an s64 shifted left by 63, or a 65-bit vmad sum), so nothing here overflows
// unless the spec says it truncates.
using Integer = __int128;
// A 128-bit vector of bits, such as vmad's tmp[127:0] or a 64x64 product.
using Bits128 = unsigned __int128;

// ---------------------------------------------------------------------------
// Bits and integers.
// ---------------------------------------------------------------------------

// x[i], for 0 <= i < 128.
int Bit(Bits128 x, int i) { return static_cast<int>((x >> i) & 1); }

// x with x[i] = value.
Bits128 WithBit(Bits128 x, int i, int value) {
  const Bits128 one = 1;
  return value != 0 ? (x | (one << i)) : (x & ~(one << i));
}

// 2^n, for 0 <= n < 127.
Integer Pow2(int n) { return static_cast<Integer>(1) << n; }

// x<hi..lo>, moved down to bit 0, one bit at a time.
Bits128 Field(Bits128 x, int hi, int lo) {
  Bits128 d = 0;
  for (int i = lo; i <= hi; ++i) d = WithBit(d, i - lo, Bit(x, i));
  return d;
}

// The two's complement bits of `value`: a value is "written to a register"
// by keeping its low `width` bits (width <= 64). This is the only place a
// result wraps.
uint64_t Low(Integer value, int width) {
  return static_cast<uint64_t>(
      Field(static_cast<Bits128>(value), width - 1, 0));
}

// The value of bits<width-1..0> read as an unsigned number.
Integer UnsignedValue(Bits128 bits, int width) {
  Integer value = 0;
  for (int i = 0; i < width; ++i) {
    if (Bit(bits, i) == 1) value += Pow2(i);
  }
  return value;
}

// The value of bits<width-1..0> read as a two's complement number: bit
// width-1 weighs -2^(width-1).
Integer SignedValue(Bits128 bits, int width) {
  Integer value = UnsignedValue(bits, width - 1);
  if (Bit(bits, width - 1) == 1) value -= Pow2(width - 1);
  return value;
}

// Sign- or zero-extends bits<width-1..0>.
Integer Value(Bits128 bits, int width, bool is_signed) {
  return is_signed ? SignedValue(bits, width) : UnsignedValue(bits, width);
}

// The range of a `width`-bit integer: MININT..MAXINT.
Integer MaxOf(int width, bool is_signed) {
  return is_signed ? Pow2(width - 1) - 1 : Pow2(width) - 1;
}
Integer MinOf(int width, bool is_signed) {
  return is_signed ? -Pow2(width - 1) : 0;
}

Integer Min(Integer x, Integer y) { return x < y ? x : y; }
Integer Max(Integer x, Integer y) { return x > y ? x : y; }

// CLAMP(x, MAX, MIN), argument order as the spec writes it.
Integer Clamp(Integer x, Integer max, Integer min) {
  if (x > max) return max;
  if (x < min) return min;
  return x;
}

// The low 128 bits of the exact product a * b. (The exact product of two
// u64 values needs 128 unsigned bits, more than Integer holds, so the
// product is formed as a bit vector; every field the spec takes from it lies
// within bits 127..0.)
Bits128 Product(Integer a, Integer b) {
  return static_cast<Bits128>(a) * static_cast<Bits128>(b);
}

// ---------------------------------------------------------------------------
// Operands and results.
// ---------------------------------------------------------------------------

// Source `i`, read from the low SourceWidth(v, i) bits of its slot only.
uint64_t Raw(const Variant& v, const Operands& ops, int i) {
  return Low(ops.v[i], SourceWidth(v, i));
}

// Source `i` as a number, sign- or zero-extended from its width.
Integer Operand(const Variant& v, const Operands& ops, int i, bool is_signed) {
  return Value(Raw(v, ops, i), SourceWidth(v, i), is_signed);
}

// Source `i` of an instruction whose operands have the instruction type.
Integer Typed(const Variant& v, const Operands& ops, int i) {
  return Operand(v, ops, i, IsSigned(v.type));
}

// d, written to a ResultWidth(v)-bit destination.
Result Defined(const Variant& v, Integer d) {
  return Result{.bits = Low(d, ResultWidth(v)),
                .undefined = Undefined::kDefined};
}

// d, written to the destination, but not defined by the spec.
Result NotDefined(const Variant& v, Integer d, Undefined why) {
  return Result{.bits = Low(d, ResultWidth(v)), .undefined = why};
}

// Half-word `i` of a packed .u16x2/.s16x2 operand: "iA[0] = a[0:15];
// iA[1] = a[16:31];".
Integer Half(uint64_t x, int i, bool is_signed) {
  return Value(Field(x, 16 * i + 15, 16 * i), 16, is_signed);
}

// d[0] in bits 15..0 and d[1] in bits 31..16, each truncated to 16 bits.
Integer PackHalves(const Integer (&d)[2]) {
  Bits128 packed = 0;
  for (int i = 0; i < 2; ++i) {
    const uint64_t half = Low(d[i], 16);
    for (int bit = 0; bit < 16; ++bit) {
      packed = WithBit(packed, 16 * i + bit, Bit(half, bit));
    }
  }
  return UnsignedValue(packed, 32);
}

// 32-bit shifts as the pseudocode's u32 expressions use them. A shift by 32
// or more moves every bit out (spec-notes: shf "a shift by 32 gives 0";
// bmsk's out-of-range mask1 is replaced by the pseudocode anyway).
uint32_t Shl32(uint32_t x, int64_t n) {
  uint32_t d = 0;
  for (int i = 0; i < 32; ++i) {
    if (i - n >= 0) d = static_cast<uint32_t>(WithBit(d, i, Bit(x, i - n)));
  }
  return d;
}
uint32_t Shr32(uint32_t x, int64_t n) {
  uint32_t d = 0;
  for (int i = 0; i < 32; ++i) {
    if (i + n < 32) d = static_cast<uint32_t>(WithBit(d, i, Bit(x, i + n)));
  }
  return d;
}

// ---------------------------------------------------------------------------
// Integer arithmetic (PTX ISA 9.7.1).
// ---------------------------------------------------------------------------

// 9.7.1.1 add.
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

// ".relu clamps the result to 0 if negative."
Integer Relu(bool relu, Integer d) { return (relu && d < 0) ? 0 : d; }

// 9.7.1.12 min and 9.7.1.13 max: the same code with the comparison flipped.
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
  const Integer sum =
      UnsignedValue(part, n) + RegisterValue(v, ops, 2) + cf;
  return DefinedWithFlag(v, d, CarryOut(sum, n));
}

// ---------------------------------------------------------------------------
// Funnel shift (PTX ISA 9.7.8.7).
// ---------------------------------------------------------------------------

Result Shf(const Variant& v, const Operands& ops) {
  const uint32_t a = static_cast<uint32_t>(Raw(v, ops, 0));
  const uint32_t b = static_cast<uint32_t>(Raw(v, ops, 1));
  const uint32_t c = static_cast<uint32_t>(Raw(v, ops, 2));
  // "u32  n = (.mode == .clamp) ? min(c, 32) : c & 0x1f;"
  const uint32_t n =
      (v.shift_mode == ShiftMode::kClamp)
          ? (c < 32 ? c : 32)
          : static_cast<uint32_t>(UnsignedValue(Field(c, 4, 0), 5));
  uint32_t d;
  if (v.direction == Direction::kLeft) {
    // "case shf.l:     // extract 32 msbs
    //         u32  d = (b << n)      | (a >> (32-n));"
    d = Shl32(b, n) | Shr32(a, 32 - n);
  } else {
    // "case shf.r:     // extract 32 lsbs
    //         u32  d = (b << (32-n)) | (a >> n);"
    d = Shl32(b, 32 - n) | Shr32(a, n);
  }
  return Defined(v, d);
}

// ---------------------------------------------------------------------------
// Logic and shift (PTX ISA 9.7.8.1-9.7.8.6, 9.7.8.8, 9.7.8.9). The `.pred`
// forms of and/or/xor/not are not variants (spec-notes).
// ---------------------------------------------------------------------------

// The logic instructions are "fundamentally untyped, performing bit-wise
// operations on operands of any type, provided the operands are of the same
// size": d[i] = op(a[i], b[i]) for every bit i of the .b16/.b32/.b64 width.
Result BitByBit(const Variant& v, const Operands& ops, int (*op)(int, int)) {
  const int width = TypeWidth(v.type);
  const uint64_t a = Raw(v, ops, 0);
  // not has no b; op ignores its second argument then.
  const uint64_t b = NumSources(v) > 1 ? Raw(v, ops, 1) : 0;
  Bits128 d = 0;
  for (int i = 0; i < width; ++i) d = WithBit(d, i, op(Bit(a, i), Bit(b, i)));
  return Defined(v, UnsignedValue(d, width));
}

// 9.7.8.1 and: "Compute the bit-wise and operation for the bits in a and b."
// "d = a & b;"
Result And(const Variant& v, const Operands& ops) {
  return BitByBit(v, ops,
                  [](int a, int b) { return (a == 1 && b == 1) ? 1 : 0; });
}

// 9.7.8.2 or: "Compute the bit-wise or operation for the bits in a and b."
// "d = a | b;"
Result Or(const Variant& v, const Operands& ops) {
  return BitByBit(v, ops,
                  [](int a, int b) { return (a == 1 || b == 1) ? 1 : 0; });
}

// 9.7.8.3 xor: "Compute the bit-wise exclusive-or operation for the bits in
// a and b." "d = a ^ b;"
Result Xor(const Variant& v, const Operands& ops) {
  return BitByBit(v, ops, [](int a, int b) { return a != b ? 1 : 0; });
}

// 9.7.8.4 not: "Invert the bits in a." "d = ~a;"
Result Not(const Variant& v, const Operands& ops) {
  return BitByBit(v, ops, [](int a, int /*b*/) { return a == 1 ? 0 : 1; });
}

// 9.7.8.5 cnot: "Compute the logical negation using C/C++ semantics."
// "d = (a==0) ? 1 : 0;" a is the whole .b16/.b32/.b64 operand: it is 0 when
// none of its `width` bits is set.
Result Cnot(const Variant& v, const Operands& ops) {
  const int width = TypeWidth(v.type);
  const uint64_t a = Raw(v, ops, 0);
  bool a_is_zero = true;
  for (int i = 0; i < width; ++i) {
    if (Bit(a, i) == 1) a_is_zero = false;
  }
  return Defined(v, a_is_zero ? 1 : 0);
}

// 9.7.8.6 lop3 (the plain form; the .BoolOp form writes a predicate too and
// is not a variant).
Result Lop3(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const uint64_t c = Raw(v, ops, 2);
  // "immLut is an integer constant that can take values from 0 to 255"
  // (SourceWidth(v, 3) is 8).
  const uint64_t imm_lut = Raw(v, ops, 3);
  // "For a logical operation F(a, b, c) the value of immLut can be computed by
  //  applying the same operation to three predefined constant values as
  //  follows:
  //    ta = 0xF0;
  //    tb = 0xCC;
  //    tc = 0xAA;
  //    immLut = F(ta, tb, tc);"
  // Applied bit-wise, that says immLut[k] = F(ta[k], tb[k], tc[k]) for k in
  // 0..7: column k of the spec's table (rows ta, tb, tc, then immLut).
  const uint64_t ta = 0xF0, tb = 0xCC, tc = 0xAA;
  // "F = GetFunctionFromTable(immLut); // returns the function corresponding
  //                                     // to immLut value
  //  d = F(a, b, c);"
  // F is "bitwise": for each bit i of d, find the column k whose inputs
  // (ta[k], tb[k], tc[k]) are (a[i], b[i], c[i]) and read immLut[k]. The
  // eight columns are the eight distinct input triples, so exactly one
  // matches.
  uint64_t d = 0;
  for (int i = 0; i < 32; ++i) {
    for (int k = 0; k < 8; ++k) {
      if (Bit(ta, k) == Bit(a, i) && Bit(tb, k) == Bit(b, i) &&
          Bit(tc, k) == Bit(c, i)) {
        d = static_cast<uint64_t>(WithBit(d, i, Bit(imm_lut, k)));
      }
    }
  }
  return Defined(v, d);
}

// shl/shr's amount: "Shift a left [right] by the amount specified by unsigned
// 32-bit value in b." and "Shift amounts greater than the register width N
// are clamped to N." (spec-notes: b is read unsigned, 0xffffffff is a large
// amount, and N itself is the type's width.)
int ClampedShiftAmount(const Variant& v, const Operands& ops) {
  const Integer b = Operand(v, ops, 1, /*is_signed=*/false);
  const int n = TypeWidth(v.type);  // "the register width N"
  return static_cast<int>(b > n ? n : b);
}

// 9.7.8.8 shl: "Shift bits left, zero-fill on right." "d = a << b;"
Result Shl(const Variant& v, const Operands& ops) {
  const int width = TypeWidth(v.type);
  const uint64_t a = Raw(v, ops, 0);
  const int amount = ClampedShiftAmount(v, ops);
  // d[i] = a[i - amount], and the zero fill where i - amount < 0. A shift by
  // N moves every bit out: d = 0.
  Bits128 d = 0;
  for (int i = 0; i < width; ++i) {
    d = WithBit(d, i, i - amount >= 0 ? Bit(a, i - amount) : 0);
  }
  return Defined(v, UnsignedValue(d, width));
}

// 9.7.8.9 shr: "Shift bits right, sign or zero-fill on left." "d = a >> b;"
Result Shr(const Variant& v, const Operands& ops) {
  const int width = TypeWidth(v.type);
  const uint64_t a = Raw(v, ops, 0);
  const int amount = ClampedShiftAmount(v, ops);
  // "Signed shifts fill with the sign bit, unsigned and untyped shifts fill
  //  with 0."
  const int fill = IsSigned(v.type) ? Bit(a, width - 1) : 0;
  // d[i] = a[i + amount], and the fill where i + amount is past the msb. A
  // shift by N leaves only fill bits: 0, or all ones for a negative .s type.
  Bits128 d = 0;
  for (int i = 0; i < width; ++i) {
    d = WithBit(d, i, i + amount < width ? Bit(a, i + amount) : fill);
  }
  return Defined(v, UnsignedValue(d, width));
}

// ---------------------------------------------------------------------------
// prmt (PTX ISA 9.7.9.7).
// ---------------------------------------------------------------------------

// The specialized modes' table, as the spec prints it: for each mode, one row
// per "selector c[1:0]" value, giving the source byte of "d.b3 d.b2 d.b1
// d.b0" in that (left-to-right) order. The table is an image in the PDF; its
// text is in the HTML spec
// (docs.nvidia.com/cuda/parallel-thread-execution/index.html
// #data-movement-and-conversion-instructions-prmt), read here from a markdown
// copy of that page (PTX ISA 9.x) in the public code index (spec-notes).
//
//   d.b3 d.b2 d.b1 d.b0    mode                      c[1:0]
constexpr int kPrmtModeTable[7][4][4] = {
    {},              // no mode: the generic form
    {{3, 2, 1, 0},   // f4e (forward 4 extract)   0
     {4, 3, 2, 1},   //                           1
     {5, 4, 3, 2},   //                           2
     {6, 5, 4, 3}},  //                           3
    {{5, 6, 7, 0},   // b4e (backward 4 extract)  0
     {6, 7, 0, 1},   //                           1
     {7, 0, 1, 2},   //                           2
     {0, 1, 2, 3}},  //                           3
    {{0, 0, 0, 0},   // rc8 (replicate 8)         0
     {1, 1, 1, 1},   //                           1
     {2, 2, 2, 2},   //                           2
     {3, 3, 3, 3}},  //                           3
    {{3, 2, 1, 0},   // ecl (edge clamp left)     0
     {3, 2, 1, 1},   //                           1
     {3, 2, 2, 2},   //                           2
     {3, 3, 3, 3}},  //                           3
    {{0, 0, 0, 0},   // ecr (edge clamp right)    0
     {1, 1, 1, 0},   //                           1
     {2, 2, 1, 0},   //                           2
     {3, 2, 1, 0}},  //                           3
    {{1, 0, 1, 0},   // rc16 (replicate 16)       0
     {3, 2, 3, 2},   //                           1
     {1, 0, 1, 0},   //                           2
     {3, 2, 3, 2}},  //                           3
};
static_assert(static_cast<int>(PrmtMode::kF4e) == 1 &&
              static_cast<int>(PrmtMode::kB4e) == 2 &&
              static_cast<int>(PrmtMode::kRc8) == 3 &&
              static_cast<int>(PrmtMode::kEcl) == 4 &&
              static_cast<int>(PrmtMode::kEcr) == 5 &&
              static_cast<int>(PrmtMode::kRc16) == 6 && kNumPrmtModes == 7);

// Source byte `k` of tmp64: "The bytes in the two source registers are
// numbered from 0 to 7: {b, a} = {{b7, b6, b5, b4}, {b3, b2, b1, b0}}".
Bits128 SourceByte(Bits128 tmp64, int k) {
  return Field(tmp64, 8 * k + 7, 8 * k);
}

// ReadByte( mode, ctl, tmp64 ) for destination byte `position` (0 = d.b0).
// The spec gives no pseudocode for ReadByte; it is the Description's prose
// for the generic form and the table for the modes.
// AMBIGUOUS: ReadByte's arguments do not include the destination byte, yet in
// every mode all four ctl[i] are equal and the table still gives a different
// source for each of d.b3..d.b0; the table wins, so the position is passed in
// (spec-notes).
Bits128 ReadByte(PrmtMode mode, int ctl, Bits128 tmp64, int position) {
  if (mode == PrmtMode::kNone) {
    // "The 3 lsbs of the selection value specify which of the 8 source bytes
    //  should be moved into the target position. The msb defines if the byte
    //  value should be copied, or if the sign (msb of the byte) should be
    //  replicated over all 8 bits of the target position (sign extend of the
    //  byte value); msb=0 means copy the literal value; msb=1 means replicate
    //  the sign."
    const Bits128 byte = SourceByte(tmp64, static_cast<int>(Field(ctl, 2, 0)));
    if (Bit(ctl, 3) == 0) return byte;
    Bits128 replicated = 0;
    for (int bit = 0; bit < 8; ++bit) {
      replicated = WithBit(replicated, bit, Bit(byte, 7));
    }
    return replicated;
  }
  // "Note that the sign extension is only performed as part of generic
  //  form." The table lists d.b3 first, so d.b<position> is column
  //  3 - position.
  const int source = kPrmtModeTable[static_cast<int>(mode)][ctl][3 - position];
  return SourceByte(tmp64, source);
}

// 9.7.9.7 prmt: "Pick four arbitrary bytes from two 32-bit registers, and
// reassemble them into a 32-bit destination register."
Result Prmt(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const uint64_t c = Raw(v, ops, 2);
  // "tmp64 = (b<<32) | a;  // create 8 byte source"
  Bits128 tmp64 = 0;
  for (int i = 0; i < 32; ++i) {
    tmp64 = WithBit(tmp64, i, Bit(a, i));
    tmp64 = WithBit(tmp64, 32 + i, Bit(b, i));
  }
  // "if ( ! mode ) {
  //     ctl[0] = (c >>  0) & 0xf;
  //     ctl[1] = (c >>  4) & 0xf;
  //     ctl[2] = (c >>  8) & 0xf;
  //     ctl[3] = (c >> 12) & 0xf;
  //  } else {
  //     ctl[0] = ctl[1] = ctl[2] = ctl[3] = (c >>  0) & 0x3;
  //  }"
  int ctl[4];
  if (v.prmt_mode == PrmtMode::kNone) {
    for (int i = 0; i < 4; ++i) {
      ctl[i] = static_cast<int>(Field(c, 4 * i + 3, 4 * i));
    }
  } else {
    ctl[0] = ctl[1] = ctl[2] = ctl[3] = static_cast<int>(Field(c, 1, 0));
  }
  // "tmp[07:00] = ReadByte( mode, ctl[0], tmp64 );
  //  tmp[15:08] = ReadByte( mode, ctl[1], tmp64 );
  //  tmp[23:16] = ReadByte( mode, ctl[2], tmp64 );
  //  tmp[31:24] = ReadByte( mode, ctl[3], tmp64 );"
  Bits128 tmp = 0;
  for (int i = 0; i < 4; ++i) {
    const Bits128 byte = ReadByte(v.prmt_mode, ctl[i], tmp64, i);
    for (int bit = 0; bit < 8; ++bit) {
      tmp = WithBit(tmp, 8 * i + bit, Bit(byte, bit));
    }
  }
  // The spec never writes `d = tmp;`: tmp is the 32-bit destination value.
  return Defined(v, UnsignedValue(tmp, 32));
}

// ---------------------------------------------------------------------------
// Comparison and selection (PTX ISA 9.7.6.2-9.7.6.4) and integer-to-integer
// cvt (9.7.9.21). setp with and without `.BoolOp`, but its first destination
// p only (no `p|q`); slct with an `.s32` c; cvt without rounding modifiers
// (spec-notes).
// ---------------------------------------------------------------------------

// 9.7.6.2 setp: "Compare two numeric values with a relational operator, and
// (optionally) combine this result with a predicate value by applying a
// Boolean operator". "Operands a and b have type .type", so they are read as
// the type says: signed for .s16/.s32/.s64, unsigned for .u16/.u32/.u64 and
// (as bits) for .b16/.b32/.b64, whose only comparisons are eq and ne ("The
// untyped, bit-size comparisons are eq and ne").
// The combine forms are "setp.CmpOp.BoolOp.type p[|q], a, b, {!}c;" with
// ".BoolOp = { and, or, xor }". A tuple has one result, p: the second
// destination q ("A related value computed using the complement of the
// compare result is written to the second destination operand", "q =
// BoolOp(!t, c);") is not modelled, and `!c` is no variant of its own (it is
// c complemented, and c takes both values anyway).
Result Setp(const Variant& v, const Operands& ops) {
  const Integer a = Typed(v, ops, 0);
  const Integer b = Typed(v, ops, 1);
  // 9.3.1.1 Table 22: lo, ls, hi, hs are the "Unsigned Operator" column
  // (lower, lower-or-same, higher, higher-or-same): a and b as unsigned
  // numbers, whatever the type.
  const Integer ua = Operand(v, ops, 0, /*is_signed=*/false);
  const Integer ub = Operand(v, ops, 1, /*is_signed=*/false);
  // "t = (a CmpOp b) ? 1 : 0;"
  bool compare = false;
  switch (v.cmp) {
    case Cmp::kEq:  // "a == b"
      compare = a == b;
      break;
    case Cmp::kNe:  // "a != b"
      compare = a != b;
      break;
    // "For unsigned values, the comparison operators lo, ls, hi, and hs [...]
    //  may be used instead of lt, le, gt, ge": on a .u type lt..ge compare
    //  the unsigned values, as Typed() reads them.
    case Cmp::kLt:  // "a < b"
      compare = a < b;
      break;
    case Cmp::kLe:  // "a <= b"
      compare = a <= b;
      break;
    case Cmp::kGt:  // "a > b"
      compare = a > b;
      break;
    case Cmp::kGe:  // "a >= b"
      compare = a >= b;
      break;
    case Cmp::kLo:  // lower: "a < b"
      compare = ua < ub;
      break;
    case Cmp::kLs:  // lower-or-same: "a <= b"
      compare = ua <= ub;
      break;
    case Cmp::kHi:  // higher: "a > b"
      compare = ua > ub;
      break;
    case Cmp::kHs:  // higher-or-same: "a >= b"
      compare = ua >= ub;
      break;
    case Cmp::kNone:
      break;
  }
  const Integer t = compare ? 1 : 0;
  // "p = BoolOp(t, c);" with no BoolOp (and no c): p = t, a predicate, 1 bit.
  if (v.bool_op == BoolOp::kNone) return Defined(v, t);
  // With a BoolOp, c is source 2 ("operands p, q, and c have type .pred"): a
  // predicate, one bit (SourceWidth(v, 2) is 1), 1 True and 0 False.
  const Integer c = Operand(v, ops, 2, /*is_signed=*/false);
  // "p = BoolOp(t, c);" The spec names the operators and does not spell them
  // out; each is read as the instruction of that name on predicates (9.7.8.1
  // and, 9.7.8.2 or, 9.7.8.3 xor: "Allowed types include predicate
  // registers"), applied to the two one-bit values t and c.
  Integer p = 0;
  switch (v.bool_op) {
    case BoolOp::kAnd:  // "d = a & b;": True when t and c are both True
      p = (t == 1 && c == 1) ? 1 : 0;
      break;
    case BoolOp::kOr:  // "d = a | b;": True when t or c (or both) is True
      p = (t == 1 || c == 1) ? 1 : 0;
      break;
    case BoolOp::kXor:  // "d = a ^ b;": True when exactly one of t, c is True
      p = (t != c) ? 1 : 0;
      break;
    case BoolOp::kNone:
      break;
  }
  // "This result is written to the first destination operand": p, 1 bit.
  return Defined(v, p);
}

// 9.7.6.3 selp: "If c is True, a is stored in d, b otherwise. [...] Operand c
// is a predicate."
Result Selp(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const Integer c = Operand(v, ops, 2, /*is_signed=*/false);  // one bit
  // "d = (c == 1) ? a : b;"
  return Defined(v, UnsignedValue(c == 1 ? a : b, TypeWidth(v.type)));
}

// 9.7.6.4 slct: "Select one source operand, based on the sign of the third
// operand." "Operands d, a, and b are treated as a bitsize type of the same
// width as the first instruction type; operand c must match the second
// instruction type (.s32 or .f32). The selected input is copied to the output
// without modification."
Result Slct(const Variant& v, const Operands& ops) {
  const uint64_t a = Raw(v, ops, 0);
  const uint64_t b = Raw(v, ops, 1);
  const Integer c = Operand(v, ops, 2, IsSigned(v.atype));  // atype is .s32
  // "d = (c >= 0) ? a : b;"
  return Defined(v, UnsignedValue((c >= 0) ? a : b, TypeWidth(v.type)));
}

// What cvt does to an integer of one type to give another, PTX ISA 6.5.1
// Table 15 ("Convert Instruction Precision and Format"): "sext = sign-extend;
// zext = zero-extend; chop = keep only low bits that fit"; "–" on the diagonal
// and between a signed and an unsigned type of the same size, whose bits the
// table leaves as they are.
enum class Conversion { kSame, kSext, kZext, kChop };

// Table 15's integer rows and columns, in its own order (s8 s16 s32 s64 u8
// u16 u32 u64), rows the source format, columns the destination format.
constexpr Conversion kTable15[8][8] = {
    // clang-format off
    //        s8      s16     s32     s64     u8      u16     u32     u64
    /* s8  */ {Conversion::kSame, Conversion::kSext, Conversion::kSext, Conversion::kSext,
               Conversion::kSame, Conversion::kSext, Conversion::kSext, Conversion::kSext},
    /* s16 */ {Conversion::kChop, Conversion::kSame, Conversion::kSext, Conversion::kSext,
               Conversion::kChop, Conversion::kSame, Conversion::kSext, Conversion::kSext},
    /* s32 */ {Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kSext,
               Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kSext},
    /* s64 */ {Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame,
               Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame},
    /* u8  */ {Conversion::kSame, Conversion::kZext, Conversion::kZext, Conversion::kZext,
               Conversion::kSame, Conversion::kZext, Conversion::kZext, Conversion::kZext},
    /* u16 */ {Conversion::kChop, Conversion::kSame, Conversion::kZext, Conversion::kZext,
               Conversion::kChop, Conversion::kSame, Conversion::kZext, Conversion::kZext},
    /* u32 */ {Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kZext,
               Conversion::kChop, Conversion::kChop, Conversion::kSame, Conversion::kZext},
    /* u64 */ {Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame,
               Conversion::kChop, Conversion::kChop, Conversion::kChop, Conversion::kSame},
    // clang-format on
};

// A type's row or column in Table 15.
int Table15Index(Type type) {
  switch (type) {
    case Type::kS8:
      return 0;
    case Type::kS16:
      return 1;
    case Type::kS32:
      return 2;
    case Type::kS64:
      return 3;
    case Type::kU8:
      return 4;
    case Type::kU16:
      return 5;
    case Type::kU32:
      return 6;
    default:  // kU64 (cvt's integer types are these eight)
      return 7;
  }
}

// 9.7.9.21 cvt, integer to integer: "Convert a value from one type to
// another." "d = convert(a);"
Result Cvt(const Variant& v, const Operands& ops) {
  const int source_width = TypeWidth(v.atype);
  const int dest_width = TypeWidth(v.type);
  // "A source register wider than the specified type may be used [...]. The
  // lower n bits corresponding to the instruction-type width are used in the
  // conversion."
  const uint64_t a = Raw(v, ops, 0);
  if (v.sat) {
    // ".sat: For integer destination types, .sat limits the result to
    //  MININT..MAXINT for the size of the operation. Note that saturation
    //  applies to both signed and unsigned integer types."
    // spec-notes: the "result" limited is a's value (read as atype says),
    // the "size of the operation" is dtype's, and the limited value fits
    // dtype, so nothing is chopped afterwards.
    const bool dest_signed = IsSigned(v.type);
    const Integer value = Value(a, source_width, IsSigned(v.atype));
    return Defined(v, Clamp(value, MaxOf(dest_width, dest_signed),
                            MinOf(dest_width, dest_signed)));
  }
  Bits128 d = 0;
  switch (kTable15[Table15Index(v.atype)][Table15Index(v.type)]) {
    case Conversion::kSame:  // same size: the bits as they are
    case Conversion::kZext:  // zero-extend: a's bits, zeros above
      for (int i = 0; i < source_width; ++i) d = WithBit(d, i, Bit(a, i));
      break;
    case Conversion::kSext:  // sign-extend: a's bits, a's msb above
      for (int i = 0; i < dest_width; ++i) {
        d = WithBit(d, i, Bit(a, i < source_width ? i : source_width - 1));
      }
      break;
    case Conversion::kChop:  // "keep only low bits that fit"
      for (int i = 0; i < dest_width; ++i) d = WithBit(d, i, Bit(a, i));
      break;
  }
  // Table 15's footnote 1 ("If the destination register is wider than the
  // destination format, the result is extended to the destination register
  // width after chopping") concerns the register, not the dtype-wide result
  // returned here (spec-notes).
  return Defined(v, UnsignedValue(d, dest_width));
}

// ---------------------------------------------------------------------------
// Scalar video instructions (PTX ISA 9.7.18.1): the common stages.
// ---------------------------------------------------------------------------

// S8_MAX, U16_MIN, ...
constexpr Integer kS8Max = 127, kS8Min = -128;
constexpr Integer kU8Max = 255, kU8Min = 0;
constexpr Integer kS16Max = 32767, kS16Min = -32768;
constexpr Integer kU16Max = 65535, kU16Min = 0;
constexpr Integer kS32Max = 2147483647,
                  kS32Min = -static_cast<Integer>(2147483648);
constexpr Integer kU32Max = 4294967295, kU32Min = 0;

// partSelectSignExtend(x, type, sel). The spec gives no pseudocode for it,
// only the prose: "Using the atype/btype and asel/bsel specifiers, the input
// values are extracted and sign- or zero-extended internally to .s33 values."
// .b0-.b3 select a byte, .h0/.h1 a half-word, no selector the whole word.
Integer PartSelectSignExtend(uint64_t x, Type type, Sel sel) {
  int lo = 0;
  int width = 32;
  switch (sel) {
    case Sel::kB0:
      lo = 0, width = 8;
      break;
    case Sel::kB1:
      lo = 8, width = 8;
      break;
    case Sel::kB2:
      lo = 16, width = 8;
      break;
    case Sel::kB3:
      lo = 24, width = 8;
      break;
    case Sel::kH0:
      lo = 0, width = 16;
      break;
    case Sel::kH1:
      lo = 16, width = 16;
      break;
    case Sel::kNone:
      break;
  }
  return Value(Field(x, lo + width - 1, lo), width, IsSigned(type));
}

// isSigned(type).
bool IsSignedType(Type type) { return IsSigned(type); }

// .s33 optSaturate( .s34 tmp, Bool sat, Bool sign, Modifier dsel )
Integer OptSaturate(Integer tmp, bool sat, bool sign, Sel dsel) {
  // "if ( !sat )  return tmp;"
  if (!sat) return tmp;
  switch (dsel) {
    // "case .b0, .b1, .b2, .b3:
    //      if ( sign )  return CLAMP( tmp, S8_MAX, S8_MIN );
    //      else         return CLAMP( tmp, U8_MAX, U8_MIN );"
    case Sel::kB0:
    case Sel::kB1:
    case Sel::kB2:
    case Sel::kB3:
      if (sign) return Clamp(tmp, kS8Max, kS8Min);
      return Clamp(tmp, kU8Max, kU8Min);
    // "case .h0, .h1:
    //      if ( sign )  return CLAMP( tmp, S16_MAX, S16_MIN );
    //      else         return CLAMP( tmp, U16_MAX, U16_MIN );"
    case Sel::kH0:
    case Sel::kH1:
      if (sign) return Clamp(tmp, kS16Max, kS16Min);
      return Clamp(tmp, kU16Max, kU16Min);
    // "default:
    //      if ( sign )  return CLAMP( tmp, S32_MAX, S32_MIN );
    //      else         return CLAMP( tmp, U32_MAX, U32_MIN );"
    default:
      if (sign) return Clamp(tmp, kS32Max, kS32Min);
      return Clamp(tmp, kU32Max, kU32Min);
  }
}

// .s33 optSecOp(Modifier secop, .s33 tmp, .s33 c)
// (the instructions' pseudocode calls it optSecondaryOp).
Integer OptSecOp(SecOp secop, Integer tmp, Integer c) {
  switch (secop) {
    case SecOp::kAdd:
      return tmp + c;  // ".add:     return tmp + c;"
    case SecOp::kMin:
      return Min(tmp, c);  // ".min:     return MIN(tmp, c);"
    case SecOp::kMax:
      return Max(tmp, c);  // ".max      return MAX(tmp, c);"
    default:
      return tmp;  // "default:  return tmp;"
  }
}

// .s33 optMerge( Modifier dsel, .s33 tmp, .s33 c )
// The masks act on the two's complement bits of tmp and c.
Integer OptMerge(Sel dsel, Integer tmp, Integer c) {
  switch (dsel) {
    case Sel::kH0:
      return (tmp & 0xffff) | (0xffff0000 & c);
    case Sel::kH1:
      return ((tmp & 0xffff) << 16) | (0x0000ffff & c);
    case Sel::kB0:
      return (tmp & 0xff) | (0xffffff00 & c);
    case Sel::kB1:
      return ((tmp & 0xff) << 8) | (0xffff00ff & c);
    case Sel::kB2:
      return ((tmp & 0xff) << 16) | (0xff00ffff & c);
    case Sel::kB3:
      return ((tmp & 0xff) << 24) | (0x00ffffff & c);
    default:
      return tmp;
  }
}

// ta = partSelectSignExtend( a, atype, asel );
Integer VideoTa(const Variant& v, const Operands& ops) {
  return PartSelectSignExtend(Raw(v, ops, 0), v.atype, v.asel);
}

// tb = partSelectSignExtend( b, btype, bsel );
Integer VideoTb(const Variant& v, const Operands& ops) {
  return PartSelectSignExtend(Raw(v, ops, 1), v.btype, v.bsel);
}

// "d = optSecondaryOp( op2, tmp, c );  // optional secondary operation
//  d = optMerge( dsel, tmp, c );       // optional merge with c operand"
// "The lower 32-bits are then written to the destination operand."
// The two lines are alternatives (spec-notes): the syntax has either an op2 or
// a d.dsel, never both, and with neither d = tmp. `c_signed`: "The sign of the
// third operand is based on dtype" (vset: "operand c [is] also unsigned").
Result SecondaryOpOrMerge(const Variant& v, const Operands& ops, Integer tmp,
                          bool c_signed) {
  Integer d = tmp;
  if (v.secop != SecOp::kNone) {
    d = OptSecOp(v.secop, tmp, Operand(v, ops, 2, c_signed));
  } else if (v.dsel != Sel::kNone) {
    d = OptMerge(v.dsel, tmp, Operand(v, ops, 2, c_signed));
  }
  return Defined(v, d);
}

// The tail shared by vadd, vsub, vabsdiff, vmin, vmax, vshl and vshr:
// "// saturate, taking into account destination type and merge operations
//  tmp = optSaturate( tmp, sat, isSigned(dtype), dsel );"
// followed by the secondary operation or merge.
Result VideoFinish(const Variant& v, const Operands& ops, Integer tmp) {
  const bool sign = IsSignedType(v.type);  // v.type is .dtype
  tmp = OptSaturate(tmp, v.sat, sign, v.dsel);
  return SecondaryOpOrMerge(v, ops, tmp, /*c_signed=*/sign);
}

// ---------------------------------------------------------------------------
// Scalar video instructions: one function per instruction.
// ---------------------------------------------------------------------------

// 9.7.18.1.1 vadd: "case vadd:     tmp = ta + tb;"
Result Vadd(const Variant& v, const Operands& ops) {
  const Integer tmp = VideoTa(v, ops) + VideoTb(v, ops);
  return VideoFinish(v, ops, tmp);
}

// 9.7.18.1.1 vsub: "case vsub:     tmp = ta - tb;"
Result Vsub(const Variant& v, const Operands& ops) {
  const Integer tmp = VideoTa(v, ops) - VideoTb(v, ops);
  return VideoFinish(v, ops, tmp);
}

// 9.7.18.1.1 vabsdiff: "case vabsdiff: tmp = | ta - tb |;"
Result Vabsdiff(const Variant& v, const Operands& ops) {
  const Integer difference = VideoTa(v, ops) - VideoTb(v, ops);
  const Integer tmp = difference < 0 ? -difference : difference;
  return VideoFinish(v, ops, tmp);
}

// 9.7.18.1.1 vmin: "case vmin:     tmp = MIN( ta, tb );"
Result Vmin(const Variant& v, const Operands& ops) {
  const Integer tmp = Min(VideoTa(v, ops), VideoTb(v, ops));
  return VideoFinish(v, ops, tmp);
}

// 9.7.18.1.1 vmax: "case vmax:     tmp = MAX( ta, tb );"
Result Vmax(const Variant& v, const Operands& ops) {
  const Integer tmp = Max(VideoTa(v, ops), VideoTb(v, ops));
  return VideoFinish(v, ops, tmp);
}

// vshl/vshr's shift amount:
// "tb = partSelectSignExtend( b, .u32, bsel );
//  if ( mode == .clamp  && tb > 32 )  tb = 32;
//  if ( mode == .wrap )                       tb = tb & 0x1f;"
int VideoShiftAmount(const Variant& v, const Operands& ops) {
  Integer tb = PartSelectSignExtend(Raw(v, ops, 1), Type::kU32, v.bsel);
  if (v.shift_mode == ShiftMode::kClamp && tb > 32) tb = 32;
  if (v.shift_mode == ShiftMode::kWrap) tb = UnsignedValue(Field(tb, 4, 0), 5);
  return static_cast<int>(tb);
}

// 9.7.18.1.2 vshl: "case vshl:  tmp = ta << tb;"
// spec-notes: the shift is exact (ta times 2^tb, up to 65 bits), not
// truncated to the .s34 the preamble mentions, before optSaturate.
Result Vshl(const Variant& v, const Operands& ops) {
  const Integer ta = VideoTa(v, ops);
  const Integer tmp = ta * Pow2(VideoShiftAmount(v, ops));
  return VideoFinish(v, ops, tmp);
}

// 9.7.18.1.2 vshr: "case vshr:  tmp = ta >> tb;"
// "Signed shift fills with the sign bit, unsigned shift fills with zero": ta
// is sign- or zero-extended by atype, so shifting the number right (rounding
// toward negative infinity) does both.
Result Vshr(const Variant& v, const Operands& ops) {
  const Integer ta = VideoTa(v, ops);
  const Integer tmp = ta >> VideoShiftAmount(v, ops);
  return VideoFinish(v, ops, tmp);
}

// 9.7.18.1.4 vset.
Result Vset(const Variant& v, const Operands& ops) {
  const Integer ta = VideoTa(v, ops);
  const Integer tb = VideoTb(v, ops);
  // "tmp = compare( ta, tb, cmp ) ? 1 : 0;"
  bool compare = false;
  switch (v.cmp) {
    case Cmp::kEq:
      compare = ta == tb;
      break;
    case Cmp::kNe:
      compare = ta != tb;
      break;
    case Cmp::kLt:
      compare = ta < tb;
      break;
    case Cmp::kLe:
      compare = ta <= tb;
      break;
    case Cmp::kGt:
      compare = ta > tb;
      break;
    case Cmp::kGe:
      compare = ta >= tb;
      break;
    case Cmp::kLo:  // setp's unsigned names; vset has eq .. ge only
    case Cmp::kLs:
    case Cmp::kHi:
    case Cmp::kHs:
    case Cmp::kNone:
      break;
  }
  const Integer tmp = compare ? 1 : 0;
  // "The intermediate result of the comparison is always unsigned, and
  //  therefore destination d and operand c are also unsigned." No .sat.
  return SecondaryOpOrMerge(v, ops, tmp, /*c_signed=*/false);
}

// ---------------------------------------------------------------------------
// vmad (9.7.18.1.3): the pseudocode and the prose, read separately.
// ---------------------------------------------------------------------------

struct VmadInputs {
  Integer ta = 0;               // partSelectSignExtend( a, atype, asel )
  Integer tb = 0;               // partSelectSignExtend( b, btype, bsel )
  uint32_t c = 0;               // the 32-bit register c
  bool a_signed = false;        // isSigned(atype)
  bool b_signed = false;        // isSigned(btype)
  bool product_negate = false;  // a.negate ^ b.negate
  bool c_negate = false;        // c.negate
  bool po = false;              // .po
  int shift = 0;                // .shr7, .shr15, or none (spec-notes: 0)
  bool sat = false;
};

VmadInputs ReadVmad(const Variant& v, const Operands& ops) {
  VmadInputs in;
  in.ta = VideoTa(v, ops);
  in.tb = VideoTb(v, ops);
  in.c = static_cast<uint32_t>(Raw(v, ops, 2));
  in.a_signed = IsSignedType(v.atype);
  in.b_signed = IsSignedType(v.btype);
  in.product_negate = v.vmad_form == VmadForm::kNegProduct;
  in.c_negate = v.vmad_form == VmadForm::kNegC;
  in.po = v.vmad_form == VmadForm::kPlusOne;
  switch (v.scale) {
    case Scale::kShr7:
      in.shift = 7;
      break;
    case Scale::kShr15:
      in.shift = 15;
      break;
    case Scale::kNone:
      in.shift = 0;
      break;  // spec-notes: no scale = .PASS
  }
  in.sat = v.sat;
  // dtype never appears in the semantics (spec-notes): it is not read.
  return in;
}

// sext32(c) and zext(c), as 128-bit vectors.
Bits128 Sext32(uint32_t c) { return static_cast<Bits128>(SignedValue(c, 32)); }
Bits128 Zext(uint32_t c) { return static_cast<Bits128>(UnsignedValue(c, 32)); }

// The Semantics block, line by line. Returns the low 32 bits of `result`.
uint64_t VmadPseudocode(const VmadInputs& in) {
  // "signedFinal = isSigned(atype) || isSigned(btype) ||
  //                (a.negate ^ b.negate) || c.negate;"
  const bool signed_final =
      in.a_signed || in.b_signed || in.product_negate || in.c_negate;
  // "tmp[127:0] = ta * tb;"
  Bits128 tmp = Product(in.ta, in.tb);
  uint32_t c = in.c;
  // "lsb = 0;
  //  if ( .po )                  {              lsb = 1; } else
  //  if ( a.negate ^ b.negate )  { tmp = ~tmp;  lsb = 1; } else
  //  if ( c.negate )             { c   = ~c;    lsb = 1; }"
  int lsb = 0;
  if (in.po) {
    lsb = 1;
  } else if (in.product_negate) {
    tmp = ~tmp;
    lsb = 1;
  } else if (in.c_negate) {
    c = ~c;
    lsb = 1;
  }
  // "c128[127:0] = (signedFinal) sext32( c ) : zext ( c );"
  const Bits128 c128 = signed_final ? Sext32(c) : Zext(c);
  // "tmp = tmp + c128 + lsb;"  (modulo 2^128)
  tmp = tmp + c128 + static_cast<Bits128>(lsb);
  // "switch( scale ) {
  //     case .shr7:   result = (tmp >>  7) & 0xffffffffffffffff;
  //     case .shr15:  result = (tmp >> 15) & 0xffffffffffffffff;
  //  }"
  // No scale shifts by 0 (spec-notes). The 64 kept bits come from tmp bits
  // shift..shift+63, all inside tmp[127:0], so whether >> fills with zeros or
  // sign bits does not matter here.
  uint64_t result = static_cast<uint64_t>(Field(tmp, in.shift + 63, in.shift));
  // "if ( .sat ) {
  //      if (signedFinal) result = CLAMP(result, S32_MAX, S32_MIN);
  //      else             result = CLAMP(result, U32_MAX, U32_MIN);
  //  }"
  // The 64-bit result "is sign-extended if the final result is signed, and
  // zero-extended otherwise" before it is compared.
  if (in.sat) {
    const Integer value = Value(result, 64, signed_final);
    const Integer clamped = signed_final ? Clamp(value, kS32Max, kS32Min)
                                         : Clamp(value, kU32Max, kU32Min);
    result = Low(clamped, 64);
  }
  // "The lower 32-bits are then written to the destination operand."
  return Low(result, 32);
}

// The Description, read on its own, in exact arithmetic. Returns the low 32
// bits of the final result.
uint64_t VmadProse(const VmadInputs& in) {
  // "The intermediate result of (a*b) is unsigned if atype and btype are
  //  unsigned and the product (a*b) is not negated; otherwise, the
  //  intermediate result is signed. Input c has the same sign as the
  //  intermediate result."
  const bool intermediate_signed =
      in.a_signed || in.b_signed || in.product_negate;
  // "The final result is unsigned if the intermediate result is unsigned and
  //  c is not negated."
  const bool final_signed = intermediate_signed || in.c_negate;
  // "(a*b) is negated if and only if exactly one of a or b is negated."
  Integer product = in.ta * in.tb;
  if (in.product_negate) product = -product;
  Integer c = Value(in.c, 32, intermediate_signed);
  if (in.c_negate) c = -c;
  // "Calculate (a*b) + c" ... "The plus one mode (.po) computes
  //  (a*b) + c + 1".
  const Integer sum = product + c + (in.po ? 1 : 0);
  // "The intermediate result is optionally scaled via right-shift; this
  //  result is sign-extended if the final result is signed, and
  //  zero-extended otherwise."
  // AMBIGUOUS: "intermediate result" is the Description's name for (a*b), so
  // the prose could be read as scaling the product before c is added.
  // spec-notes lists only two conflicts (the sign of a negated c, and the
  // 64-bit mask before .sat), so both readings here scale the whole sum, as
  // the pseudocode does.
  Integer scaled = sum >> in.shift;  // floor: fills with the sign
  // "The final result is optionally saturated to the appropriate 32-bit range
  //  based on the type (signed or unsigned) of the final result."
  if (in.sat) {
    scaled = final_signed ? Clamp(scaled, kS32Max, kS32Min)
                          : Clamp(scaled, kU32Max, kU32Min);
  }
  return Low(scaled, 32);
}

// spec-notes: undefined (vmad-ambiguous) where the two readings' final 32
// bits differ; the value is the pseudocode's.
Result Vmad(const Variant& v, const Operands& ops) {
  const VmadInputs in = ReadVmad(v, ops);
  const uint64_t pseudocode = VmadPseudocode(in);
  const uint64_t prose = VmadProse(in);
  if (pseudocode != prose) {
    return NotDefined(v, pseudocode, Undefined::kVmadAmbiguous);
  }
  return Defined(v, pseudocode);
}

// ---------------------------------------------------------------------------
// Intel vISA SHL (opcode 0x24).
// ---------------------------------------------------------------------------

// v.type is Dst's type, v.atype Src0's, v.btype Src1's.
// PTX ISA 9.7.18.2, the SIMD video instructions: transcribed on their own in
// literal_simd_video.cc (by its own author, from the spec text only); `sel`
// (source 3) carries the .asel/.bsel selectors. Its pseudocode gives a value
// for every input; that is the answer.
//
// With `.add`, the Description reads another way: "For half-word positions
// indicated in mask, the selected half-word results are added to operand c"
// adds each lane's result as its half-word (byte), read as `.dtype`, where
// the pseudocode's `d += mask[i] ? t[i] : 0` adds the exact t[i]. Where the
// two sums differ, the spec says two things and the result is undefined
// (docs/spec-notes.md, ".add: one 32-bit sum").
Result SimdVideo(const Variant& v, const Operands& ops) {
  const LiteralSimdOp op = SimdVideoOpOf<LiteralSimdOp>(v);
  const uint32_t a = static_cast<uint32_t>(ops.v[0]);
  const uint32_t b = static_cast<uint32_t>(ops.v[1]);
  const uint32_t c = static_cast<uint32_t>(ops.v[2]);
  const uint32_t sel = static_cast<uint32_t>(ops.v[3]);
  const uint32_t d = LiteralSimdVideo(op, a, b, c, sel);
  if (!op.accumulate) return Result{.bits = d};
  // "the selected half-word results": every lane's result in its place (the
  // SIMD merge with all lanes written), then each masked one read as .dtype.
  LiteralSimdOp placed = op;
  placed.accumulate = false;
  placed.mask_lanes = static_cast<uint32_t>(Pow2(op.lanes) - 1);
  const uint32_t results = LiteralSimdVideo(placed, a, b, /*c=*/0, sel);
  const int width = 32 / op.lanes;
  Integer described = UnsignedValue(c, 32);
  for (int i = 0; i < op.lanes; ++i) {
    if (Bit(op.mask_lanes, i) == 0) continue;
    const Bits128 lane = Field(results, width * (i + 1) - 1, width * i);
    described += Value(lane, width, op.d_signed);
  }
  const bool same = Low(described, 32) == d;
  return Result{.bits = d,
                .undefined = same ? Undefined::kDefined
                                  : Undefined::kSimdAccumulateAmbiguous};
}

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

}  // namespace

Result LiteralEvaluate(const Variant& v, const Operands& operands) {
  switch (v.family) {
    case Family::kAdd:
      return v.cc ? AddWithCarry(v, operands) : Add(v, operands);
    case Family::kSub:
      return v.cc ? SubWithBorrow(v, operands) : Sub(v, operands);
    case Family::kMul:
      return Mul(v, operands);
    case Family::kMad:
      return v.cc ? MadWithCarry(v, operands) : Mad(v, operands);
    case Family::kMul24:
      return Mul24(v, operands);
    case Family::kMad24:
      return Mad24(v, operands);
    case Family::kSad:
      return Sad(v, operands);
    case Family::kDiv:
      return Div(v, operands);
    case Family::kRem:
      return Rem(v, operands);
    case Family::kAbs:
      return Abs(v, operands);
    case Family::kNeg:
      return Neg(v, operands);
    case Family::kMin:
      return MinMax(v, operands, /*is_min=*/true);
    case Family::kMax:
      return MinMax(v, operands, /*is_min=*/false);
    case Family::kPopc:
      return Popc(v, operands);
    case Family::kClz:
      return Clz(v, operands);
    case Family::kBfind:
      return Bfind(v, operands);
    case Family::kFns:
      return Fns(v, operands);
    case Family::kBrev:
      return Brev(v, operands);
    case Family::kBfe:
      return Bfe(v, operands);
    case Family::kBfi:
      return Bfi(v, operands);
    case Family::kBmsk:
      return Bmsk(v, operands);
    case Family::kSzext:
      return Szext(v, operands);
    case Family::kDp4a:
      return Dp4a(v, operands);
    case Family::kDp2a:
      return Dp2a(v, operands);
    case Family::kShf:
      return Shf(v, operands);
    case Family::kAnd:
      return And(v, operands);
    case Family::kOr:
      return Or(v, operands);
    case Family::kXor:
      return Xor(v, operands);
    case Family::kNot:
      return Not(v, operands);
    case Family::kCnot:
      return Cnot(v, operands);
    case Family::kLop3:
      return Lop3(v, operands);
    case Family::kShl:
      return Shl(v, operands);
    case Family::kShr:
      return Shr(v, operands);
    case Family::kPrmt:
      return Prmt(v, operands);
    case Family::kSetp:
      return Setp(v, operands);
    case Family::kSelp:
      return Selp(v, operands);
    case Family::kSlct:
      return Slct(v, operands);
    case Family::kCvt:
      return Cvt(v, operands);
    case Family::kAddc:
      return AddWithCarry(v, operands);
    case Family::kSubc:
      return SubWithBorrow(v, operands);
    case Family::kMadc:
      return MadWithCarry(v, operands);
    case Family::kVadd:
      return Vadd(v, operands);
    case Family::kVsub:
      return Vsub(v, operands);
    case Family::kVabsdiff:
      return Vabsdiff(v, operands);
    case Family::kVmin:
      return Vmin(v, operands);
    case Family::kVmax:
      return Vmax(v, operands);
    case Family::kVshl:
      return Vshl(v, operands);
    case Family::kVshr:
      return Vshr(v, operands);
    case Family::kVmad:
      return Vmad(v, operands);
    case Family::kVset:
      return Vset(v, operands);
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
      return SimdVideo(v, operands);
    case Family::kVisaShl:
      return VisaShl(v, operands);
  }
  return Result{};  // not reached for a legal variant
}

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
