// One decoded SASS instruction: what the decoder (sass_decoder.h) reads out
// of ptxas's 128-bit encodings, and what the machine (sass_machine.h) runs.
//
// Only the integer subset ptxas emits for ptxdiff's kernels is described:
// each SassOp names one operation whose effect on the registers is fully
// known, with the modifiers that change its value as fields here. A bit of
// an encoding that the decoder does not read makes the instruction "not
// understood" (SassSlot::why_not) rather than a guess; the machine refuses
// to run such an instruction, so a kernel is either run exactly or not run.

#ifndef PTXDIFF_SASS_SASS_INSTRUCTION_H_
#define PTXDIFF_SASS_SASS_INSTRUCTION_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace ptxdiff {

inline constexpr int kSassRz = 255;  // the zero register
inline constexpr int kSassUrz = 63;  // the uniform zero register
inline constexpr int kSassPt = 7;    // the true predicate (PT, UPT)

// What an instruction does (sass_ops.inc has each one's effect). The
// uniform-datapath forms (UIADD3, ULOP3, ...) are the same operations with
// SassInstruction::uniform set.
enum class SassOp : uint8_t {
#define PTXDIFF_SASS_OP(Name, mnemonic) k##Name,
#include "sass/sass_ops.inc"
#undef PTXDIFF_SASS_OP
};
inline constexpr int kNumSassOps = 0
#define PTXDIFF_SASS_OP(Name, mnemonic) +1
#include "sass/sass_ops.inc"
#undef PTXDIFF_SASS_OP
    ;

// Whether HFMA2 d, -RZ, RZ, imm (ptxas's constant move) gives `imm` back:
// -0 * 0 + h is h for every fp16 h but a NaN, which the fp16 unit replaces
// with the canonical NaN 0x7fff.
bool Hfma2GivesBack(uint32_t imm);

// "IADD3", "ULOP3": the mnemonic of `op`, uniform or not.
std::string SassOpName(SassOp op, bool uniform);

// The operation an instruction's text names, as SassText or SassKey
// (sass_departure.h) spell it: "@!P0 IMAD.WIDE.U32 R4, R2, R3, R10" is
// kImadWide, "ULOP3.LUT UR4, ..." kLop3. nullopt for a mnemonic that is
// none of sass_ops.inc's.
std::optional<SassOp> SassOpOfText(absl::string_view text);

// A register, uniform register, immediate or constant-bank word.
struct SassOperand {
  enum Kind : uint8_t { kNone, kRegister, kUniform, kImmediate, kConstant };
  Kind kind = kNone;
  int reg = 0;          // kRegister, kUniform: its number
  uint32_t value = 0;   // kImmediate: the bits; kConstant: the byte offset
  int bank = 0;         // kConstant
  bool negate = false;  // two's-complement negation (IADD3: bitwise with .X)
  bool invert = false;  // bitwise not (POPC, FLO)
  bool abs = false;     // FSETP: the f32's magnitude, before any negation
                        // (which flips its sign bit)
};

struct SassPredicate {
  int index = kSassPt;  // 0..6, or kSassPt
  bool negated = false;
  bool uniform = false;  // UP0..UP6, UPT
};

// Integer comparisons, as ISETP encodes them.
enum class SassCompare : uint8_t { kF, kLt, kEq, kLe, kGt, kNe, kGe, kT };

// Float comparisons, as FSETP encodes them (4 bits): the ordered ones are
// false where either side is a NaN, the unordered ones (U) true; NUM: neither
// is a NaN, NAN: either is.
// clang-format off
enum class SassFloatCompare : uint8_t {
  kF, kLt, kEq, kLe, kGt, kNe, kGe, kNum,
  kNan, kLtu, kEqu, kLeu, kGtu, kNeu, kGeu, kT
};
// clang-format on

// A float conversion's rounding, in the order of its 2-bit field: .RN (the
// default, not spelt), .RM, .RP, .RZ.
enum class SassRound : uint8_t { kNearest, kDown, kUp, kZero };

struct SassInstruction {
  uint32_t pc = 0;                    // byte offset in the kernel's .text
  uint64_t word_lo = 0, word_hi = 0;  // the encoding, scheduling bits cleared
  SassOp op = SassOp::kNop;
  bool uniform = false;  // runs on the uniform datapath: d and sources are URs
  SassPredicate guard;   // @P0, @!P1; PT when unguarded
  int dst = kSassRz;     // register (or uniform register) written
  std::array<SassOperand, 3> src;                // a, b, c
  std::array<SassPredicate, 3> psrc;             // carries in, conditions
  std::array<int, 2> pdst = {kSassPt, kSassPt};  // predicates written
  bool pdst_uniform = false;                     // pdst are UPs

  // Modifiers; each is read by the ops it names.
  bool is_signed = false;     // ISETP, IMAD.HI/.WIDE, SGXT, FLO, VIMNMX, SHF,
                              // I2I's type
  bool extended = false;      // .X (IADD3, IMAD, LEA), .EX (ISETP)
  bool hi = false;            // .HI (LEA, SHF)
  bool wrap = false;          // .W (SHF, BMSK, SGXT)
  bool right = false;         // .R (SHF)
  bool shift_amount = false;  // FLO.SH: 31 - position
  int width = 32;             // SHF's type: 32 or 64; loads/stores: bytes;
                              // I2I's: 8 or 16 bits; I2F's source: 8 to
                              // 64; F2I's destination: 32 or 64
  SassRound round = SassRound::kNearest;  // I2F, FMUL, FADD
  bool ftz = false;  // F2I.FTZ: a subnormal source is 0 (truncated, it is)
  int source_part = 0;  // I2F of 8 or 16 bits: the byte or half of b read

  int shift = 0;              // LEA's shift
  uint32_t lut = 0;  // LOP3, op 0x21f; PLOP3: lut0 | lut1 << 8
  SassCompare compare = SassCompare::kF;  // ISETP
  SassFloatCompare float_compare = SassFloatCompare::kF;  // FSETP
  int set_op = 0;  // ISETP, FSETP: 0 AND, 1 OR, 2 XOR
  int prmt_mode =
      0;  // PRMT: 0 index, 1 F4E, 2 B4E, 3 RC8, 4 ECL, 5 ECR, 6 RC16
  bool a_signed = false, b_signed = false;  // IDP's byte types
  bool dp2a = false;                        // IDP.2A (hi: its .HI)
  bool simd16 = false;  // VIMNMX, VIADD on two 16-bit lanes
  bool relu = false;    // VIMNMX.RELU: a negative result is 0
  int special = 0;                          // S2R, CS2R: the special register
  int64_t target = 0;  // BRA, BSSY, CALL: the byte offset jumped to; RET:
                       // the base its register pair is added to
  bool absolute = false;  // CALL, RET: .ABS, target an address in the code
                          // as linked (cubin_link.h), not relative to pc
  int barrier = 0;     // BSSY, BSYNC
};

// One instruction of a kernel as decoded: the instruction, or why it is not
// understood (the machine refuses to run it).
struct SassSlot {
  SassInstruction insn;
  std::string why_not;  // empty when understood
  bool ok() const { return why_not.empty(); }
};

// The instruction as text, close to nvdisasm's: "IADD3 R5, P0, R4, -R5, RZ".
std::string SassText(const SassInstruction& insn);

}  // namespace ptxdiff

#endif  // PTXDIFF_SASS_SASS_INSTRUCTION_H_
