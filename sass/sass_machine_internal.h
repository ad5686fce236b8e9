// The one-thread SASS machine's internals, shared by its .cc files: not an
// API (the machine's is sass_machine.h, RunSass). Internal to sass/: the
// Machine class, its registers and operand reads (here, inline: every
// operation reads through them), and
//   - sass_machine.cc: the run loop (Run), the trace, the refusals, and
//     Step, which dispatches an instruction to its operation;
//   - sass_machine_operations.cc: the operations (Move, Prmt, Isetp, Fsetp,
//     Iadd3, Lea, Shf, Imad, ImadWide, Idp, Flo, Plop3, Ldc, Stg, Ldg, ...)
//     and the helpers they use (Compare, FloatCompare, SetOp, PermutePicks,
//     Lut3).

#ifndef PTXDIFF_SASS_SASS_MACHINE_INTERNAL_H_
#define PTXDIFF_SASS_SASS_MACHINE_INTERNAL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sass/sass_decoder.h"
#include "sass/sass_instruction.h"
#include "sass/sass_machine.h"

namespace ptxdiff {
namespace sass_machine_internal {

constexpr int kNumRegisters = 256;
constexpr int kNumUniform = 64;

// A register's contents: a value the kernel computed, with the bytes that
// hold nothing known. A register never written is all undefined; an
// instruction that reads an undefined byte writes an undefined result (its
// value can only matter if it reaches a store, an address, a predicate or
// a branch, which refuse), and PRMT moves definedness byte by byte, as
// ptxas's 16-bit code keeps garbage in the upper halves it never stores.
struct Word {
  uint32_t value = 0;
  uint8_t undefined = 0xf;  // one bit per byte
  bool opaque = false;      // a driver's word: may be moved, not used
};

// LOP3's (and PLOP3's) truth table `lut` applied to a, b and c, bit by
// bit.
uint32_t Lut3(uint32_t lut, uint32_t a, uint32_t b, uint32_t c);

class Machine {
 public:
  // A run into `run` (its stores cleared, their memory kept).
  Machine(const std::vector<SassSlot>& kernel, const SassLaunch& launch,
          SassRun& run)
      : kernel_(kernel), launch_(launch), run_(run), stores_(run.stores) {
    stores_.clear();
  }

  void Run();

 private:
  // "op 0x21f" for an unknown opcode, "IADD3: bits 76" for a known one.
  static std::string Blocker(const SassSlot& slot);

  void Trace(const SassInstruction& i, std::vector<SassTraceStep>& trace);

  void Fail(std::string why, std::string blocker);
  // Refuses the current instruction: `what` is also its census key.
  void Refuse(const std::string& what);

  // --- registers ---
  Word* Slot(int reg, bool uniform) {
    if (uniform) return reg == kSassUrz ? nullptr : &ur_[reg];
    return reg == kSassRz ? nullptr : &r_[reg];
  }

  // The register's value; an undefined byte taints the instruction's
  // result (tainted_).
  uint32_t ReadReg(int reg, bool uniform) {
    const Word* w = Slot(reg, uniform);
    if (w == nullptr) return 0;
    Note(reads_, uniform ? SassAccess::kUniform : SassAccess::kRegister, reg,
         w->value);
    if (w->undefined != 0) {
      tainted_ = true;
      return w->value;
    }
    if (w->opaque) {
      Refuse(absl::StrCat("uses ", uniform ? "UR" : "R", reg,
                          ", a word the driver fills"));
      return 0;
    }
    return w->value;
  }

  void WriteReg(int reg, bool uniform, uint32_t value, bool opaque = false) {
    if (Word* w = Slot(reg, uniform)) {
      *w = {value, static_cast<uint8_t>(tainted_ ? 0xf : 0), opaque};
      Note(writes_, uniform ? SassAccess::kUniform : SassAccess::kRegister,
           reg, value);
    }
  }

  // Keeps an access for the trace, where the launch asks for one.
  void Note(std::vector<SassAccess>& accesses, SassAccess::Kind kind,
            int index, uint32_t value) {
    if (!launch_.trace) return;
    accesses.push_back({.kind = kind,
                        .index = index,
                        .value = value,
                        .stored = storing_});
  }

  // The undefined bytes of an operand (none for immediates and constants).
  uint8_t UndefinedBytes(const SassOperand& o) {
    if (o.kind != SassOperand::kRegister && o.kind != SassOperand::kUniform) {
      return 0;
    }
    const Word* w = Slot(o.reg, o.kind == SassOperand::kUniform);
    return w == nullptr ? 0 : w->undefined;
  }

  // Refuses where this instruction's result depends on an undefined byte
  // and goes somewhere a value must be known: `what`.
  bool RequireDefined(const char* what) {
    if (!tainted_) return true;
    Refuse(absl::StrCat(what, " depends on a register never written"));
    return false;
  }

  void WriteDst(uint32_t value) {
    WriteReg(current_->dst, current_->uniform, value);
  }

  // The 32 bits of bank 0 at `offset`; a driver's word refuses.
  uint32_t ReadConstant(int bank, uint64_t offset, int bytes,
                        bool* opaque = nullptr) {
    const std::vector<uint8_t>& cb = launch_.constant_bank;
    if (bank != 0 || offset + bytes > cb.size()) {
      Refuse(absl::StrFormat("reads c[0x%x][0x%x], outside the bank", bank,
                             offset));
      return 0;
    }
    if (offset < launch_.known_from) {
      if (opaque == nullptr) {
        Refuse(absl::StrFormat("uses c[0x0][0x%x], a word the driver fills",
                               offset));
        return 0;
      }
      *opaque = true;
    }
    uint32_t v = 0;
    for (int b = 0; b < bytes && b < 4; ++b) {
      v |= uint32_t{cb[offset + b]} << (8 * b);
    }
    return v;
  }

  uint32_t Read(const SassOperand& o) {
    switch (o.kind) {
      case SassOperand::kRegister:
        return ReadReg(o.reg, false);
      case SassOperand::kUniform:
        return ReadReg(o.reg, true);
      case SassOperand::kImmediate:
        return o.value;
      case SassOperand::kConstant:
        return ReadConstant(o.bank, o.value, 4);
      case SassOperand::kNone:
        break;
    }
    Refuse("reads a missing operand");
    return 0;
  }

  // A register pair {reg+1:reg}, as IMAD.WIDE's c and STG's address.
  uint64_t ReadPair(const SassOperand& o) {
    if (o.kind != SassOperand::kRegister && o.kind != SassOperand::kUniform) {
      Refuse("a 64-bit operand that is not a register pair");
      return 0;
    }
    const bool u = o.kind == SassOperand::kUniform;
    const int zero = u ? kSassUrz : kSassRz;
    if (o.reg == zero) return 0;
    if (o.reg % 2 != 0 || o.reg + 1 >= zero) {
      Refuse("an odd register pair");
      return 0;
    }
    return ReadReg(o.reg, u) | uint64_t{ReadReg(o.reg + 1, u)} << 32;
  }

  bool ReadPred(const SassPredicate& p) {
    if (p.index == kSassPt) return !p.negated;
    const std::optional<bool>& v = p.uniform ? up_[p.index] : p_[p.index];
    if (!v.has_value()) {
      Refuse(absl::StrCat("reads ", p.uniform ? "UP" : "P", p.index,
                          " before any write"));
      return false;
    }
    Note(reads_,
         p.uniform ? SassAccess::kUniformPredicate : SassAccess::kPredicate,
         p.index, *v);
    return *v != p.negated;
  }

  void WritePred(int index, bool uniform, bool value) {
    if (index == kSassPt) return;
    if (!RequireDefined("a predicate")) return;
    (uniform ? up_ : p_)[index] = value;
    Note(writes_,
         uniform ? SassAccess::kUniformPredicate : SassAccess::kPredicate,
         index, value);
  }

  // --- the operations ---
  // Runs `i`; the next byte offset, or nullopt at an EXIT.
  std::optional<size_t> Step(const SassInstruction& i);

  // A move carries a driver's word along without using it (-O0 moves the
  // memory descriptor through registers into the store's uniform ones).
  void Move(const SassOperand& from, int dst, bool uniform);

  // PRMT moves bytes, and their definedness with them.
  void Prmt(const SassInstruction& i);

  void Isetp(const SassInstruction& i);

  // FSETP: f32s compared as IEEE 754 says, a NaN unordered.
  void Fsetp(const SassInstruction& i);

  // FMUL, FADD: IEEE's f32 product or sum, rounded as the instruction says.
  void FloatArithmetic(const SassInstruction& i);

  // An operand of an addition: negated in two's complement (the +1 is part
  // of the sum, and so of its carry), or bitwise in an extended addition
  // (IADD3.X, IMAD.X: the high word of a subtraction, its borrow the carry).
  static uint64_t Negated(uint32_t v, bool negate, bool extended);
  uint64_t Addend(const SassOperand& o, bool extended);

  // The carry out of a 32-bit sum into `pdst`: 0 or 1. A sum of three
  // operands can carry 2, which the hardware's two carry flags split in a
  // way not yet pinned: not run.
  void WriteCarry(uint64_t sum, int pdst, bool uniform);

  void Iadd3(const SassInstruction& i);

  void Lea(const SassInstruction& i);

  // SHF: {c:a} shifted by b, a 32- or 64-bit funnel; .HI keeps the high word.
  void Shf(const SassInstruction& i);

  static uint32_t Sgxt(uint32_t a, uint32_t b, bool is_signed, bool wrap);

  static uint32_t Bmsk(uint32_t pos, uint32_t width, bool wrap);

  void Imad(const SassInstruction& i);

  // IMAD.WIDE: {d+1:d} = a * b + {c+1:c} (+ a carry in with .X), the carry
  // out of that 64-bit sum in its predicate; IMAD.HI: d = (a * b + {c+1:c})
  // >> 32.
  void ImadWide(const SassInstruction& i);

  // IMAD.HI's and IMAD.WIDE's c, a pair: negated as a 64-bit value (bitwise
  // in .X, as IADD3.X).
  uint64_t PairAddend(const SassInstruction& i);

  static uint32_t MinMax(uint32_t a, uint32_t b, bool is_signed, bool min);

  // The low `width` bits of b, as a signed or unsigned integer, as the f32
  // `round` picks: the nearest (ties to even) or the next one toward -inf,
  // +inf or zero. A long double holds every 64-bit integer exactly, so the
  // cast to float is the one rounding.
  static uint32_t IntegerToF32(uint64_t b, int width, bool is_signed,
                               SassRound round);

  // An f32 truncated toward zero into [0, 2^64 - 1]; NaN is 0.
  static uint64_t F2iTruncU64(float f);

  // An f32 truncated toward zero into [0, 2^32 - 1]; NaN is 0.
  static uint32_t F2iTruncU32(float f);

  static uint32_t Add16x2(uint32_t a, uint32_t b);

  static uint32_t MinMax16x2(uint32_t a, uint32_t b, bool is_signed, bool min);

  // IDP.4A: c + the four products of a's and b's bytes; IDP.2A: c + a's two
  // halves times b's bytes 0, 1 (2, 3 with .HI).
  static uint32_t Idp(const SassInstruction& i, uint32_t a, uint32_t b,
                      uint32_t c);

  uint32_t Flo(const SassInstruction& i);

  void Plop3(const SassInstruction& i);

  // P2R: only the predicates under the mask are read (one not yet written
  // there refuses, as any read of it does).
  void P2r(const SassInstruction& i);

  void Ldc(const SassInstruction& i);

  // A global access's address, [Ra.64 + offset] (a signed 24-bit offset);
  // nullopt (refused) where it depends on a byte never written.
  std::optional<uint64_t> GlobalAddress(const SassInstruction& i,
                                        const char* what);

  // The launch's buffer that holds `size` bytes at `address`, or null.
  const SassBuffer* BufferAt(uint64_t address, int size) const;

  void Stg(const SassInstruction& i);

  // A load from one of the launch's read-only buffers (its inputs), sign-
  // or zero-extended to 32 bits; 64 bits into a register pair. The stores
  // are kept as a list, not in the buffers, so a load from a writable one
  // would not see them: refused.
  void Ldg(const SassInstruction& i);

  const std::vector<SassSlot>& kernel_;
  const SassLaunch& launch_;
  SassRun& run_;
  const SassInstruction* current_ = nullptr;
  bool guard_held_ = false;
  bool tainted_ = false;  // the current instruction read an undefined byte
  int64_t step_ = 0;      // the current instruction's index in the run
  // The trace's accesses of the current instruction (SassLaunch::trace);
  // storing_ while a store reads its data.
  std::vector<SassAccess> reads_, writes_;
  bool storing_ = false;
  std::array<Word, kNumRegisters> r_;
  std::array<Word, kNumUniform> ur_;
  std::array<std::optional<bool>, 7> p_, up_;
  std::vector<SassStore>& stores_;  // run_'s
  std::string error_, blocker_;
};

}  // namespace sass_machine_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_SASS_SASS_MACHINE_INTERNAL_H_
