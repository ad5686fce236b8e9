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
#include <string>

namespace ptxdiff {

inline constexpr int kSassRz = 255;  // the zero register
inline constexpr int kSassUrz = 63;  // the uniform zero register
inline constexpr int kSassPt = 7;    // the true predicate (PT, UPT)

// What an instruction does. The uniform-datapath forms (UIADD3, ULOP3, ...)
// are the same operations with SassInstruction::uniform set.
enum class SassOp : uint8_t {
  kNop,
  kMov,       // d = b
  kSel,       // d = p ? a : b
  kIsetp,     // P = (a cmp b [.EX: with the low compare]) setop q
  kIadd3,     // d = ±a ± b ± c [.X: + carries]; P, Q = carries out
  kLea,       // d = (a << s) + b; .HI: ({c:a} << s) >> 32 + b
  kLop3,      // d = lut(a, b, c)
  kIabs,      // d = |b|
  kIabsdiff,  // d = |a - b| + c
  kPrmt,      // d = bytes of {c:a} selected by b
  kShf,       // funnel shift of {c:a} by b
  kSgxt,      // d = a extended from its low b bits
  kBmsk,      // d = a mask of b bits at a
  kImad,      // d = a * b + c [.X: + carry]
  kImadHi,    // d = (a * b + {c+1:c}) >> 32
  kImadWide,  // {d+1:d} = a * b + {c+1:c}
  kIdp4a,     // d = c + the dot product of a's and b's bytes (or .2A)
  kFlo,       // d = the position of b's leading one
  kBrev,      // d = b's bits reversed
  kPopc,      // d = the number of b's set bits
  kPlop3,     // P = lut0(p, q, r); Q = lut1(p, q, r)
  kViadd,     // d = a + b
  kVimnmx,    // d = min or max(a, b) [.RELU: and 0]
  kI2i,       // d = b (s32) clamped to an 8- or 16-bit type
  kSignLut,   // P = lut(the sign bits of a, b, c): opcode 0x21f, its name
              // unknown here; ptxas's add.sat.s32 overflow test
  kI2f,       // d = b (8 to 64 bits, signed or not) as an f32, rounded
              // (.RP)
  kMufuRcp,   // d = 1 / b (f32), modelled as IEEE's correctly rounded one
  kF2i,       // d = b (f32) truncated to a u32 (width 64: the pair
              // {d+1:d} to a u64), saturated (NaN: 0)
  kR2ur,      // uniform d = a
  kP2r,       // d = the predicates P0..P6 as bits 0..6, under the mask b
              // (a = RZ): ptxas spills a predicate with it
  kS2r,       // d = a special register
  kCs2r,      // d (, d+1) = a special register (SRZ: 0)
  kLdc,       // d = c[bank][a + offset]
  kLdg,       // d = [a + offset]
  kStg,       // [a + offset] = b
  kBra,       // jump to target
  kCall,      // CALL.REL.NOINC, CALL.ABS.NOINC: jump to target (the caller
              // keeps the return address in registers, as 64-bit division
              // does)
  kRet,       // RET.REL.NODEC, RET.ABS.NODEC: jump to target + the pair
              // {a+1:a}
  kExit,
  kBssy,      // a convergence barrier's reconvergence point
  kBsync,     // wait at a convergence barrier
  kHfma2Mov,  // HFMA2(.MMA) d, -RZ, RZ, imm: d = imm where fp16 gives it back
};

// Whether HFMA2 d, -RZ, RZ, imm (ptxas's constant move) gives `imm` back:
// -0 * 0 + h is h for every fp16 h but a NaN, which the fp16 unit replaces
// with the canonical NaN 0x7fff.
bool Hfma2GivesBack(uint32_t imm);

// "IADD3", "ULOP3": the mnemonic of `op`, uniform or not.
std::string SassOpName(SassOp op, bool uniform);

// A register, uniform register, immediate or constant-bank word.
struct SassOperand {
  enum Kind : uint8_t { kNone, kRegister, kUniform, kImmediate, kConstant };
  Kind kind = kNone;
  int reg = 0;          // kRegister, kUniform: its number
  uint32_t value = 0;   // kImmediate: the bits; kConstant: the byte offset
  int bank = 0;         // kConstant
  bool negate = false;  // two's-complement negation (IADD3: bitwise with .X)
  bool invert = false;  // bitwise not (POPC, FLO)
};

struct SassPredicate {
  int index = kSassPt;  // 0..6, or kSassPt
  bool negated = false;
  bool uniform = false;  // UP0..UP6, UPT
};

// Integer comparisons, as ISETP encodes them.
enum class SassCompare : uint8_t { kF, kLt, kEq, kLe, kGt, kNe, kGe, kT };

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
  SassRound round = SassRound::kNearest;  // I2F
  int source_part = 0;  // I2F of 8 or 16 bits: the byte or half of b read

  int shift = 0;              // LEA's shift
  uint32_t lut = 0;  // LOP3, op 0x21f; PLOP3: lut0 | lut1 << 8
  SassCompare compare = SassCompare::kF;  // ISETP
  int set_op = 0;                         // ISETP: 0 AND, 1 OR, 2 XOR
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
