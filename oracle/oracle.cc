#include "absl/strings/string_view.h"
#include "oracle/oracle.h"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/bits.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

constexpr Result Defined(uint64_t bits) { return {bits, Undefined::kDefined}; }

using EvalFn = Result (*)(const Variant&, const Operands&);
constexpr Result WithCarry(uint64_t bits, bool carry) {
  return {bits, Undefined::kDefined, carry};
}

// ---------------------------------------------------------------------------
// Integer arithmetic (PTX ISA 9.7.1)
// ---------------------------------------------------------------------------

// Reads source `x` of type `t` as a mathematical integer.
inline int64_t Value(uint64_t x, Type t) {
  const int w = TypeWidth(t);
  return IsSigned(t) ? SignExtend(x, w) : static_cast<int64_t>(Low(x, w));
}

// Applies `op` to each 16-bit half of packed operands (u16x2 / s16x2).
template <typename Op>
inline uint64_t PerHalf(uint64_t a, uint64_t b, Type t, Op op) {
  const Type half = t == Type::kS16x2 ? Type::kS16 : Type::kU16;
  uint64_t out = 0;
  for (int i = 0; i < 2; ++i) {
    const int64_t r = op(Value(a >> (16 * i), half), Value(b >> (16 * i), half));
    out |= Low(static_cast<uint64_t>(r), 16) << (16 * i);
  }
  return out;
}

inline int64_t ClampS32(i128 x) {
  return static_cast<int64_t>(std::clamp<i128>(x, INT32_MIN, INT32_MAX));
}

// ---------------------------------------------------------------------------
// Extended precision (PTX ISA 9.7.2): the carry and borrow are those of the
// unsigned bit patterns, for .s* types too ("the same for unsigned and signed
// integers"). `cf` is the incoming CC.CF (0 for add.cc, sub.cc, mad.cc).
// ---------------------------------------------------------------------------

// d = a + b + cf; the carry out of the full-precision sum.
inline Result AddCarry(uint64_t a, uint64_t b, uint64_t cf, int w) {
  const uint64_t mask = LowMask(w);
  const u128 sum = u128{a & mask} + (b & mask) + (cf & 1);
  return WithCarry(static_cast<uint64_t>(sum) & mask,
                   static_cast<bool>(sum >> w));
}

// d = a - (b + cf); the borrow: a < b + cf, b + cf not wrapped.
inline Result SubBorrow(uint64_t a, uint64_t b, uint64_t cf, int w) {
  const uint64_t mask = LowMask(w);
  const u128 subtrahend = u128{b & mask} + (cf & 1);
  return WithCarry((a - b - (cf & 1)) & mask, u128{a & mask} < subtrahend);
}

// Keeps the carry only where the variant writes CC.CF.
inline Result CarryIf(bool cc, Result r) {
  r.carry = cc && r.carry;
  return r;
}

Result EvalAddc(const Variant& v, const Operands& o) {
  return CarryIf(v.cc, AddCarry(o.v[0], o.v[1], o.v[2], TypeWidth(v.type)));
}

Result EvalSubc(const Variant& v, const Operands& o) {
  return CarryIf(v.cc, SubBorrow(o.v[0], o.v[1], o.v[2], TypeWidth(v.type)));
}

Result EvalAddSub(const Variant& v, const Operands& o) {
  const bool sub = v.family == Family::kSub;
  if (v.cc) {  // add.cc, sub.cc
    const int w = TypeWidth(v.type);
    return sub ? SubBorrow(o.v[0], o.v[1], 0, w) : AddCarry(o.v[0], o.v[1], 0, w);
  }
  if (v.sat) {  // .sat.s32: the exact sum, clamped
    const i128 a = SignExtend(o.v[0], 32), b = SignExtend(o.v[1], 32);
    return Defined(Low(ClampS32(sub ? a - b : a + b), 32));
  }
  if (IsPacked(v.type)) {  // per half-word; signedness does not matter
    const uint64_t lo = (o.v[0] + (sub ? 0 - o.v[1] : o.v[1])) & 0xffff;
    const uint64_t hi =
        ((o.v[0] >> 16) + (sub ? 0 - (o.v[1] >> 16) : o.v[1] >> 16)) & 0xffff;
    return Defined(lo | hi << 16);
  }
  // Wrapping: the low bits of the 64-bit sum are the same for both signs.
  return Defined(Low(sub ? o.v[0] - o.v[1] : o.v[0] + o.v[1], TypeWidth(v.type)));
}

// The full product of a and b, exact.
inline i128 Product(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  if (IsSigned(v.type)) {
    return static_cast<i128>(SignExtend(o.v[0], w)) * SignExtend(o.v[1], w);
  }
  return static_cast<i128>(static_cast<u128>(Low(o.v[0], w)) * Low(o.v[1], w));
}

// mul/mad's `.hi`, `.lo` or `.wide` part of the product t.
inline u128 ProductPart(const Variant& v, i128 t) {
  const int n = TypeWidth(v.type);
  switch (v.mul_mode) {
    case MulMode::kHi: return Low128(static_cast<u128>(t >> n), n);
    case MulMode::kWide: return Low128(static_cast<u128>(t), 2 * n);
    default: return Low128(static_cast<u128>(t), n);
  }
}

Result EvalMul(const Variant& v, const Operands& o) {
  return Defined(static_cast<uint64_t>(ProductPart(v, Product(v, o))));
}

Result EvalMad(const Variant& v, const Operands& o) {
  const u128 part = ProductPart(v, Product(v, o));
  if (v.cc) {  // mad.hi.cc, mad.lo.cc: part + c, carry out
    return AddCarry(static_cast<uint64_t>(part), o.v[2], 0,
                    TypeWidth(v.type));
  }
  if (v.sat) {  // mad.hi.sat.s32: the s32 high part plus c, clamped.
    const i128 exact = SignExtend(static_cast<uint64_t>(part), 32) +
                       static_cast<i128>(SignExtend(o.v[2], 32));
    return Defined(Low(ClampS32(exact), 32));
  }
  const int width = ResultWidth(v);
  return Defined(static_cast<uint64_t>(Low128(part + o.v[2], width)));
}

// madc: the `.hi`/`.lo` part of the product + c + cf, carry out with `.cc`.
Result EvalMadc(const Variant& v, const Operands& o) {
  const u128 part = ProductPart(v, Product(v, o));
  return CarryIf(v.cc, AddCarry(static_cast<uint64_t>(part), o.v[2], o.v[3],
                                TypeWidth(v.type)));
}

// mul24/mad24: the 48-bit product of the low 24 bits, .hi = t<47..16>,
// .lo = t<31..0> (see spec-notes on the ignored upper bits).
inline uint64_t Mul24Part(const Variant& v, const Operands& o) {
  const bool s = v.type == Type::kS32;
  const int64_t a = s ? SignExtend(o.v[0], 24) : int64_t(Low(o.v[0], 24));
  const int64_t b = s ? SignExtend(o.v[1], 24) : int64_t(Low(o.v[1], 24));
  const int64_t t = a * b;
  return Low(static_cast<uint64_t>(v.mul_mode == MulMode::kHi ? t >> 16 : t),
             32);
}

Result EvalMul24(const Variant& v, const Operands& o) {
  return Defined(Mul24Part(v, o));
}

Result EvalMad24(const Variant& v, const Operands& o) {
  const uint64_t part = Mul24Part(v, o);
  if (v.sat) {
    return Defined(
        Low(ClampS32(static_cast<i128>(SignExtend(part, 32)) +
                     SignExtend(o.v[2], 32)),
            32));
  }
  return Defined(Low(part + o.v[2], 32));
}

Result EvalSad(const Variant& v, const Operands& o) {
  const int64_t a = Value(o.v[0], v.type), b = Value(o.v[1], v.type);
  const bool s = IsSigned(v.type);
  const bool a_less = s ? a < b : static_cast<uint64_t>(a) < static_cast<uint64_t>(b);
  const uint64_t diff = a_less ? static_cast<uint64_t>(b) - static_cast<uint64_t>(a)
                               : static_cast<uint64_t>(a) - static_cast<uint64_t>(b);
  return Defined(Low(o.v[2] + diff, TypeWidth(v.type)));
}

Result EvalDivRem(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const bool rem = v.family == Family::kRem;
  if (Low(o.v[1], w) == 0) return {0, Undefined::kDivisionByZero};
  if (!IsSigned(v.type)) {
    const uint64_t a = Low(o.v[0], w), b = Low(o.v[1], w);
    return Defined(rem ? a % b : a / b);
  }
  const i128 a = SignExtend(o.v[0], w), b = SignExtend(o.v[1], w);
  const i128 q = a / b, r = a % b;  // exact in 128 bits: no MIN/-1 trap
  if (!rem) return Defined(Low(static_cast<uint64_t>(q), w));
  // Flooring division would give r + b where r != 0 and the signs differ.
  const bool rounding_matters = r != 0 && ((a < 0) != (b < 0));
  return {Low(static_cast<uint64_t>(r), w),
          rounding_matters ? Undefined::kRemainderSign : Undefined::kDefined};
}

Result EvalAbsNeg(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const int64_t a = SignExtend(o.v[0], w);
  const bool negate = v.family == Family::kNeg || a < 0;
  return Defined(Low(negate ? 0 - static_cast<uint64_t>(a) : a, w));
}

Result EvalMinMax(const Variant& v, const Operands& o) {
  const bool is_max = v.family == Family::kMax;
  if (IsPacked(v.type)) {
    const bool relu = v.relu;
    return Defined(PerHalf(o.v[0], o.v[1], v.type,
                           [is_max, relu](int64_t a, int64_t b) {
                             const int64_t r = is_max ? std::max(a, b)
                                                      : std::min(a, b);
                             return relu ? std::max<int64_t>(r, 0) : r;
                           }));
  }
  const int w = TypeWidth(v.type);
  if (IsSigned(v.type)) {
    const int64_t a = SignExtend(o.v[0], w), b = SignExtend(o.v[1], w);
    int64_t r = is_max ? std::max(a, b) : std::min(a, b);
    if (v.relu) r = std::max<int64_t>(r, 0);
    return Defined(Low(r, w));
  }
  const uint64_t a = Low(o.v[0], w), b = Low(o.v[1], w);
  return Defined(is_max ? std::max(a, b) : std::min(a, b));
}

Result EvalPopc(const Variant& v, const Operands& o) {
  return Defined(std::popcount(Low(o.v[0], TypeWidth(v.type))));
}

Result EvalClz(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  return Defined(std::countl_zero(Low(o.v[0], w)) - (64 - w));
}

Result EvalBfind(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  uint64_t a = Low(o.v[0], w);
  if (IsSigned(v.type) && (a >> (w - 1)) != 0) a = Low(~a, w);
  if (a == 0) return Defined(0xffffffff);
  const int msb_pos = 63 - std::countl_zero(a);
  return Defined(v.shiftamt ? (w - 1) - msb_pos : msb_pos);
}

// The position of the `count`-th (0-based) set bit of `mask`, lowest first.
inline int NthSetBitFromLow(uint32_t mask, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) mask &= mask - 1;
  return std::countr_zero(mask);
}

// The position of the `count`-th (0-based) set bit of `mask`, highest first.
inline int NthSetBitFromHigh(uint32_t mask, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) mask &= ~(0x80000000u >> std::countl_zero(mask));
  return 31 - std::countl_zero(mask);
}

Result EvalFns(const Variant&, const Operands& o) {
  const uint32_t mask = static_cast<uint32_t>(o.v[0]);
  const uint32_t base = static_cast<uint32_t>(o.v[1]);
  const int32_t offset = static_cast<int32_t>(o.v[2]);
  if (base > 31) return {0xffffffff, Undefined::kFnsBaseOutOfRange};
  if (offset == 0) return Defined(((mask >> base) & 1) ? base : 0xffffffff);
  // Bits from base upwards (offset > 0) or downwards (offset < 0).
  const uint32_t count = offset > 0 ? offset - 1u : ~static_cast<uint32_t>(offset);
  const uint32_t eligible =
      offset > 0 ? mask & (~0u << base)
                 : mask & static_cast<uint32_t>((uint64_t{2} << base) - 1);
  if (static_cast<uint32_t>(std::popcount(eligible)) <= count) {
    return Defined(0xffffffff);
  }
  return Defined(offset > 0 ? NthSetBitFromLow(eligible, count)
                            : NthSetBitFromHigh(eligible, count));
}

Result EvalBrev(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  return Defined(ReverseBits64(o.v[0]) >> (64 - w));
}

Result EvalBfe(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const int msb = w - 1;
  const uint64_t a = Low(o.v[0], w);
  const int pos = static_cast<int>(o.v[1] & 0xff);
  const int len = static_cast<int>(o.v[2] & 0xff);
  const bool sbit = IsSigned(v.type) && len != 0 &&
                    ((a >> std::min(pos + len - 1, msb)) & 1) != 0;
  // Bits 0..n-1 come from a[pos..], the rest are the sign bit.
  const int n = pos > msb ? 0 : std::min(len, w - pos);
  const uint64_t field = n == 0 ? 0 : Low(a >> pos, n);
  const uint64_t fill = sbit ? ~LowMask(n) : 0;
  return Defined(Low(field | fill, w));
}

Result EvalBfi(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const uint64_t a = Low(o.v[0], w), b = Low(o.v[1], w);
  const int pos = static_cast<int>(o.v[2] & 0xff);
  const int len = static_cast<int>(o.v[3] & 0xff);
  if (pos >= w || len == 0) return Defined(b);
  const uint64_t field_mask = LowMask(std::min(len, w - pos)) << pos;
  return Defined((b & ~field_mask) | ((a << pos) & field_mask));
}

Result EvalBmsk(const Variant& v, const Operands& o) {
  const uint32_t a = static_cast<uint32_t>(o.v[0]);
  const uint32_t b = static_cast<uint32_t>(o.v[1]);
  const bool clamp = v.shift_mode == ShiftMode::kClamp;
  const uint32_t a1 = a & 0x1f, b1 = b & 0x1f;
  if (clamp && a >= 32) return Defined(0);  // mask0 = 0
  const uint32_t mask0 = ~0u << a1;
  const bool mask1_zero = a1 + b1 >= 32 || (clamp && b >= 32);
  const uint32_t mask1 =
      mask1_zero ? 0 : (b1 == 0 ? ~0u : ~0u << (a1 + b1));
  return Defined(mask0 & ~mask1);
}

Result EvalSzext(const Variant& v, const Operands& o) {
  const uint32_t a = static_cast<uint32_t>(o.v[0]);
  const uint32_t b = static_cast<uint32_t>(o.v[1]);
  if (b >= 32 && v.shift_mode == ShiftMode::kClamp) return Defined(a);
  const uint32_t n = b & 0x1f;
  if (n == 0) return Defined(0);
  const uint32_t keep = (1u << n) - 1;
  const bool negative = v.type == Type::kS32 && ((a >> (n - 1)) & 1);
  return Defined((a & keep) | (negative ? ~keep : 0));
}

// Byte i of x as a signed or unsigned value.
inline int64_t Byte(uint64_t x, int i, bool s) {
  const uint64_t b = (x >> (8 * i)) & 0xff;
  return s ? SignExtend(b, 8) : static_cast<int64_t>(b);
}

Result EvalDp4a(const Variant& v, const Operands& o) {
  const bool sa = IsSigned(v.atype), sb = IsSigned(v.btype);
  int64_t acc = static_cast<int64_t>(o.v[2]);
  for (int i = 0; i < 4; ++i) acc += Byte(o.v[0], i, sa) * Byte(o.v[1], i, sb);
  return Defined(Low(static_cast<uint64_t>(acc), 32));
}

Result EvalDp2a(const Variant& v, const Operands& o) {
  const bool sa = IsSigned(v.atype), sb = IsSigned(v.btype);
  const int select = v.mul_mode == MulMode::kLo ? 0 : 2;
  int64_t acc = static_cast<int64_t>(o.v[2]);
  for (int i = 0; i < 2; ++i) {
    const uint64_t half = (o.v[0] >> (16 * i)) & 0xffff;
    const int64_t a = sa ? SignExtend(half, 16) : static_cast<int64_t>(half);
    acc += a * Byte(o.v[1], select + i, sb);
  }
  return Defined(Low(static_cast<uint64_t>(acc), 32));
}

Result EvalShf(const Variant& v, const Operands& o) {
  const uint32_t c = static_cast<uint32_t>(o.v[2]);
  const uint32_t n = v.shift_mode == ShiftMode::kClamp ? std::min(c, 32u) : c & 0x1f;
  const uint64_t ba = (Low(o.v[1], 32) << 32) | Low(o.v[0], 32);
  const uint64_t shifted =
      v.direction == Direction::kLeft ? (ba << n) >> 32 : ba >> n;
  return Defined(Low(shifted, 32));
}

// ---------------------------------------------------------------------------
// Logic and shift (PTX ISA 9.7.8) and prmt (9.7.9.7)
// ---------------------------------------------------------------------------

Result EvalLogic(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  switch (v.family) {
    case Family::kAnd: return Defined(Low(o.v[0] & o.v[1], w));
    case Family::kOr: return Defined(Low(o.v[0] | o.v[1], w));
    case Family::kXor: return Defined(Low(o.v[0] ^ o.v[1], w));
    case Family::kNot: return Defined(Low(~o.v[0], w));
    default: return Defined(Low(o.v[0], w) == 0 ? 1 : 0);  // cnot
  }
}

// Bit i of d is bit (a_i b_i c_i) of the LUT: the OR of the minterms the LUT
// selects, each the AND of a, b, c or their complements.
Result EvalLop3(const Variant&, const Operands& o) {
  const uint32_t a = static_cast<uint32_t>(o.v[0]);
  const uint32_t b = static_cast<uint32_t>(o.v[1]);
  const uint32_t c = static_cast<uint32_t>(o.v[2]);
  const uint32_t lut = o.v[3] & 0xff;
  uint32_t d = 0;
  for (uint32_t k = 0; k < 8; ++k) {
    if (((lut >> k) & 1) == 0) continue;
    d |= ((k & 4) ? a : ~a) & ((k & 2) ? b : ~b) & ((k & 1) ? c : ~c);
  }
  return Defined(d);
}

// shl and shr: amounts past the width are clamped to it (the unsigned b).
Result EvalShift(const Variant& v, const Operands& o) {
  const int w = TypeWidth(v.type);
  const uint32_t n = std::min<uint32_t>(static_cast<uint32_t>(o.v[1]), w);
  if (v.family == Family::kShl) return Defined(n == 64 ? 0 : Low(o.v[0] << n, w));
  if (IsSigned(v.type)) {
    return Defined(Low(static_cast<uint64_t>(SignExtend(o.v[0], w) >> std::min(n, 63u)), w));
  }
  return Defined(n == 64 ? 0 : Low(o.v[0], w) >> n);
}

// The bytes of d (b0 first) each mode picks from {b, a} for c[1:0].
constexpr std::array<std::array<std::array<uint8_t, 4>, 4>, kNumPrmtModes>
    kPrmtBytes = {{
        {},                                                       // generic
        {{{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}},  // f4e
        {{{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}},  // b4e
        {{{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}},  // rc8
        {{{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}},  // ecl
        {{{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}},  // ecr
        {{{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}},  // rc16
    }};

Result EvalPrmt(const Variant& v, const Operands& o) {
  const uint64_t source = (Low(o.v[1], 32) << 32) | Low(o.v[0], 32);
  const uint32_t c = static_cast<uint32_t>(o.v[2]);
  uint64_t d = 0;
  for (int i = 0; i < 4; ++i) {
    uint64_t byte;
    if (v.prmt_mode == PrmtMode::kNone) {
      const uint32_t ctl = (c >> (4 * i)) & 0xf;
      byte = (source >> (8 * (ctl & 7))) & 0xff;
      if (ctl & 8) byte = (byte & 0x80) ? 0xff : 0;  // replicate the sign
    } else {
      const int pick = kPrmtBytes[static_cast<int>(v.prmt_mode)][c & 3][i];
      byte = (source >> (8 * pick)) & 0xff;
    }
    d |= byte << (8 * i);
  }
  return Defined(d);
}

// ---------------------------------------------------------------------------
// Comparison and selection (PTX ISA 9.7.6) and integer cvt (9.7.9.21)
// ---------------------------------------------------------------------------

// setp's `p = BoolOp(t, c)`; the plain form is `p = t`.
bool CombinePredicate(BoolOp op, bool t, bool c) {
  switch (op) {
    case BoolOp::kAnd: return t && c;
    case BoolOp::kOr: return t || c;
    case BoolOp::kXor: return t != c;
    case BoolOp::kNone: break;
  }
  return t;
}

// setp: the predicate as 1 or 0. lt..ge compare as `.type` reads a and b
// (signed or unsigned), lo..hs are the unsigned ones (unsigned types only).
// Both read as 128-bit integers, so a u64 above 2^63 stays positive.
Result EvalSetp(const Variant& v, const Operands& o) {
  const i128 a = IsSigned(v.type) ? i128{Value(o.v[0], v.type)}
                                  : i128{Low(o.v[0], TypeWidth(v.type))};
  const i128 b = IsSigned(v.type) ? i128{Value(o.v[1], v.type)}
                                  : i128{Low(o.v[1], TypeWidth(v.type))};
  bool r = false;
  switch (v.cmp) {
    case Cmp::kEq: r = a == b; break;
    case Cmp::kNe: r = a != b; break;
    case Cmp::kLt:
    case Cmp::kLo: r = a < b; break;
    case Cmp::kLe:
    case Cmp::kLs: r = a <= b; break;
    case Cmp::kGt:
    case Cmp::kHi: r = a > b; break;
    case Cmp::kGe:
    case Cmp::kHs: r = a >= b; break;
    case Cmp::kNone: break;
  }
  return Defined(CombinePredicate(v.bool_op, r, o.v[2] & 1) ? 1 : 0);
}

// selp: c is a predicate (its low bit).
Result EvalSelp(const Variant& v, const Operands& o) {
  return Defined(Low((o.v[2] & 1) ? o.v[0] : o.v[1], TypeWidth(v.type)));
}

// slct: c is a signed 32-bit value.
Result EvalSlct(const Variant& v, const Operands& o) {
  const bool pick_a = SignExtend(o.v[2], 32) >= 0;
  return Defined(Low(pick_a ? o.v[0] : o.v[1], TypeWidth(v.type)));
}

// cvt between integer types: a read as atype (sign- or zero-extended), then
// cut to dtype's width, or with .sat clamped to dtype's range first.
Result EvalCvt(const Variant& v, const Operands& o) {
  const int64_t a = Value(o.v[0], v.atype);
  const int dw = TypeWidth(v.type);
  if (!v.sat) return Defined(Low(static_cast<uint64_t>(a), dw));
  const bool a_signed = IsSigned(v.atype);
  uint64_t r;
  if (IsSigned(v.type)) {
    const int64_t hi = static_cast<int64_t>(LowMask(dw - 1));
    const int64_t lo = -hi - 1;
    if (!a_signed && static_cast<uint64_t>(a) > static_cast<uint64_t>(hi)) {
      r = static_cast<uint64_t>(hi);  // an unsigned a above dtype's MAXINT
    } else {
      r = static_cast<uint64_t>(std::clamp(a, lo, hi));
    }
  } else {
    const uint64_t hi = LowMask(dw);
    if (a_signed && a < 0) {
      r = 0;
    } else {
      r = std::min(static_cast<uint64_t>(a), hi);
    }
  }
  return Defined(Low(r, dw));
}

// ---------------------------------------------------------------------------
// Scalar video instructions (PTX ISA 9.7.18.1)
// ---------------------------------------------------------------------------

// partSelectSignExtend: the selected byte, half-word or word of x, sign- or
// zero-extended by its type.
inline int64_t PartSelect(uint64_t x, Type t, Sel s) {
  const bool sign = IsSigned(t);
  switch (s) {
    case Sel::kNone: return sign ? SignExtend(x, 32) : int64_t(Low(x, 32));
    case Sel::kH0:
    case Sel::kH1: {
      const uint64_t h = (x >> (s == Sel::kH1 ? 16 : 0)) & 0xffff;
      return sign ? SignExtend(h, 16) : static_cast<int64_t>(h);
    }
    default:
      return Byte(x, static_cast<int>(s) - static_cast<int>(Sel::kB0), sign);
  }
}

inline i128 Clamp(i128 x, i128 lo, i128 hi) { return std::clamp(x, lo, hi); }

// optSaturate: clamps to the destination's (sub)word range.
inline i128 Saturate(i128 tmp, bool sign, Sel dsel) {
  const int bits = IsByteSel(dsel) ? 8 : IsHalfSel(dsel) ? 16 : 32;
  if (sign) {
    return Clamp(tmp, -(i128{1} << (bits - 1)), (i128{1} << (bits - 1)) - 1);
  }
  return Clamp(tmp, 0, (i128{1} << bits) - 1);
}

// optSecOp / optMerge, then the low 32 bits.
inline uint64_t Finish(const Variant& v, i128 tmp, uint64_t c_bits,
                       bool c_signed) {
  const i128 c = c_signed ? i128{SignExtend(c_bits, 32)} : i128{Low(c_bits, 32)};
  switch (v.secop) {
    case SecOp::kAdd: tmp = tmp + c; break;
    case SecOp::kMin: tmp = std::min(tmp, c); break;
    case SecOp::kMax: tmp = std::max(tmp, c); break;
    case SecOp::kNone: break;
  }
  const uint64_t t = static_cast<uint64_t>(tmp);
  const uint32_t cb = static_cast<uint32_t>(c_bits);
  switch (v.dsel) {
    case Sel::kH0: return (t & 0xffff) | (cb & 0xffff0000u);
    case Sel::kH1: return ((t & 0xffff) << 16) | (cb & 0x0000ffffu);
    case Sel::kB0: return (t & 0xff) | (cb & 0xffffff00u);
    case Sel::kB1: return ((t & 0xff) << 8) | (cb & 0xffff00ffu);
    case Sel::kB2: return ((t & 0xff) << 16) | (cb & 0xff00ffffu);
    case Sel::kB3: return ((t & 0xff) << 24) | (cb & 0x00ffffffu);
    case Sel::kNone: break;
  }
  return Low(t, 32);
}

Result EvalVideo(const Variant& v, const Operands& o) {
  const i128 ta = PartSelect(o.v[0], v.atype, v.asel);
  i128 tb = PartSelect(o.v[1], v.btype, v.bsel);
  i128 tmp;
  switch (v.family) {
    case Family::kVadd: tmp = ta + tb; break;
    case Family::kVsub: tmp = ta - tb; break;
    case Family::kVabsdiff: tmp = ta > tb ? ta - tb : tb - ta; break;
    case Family::kVmin: tmp = std::min(ta, tb); break;
    case Family::kVmax: tmp = std::max(ta, tb); break;
    default: {  // vshl, vshr: tb is the unsigned amount.
      tb = v.shift_mode == ShiftMode::kClamp ? std::min<i128>(tb, 32) : tb & 0x1f;
      const int n = static_cast<int>(tb);
      tmp = v.family == Family::kVshl ? ta * (i128{1} << n) : ta >> n;
    }
  }
  const bool sign = IsSigned(v.type);
  if (v.sat) tmp = Saturate(tmp, sign, v.dsel);
  return Defined(Finish(v, tmp, o.v[2], sign));
}

Result EvalVset(const Variant& v, const Operands& o) {
  const int64_t ta = PartSelect(o.v[0], v.atype, v.asel);
  const int64_t tb = PartSelect(o.v[1], v.btype, v.bsel);
  bool r = false;
  switch (v.cmp) {
    case Cmp::kEq: r = ta == tb; break;
    case Cmp::kNe: r = ta != tb; break;
    case Cmp::kLt: r = ta < tb; break;
    case Cmp::kLe: r = ta <= tb; break;
    case Cmp::kGt: r = ta > tb; break;
    case Cmp::kGe: r = ta >= tb; break;
    case Cmp::kLo:  // setp's unsigned comparisons: not vset's
    case Cmp::kLs:
    case Cmp::kHi:
    case Cmp::kHs:
    case Cmp::kNone: break;
  }
  return Defined(Finish(v, r ? 1 : 0, o.v[2], /*c_signed=*/false));
}

inline int ScaleShift(Scale s) {
  return s == Scale::kShr7 ? 7 : s == Scale::kShr15 ? 15 : 0;
}

// vmad as its pseudocode computes it (128-bit tmp, 64-bit result).
uint64_t VmadPseudocode(const Variant& v, int64_t ta, int64_t tb, uint32_t c) {
  const bool neg_product = v.vmad_form == VmadForm::kNegProduct;
  const bool neg_c = v.vmad_form == VmadForm::kNegC;
  const bool signed_final =
      IsSigned(v.atype) || IsSigned(v.btype) || neg_product || neg_c;
  u128 tmp = static_cast<u128>(static_cast<i128>(ta) * tb);
  int lsb = 0;
  if (v.vmad_form == VmadForm::kPlusOne) {
    lsb = 1;
  } else if (neg_product) {
    tmp = ~tmp, lsb = 1;
  } else if (neg_c) {
    c = ~c, lsb = 1;
  }
  const u128 c128 = signed_final ? static_cast<u128>(static_cast<i128>(
                                       static_cast<int32_t>(c)))
                                 : u128{c};
  tmp = tmp + c128 + lsb;
  const uint64_t result =
      static_cast<uint64_t>(static_cast<i128>(tmp) >> ScaleShift(v.scale));
  if (!v.sat) return Low(result, 32);
  if (signed_final) {
    return Low(static_cast<uint64_t>(
                   ClampS32(static_cast<int64_t>(result))),
               32);
  }
  return std::min<uint64_t>(result, 0xffffffff);
}

// vmad as its prose describes it: exact arithmetic, c signed like the
// intermediate result.
uint64_t VmadProse(const Variant& v, int64_t ta, int64_t tb, uint32_t c) {
  const bool neg_product = v.vmad_form == VmadForm::kNegProduct;
  const bool neg_c = v.vmad_form == VmadForm::kNegC;
  const bool signed_intermediate =
      IsSigned(v.atype) || IsSigned(v.btype) || neg_product;
  const bool signed_final = signed_intermediate || neg_c;
  i128 product = static_cast<i128>(ta) * tb;
  if (neg_product) product = -product;
  const i128 cv = signed_intermediate ? i128{static_cast<int32_t>(c)} : i128{c};
  i128 final_value = product + (neg_c ? -cv : cv) +
                     (v.vmad_form == VmadForm::kPlusOne ? 1 : 0);
  final_value >>= ScaleShift(v.scale);
  if (v.sat) {
    final_value = signed_final ? Clamp(final_value, INT32_MIN, INT32_MAX)
                               : Clamp(final_value, 0, UINT32_MAX);
  }
  return Low(static_cast<uint64_t>(final_value), 32);
}

Result EvalVmad(const Variant& v, const Operands& o) {
  const int64_t ta = PartSelect(o.v[0], v.atype, v.asel);
  const int64_t tb = PartSelect(o.v[1], v.btype, v.bsel);
  const uint32_t c = static_cast<uint32_t>(o.v[2]);
  const uint64_t pseudo = VmadPseudocode(v, ta, tb, c);
  // The readings can only differ with a negated c or a negated product.
  const bool may_differ = (v.vmad_form == VmadForm::kNegC ||
                           v.vmad_form == VmadForm::kNegProduct) &&
                          (v.sat || v.scale != Scale::kNone);
  if (may_differ && VmadProse(v, ta, tb, c) != pseudo) {
    return {pseudo, Undefined::kVmadAmbiguous};
  }
  return Defined(pseudo);
}

// ---------------------------------------------------------------------------
// SIMD video instructions (PTX ISA 9.7.18.2): per lane, then a merge with c
// or an accumulation into c. Lane values are exact (int32 holds any sum or
// difference of two 16-bit lanes); docs/spec-notes.md has the readings.
// ---------------------------------------------------------------------------

// extractAndSignExt: part `part` (a half-word or byte, `bits` wide) of the
// 64-bit {b, a}, sign- or zero-extended.
inline int32_t SimdPart(uint64_t ba, int part, int bits, bool sign) {
  const uint64_t x = (ba >> (bits * part)) & LowMask(bits);
  return sign ? static_cast<int32_t>(SignExtend(x, bits))
              : static_cast<int32_t>(x);
}

// The lane operation of a SIMD video family, a template argument so that
// each family's batch loop is specialised (a per-lane switch on the family
// would run per lane).
enum class SimdOp { kAdd, kSub, kAvrg, kAbsdiff, kMin, kMax, kSet };

// vset's comparison, branch-free: bit 0, 1, 2 of the accepted set stands
// for a < b, a == b, a > b.
constexpr uint32_t AcceptedOrders(Cmp cmp) {
  switch (cmp) {
    case Cmp::kEq:
      return 0b010;
    case Cmp::kNe:
      return 0b101;
    case Cmp::kLt:
      return 0b001;
    case Cmp::kLe:
      return 0b011;
    case Cmp::kGt:
      return 0b100;
    case Cmp::kGe:
      return 0b110;
    default:
      return 0;  // setp's lo..hs: not vset's
  }
}

// vavrg rounds half away from zero (`>>` of a negative sum is arithmetic,
// as PTX's shr.s32).
template <SimdOp kOp>
inline int32_t SimdLaneOp(uint32_t accepted, int32_t a, int32_t b) {
  switch (kOp) {
    case SimdOp::kAdd:
      return a + b;
    case SimdOp::kSub:
      return a - b;
    case SimdOp::kAvrg: {
      const int32_t sum = a + b;
      return sum >= 0 ? (sum + 1) >> 1 : sum >> 1;
    }
    case SimdOp::kAbsdiff:
      return a > b ? a - b : b - a;
    case SimdOp::kMin:
      return std::min(a, b);
    case SimdOp::kMax:
      return std::max(a, b);
    case SimdOp::kSet: {
      const int order = a < b ? 0 : a == b ? 1 : 2;
      return static_cast<int32_t>((accepted >> order) & 1);
    }
  }
  return 0;
}

// vadd2 .. vset2 (kLanes 2) and vadd4 .. vset4 (kLanes 4).
template <int kLanes, SimdOp kOp>
Result EvalSimd(const Variant& v, const Operands& o) {
  constexpr int kBits = 32 / kLanes;
  const uint64_t ba = (Low(o.v[1], 32) << 32) | Low(o.v[0], 32);
  const SimdSelector sel{kLanes, static_cast<uint32_t>(o.v[3])};
  const uint32_t c = static_cast<uint32_t>(o.v[2]);
  const uint32_t written = SimdMaskLanes(v.mask, kLanes);
  const uint32_t accepted = AcceptedOrders(v.cmp);
  const bool d_signed = IsSigned(v.type);  // vset: .u32-like, no dtype
  const bool a_signed = IsSigned(v.atype), b_signed = IsSigned(v.btype);
  const int32_t hi = d_signed ? (1 << (kBits - 1)) - 1 : (1 << kBits) - 1;
  const int32_t lo = d_signed ? -(1 << (kBits - 1)) : 0;
  uint32_t merged = 0;
  int64_t exact_sum = 0, lane_sum = 0;  // .add: the two readings
  for (int lane = 0; lane < kLanes; ++lane) {
    const int shift = kBits * lane;
    if (((written >> lane) & 1) == 0) {  // c's lane, unchanged
      merged |= c & static_cast<uint32_t>(LowMask(kBits) << shift);
      continue;
    }
    const int32_t a = SimdPart(ba, sel.AselPart(lane), kBits, a_signed);
    const int32_t b = SimdPart(ba, sel.BselPart(lane), kBits, b_signed);
    int32_t t = SimdLaneOp<kOp>(accepted, a, b);
    if (v.sat) t = std::clamp(t, lo, hi);
    const uint64_t cut = static_cast<uint32_t>(t) & LowMask(kBits);
    merged |= static_cast<uint32_t>(cut << shift);
    exact_sum += t;
    lane_sum += d_signed ? SignExtend(cut, kBits) : static_cast<int64_t>(cut);
  }
  if (v.secop != SecOp::kAdd) return Defined(merged);
  const uint32_t d = c + static_cast<uint32_t>(exact_sum);
  const bool same = d == c + static_cast<uint32_t>(lane_sum);
  return {d, same ? Undefined::kDefined : Undefined::kSimdAccumulateAmbiguous};
}

constexpr EvalFn EvalVadd2 = EvalSimd<2, SimdOp::kAdd>;
constexpr EvalFn EvalVsub2 = EvalSimd<2, SimdOp::kSub>;
constexpr EvalFn EvalVavrg2 = EvalSimd<2, SimdOp::kAvrg>;
constexpr EvalFn EvalVabsd2 = EvalSimd<2, SimdOp::kAbsdiff>;
constexpr EvalFn EvalVmin2 = EvalSimd<2, SimdOp::kMin>;
constexpr EvalFn EvalVmax2 = EvalSimd<2, SimdOp::kMax>;
constexpr EvalFn EvalVset2 = EvalSimd<2, SimdOp::kSet>;
constexpr EvalFn EvalVadd4 = EvalSimd<4, SimdOp::kAdd>;
constexpr EvalFn EvalVsub4 = EvalSimd<4, SimdOp::kSub>;
constexpr EvalFn EvalVavrg4 = EvalSimd<4, SimdOp::kAvrg>;
constexpr EvalFn EvalVabsd4 = EvalSimd<4, SimdOp::kAbsdiff>;
constexpr EvalFn EvalVmin4 = EvalSimd<4, SimdOp::kMin>;
constexpr EvalFn EvalVmax4 = EvalSimd<4, SimdOp::kMax>;
constexpr EvalFn EvalVset4 = EvalSimd<4, SimdOp::kSet>;

// ---------------------------------------------------------------------------
// Intel vISA SHL
// ---------------------------------------------------------------------------

Result EvalVisaShl(const Variant& v, const Operands& o) {
  const int dst_width = TypeWidth(v.type);
  const int n = static_cast<int>(o.v[1] & (dst_width == 64 ? 63 : 31));
  const int src_width = TypeWidth(v.atype);
  const i128 value = IsSigned(v.atype) ? i128{SignExtend(o.v[0], src_width)}
                                       : i128{Low(o.v[0], src_width)};
  if (!v.sat) {
    return Defined(Low(static_cast<uint64_t>(static_cast<u128>(value) << n),
                       dst_width));
  }
  // Exact: |value| < 2^64 and n <= 63, so |shifted| < 2^127.
  const i128 limit = i128{1} << 32;
  const i128 shifted = value * (i128{1} << n);
  const bool fits_33_bits = shifted >= -limit && shifted < limit;
  const i128 lo = IsSigned(v.type) ? -(i128{1} << (dst_width - 1)) : 0;
  const i128 hi = IsSigned(v.type) ? (i128{1} << (dst_width - 1)) - 1
                                   : (i128{1} << dst_width) - 1;
  const uint64_t bits =
      Low(static_cast<uint64_t>(Clamp(shifted, lo, hi)), dst_width);
  return {bits, fits_33_bits ? Undefined::kDefined : Undefined::kVisaSatOverflow};
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

// One evaluator per family, set by name: a family added to families.inc
// without one fails the static_assert below.
constexpr std::array<EvalFn, kNumFamilies> BuildEvaluators() {
  std::array<EvalFn, kNumFamilies> evaluators{};
  auto set = [&](Family f, EvalFn fn) { evaluators[static_cast<int>(f)] = fn; };
  set(Family::kAdd, EvalAddSub);
  set(Family::kSub, EvalAddSub);
  set(Family::kMul, EvalMul);
  set(Family::kMad, EvalMad);
  set(Family::kMul24, EvalMul24);
  set(Family::kMad24, EvalMad24);
  set(Family::kSad, EvalSad);
  set(Family::kDiv, EvalDivRem);
  set(Family::kRem, EvalDivRem);
  set(Family::kAbs, EvalAbsNeg);
  set(Family::kNeg, EvalAbsNeg);
  set(Family::kMin, EvalMinMax);
  set(Family::kMax, EvalMinMax);
  set(Family::kPopc, EvalPopc);
  set(Family::kClz, EvalClz);
  set(Family::kBfind, EvalBfind);
  set(Family::kFns, EvalFns);
  set(Family::kBrev, EvalBrev);
  set(Family::kBfe, EvalBfe);
  set(Family::kBfi, EvalBfi);
  set(Family::kBmsk, EvalBmsk);
  set(Family::kSzext, EvalSzext);
  set(Family::kDp4a, EvalDp4a);
  set(Family::kDp2a, EvalDp2a);
  set(Family::kShf, EvalShf);
  set(Family::kAnd, EvalLogic);
  set(Family::kOr, EvalLogic);
  set(Family::kXor, EvalLogic);
  set(Family::kNot, EvalLogic);
  set(Family::kCnot, EvalLogic);
  set(Family::kLop3, EvalLop3);
  set(Family::kShl, EvalShift);
  set(Family::kShr, EvalShift);
  set(Family::kPrmt, EvalPrmt);
  set(Family::kSetp, EvalSetp);
  set(Family::kSelp, EvalSelp);
  set(Family::kSlct, EvalSlct);
  set(Family::kCvt, EvalCvt);
  set(Family::kAddc, EvalAddc);
  set(Family::kSubc, EvalSubc);
  set(Family::kMadc, EvalMadc);
  set(Family::kVadd, EvalVideo);
  set(Family::kVsub, EvalVideo);
  set(Family::kVabsdiff, EvalVideo);
  set(Family::kVmin, EvalVideo);
  set(Family::kVmax, EvalVideo);
  set(Family::kVshl, EvalVideo);
  set(Family::kVshr, EvalVideo);
  set(Family::kVmad, EvalVmad);
  set(Family::kVset, EvalVset);
  set(Family::kVadd2, EvalVadd2);
  set(Family::kVsub2, EvalVsub2);
  set(Family::kVavrg2, EvalVavrg2);
  set(Family::kVabsdiff2, EvalVabsd2);
  set(Family::kVmin2, EvalVmin2);
  set(Family::kVmax2, EvalVmax2);
  set(Family::kVset2, EvalVset2);
  set(Family::kVadd4, EvalVadd4);
  set(Family::kVsub4, EvalVsub4);
  set(Family::kVavrg4, EvalVavrg4);
  set(Family::kVabsdiff4, EvalVabsd4);
  set(Family::kVmin4, EvalVmin4);
  set(Family::kVmax4, EvalVmax4);
  set(Family::kVset4, EvalVset4);
  set(Family::kVisaShl, EvalVisaShl);
  return evaluators;
}
constexpr std::array<EvalFn, kNumFamilies> kEvaluators = BuildEvaluators();
static_assert(std::ranges::none_of(kEvaluators,
                                   [](EvalFn f) { return f == nullptr; }),
              "every family needs an evaluator");

// The tight loop of EvaluateBatch, instantiated once per evaluator so that
// the evaluator is inlined and the variant's axes are loop-invariant.
template <EvalFn kEval>
void Loop(const Variant& variant, const Operands* in, Result* out, size_t n) {
  const Variant v = variant;  // a local copy: stores to `out` cannot alias it
  for (size_t i = 0; i < n; ++i) out[i] = kEval(v, in[i]);
}

using LoopFn = void (*)(const Variant&, const Operands*, Result*, size_t);

template <size_t... I>
constexpr std::array<LoopFn, kNumFamilies> MakeLoops(std::index_sequence<I...>) {
  return {&Loop<kEvaluators[I]>...};
}

// Batch loops for the commonest plain variants, with everything that depends
// only on the variant taken out of the loop. Each must equal Loop<Eval...>
// (OracleTest.BatchEqualsOneByOne checks every variant).
void LoopAddSub(const Variant& v, const Operands* in, Result* out, size_t n) {
  if (v.sat || v.cc || IsPacked(v.type)) return Loop<EvalAddSub>(v, in, out, n);
  const uint64_t mask = LowMask(TypeWidth(v.type));
  if (v.family == Family::kSub) {
    for (size_t i = 0; i < n; ++i) out[i] = Defined((in[i].v[0] - in[i].v[1]) & mask);
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = Defined((in[i].v[0] + in[i].v[1]) & mask);
  }
}

template <bool kMax>
void LoopMinMaxS32(const Operands* in, Result* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int32_t a = static_cast<int32_t>(in[i].v[0]);
    const int32_t b = static_cast<int32_t>(in[i].v[1]);
    out[i] = Defined(static_cast<uint32_t>(kMax ? std::max(a, b) : std::min(a, b)));
  }
}

template <bool kMax>
void LoopMinMaxU32(const Operands* in, Result* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t a = static_cast<uint32_t>(in[i].v[0]);
    const uint32_t b = static_cast<uint32_t>(in[i].v[1]);
    out[i] = Defined(kMax ? std::max(a, b) : std::min(a, b));
  }
}

void LoopMinMax(const Variant& v, const Operands* in, Result* out, size_t n) {
  const bool is_max = v.family == Family::kMax;
  if (v.relu || (v.type != Type::kS32 && v.type != Type::kU32)) {
    return Loop<EvalMinMax>(v, in, out, n);
  }
  if (v.type == Type::kS32) {
    return is_max ? LoopMinMaxS32<true>(in, out, n) : LoopMinMaxS32<false>(in, out, n);
  }
  return is_max ? LoopMinMaxU32<true>(in, out, n) : LoopMinMaxU32<false>(in, out, n);
}

template <bool kSigned>
void LoopBfe32(const Operands* in, Result* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t a = static_cast<uint32_t>(in[i].v[0]);
    const uint32_t pos = in[i].v[1] & 0xff, len = in[i].v[2] & 0xff;
    const uint32_t bits = pos > 31 ? 0 : std::min(len, 32 - pos);
    const uint64_t keep = (uint64_t{1} << bits) - 1;
    const uint64_t field = (a >> std::min(pos, 32u)) & keep;
    const bool sbit =
        kSigned && len != 0 && ((a >> std::min(pos + len - 1, 31u)) & 1);
    out[i] = Defined((field | (sbit ? ~keep : 0)) & 0xffffffff);
  }
}

void LoopBfe(const Variant& v, const Operands* in, Result* out, size_t n) {
  if (v.type == Type::kS32) return LoopBfe32<true>(in, out, n);
  if (v.type == Type::kU32) return LoopBfe32<false>(in, out, n);
  return Loop<EvalBfe>(v, in, out, n);
}

constexpr std::array<LoopFn, kNumFamilies> WithFastLoops(
    std::array<LoopFn, kNumFamilies> loops) {
  loops[static_cast<int>(Family::kAdd)] = LoopAddSub;
  loops[static_cast<int>(Family::kSub)] = LoopAddSub;
  loops[static_cast<int>(Family::kMin)] = LoopMinMax;
  loops[static_cast<int>(Family::kMax)] = LoopMinMax;
  loops[static_cast<int>(Family::kBfe)] = LoopBfe;
  return loops;
}

constexpr std::array<LoopFn, kNumFamilies> kLoops =
    WithFastLoops(MakeLoops(std::make_index_sequence<kNumFamilies>()));

}  // namespace

absl::string_view Describe(Undefined why) {
  switch (why) {
    case Undefined::kDefined: return "defined";
    case Undefined::kDivisionByZero:
      return "division by zero yields an unspecified, machine-specific value "
             "(PTX ISA 9.7.1.8)";
    case Undefined::kRemainderSign:
      return "remainder of negative operands is machine-dependent: truncating "
             "and flooring division disagree here (PTX ISA 9.7.1.9)";
    case Undefined::kFnsBaseOutOfRange:
      return "fns base must be <= 31, otherwise behavior is undefined "
             "(PTX ISA 9.7.1.17)";
    case Undefined::kVmadAmbiguous:
      return "vmad pseudocode and prose give different results here "
             "(docs/spec-notes.md)";
    case Undefined::kVisaSatOverflow:
      return "SHL.sat result not within 33 bits is undefined (vISA SHL notes)";
    case Undefined::kSimdAccumulateAmbiguous:
      return "SIMD video .add: the pseudocode (exact lane results) and the "
             "prose (lane-wide results) accumulate different sums here "
             "(PTX ISA 9.7.18.2, docs/spec-notes.md)";
  }
  return "unknown";
}

absl::string_view Token(Undefined why) {
  static constexpr std::array<absl::string_view, kNumUndefinedReasons> kTokens =
      {"defined",
       "division-by-zero",
       "remainder-sign",
       "fns-base",
       "vmad-ambiguous",
       "visa-sat-overflow",
       "simd-accumulate-ambiguous"};
  return kTokens[static_cast<int>(why)];
}

std::string ReplayLine(const Variant& v, const Operands& operands,
                       const Result& result) {
  return absl::StrCat("ptxdiff eval '", Spell(v), "' ",
                      absl::StrJoin(HexOperands(v, operands), " "),
                      " -> ", ResultText(v, result.bits, result.carry), " (",
                      Token(result.undefined), ")");
}

Result Evaluate(const Variant& v, const Operands& operands) {
  return kEvaluators[static_cast<int>(v.family)](v, operands);
}

void EvaluateBatch(const Variant& v, std::span<const Operands> operands,
                   std::span<Result> results) {
  kLoops[static_cast<int>(v.family)](v, operands.data(), results.data(),
                                     operands.size());
}

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
