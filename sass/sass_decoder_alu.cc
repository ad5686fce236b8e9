#include "sass/sass_decoder_internal.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "sass/sass_instruction.h"

namespace ptxdiff {
namespace sass_decoder_internal {
namespace {

// The per-operation decoders of ALU encodings: each reads its sources and
// its modifier fields.
using AluDecoder = void (*)(Bits&, Reader&, Decoding&, int form);

void DecodeMov(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  if (!bits.Expect(72, 4, 0xf)) d.Refuse("MOV with a lane mask");
}

void DecodeSel(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  d.insn.psrc[0] = bits.Pred(87, 90, d.insn.uniform);
}

void DecodeIsetp(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, false);
  insn.psrc[0] = bits.Pred(68, 71, insn.uniform);  // .EX: the low compare
  insn.psrc[1] = bits.Pred(87, 90, insn.uniform);  // combined by set_op
  insn.extended = bits.Flag(72);
  insn.is_signed = bits.Flag(73);
  insn.set_op = static_cast<int>(bits.Take(74, 2));
  insn.compare = static_cast<SassCompare>(bits.Take(76, 3));
  insn.pdst = {static_cast<int>(bits.Take(81, 3)),
               static_cast<int>(bits.Take(84, 3))};
  insn.pdst_uniform = insn.uniform;
  if (insn.set_op == 3) d.Refuse("ISETP set operation 3");
  if (!insn.extended) RequireTrue(insn.psrc[0], d, "ISETP's low compare");
}

// FSETP: P = (a fcmp b) set_op q, a and b f32s with their magnitude and
// negation flags. ptxas's 16-bit division tests its divisor's magnitude
// with it (FSETP.GEU.AND P1, PT, |R6|, 1.17549435e-38, PT). .FTZ (bit 80),
// a second predicate destination and a destination register are not read.
void DecodeFsetp(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, false);
  r.FloatModifiers();
  insn.set_op = static_cast<int>(bits.Take(74, 2));
  insn.float_compare = static_cast<SassFloatCompare>(bits.Take(76, 4));
  insn.pdst = {static_cast<int>(bits.Take(81, 3)),
               static_cast<int>(bits.Take(84, 3))};
  insn.psrc[1] = bits.Pred(87, 90);  // combined by set_op
  if (insn.dst != 0) d.Refuse("FSETP with a destination register");
  insn.dst = kSassRz;
  if (insn.set_op == 3) d.Refuse("FSETP set operation 3");
  if (bits.Flag(80)) d.Refuse("FSETP.FTZ");
  if (insn.pdst[1] != kSassPt) d.Refuse("FSETP's second predicate");
}

// FSEL d, a, b, p: d = p ? a : b, bits moved as they are. Sign and
// magnitude flags and .FTZ (bit 80) are not read.
void DecodeFsel(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  r.FloatModifiers();
  d.insn.psrc[0] = bits.Pred(87, 90);
  for (const SassOperand& o : {d.insn.src[0], d.insn.src[1]}) {
    if (o.abs || o.negate) d.Refuse("FSEL of a modified operand");
  }
  if (bits.Flag(80)) d.Refuse("FSEL.FTZ");
}

// FMUL (.RZ and the rest of the 2-bit rounding at 78): bits 84..86 are 4
// where nothing scales the product (another value, .DNZ, .SAT and .FTZ are
// not read).
void DecodeFmul(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  r.FloatModifiers();
  d.insn.round = static_cast<SassRound>(bits.Take(78, 2));
  if (bits.Take(84, 3) != 4) d.Refuse("FMUL with a scaled product");
  if (bits.Flag(76)) d.Refuse("FMUL.DNZ");
  if (bits.Flag(77)) d.Refuse("FMUL.SAT");
  if (bits.Flag(80)) d.Refuse("FMUL.FTZ");
}

// FADD of two registers (form 1: -0 + |b| in -O0 code's absolute value),
// rounded to nearest; other forms, roundings, .SAT and .FTZ are not read.
void DecodeFadd(Bits& bits, Reader& r, Decoding& d, int form) {
  if (form != 1) d.Refuse("FADD of other than two registers");
  r.AluSources(form, true, true, false);
  r.FloatModifiers();
  d.insn.round = static_cast<SassRound>(bits.Take(78, 2));
  if (d.insn.round != SassRound::kNearest) d.Refuse("FADD other than .RN");
  if (bits.Flag(77)) d.Refuse("FADD.SAT");
  if (bits.Flag(80)) d.Refuse("FADD.FTZ");
}

void DecodeIadd3(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, true);
  r.Negations();
  insn.extended = bits.Flag(74);
  insn.psrc[0] = bits.Pred(87, 90, insn.uniform);
  insn.psrc[1] = bits.Pred(77, 80, insn.uniform);
  insn.pdst = {static_cast<int>(bits.Take(81, 3)),
               static_cast<int>(bits.Take(84, 3))};
  insn.pdst_uniform = insn.uniform;
  if (!insn.extended) {
    RequireFalse(insn.psrc[0], d, "IADD3's carry-in");
    RequireFalse(insn.psrc[1], d, "IADD3's second carry-in");
  }
  if (insn.src[0].negate && insn.src[1].negate) {
    d.Refuse("IADD3 with a and b both negated");
  }
}

void DecodeLea(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, true);
  // A negated intermediate (bit 72): whether the negation applies to the
  // register or to the 64-bit {c:a} pair is a calibration question for
  // hardware (docs/sass-evaluator.md); not run until it is settled.
  if (bits.Flag(72)) d.Refuse("LEA with a negated operand");
  r.NegateB();
  insn.is_signed = bits.Flag(73);  // .SX32: the high word is a's sign
  insn.extended = bits.Flag(74);
  insn.shift = static_cast<int>(bits.Take(75, 5));
  insn.hi = bits.Flag(80);
  insn.pdst[0] = static_cast<int>(bits.Take(81, 3));
  insn.pdst_uniform = insn.uniform;
  insn.psrc[0] = bits.Pred(87, 90, insn.uniform);
  if (!insn.extended) RequireFalse(insn.psrc[0], d, "LEA's carry-in");
}

void DecodeLop3(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, true);
  insn.lut = static_cast<uint32_t>(bits.Take(72, 8));
  if (bits.Flag(80)) d.Refuse("LOP3.PAND");
  insn.pdst[0] = static_cast<int>(bits.Take(81, 3));
  insn.pdst_uniform = insn.uniform;
  insn.psrc[0] = bits.Pred(87, 90, insn.uniform);
  RequireFalse(insn.psrc[0], d, "LOP3's predicate source");
}

void DecodeOneSource(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
}

void DecodeIabsdiff(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, true);
  d.insn.is_signed = bits.Flag(73);
  d.insn.pdst[0] = static_cast<int>(bits.Take(81, 3));
  if (d.insn.pdst[0] != kSassPt) d.Refuse("IABSDIFF writing a predicate");
}

void DecodePrmt(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, true);
  d.insn.prmt_mode = static_cast<int>(bits.Take(72, 3));
  if (d.insn.prmt_mode == 7) d.Refuse("PRMT mode 7");
}

void DecodeShf(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, true);
  // 0: S64, 1: U64, 2: S32, 3: U32.
  const int type = static_cast<int>(bits.Take(73, 2));
  insn.is_signed = type % 2 == 0;
  insn.width = type < 2 ? 64 : 32;
  insn.wrap = bits.Flag(75);
  insn.right = bits.Flag(76);
  insn.hi = bits.Flag(80);
}

void DecodeSgxt(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  d.insn.is_signed = bits.Flag(73);
  d.insn.wrap = bits.Flag(75);
}

void DecodeBmsk(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  d.insn.wrap = bits.Flag(75);
}

void DecodeImad(Bits& bits, Reader& r, Decoding& d, int form) {
  SassInstruction& insn = d.insn;
  r.AluSources(form, true, true, true);
  r.NegateC();
  insn.is_signed = bits.Flag(73);
  insn.extended = bits.Flag(74);
  insn.pdst[0] = static_cast<int>(bits.Take(81, 3));
  insn.pdst_uniform = insn.uniform;
  insn.psrc[0] = bits.Pred(87, 90, insn.uniform);
  if (!insn.extended) RequireFalse(insn.psrc[0], d, "IMAD's carry-in");
  if (insn.op == SassOp::kImad && insn.pdst[0] != kSassPt) {
    d.Refuse("IMAD writing a carry");
  }
}

void DecodeIdp(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, true);
  d.insn.a_signed = bits.Flag(73);
  d.insn.b_signed = bits.Flag(74);
  d.insn.dp2a = bits.Flag(76);  // IDP.2A: a's halves times two of b's bytes
  d.insn.hi = bits.Flag(77);    // .HI: b's upper two bytes
}

void DecodeFlo(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  r.InvertB();
  d.insn.is_signed = bits.Flag(73);
  d.insn.shift_amount = bits.Flag(74);
  d.insn.pdst[0] = static_cast<int>(bits.Take(81, 3));
  if (d.insn.pdst[0] != kSassPt) d.Refuse("FLO writing a predicate");
}

void DecodePopc(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  r.InvertB();
}

void DecodeViadd(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  r.NegateB();  // VIADD R, R, -UR: as IADD3's b, bit 63
  d.insn.simd16 = bits.Flag(73);  // two 16-bit lanes (add.u16x2)
  if (d.insn.simd16 && d.insn.src[1].negate) {
    d.Refuse("VIADD of two 16-bit lanes with b negated");
  }
}

// I2I: ptxas's cvt.sat of an s32 to u8, s8, u16 or s16 (bits 76..77).
void DecodeI2i(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  const int type = static_cast<int>(bits.Take(76, 2));
  d.insn.width = type & 2 ? 16 : 8;
  d.insn.is_signed = type & 1;
}

// Opcode 0x21f: a predicate from the sign bits of a, b and c through an
// 8-bit table at 72 (index a:b:c), as LOP3's. ptxas tests add.sat.s32's
// overflow with it (c the wrapped sum: 0x02 positive, 0x40 negative; sub's
// 0x08 and 0x10). Its second predicate is not understood.
void DecodeSignLut(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, true);
  d.insn.lut = static_cast<uint32_t>(bits.Take(72, 8));
  d.insn.pdst = {static_cast<int>(bits.Take(81, 3)),
                 static_cast<int>(bits.Take(84, 3))};
  if (d.insn.pdst[1] != kSassPt) d.Refuse("op 0x21f's second predicate");
}

void DecodeVimnmx(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, true, true, false);
  d.insn.is_signed = bits.Flag(72);
  d.insn.simd16 = bits.Flag(73);       // two 16-bit lanes
  d.insn.relu = bits.Flag(76);         // min.relu, max.relu
  d.insn.psrc[0] = bits.Pred(87, 90);  // PT: the minimum
  d.insn.pdst = {static_cast<int>(bits.Take(81, 3)),
                 static_cast<int>(bits.Take(84, 3))};
  if (d.insn.pdst[0] != kSassPt || d.insn.pdst[1] != kSassPt) {
    d.Refuse("VIMNMX writing a predicate");
  }
}

// The float operations of ptxas's integer division (div, rem: the
// reciprocal of the divisor as an f32, rounded down to an integer estimate
// the integer code then corrects) and of set's 1.0f: an integer of 8 to 32
// bits (64 from a register pair: DecodeI2f64) as an f32, rounded as its
// 2-bit field says. Bits 75-76 are the destination's size (2: 32 bits),
// 84-85 the source's (0 to 2: 8 to 32 bits), 74 its sign, 60-61 which of
// its bytes or halves is read (-O0 code reads the half it copied high with
// PRMT 0x5410: .H1).
void DecodeI2f(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  d.insn.is_signed = bits.Flag(74);
  d.insn.round = static_cast<SassRound>(bits.Take(78, 2));
  const uint64_t source_size = bits.Take(84, 2);
  d.insn.width = 8 << source_size;
  d.insn.source_part = static_cast<int>(bits.Take(60, 2));
  if (bits.Take(75, 2) != 2 || source_size > 2) {
    d.Refuse("I2F other than an f32 of 8 to 32 bits");
  }
  if (d.insn.source_part * d.insn.width >= 32) {
    d.Refuse("I2F of a part past the register");
  }
}

// 64-bit division's (a subroutine ptxas calls): an unsigned 64-bit
// register pair rounded up to an f32.
void DecodeI2f64(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  d.insn.width = 64;
  d.insn.round = static_cast<SassRound>(bits.Take(78, 2));
  const bool f32_of_u64 =
      !bits.Flag(74) && bits.Take(75, 2) == 2 && bits.Take(84, 2) == 3;
  if (!f32_of_u64 || d.insn.round != SassRound::kUp) {
    d.Refuse("I2F other than .U64.RP to an f32");
  }
}

void DecodeMufu(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  if (bits.Take(74, 4) != 4) d.Refuse("MUFU other than .RCP");
}

// F2I.U32.TRUNC.NTZ, with .FTZ (bit 80: ptxas's 32-bit division) or
// without (nvJitLink's and ptxas's 16-bit division): a subnormal truncates
// to 0 either way.
void DecodeF2i(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  d.insn.ftz = bits.Flag(80);
  const bool u32_trunc = bits.Flag(76) && bits.Flag(77) &&
                         bits.Take(78, 2) == 3 && bits.Flag(85);
  if (!u32_trunc) d.Refuse("F2I other than .U32.TRUNC.NTZ");
}

// 64-bit division's: an f32 truncated to a u64 register pair.
void DecodeF2i64(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  d.insn.width = 64;
  const bool u64_trunc = bits.Flag(75) && bits.Flag(76) &&
                         bits.Take(78, 2) == 3 && bits.Flag(85);
  if (!u64_trunc) d.Refuse("F2I other than .U64.TRUNC");
  if (d.insn.dst % 2 != 0 || d.insn.dst + 1 >= kSassRz) {
    d.Refuse("F2I.U64 into an odd register pair");
  }
}

struct AluRow {
  uint16_t op9;  // bits 0..8
  SassOp op;
  bool uniform;
  AluDecoder decode;
};

// The ALU operations of ptxas 13.0's sm_90 integer code.
constexpr AluRow kAluRows[] = {
    {0x002, SassOp::kMov, false, DecodeMov},
    {0x007, SassOp::kSel, false, DecodeSel},
    {0x087, SassOp::kSel, true, DecodeSel},
    {0x00c, SassOp::kIsetp, false, DecodeIsetp},
    {0x08c, SassOp::kIsetp, true, DecodeIsetp},
    {0x00b, SassOp::kFsetp, false, DecodeFsetp},
    {0x010, SassOp::kIadd3, false, DecodeIadd3},
    {0x090, SassOp::kIadd3, true, DecodeIadd3},
    {0x011, SassOp::kLea, false, DecodeLea},
    {0x091, SassOp::kLea, true, DecodeLea},
    {0x012, SassOp::kLop3, false, DecodeLop3},
    {0x092, SassOp::kLop3, true, DecodeLop3},
    {0x013, SassOp::kIabs, false, DecodeOneSource},
    {0x014, SassOp::kIabsdiff, false, DecodeIabsdiff},
    {0x016, SassOp::kPrmt, false, DecodePrmt},
    {0x096, SassOp::kPrmt, true, DecodePrmt},
    {0x019, SassOp::kShf, false, DecodeShf},
    {0x099, SassOp::kShf, true, DecodeShf},
    {0x01a, SassOp::kSgxt, false, DecodeSgxt},
    {0x09a, SassOp::kSgxt, true, DecodeSgxt},
    {0x01b, SassOp::kBmsk, false, DecodeBmsk},
    {0x09b, SassOp::kBmsk, true, DecodeBmsk},
    {0x024, SassOp::kImad, false, DecodeImad},
    {0x0a4, SassOp::kImad, true, DecodeImad},
    {0x025, SassOp::kImadWide, false, DecodeImad},
    {0x0a5, SassOp::kImadWide, true, DecodeImad},
    {0x027, SassOp::kImadHi, false, DecodeImad},
    {0x0a7, SassOp::kImadHi, true, DecodeImad},
    {0x026, SassOp::kIdp4a, false, DecodeIdp},
    {0x100, SassOp::kFlo, false, DecodeFlo},
    {0x0bd, SassOp::kFlo, true, DecodeFlo},
    {0x101, SassOp::kBrev, false, DecodeOneSource},
    {0x0be, SassOp::kBrev, true, DecodeOneSource},
    {0x109, SassOp::kPopc, false, DecodePopc},
    {0x0bf, SassOp::kPopc, true, DecodePopc},
    {0x036, SassOp::kViadd, false, DecodeViadd},
    {0x048, SassOp::kVimnmx, false, DecodeVimnmx},
    {0x038, SassOp::kI2i, false, DecodeI2i},
    {0x01f, SassOp::kSignLut, false, DecodeSignLut},
    {0x106, SassOp::kI2f, false, DecodeI2f},
    {0x045, SassOp::kI2f, false, DecodeI2f},  // I2FP: 32-bit sources only
    {0x108, SassOp::kMufuRcp, false, DecodeMufu},
    {0x105, SassOp::kF2i, false, DecodeF2i},
    {0x008, SassOp::kFsel, false, DecodeFsel},
    {0x020, SassOp::kFmul, false, DecodeFmul},
    {0x021, SassOp::kFadd, false, DecodeFadd},
    {0x112, SassOp::kI2f, false, DecodeI2f64},
    {0x111, SassOp::kF2i, false, DecodeF2i64},
};

const AluRow* FindAluRow(uint32_t op9) {
  for (const AluRow& row : kAluRows) {
    if (row.op9 == op9) return &row;
  }
  return nullptr;
}

void DecodeAlu(const AluRow& row, Bits& bits, Decoding& d) {
  SassInstruction& insn = d.insn;
  insn.op = row.op;
  insn.uniform = row.uniform;
  const int form = static_cast<int>(bits.Take(9, 3));
  if (row.uniform && !bits.Flag(91)) d.Refuse("a uniform op without bit 91");
  insn.dst = bits.Reg(16);
  if (row.uniform && insn.dst > kSassUrz) d.Refuse("uniform register past URZ");
  Reader reader(bits, d);
  row.decode(bits, reader, d, form);
}

}  // namespace

bool DecodeAluOperation(uint32_t opcode, Bits& bits, Decoding& d) {
  // No other opcode's low 9 bits are one of theirs.
  if ((opcode >> 9) == 0) return false;
  const AluRow* row = FindAluRow(opcode & 0x1ff);
  if (row == nullptr) return false;
  DecodeAlu(*row, bits, d);
  return true;
}

}  // namespace sass_decoder_internal
}  // namespace ptxdiff
