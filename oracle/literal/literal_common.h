// The literal oracles' shared vocabulary: bits read and written one at a
// time, mathematical integers, and a variant's operands and result, as the
// spec's pseudocode speaks of them. Used by every section of the literal
// oracle (literal_*.cc) and by the SIMD video transcription.

#ifndef PTXDIFF_ORACLE_LITERAL_LITERAL_COMMON_H_
#define PTXDIFF_ORACLE_LITERAL_LITERAL_COMMON_H_

#include <cstdint>

#include "isa/family_table.h"
#include "isa/variant.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace literal {

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
inline int Bit(Bits128 x, int i) { return static_cast<int>((x >> i) & 1); }

// x with x[i] = value.
inline Bits128 WithBit(Bits128 x, int i, int value) {
  const Bits128 one = 1;
  return value != 0 ? (x | (one << i)) : (x & ~(one << i));
}

// 2^n, for 0 <= n < 127.
inline Integer Pow2(int n) { return static_cast<Integer>(1) << n; }

// x<hi..lo>, moved down to bit 0, one bit at a time.
inline Bits128 Field(Bits128 x, int hi, int lo) {
  Bits128 d = 0;
  for (int i = lo; i <= hi; ++i) d = WithBit(d, i - lo, Bit(x, i));
  return d;
}

// The two's complement bits of `value`: a value is "written to a register"
// by keeping its low `width` bits (width <= 64). This is the only place a
// result wraps.
inline uint64_t Low(Integer value, int width) {
  return static_cast<uint64_t>(
      Field(static_cast<Bits128>(value), width - 1, 0));
}

// The value of bits<width-1..0> read as an unsigned number.
inline Integer UnsignedValue(Bits128 bits, int width) {
  Integer value = 0;
  for (int i = 0; i < width; ++i) {
    if (Bit(bits, i) == 1) value += Pow2(i);
  }
  return value;
}

// The value of bits<width-1..0> read as a two's complement number: bit
// width-1 weighs -2^(width-1).
inline Integer SignedValue(Bits128 bits, int width) {
  Integer value = UnsignedValue(bits, width - 1);
  if (Bit(bits, width - 1) == 1) value -= Pow2(width - 1);
  return value;
}

// Sign- or zero-extends bits<width-1..0>.
inline Integer Value(Bits128 bits, int width, bool is_signed) {
  return is_signed ? SignedValue(bits, width) : UnsignedValue(bits, width);
}

// The range of a `width`-bit integer: MININT..MAXINT.
inline Integer MaxOf(int width, bool is_signed) {
  return is_signed ? Pow2(width - 1) - 1 : Pow2(width) - 1;
}
inline Integer MinOf(int width, bool is_signed) {
  return is_signed ? -Pow2(width - 1) : 0;
}

inline Integer Min(Integer x, Integer y) { return x < y ? x : y; }
inline Integer Max(Integer x, Integer y) { return x > y ? x : y; }

// CLAMP(x, MAX, MIN), argument order as the spec writes it.
inline Integer Clamp(Integer x, Integer max, Integer min) {
  if (x > max) return max;
  if (x < min) return min;
  return x;
}

// The low 128 bits of the exact product a * b. (The exact product of two
// u64 values needs 128 unsigned bits, more than Integer holds, so the
// product is formed as a bit vector; every field the spec takes from it lies
// within bits 127..0.)
inline Bits128 Product(Integer a, Integer b) {
  return static_cast<Bits128>(a) * static_cast<Bits128>(b);
}

// ---------------------------------------------------------------------------
// Operands and results.
// ---------------------------------------------------------------------------

// Source `i`, read from the low SourceWidth(v, i) bits of its slot only.
inline uint64_t Raw(const Variant& v, const Operands& ops, int i) {
  return Low(ops.v[i], SourceWidth(v, i));
}

// Source `i` as a number, sign- or zero-extended from its width.
inline Integer Operand(const Variant& v, const Operands& ops, int i,
                       bool is_signed) {
  return Value(Raw(v, ops, i), SourceWidth(v, i), is_signed);
}

// Source `i` of an instruction whose operands have the instruction type.
inline Integer Typed(const Variant& v, const Operands& ops, int i) {
  return Operand(v, ops, i, IsSigned(v.type));
}

// d, written to a ResultWidth(v)-bit destination.
inline Result Defined(const Variant& v, Integer d) {
  return Result{.bits = Low(d, ResultWidth(v)),
                .undefined = Undefined::kDefined};
}

// d, written to the destination, but not defined by the spec.
inline Result NotDefined(const Variant& v, Integer d, Undefined why) {
  return Result{.bits = Low(d, ResultWidth(v)), .undefined = why};
}

// Half-word `i` of a packed .u16x2/.s16x2 operand: "iA[0] = a[0:15];
// iA[1] = a[16:31];".
inline Integer Half(uint64_t x, int i, bool is_signed) {
  return Value(Field(x, 16 * i + 15, 16 * i), 16, is_signed);
}

// d[0] in bits 15..0 and d[1] in bits 31..16, each truncated to 16 bits.
inline Integer PackHalves(const Integer (&d)[2]) {
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
inline uint32_t Shl32(uint32_t x, int64_t n) {
  uint32_t d = 0;
  for (int i = 0; i < 32; ++i) {
    if (i - n >= 0) d = static_cast<uint32_t>(WithBit(d, i, Bit(x, i - n)));
  }
  return d;
}
inline uint32_t Shr32(uint32_t x, int64_t n) {
  uint32_t d = 0;
  for (int i = 0; i < 32; ++i) {
    if (i + n < 32) d = static_cast<uint32_t>(WithBit(d, i, Bit(x, i + n)));
  }
  return d;
}

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_LITERAL_LITERAL_COMMON_H_
