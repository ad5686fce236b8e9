#include "sass/sass_decoder.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ptxdiff {
namespace {

// Bits 105..127 are scheduling control (stall counts, barriers, reuse).
constexpr uint64_t kOperandMaskHi = (uint64_t{1} << 41) - 1;

// The two words of an encoding, and which of their bits have been read.
class Bits {
 public:
  Bits(uint64_t lo, uint64_t hi) : lo_(lo), hi_(hi & kOperandMaskHi) {}

  // Bits [bit, bit + width) as an unsigned number, marked read. A field
  // lies within one word, or spans the two (width <= 64).
  uint64_t Take(int bit, int width) {
    uint64_t value = 0;
    for (int i = 0; i < width; ++i) {
      const int b = bit + i;
      uint64_t& taken = b < 64 ? taken_lo_ : taken_hi_;
      const uint64_t word = b < 64 ? lo_ : hi_;
      taken |= uint64_t{1} << (b % 64);
      value |= ((word >> (b % 64)) & 1) << i;
    }
    return value;
  }
  bool Flag(int bit) { return Take(bit, 1) != 0; }
  int Reg(int bit) { return static_cast<int>(Take(bit, 8)); }
  SassPredicate Pred(int bit, int not_bit, bool uniform = false) {
    return {.index = static_cast<int>(Take(bit, 3)),
            .negated = Flag(not_bit),
            .uniform = uniform};
  }
  // Reads the field and requires `value` there.
  bool Expect(int bit, int width, uint64_t value) {
    return Take(bit, width) == value;
  }

  // The set bits nobody read, as "76, 80".
  std::string Unread() const {
    std::vector<int> bits;
    for (int b = 0; b < 105; ++b) {
      const uint64_t word = b < 64 ? lo_ : hi_;
      const uint64_t taken = b < 64 ? taken_lo_ : taken_hi_;
      if (((word & ~taken) >> (b % 64)) & 1) bits.push_back(b);
    }
    return absl::StrJoin(bits, ", ");
  }

 private:
  uint64_t lo_, hi_;
  uint64_t taken_lo_ = 0, taken_hi_ = 0;
};

// Which operands an ALU encoding's form bits (9..11) put where: a is
// always the register at 24; b and c are a register, an immediate, a
// constant-bank word or a uniform register at 32 or at 64.
enum Position : uint8_t { kAt24, kAt32, kAt64 };

struct Decoding {
  SassInstruction insn;
  std::string why_not;
  void Refuse(std::string why) {
    if (why_not.empty()) why_not = std::move(why);
  }
};

// Where each source's negation flag is, by the position it was read from
// (Volta's ALU layout); immediates have none.
int NegateBit(Position p) { return p == kAt24 ? 72 : p == kAt32 ? 63 : 75; }

class Reader {
 public:
  Reader(Bits& bits, Decoding& d) : bits_(bits), d_(d) {}

  // Reads the sources an ALU operation has (a, b, c) from form `form`.
  // Forms that put b at 64 need c; operations without c take forms 1, 4, 5
  // and 6 only.
  void AluSources(int form, bool has_a, bool has_b, bool has_c) {
    SassInstruction& insn = d_.insn;
    const bool u = insn.uniform;
    if (has_a) Register(0, kAt24, u);
    if (u && form != 1 && form != 2 && form != 4) {
      d_.Refuse(absl::StrCat("uniform form ", form));
      return;
    }
    switch (form) {
      case 1:
        if (has_b) Register(1, kAt32, u);
        if (has_c) Register(2, kAt64, u);
        return;
      case 4:
      case 5:
      case 6:
        if (has_b) Wide(1, form);
        if (has_c) Register(2, kAt64, u);
        return;
      case 2:
      case 3:
      case 7:
        if (!has_c) break;
        Register(1, kAt64, u);
        Wide(2, form == 2 ? 4 : form == 3 ? 5 : 6);
        return;
      default:
        break;
    }
    d_.Refuse(absl::StrCat("operand form ", form));
  }

  // The negation flag of each source that has one (IADD3).
  void Negations() {
    for (int i = 0; i < 3; ++i) {
      SassOperand& o = d_.insn.src[i];
      if (o.kind == SassOperand::kRegister || o.kind == SassOperand::kUniform ||
          o.kind == SassOperand::kConstant) {
        o.negate = bits_.Flag(NegateBit(position_[i]));
      }
    }
  }

  // c's negation flag, where c is a register (IMAD).
  void NegateC() {
    SassOperand& c = d_.insn.src[2];
    if (c.kind != SassOperand::kImmediate) {
      c.negate = bits_.Flag(NegateBit(position_[2]));
    }
  }

  // b's negation flag, where b is at 32 (LEA).
  void NegateB() {
    SassOperand& b = d_.insn.src[1];
    if (b.kind != SassOperand::kImmediate && position_[1] == kAt32) {
      b.negate = bits_.Flag(63);
    }
  }

  // b's bitwise-not flag, where b is at 32 (POPC, FLO).
  void InvertB() {
    SassOperand& b = d_.insn.src[1];
    if (b.kind != SassOperand::kImmediate && position_[1] == kAt32) {
      b.invert = bits_.Flag(63);
    }
  }

 private:
  void Register(int i, Position p, bool uniform) {
    SassOperand& o = d_.insn.src[i];
    o.kind = uniform ? SassOperand::kUniform : SassOperand::kRegister;
    o.reg = bits_.Reg(p == kAt24 ? 24 : p == kAt32 ? 32 : 64);
    position_[i] = p;
    if (uniform && o.reg > kSassUrz) d_.Refuse("uniform register past URZ");
  }

  // Source i at 32, as form 4 (immediate), 5 (constant) or 6 (uniform).
  void Wide(int i, int form) {
    SassOperand& o = d_.insn.src[i];
    position_[i] = kAt32;
    if (form == 4) {
      o.kind = SassOperand::kImmediate;
      o.value = static_cast<uint32_t>(bits_.Take(32, 32));
    } else if (form == 5) {
      o.kind = SassOperand::kConstant;
      if (bits_.Take(32, 6) != 0 || bits_.Flag(91)) {
        d_.Refuse("a bindless constant-bank operand");
      }
      o.value = static_cast<uint32_t>(bits_.Take(38, 16));
      o.bank = static_cast<int>(bits_.Take(54, 5));
    } else {
      o.kind = SassOperand::kUniform;
      o.reg = bits_.Reg(32);
      if (!bits_.Flag(91)) d_.Refuse("a uniform operand without bit 91");
      if (o.reg > kSassUrz) d_.Refuse("uniform register past URZ");
    }
  }

  Bits& bits_;
  Decoding& d_;
  Position position_[3] = {kAt24, kAt32, kAt64};
};

// A carry-in that is unused must read !PT (false).
void RequireFalse(const SassPredicate& p, Decoding& d, const char* what) {
  if (p.index != kSassPt || !p.negated) {
    d.Refuse(absl::StrCat(what, " is not !PT"));
  }
}

void RequireTrue(const SassPredicate& p, Decoding& d, const char* what) {
  if (p.index != kSassPt || p.negated) {
    d.Refuse(absl::StrCat(what, " is not PT"));
  }
}

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
  d.insn.simd16 = bits.Flag(73);  // two 16-bit lanes (add.u16x2)
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

void DecodeF2i(Bits& bits, Reader& r, Decoding& d, int form) {
  r.AluSources(form, false, true, false);
  const bool u32_trunc = bits.Flag(76) && bits.Flag(77) &&
                         bits.Take(78, 2) == 3 && bits.Flag(80) &&
                         bits.Flag(85);
  if (!u32_trunc) d.Refuse("F2I other than .FTZ.U32.TRUNC.NTZ");
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

// The memory, move and control instructions, by their whole 12-bit opcode.
void DecodePlop3(Bits& bits, Decoding& d, bool uniform) {
  SassInstruction& insn = d.insn;
  insn.op = SassOp::kPlop3;
  insn.uniform = uniform;
  insn.pdst_uniform = uniform;
  const uint32_t lut1 = static_cast<uint32_t>(bits.Take(16, 8));
  const uint32_t lut0 =
      static_cast<uint32_t>(bits.Take(64, 3) | bits.Take(72, 5) << 3);
  insn.lut = lut0 | lut1 << 8;
  insn.psrc[0] = bits.Pred(87, 90, uniform);
  insn.psrc[1] = bits.Pred(77, 80, uniform);
  insn.psrc[2] = bits.Pred(68, 71, uniform || bits.Flag(67));
  insn.pdst = {static_cast<int>(bits.Take(81, 3)),
               static_cast<int>(bits.Take(84, 3))};
  if (uniform) bits.Flag(91);
}

void DecodeLdc(const SassArchInfo& arch, Bits& bits, Decoding& d,
               bool uniform) {
  SassInstruction& insn = d.insn;
  insn.op = SassOp::kLdc;
  insn.uniform = uniform;
  insn.dst = bits.Reg(16);
  const int index = bits.Reg(24);
  insn.src[0] = {.kind = uniform ? SassOperand::kNone : SassOperand::kRegister,
                 .reg = index};
  if (uniform && index != 0) d.Refuse("ULDC with an index");
  insn.src[1] = {.kind = SassOperand::kConstant,
                 .value = static_cast<uint32_t>(bits.Take(38, 16)),
                 .bank = static_cast<int>(bits.Take(54, 5))};
  static constexpr int kBytes[8] = {1, 1, 2, 2, 4, 8, 16, 0};
  const int type = static_cast<int>(bits.Take(73, 3));
  insn.width = kBytes[type];
  insn.is_signed = type == 1 || type == 3;
  if (insn.width == 0 || insn.width == 16) d.Refuse("a constant load size");
  if (!uniform && bits.Take(78, 2) != 0) d.Refuse("an LDC addressing mode");
  if (bits.Flag(91)) d.Refuse("a bindless constant load");
}

// What STG and LDG lay out alike: the address pair [Ra.64+offset] (Ra at
// 24, the signed 24-bit offset at 40), the memory descriptor's uniform
// register at 64 (no address bits), the size at 73; the rest of the high
// word (64-bit addressing, the descriptor form and cache policy) exactly
// as ptxas writes it for ptxdiff's kernels (`fixed_hi`). Refuses naming
// `what` ("store", "load"); returns the size code.
uint64_t DecodeGlobalAccess(uint64_t fixed_hi, const char* what, Bits& bits,
                            Decoding& d) {
  SassInstruction& insn = d.insn;
  insn.src[0] = {.kind = SassOperand::kRegister, .reg = bits.Reg(24)};
  insn.src[2] = {.kind = SassOperand::kImmediate,
                 .value = static_cast<uint32_t>(bits.Take(40, 24))};
  bits.Reg(64);
  const uint64_t size = bits.Take(73, 3);
  static constexpr int kBytes[8] = {1, 1, 2, 2, 4, 8, 16, 0};
  insn.width = kBytes[size];
  const uint64_t hi = bits.Take(64, 41);
  if ((hi & ~(uint64_t{7} << 9) & ~uint64_t{0xff}) != fixed_hi) {
    d.Refuse(absl::StrCat("a ", what, " form not seen"));
  }
  if (insn.width == 0 || insn.width == 16) {
    d.Refuse(absl::StrCat("a ", what, " size"));
  }
  return size;
}

void DecodeStg(const SassArchInfo& arch, Bits& bits, Decoding& d) {
  d.insn.op = SassOp::kStg;
  d.insn.src[1] = {.kind = SassOperand::kRegister, .reg = bits.Reg(32)};
  DecodeGlobalAccess(arch.store_fixed_hi, "store", bits, d);
}

// LDG.E Rd, desc[URx][Ra.64+offset]: laid out as STG, the destination
// where STG has nothing (bits 16..23). Its size field also says whether
// an 8- or 16-bit load is sign-extended.
void DecodeLdg(const SassArchInfo& arch, Bits& bits, Decoding& d) {
  d.insn.op = SassOp::kLdg;
  d.insn.dst = bits.Reg(16);
  bits.Reg(32);  // unused (RZ)
  const uint64_t size = DecodeGlobalAccess(arch.load_fixed_hi, "load", bits, d);
  d.insn.is_signed = size == 1 || size == 3;
}

// The signed byte offset a branch encodes, relative to the next
// instruction: in 4-byte units, its low 8 bits at 16 and the rest at 34.
int64_t BranchOffset(Bits& bits, int high_width) {
  const uint64_t units = bits.Take(16, 8) | bits.Take(34, high_width) << 8;
  const int width = 8 + high_width;
  const int64_t value =
      static_cast<int64_t>(units << (64 - width)) >> (64 - width);
  return value * 4;
}

// An address in the loaded code (CALL.ABS, RET.ABS), as the linker writes
// it (R_CUDA_ABS55_16_34, cubin_link.h): in 4-byte units, its low 8 bits at
// 16 and the rest at 34..80.
int64_t AbsoluteAddress(Bits& bits) {
  return static_cast<int64_t>((bits.Take(16, 8) | bits.Take(34, 47) << 8) * 4);
}

void DecodeControl(uint32_t opcode, Bits& bits, Decoding& d) {
  SassInstruction& insn = d.insn;
  switch (opcode) {
    case 0x947:  // BRA
      insn.op = SassOp::kBra;
      insn.target = insn.pc + 16 + BranchOffset(bits, 48);
      // A second condition, and-ed with the guard (PT: none).
      insn.psrc[0] = bits.Pred(87, 90);
      return;
    case 0x945:  // BSSY
      insn.op = SassOp::kBssy;
      insn.barrier = static_cast<int>(bits.Take(16, 4));
      // Its offset at 34..63 in 4-byte units (the barrier takes 16..19).
      insn.target =
          insn.pc + 16 + (static_cast<int64_t>(bits.Take(34, 30) << 34) >> 32);
      insn.psrc[0] = bits.Pred(87, 90);
      RequireTrue(insn.psrc[0], d, "BSSY's condition");
      return;
    case 0x941:  // BSYNC
      insn.op = SassOp::kBsync;
      insn.barrier = static_cast<int>(bits.Take(16, 4));
      insn.psrc[0] = bits.Pred(87, 90);
      RequireTrue(insn.psrc[0], d, "BSYNC's condition");
      return;
    case 0x944:  // CALL.REL.NOINC: ptxas's subroutines (64-bit division)
    case 0x943:  // CALL.ABS.NOINC: nvJitLink's, at a linked address
      insn.op = SassOp::kCall;
      insn.absolute = opcode == 0x943;
      insn.target = insn.absolute ? AbsoluteAddress(bits)
                                  : insn.pc + 16 + BranchOffset(bits, 48);
      if (!bits.Flag(86)) d.Refuse("CALL without .NOINC");
      insn.psrc[0] = bits.Pred(87, 90);
      RequireTrue(insn.psrc[0], d, "CALL's condition");
      return;
    case 0x950:  // RET.REL.NODEC Ra: to the kernel's start + {Ra+1:Ra};
                 // with bit 85, RET.ABS.NODEC Ra: to {Ra+1:Ra} + address
      insn.op = SassOp::kRet;
      insn.src[0] = {.kind = SassOperand::kRegister, .reg = bits.Reg(24)};
      insn.absolute = bits.Flag(85);
      insn.target = insn.absolute ? AbsoluteAddress(bits)
                                  : insn.pc + 16 + BranchOffset(bits, 48);
      if (!bits.Flag(86)) d.Refuse("RET without .NODEC");
      insn.psrc[0] = bits.Pred(87, 90);
      RequireTrue(insn.psrc[0], d, "RET's condition");
      return;
    case 0x94d:  // EXIT
      insn.op = SassOp::kExit;
      insn.psrc[0] = bits.Pred(87, 90);
      RequireTrue(insn.psrc[0], d, "EXIT's condition");
      return;
    case 0x918:  // NOP
      insn.op = SassOp::kNop;
      return;
    default:
      d.Refuse(absl::StrFormat("opcode 0x%03x is not one the decoder knows",
                               opcode));
  }
}

void DecodeSpecial(uint32_t opcode, Bits& bits, Decoding& d) {
  SassInstruction& insn = d.insn;
  insn.dst = bits.Reg(16);
  insn.special = static_cast<int>(bits.Take(72, 8));
  if (opcode == 0x919) {
    insn.op = SassOp::kS2r;
    return;
  }
  insn.op = SassOp::kCs2r;
  insn.width = bits.Flag(80) ? 64 : 32;
}

void DecodeHfma2Mov(Bits& bits, Decoding& d) {
  SassInstruction& insn = d.insn;
  insn.op = SassOp::kHfma2Mov;
  insn.dst = bits.Reg(16);
  if (bits.Reg(24) != kSassRz || bits.Take(64, 41) != 0x1ff) {
    d.Refuse("HFMA2 other than a constant move");
  }
  insn.src[1] = {.kind = SassOperand::kImmediate,
                 .value = static_cast<uint32_t>(bits.Take(32, 32))};
}

void DecodeR2ur(Bits& bits, Decoding& d) {
  SassInstruction& insn = d.insn;
  insn.op = SassOp::kR2ur;
  insn.dst = bits.Reg(16);
  insn.src[0] = {.kind = SassOperand::kRegister, .reg = bits.Reg(24)};
  insn.pdst[0] = static_cast<int>(bits.Take(81, 3));
  if (insn.dst > kSassUrz) d.Refuse("uniform register past URZ");
  if (insn.pdst[0] != kSassPt) d.Refuse("R2UR writing a predicate");
}

void DecodeByOpcode(const SassArchInfo& arch, uint32_t opcode, Bits& bits,
                    Decoding& d) {
  if (opcode == arch.r2ur_opcode) return DecodeR2ur(bits, d);
  switch (opcode) {
    case 0x81c:
      return DecodePlop3(bits, d, false);
    case 0x89c:
      return DecodePlop3(bits, d, true);
    case 0xb82:
      return DecodeLdc(arch, bits, d, false);
    case 0xab9:
      return DecodeLdc(arch, bits, d, true);
    case 0x986:
      return DecodeStg(arch, bits, d);
    case 0x981:
      return DecodeLdg(arch, bits, d);
    case 0x919:
    case 0x805:
      return DecodeSpecial(opcode, bits, d);
    case 0x431:
    case 0x435:
      return DecodeHfma2Mov(bits, d);
    case 0x882:    // UMOV UR, imm: encoded like an ALU op
    case 0xc82: {  // UMOV UR, UR
      d.insn.op = SassOp::kMov;
      d.insn.uniform = true;
      d.insn.dst = bits.Reg(16);
      SassOperand& b = d.insn.src[1];
      if (opcode == 0x882) {
        b = {.kind = SassOperand::kImmediate,
             .value = static_cast<uint32_t>(bits.Take(32, 32))};
      } else {
        b = {.kind = SassOperand::kUniform, .reg = bits.Reg(32)};
      }
      bits.Flag(91);
      return;
    }
    default:
      return DecodeControl(opcode, bits, d);
  }
}

}  // namespace

std::vector<std::string> SassExecutableArchs() { return {"sm_90", "sm_90a"}; }

absl::StatusOr<SassArchInfo> FindSassArchInfo(absl::string_view arch) {
  if (arch == "sm_90" || arch == "sm_90a") {
    return SassArchInfo{.name = std::string(arch),
                        .sm = 90,
                        .param_base = 0x210,
                        .r2ur_opcode = 0x2ca,
                        .store_fixed_hi = 0x0c101100,
                        .load_fixed_hi = 0x0c1e1100};
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the SASS evaluator does not know ", arch, "'s encodings; it reads ",
      absl::StrJoin(SassExecutableArchs(), ", ")));
}

SassSlot DecodeSassInstruction(const SassArchInfo& arch, uint64_t lo,
                               uint64_t hi, uint32_t pc) {
  Bits bits(lo, hi);
  Decoding d;
  d.insn.pc = pc;
  d.insn.word_lo = lo;
  d.insn.word_hi = hi & kOperandMaskHi;
  const uint32_t opcode = static_cast<uint32_t>(bits.Take(0, 12));
  d.insn.guard = bits.Pred(12, 15);
  // An ALU operation has a nonzero form; no other opcode's low 9 bits are
  // one of theirs.
  const AluRow* row = (opcode >> 9) != 0 ? FindAluRow(opcode & 0x1ff) : nullptr;
  if (row != nullptr) {
    DecodeAlu(*row, bits, d);
  } else {
    DecodeByOpcode(arch, opcode, bits, d);
  }
  // The uniform datapath's instructions are guarded by a uniform predicate.
  if (d.insn.uniform) d.insn.guard.uniform = true;
  if (d.why_not.empty()) {
    const std::string unread = bits.Unread();
    if (!unread.empty())
      d.Refuse(absl::StrCat("bits ", unread, " not understood"));
  }
  SassSlot slot{.insn = d.insn};
  if (!d.why_not.empty()) {
    slot.why_not = absl::StrFormat("%s at +0x%04x (%016x %011x): %s",
                                   d.insn.op == SassOp::kNop && opcode != 0x918
                                       ? absl::StrFormat("op 0x%03x", opcode)
                                       : SassOpName(d.insn.op, d.insn.uniform),
                                   pc, lo, hi & kOperandMaskHi, d.why_not);
  }
  return slot;
}

absl::StatusOr<std::vector<SassSlot>> DecodeSassKernel(const SassArchInfo& arch,
                                                       absl::string_view text) {
  if (text.size() % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        ".text of ", text.size(), " bytes is not whole 16-byte instructions"));
  }
  std::vector<SassSlot> out;
  out.reserve(text.size() / 16);
  for (size_t i = 0; i < text.size(); i += 16) {
    uint64_t words[2] = {0, 0};
    for (int b = 0; b < 16; ++b) {
      words[b / 8] |= uint64_t{static_cast<uint8_t>(text[i + b])}
                      << (8 * (b % 8));
    }
    out.push_back(DecodeSassInstruction(arch, words[0], words[1],
                                        static_cast<uint32_t>(i)));
  }
  return out;
}

std::string SassListing(const std::vector<SassSlot>& kernel) {
  // Up to the last EXIT or RET (a subroutine follows the kernel's EXIT):
  // what follows is ptxas's padding.
  auto ends_code = [](const SassSlot& s) {
    return s.ok() && (s.insn.op == SassOp::kExit || s.insn.op == SassOp::kRet);
  };
  size_t end = kernel.size();
  while (end > 0 && !ends_code(kernel[end - 1])) --end;
  if (end == 0) end = kernel.size();
  std::string out;
  for (size_t i = 0; i < end; ++i) {
    const SassSlot& s = kernel[i];
    if (s.ok() && s.insn.op == SassOp::kNop) continue;
    absl::StrAppendFormat(
        &out, "/*%04x*/  %s\n", s.insn.pc,
        s.ok() ? SassText(s.insn) : absl::StrCat("?? ", s.why_not));
  }
  return out;
}

}  // namespace ptxdiff
