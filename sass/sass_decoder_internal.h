// The SASS decoder's internals, shared by its .cc files: not an API (the
// decoder's is sass_decoder.h). The field readers every decoder reads an
// encoding through (Bits, which marks the bits read so that an unread set
// bit refuses the slot; Reader, the ALU operand layout), and
//   - sass_decoder_alu.cc: the ALU operations, a table of their 9-bit
//     opcodes and a decoder per operation (DecodeAluOperation);
//   - sass_decoder.cc: the memory, move and control instructions by their
//     whole 12-bit opcode, and the decoder's API.

#ifndef PTXDIFF_SASS_SASS_DECODER_INTERNAL_H_
#define PTXDIFF_SASS_SASS_DECODER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sass/sass_instruction.h"

namespace ptxdiff {
namespace sass_decoder_internal {

// Bits 105..127 are scheduling control (stall counts, barriers, reuse).
inline constexpr uint64_t kOperandMaskHi = (uint64_t{1} << 41) - 1;

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
inline int NegateBit(Position p) { return p == kAt24 ? 72 : p == kAt32 ? 63 : 75; }

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

  // The float sources' magnitude and negation flags (FSETP): a's at 73
  // and 72, b's at 62 and 63 where b is a register, constant or uniform
  // register at 32 (an immediate has none).
  void FloatModifiers() {
    SassOperand& a = d_.insn.src[0];
    a.abs = bits_.Flag(73);
    a.negate = bits_.Flag(72);
    SassOperand& b = d_.insn.src[1];
    if (b.kind != SassOperand::kImmediate && position_[1] == kAt32) {
      b.abs = bits_.Flag(62);
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
inline void RequireFalse(const SassPredicate& p, Decoding& d, const char* what) {
  if (p.index != kSassPt || !p.negated) {
    d.Refuse(absl::StrCat(what, " is not !PT"));
  }
}

inline void RequireTrue(const SassPredicate& p, Decoding& d, const char* what) {
  if (p.index != kSassPt || p.negated) {
    d.Refuse(absl::StrCat(what, " is not PT"));
  }
}

// Decodes an ALU operation: an opcode whose form bits (9..11) are nonzero
// and whose low 9 bits are one of the table's. False, leaving `bits` and
// `d` alone, for any other opcode.
bool DecodeAluOperation(uint32_t opcode, Bits& bits, Decoding& d);

}  // namespace sass_decoder_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_SASS_SASS_DECODER_INTERNAL_H_
