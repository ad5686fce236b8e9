// The literal oracle, scalar video instructions (PTX ISA 9.7.18.1), and the
// SIMD ones' entry (9.7.18.2, transcribed in literal_simd_video.cc). See
// literal_oracle.h for why it exists and docs/spec-notes.md for every decision
// on an ambiguity. Quoted lines ("...") are the spec's own text.

#include <cstdint>

#include "isa/axes.h"
#include "isa/family_table.h"
#include "isa/variant.h"
#include "oracle/literal/literal_common.h"
#include "oracle/literal/literal_sections.h"
#include "oracle/literal/literal_simd_video.h"
#include "oracle/literal/simd_video_op.h"
#include "oracle/oracle.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace literal {
namespace {

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
}  // namespace

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

namespace {

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
}  // namespace

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

namespace {

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
}  // namespace

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
// SIMD video (PTX ISA 9.7.18.2).
// ---------------------------------------------------------------------------

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

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
