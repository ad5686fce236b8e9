// The literal oracle, funnel shift, logic and shift (PTX ISA 9.7.8) and prmt
// (9.7.9.7). See literal_oracle.h for why it exists and docs/spec-notes.md for
// every decision on an ambiguity. Quoted lines ("...") are the spec's own text.

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
// Funnel shift (PTX ISA 9.7.8.7).
// ---------------------------------------------------------------------------

}  // namespace

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

namespace {

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
}  // namespace

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

namespace {

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
}  // namespace

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

namespace {

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
}  // namespace

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

}  // namespace literal
}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff
