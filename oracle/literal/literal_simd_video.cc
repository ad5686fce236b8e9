// The SIMD video instructions (PTX ISA 9.7.18.2), transcribed. See
// literal_simd_video.h for why it exists and SIMD_VIDEO_NOTES.md for every
// decision on an ambiguity. Quoted lines ("...") are the spec's own text.
//
// The Semantics block of vop2 (9.7.18.2.1), in full; vop4 (9.7.18.2.3) is the
// same with _4, four lanes, and S8/U8 bounds; vset2/vset4 (9.7.18.2.2/.4)
// replace the switch and the clamp by the comparison:
//
//   // extract pairs of half-words and sign- or zero-extend
//   // based on operand type
//   Va = extractAndSignExt_2( a, b, .asel, .atype );
//   Vb = extractAndSignExt_2( a, b, .bsel, .btype );
//   Vc = extractAndSignExt_2( c );
//
//   for (i=0; i<2; i++) {
//       switch ( vop2 ) {
//          case vadd2:             t[i] = Va[i] + Vb[i];
//          case vsub2:             t[i] = Va[i] - Vb[i];
//          case vavrg2:            if ( ( Va[i] + Vb[i] ) >= 0 ) {
//                                      t[i] = ( Va[i] + Vb[i] + 1 ) >> 1;
//                                  } else {
//                                      t[i] = ( Va[i] + Vb[i] ) >> 1;
//                                  }
//          case vabsdiff2:         t[i] = | Va[i] - Vb[i] |;
//          case vmin2:             t[i] = MIN( Va[i], Vb[i] );
//          case vmax2:             t[i] = MAX( Va[i], Vb[i] );
//       }
//       if (.sat) {
//           if ( .dtype == .s32 )  t[i] = CLAMP( t[i], S16_MAX, S16_MIN );
//           else                   t[i] = CLAMP( t[i], U16_MAX, U16_MIN );
//       }
//   }
//   // secondary accumulate or SIMD merge
//   mask = extractMaskBits( .mask );
//   if (.add) {
//       d = c;
//       for (i=0; i<2; i++) {  d += mask[i] ? t[i] : 0;  }
//   } else {
//       d = 0;
//       for (i=0; i<2; i++)  {  d |= mask[i] ? t[i] : Vc[i];  }
//   }

#include "oracle/literal/literal_simd_video.h"

#include <cstdint>

#include "isa/axes.h"
#include "oracle/literal/literal_common.h"

namespace ptxdiff {
inline namespace PTXDIFF_ORACLE_COPY {
namespace {

// Bits and integers as every literal transcription reads and writes them
// (literal_common.h). Every intermediate here fits easily (a lane value is
// at most 17 bits, the accumulated d at most 32 + 4 lanes of 17 bits).
using literal::Bit;
using literal::Field;
using literal::Integer;
using literal::Low;
using literal::Pow2;
using literal::SignedValue;
using literal::Value;
using literal::WithBit;

// S16_MAX, U8_MIN, ...
constexpr Integer kS8Max = 127, kS8Min = -128;
constexpr Integer kU8Max = 255, kU8Min = 0;
constexpr Integer kS16Max = 32767, kS16Min = -32768;
constexpr Integer kU16Max = 65535, kU16Min = 0;

Integer Min(Integer x, Integer y) { return x < y ? x : y; }  // MIN(x, y)
Integer Max(Integer x, Integer y) { return x > y ? x : y; }  // MAX(x, y)
Integer Abs(Integer x) { return x < 0 ? -x : x; }            // | x |

// CLAMP(x, MAX, MIN), argument order as the spec writes it.
Integer Clamp(Integer x, Integer max, Integer min) {
  if (x > max) return max;
  if (x < min) return min;
  return x;
}

// `x >> 1` on a mathematical integer.
// AMBIGUOUS: the spec does not say how `>>` treats a negative number. It is
// read as the arithmetic shift, floor(x / 2), as PTX's shr ("Signed shifts
// fill with the sign bit") and the scalar vshr ("Signed shift fills with the
// sign bit, unsigned shift fills with zero") shift. (C++20 defines >> on a
// negative signed integer the same way; the division below spells it out.)
Integer ShiftRightOne(Integer x) {
  Integer quotient = x / 2;                // rounds toward zero
  if (x < 0 && x % 2 != 0) quotient -= 1;  // ... so step down to the floor
  return quotient;
}

// ---------------------------------------------------------------------------
// The spec's helper functions. None has pseudocode of its own; each is built
// from the Description and the Syntax block.
// ---------------------------------------------------------------------------

// A vector of lane values: Va, Vb, Vc, t. Lanes at and above the
// instruction's lane count are unused.
struct Vector {
  Integer lane[4] = {0, 0, 0, 0};
};

// The 64-bit {b, a}: a in bits 31..0, b in bits 63..32, placed bit by bit.
// "Elements of each dual half-word source to the operation are selected from
//  any of the four half-words in the two source operands a and b"; "... from
//  any of the eight bytes in the two source operands a and b".
// AMBIGUOUS: the spec never numbers the four half-words (eight bytes). a's
// come first: the defaults ".asel defaults to .h10" and ".bsel defaults to
// .h32" (.b3210/.b7654) then read a's lanes for Va and b's for Vb, so the
// plain `vadd2 d, a, b, c` adds a to b lane by lane, and the numbering is the
// one prmt (9.7.9.7) spells out for its pair: "{b, a} = {{b7, b6, b5, b4},
// {b3, b2, b1, b0}}".
uint64_t SourcePair(uint32_t a, uint32_t b) {
  uint64_t ba = 0;
  for (int i = 0; i < 32; ++i) ba = WithBit(ba, i, Bit(a, i));
  for (int i = 0; i < 32; ++i) ba = WithBit(ba, 32 + i, Bit(b, i));
  return ba;
}

// The half-word (byte) index lane i selects, from a selector .hxy (.bxyzw)
// encoded one nibble per lane.
// AMBIGUOUS: in `.hxy` the first digit x is lane 1's index and y lane 0's
// (in `.bxyzw`, w is lane 0's). The spec lists digits high lane first
// everywhere it shows them: the masks .h10 and .b3210 name lanes 1,0 and
// 3,2,1,0, and the default .asel=.h10 only means "a's lanes in place" if the
// digit for lane 1 comes first.
int SelectedIndex(uint64_t selector, int i, int index_bits) {
  return static_cast<int>(Field(selector, 4 * i + index_bits - 1, 4 * i));
}

// Va = extractAndSignExt_2( a, b, .asel, .atype );
// "Form input vectors by extracting and sign- or zero-extending byte or
//  half-word values from the source operands, to form pairs of signed 17-bit
//  values."
// The selected half-word is extended by the type the call passes (.atype for
// Va, .btype for Vb), whichever of a and b it came from.
Vector ExtractAndSignExt_2(uint32_t a, uint32_t b, uint64_t sel,
                           bool type_is_signed) {
  const uint64_t ba = SourcePair(a, b);
  Vector v;
  for (int i = 0; i < 2; ++i) {
    // ".asel = .bsel = { .hxy, where x,y are from { 0, 1, 2, 3 } }": two bits.
    const int index = SelectedIndex(sel, i, /*index_bits=*/2);
    const uint64_t half_word = Field(ba, 16 * index + 15, 16 * index);
    v.lane[i] = Value(half_word, 16, type_is_signed);
  }
  return v;
}

// Va = extractAndSignExt_4( a, b, .asel, .atype );
Vector ExtractAndSignExt_4(uint32_t a, uint32_t b, uint64_t sel,
                           bool type_is_signed) {
  const uint64_t ba = SourcePair(a, b);
  Vector v;
  for (int i = 0; i < 4; ++i) {
    // ".asel = .bsel = .bxyzw, where x,y,z,w are from { 0, ..., 7 }": three
    // bits.
    const int index = SelectedIndex(sel, i, /*index_bits=*/3);
    const uint64_t byte = Field(ba, 8 * index + 7, 8 * index);
    v.lane[i] = Value(byte, 8, type_is_signed);
  }
  return v;
}

// Vc = extractAndSignExt_2( c );
// The one-argument form has no selector and no type: c's half-words in place,
// sign-extended as the function's name says. Only Vc[i]'s low 16 bits are
// ever used (the merge places them back into d), so the extension cannot
// change a result.
Vector ExtractAndSignExt_2(uint32_t c) {
  Vector v;
  for (int i = 0; i < 2; ++i) {
    v.lane[i] = SignedValue(Field(c, 16 * i + 15, 16 * i), 16);
  }
  return v;
}

// Vc = extractAndSignExt_4( c );
Vector ExtractAndSignExt_4(uint32_t c) {
  Vector v;
  for (int i = 0; i < 4; ++i) {
    v.lane[i] = SignedValue(Field(c, 8 * i + 7, 8 * i), 8);
  }
  return v;
}

// mask = extractMaskBits( .mask );
// mask[i] is whether lane i's digit appears in .mask (.h10, .h0, .b20, ...),
// which the caller has already encoded as bit i of mask_lanes.
struct Mask {
  bool lane[4] = {false, false, false, false};
};
Mask ExtractMaskBits(uint32_t mask_lanes, int lanes) {
  Mask mask;
  for (int i = 0; i < lanes; ++i) mask.lane[i] = Bit(mask_lanes, i) == 1;
  return mask;
}

// compare( Va[i], Vb[i], .cmp ), on the two lane values as numbers.
// ".cmp   = { .eq, .ne, .lt, .le, .gt, .ge };"
bool Compare(Integer x, Integer y, Cmp cmp) {
  switch (cmp) {
    case Cmp::kEq:
      return x == y;
    case Cmp::kNe:
      return x != y;
    case Cmp::kLt:
      return x < y;
    case Cmp::kLe:
      return x <= y;
    case Cmp::kGt:
      return x > y;
    case Cmp::kGe:
      return x >= y;
    case Cmp::kLo:  // setp's unsigned names; vset2/vset4 have eq .. ge only
    case Cmp::kLs:
    case Cmp::kHi:
    case Cmp::kHs:
    case Cmp::kNone:
      break;
  }
  return false;
}

// ---------------------------------------------------------------------------
// The instruction.
// ---------------------------------------------------------------------------

using Op = LiteralSimdOp::Op;

// The body of the per-lane switch, for one lane.
Integer PrimaryOperation(Op op, Integer va, Integer vb) {
  Integer t = 0;
  switch (op) {
    case Op::kAdd:  // "case vadd2:   t[i] = Va[i] + Vb[i];"
      t = va + vb;
      break;
    case Op::kSub:  // "case vsub2:   t[i] = Va[i] - Vb[i];"
      t = va - vb;
      break;
    case Op::kAvrg:
      // "case vavrg2:  if ( ( Va[i] + Vb[i] ) >= 0 ) {
      //                    t[i] = ( Va[i] + Vb[i] + 1 ) >> 1;
      //                } else {
      //                    t[i] = ( Va[i] + Vb[i] ) >> 1;
      //                }"
      // With >> as floor(x / 2), this rounds a half away from zero:
      // (3) -> 2, (-3) -> -2, (-1) -> -1.
      if ((va + vb) >= 0) {
        t = ShiftRightOne(va + vb + 1);
      } else {
        t = ShiftRightOne(va + vb);
      }
      break;
    case Op::kAbsdiff:  // "case vabsdiff2: t[i] = | Va[i] - Vb[i] |;"
      t = Abs(va - vb);
      break;
    case Op::kMin:  // "case vmin2:   t[i] = MIN( Va[i], Vb[i] );"
      t = Min(va, vb);
      break;
    case Op::kMax:  // "case vmax2:   t[i] = MAX( Va[i], Vb[i] );"
      t = Max(va, vb);
      break;
    case Op::kSet:  // not reached: vset's loop body is the comparison
      break;
  }
  return t;
}

// "if (.sat) {
//      if ( .dtype == .s32 )  t[i] = CLAMP( t[i], S16_MAX, S16_MIN );
//      else                   t[i] = CLAMP( t[i], U16_MAX, U16_MIN );
//  }"  (vop4: S8_MAX, S8_MIN, U8_MAX, U8_MIN)
// The clamp reads dtype only: with mixed atype/btype the exact t[i] (which
// may be negative under .u32 or above S16_MAX under .s32) is clamped to
// dtype's lane range.
Integer OptClamp(Integer t, bool sat, bool dtype_is_signed, int lanes) {
  if (!sat) return t;
  if (lanes == 2) {
    if (dtype_is_signed) return Clamp(t, kS16Max, kS16Min);
    return Clamp(t, kU16Max, kU16Min);
  }
  if (dtype_is_signed) return Clamp(t, kS8Max, kS8Min);
  return Clamp(t, kU8Max, kU8Min);
}

// The bits of `value`, written into lane i of an otherwise zero 32-bit
// vector of `lanes` lanes.
// AMBIGUOUS: the merge line `d |= mask[i] ? t[i] : Vc[i];` read literally ORs
// the whole integer t[i] (sign-extended, 17 bits) into bit 0 of d for every
// lane. The Description fixes what it means: "For half-word positions
// indicated in mask, the selected half-word results are copied into
// destination d. For all other positions, the corresponding half-word from
// source operand c is copied to d." So lane i's low 16 (8) bits go to d's
// half-word (byte) i, and a result that does not fit (no .sat) keeps only its
// low bits: "The source and destination operands are all 32-bit registers."
uint64_t IntoLane(Integer value, int i, int lanes) {
  const int width = 32 / lanes;
  const uint64_t bits = Low(value, width);
  uint64_t placed = 0;
  for (int j = 0; j < width; ++j) {
    placed = WithBit(placed, width * i + j, Bit(bits, j));
  }
  return placed;
}

}  // namespace

uint32_t LiteralSimdVideo(const LiteralSimdOp& op, uint32_t a, uint32_t b,
                          uint32_t c, uint32_t sel) {
  const int lanes = op.lanes;  // 2 or 4

  // The selectors: asel in sel's low half, bsel in its high half
  // (literal_simd_video.h).
  const uint64_t asel = lanes == 2 ? Field(sel, 7, 0) : Field(sel, 15, 0);
  const uint64_t bsel = lanes == 2 ? Field(sel, 15, 8) : Field(sel, 31, 16);

  // "// extract pairs of half-words and sign- or zero-extend
  //  // based on operand type
  //  Va = extractAndSignExt_2( a, b, .asel, .atype );
  //  Vb = extractAndSignExt_2( a, b, .bsel, .btype );
  //  Vc = extractAndSignExt_2( c );"
  // ("// extract quads of bytes ..." and extractAndSignExt_4 for vop4/vset4.)
  Vector Va, Vb, Vc;
  if (lanes == 2) {
    Va = ExtractAndSignExt_2(a, b, asel, op.a_signed);
    Vb = ExtractAndSignExt_2(a, b, bsel, op.b_signed);
    Vc = ExtractAndSignExt_2(c);
  } else {
    Va = ExtractAndSignExt_4(a, b, asel, op.a_signed);
    Vb = ExtractAndSignExt_4(a, b, bsel, op.b_signed);
    Vc = ExtractAndSignExt_4(c);
  }

  Vector t;
  if (op.op == Op::kSet) {
    // vset2/vset4:
    // "for (i=0; i<2; i++) {
    //      t[i] = compare( Va[i], Vb[i], .cmp ) ? 1 : 0;
    //  }"
    // No clamp: vset has no .sat. "The intermediate result of the comparison
    // is always unsigned, and therefore the half-words of destination d and
    // operand c are also unsigned."
    for (int i = 0; i < lanes; i++) {
      t.lane[i] = Compare(Va.lane[i], Vb.lane[i], op.cmp) ? 1 : 0;
    }
  } else {
    // vop2/vop4: "for (i=0; i<2; i++) { switch ( vop2 ) { ... } if (.sat)
    // { ... } }"
    for (int i = 0; i < lanes; i++) {
      t.lane[i] = PrimaryOperation(op.op, Va.lane[i], Vb.lane[i]);
      t.lane[i] = OptClamp(t.lane[i], op.sat, op.d_signed, lanes);
    }
  }

  // "// secondary accumulate or SIMD merge
  //  mask = extractMaskBits( .mask );"
  const Mask mask = ExtractMaskBits(op.mask_lanes, lanes);

  if (op.accumulate) {
    // "if (.add) {
    //      d = c;
    //      for (i=0; i<2; i++) {  d += mask[i] ? t[i] : 0;  }
    //  }"
    // "apply a scalar accumulate operation to reduce the intermediate SIMD
    //  results to a single scalar": d is one 32-bit number, c plus the sum of
    // the masked lanes' t[i]; unmasked lanes add nothing, and c is not split
    // into lanes.
    // AMBIGUOUS: t[i] is added as the exact intermediate (up to 17 bits, and
    // negative when the operation gives a negative number, whatever dtype
    // is), not as the lane-wide "half-word result" the Description's "the
    // selected half-word results are added to operand c" might suggest; the
    // pseudocode adds t[i], and the overview calls what is reduced "the
    // intermediate SIMD results".
    // c is read as a number of dtype's signedness ("The type of each operand
    // (.u32 or .s32) is specified in the instruction type"; for vset "operand
    // c [is] also unsigned"); since only d's low 32 bits are written, the
    // choice cannot change the result.
    Integer d = Value(c, 32, op.op == Op::kSet ? false : op.d_signed);
    for (int i = 0; i < lanes; i++) {
      d += mask.lane[i] ? t.lane[i] : 0;
    }
    // "The source and destination operands are all 32-bit registers": the
    // sum wraps; there is no clamp (.sat is not allowed with .add).
    return static_cast<uint32_t>(Low(d, 32));
  }

  // "} else {
  //      d = 0;
  //      for (i=0; i<2; i++)  {  d |= mask[i] ? t[i] : Vc[i];  }
  //  }"
  // AMBIGUOUS (vset2/vset4): their Description says "For all other positions,
  // the corresponding half-word [byte] from source operand b is copied to d",
  // their pseudocode `Vc[i]`; the pseudocode, the vop2/vop4 Description
  // ("from source operand c") and the syntax (c is an operand only for this)
  // agree on c.
  uint64_t d = 0;
  for (int i = 0; i < lanes; i++) {
    d |= IntoLane(mask.lane[i] ? t.lane[i] : Vc.lane[i], i, lanes);
  }
  return static_cast<uint32_t>(d);
}

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
