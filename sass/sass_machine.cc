#include "sass/sass_machine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ptxdiff {
namespace {

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

uint32_t Lut3(uint32_t lut, uint32_t a, uint32_t b, uint32_t c) {
  uint32_t out = 0;
  for (int i = 0; i < 8; ++i) {
    if ((lut >> i) & 1) {
      out |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
    }
  }
  return out;
}

bool Compare(SassCompare c, uint32_t a, uint32_t b, bool is_signed) {
  const int64_t x = is_signed ? int64_t{static_cast<int32_t>(a)} : int64_t{a};
  const int64_t y = is_signed ? int64_t{static_cast<int32_t>(b)} : int64_t{b};
  switch (c) {
    case SassCompare::kF:
      return false;
    case SassCompare::kLt:
      return x < y;
    case SassCompare::kEq:
      return x == y;
    case SassCompare::kLe:
      return x <= y;
    case SassCompare::kGt:
      return x > y;
    case SassCompare::kNe:
      return x != y;
    case SassCompare::kGe:
      return x >= y;
    case SassCompare::kT:
      return true;
  }
  return false;
}

bool SetOp(int op, bool x, bool y) {
  return op == 0 ? (x && y) : op == 1 ? (x || y) : (x != y);
}

// PTX's prmt, which PRMT implements: for each byte of the result, which
// byte of {c:a} it takes (0..7), and whether it is that byte's sign
// replicated (mode 0's selector bit 3).
struct BytePick {
  int from = 0;
  bool sign = false;
};

std::array<BytePick, 4> PermutePicks(uint32_t sel, int mode) {
  std::array<BytePick, 4> picks;
  const int s = static_cast<int>(sel & 3);
  for (int i = 0; i < 4; ++i) {
    int from = 0;
    switch (mode) {
      case 0: {
        const uint32_t n = (sel >> (4 * i)) & 0xf;
        picks[i] = {static_cast<int>(n & 7), (n & 8) != 0};
        continue;
      }
      case 1:
        from = (s + i) & 7;
        break;  // F4E
      case 2:
        from = (s - i + 8) & 7;
        break;  // B4E
      case 3:
        from = s;
        break;  // RC8
      case 4:
        from = std::max(i, s);
        break;  // ECL
      case 5:
        from = std::min(i, s);
        break;  // ECR
      default:
        from = (s & 1) * 2 + (i & 1);
        break;  // RC16
    }
    picks[i] = {from, false};
  }
  return picks;
}

class Machine {
 public:
  Machine(const std::vector<SassSlot>& kernel, const SassLaunch& launch)
      : kernel_(kernel), launch_(launch) {}

  SassRun Run() {
    SassRun run;
    size_t pc = 0;
    while (true) {
      if (pc % 16 != 0 || pc / 16 >= kernel_.size()) {
        Fail(absl::StrFormat("the run left the kernel at +0x%x", pc),
             "left the kernel");
        break;
      }
      const SassSlot& slot = kernel_[pc / 16];
      if (++run.steps > launch_.max_steps) {
        Fail(absl::StrCat("more than ", launch_.max_steps, " instructions run"),
             "step budget");
        break;
      }
      if (!slot.ok()) {
        Fail(slot.why_not, Blocker(slot));
        break;
      }
      current_ = &slot.insn;
      step_ = run.steps - 1;
      reads_.clear();
      writes_.clear();
      const std::optional<size_t> next = Step(slot.insn);
      if (launch_.trace) Trace(slot.insn, run.trace);
      if (!error_.empty()) break;
      if (!next.has_value()) {
        run.ran = true;
        break;
      }
      pc = *next;
    }
    run.stores = std::move(stores_);
    run.why_not = error_;
    run.blocker = blocker_;
    return run;
  }

 private:
  // "op 0x21f" for an unknown opcode, "IADD3: bits 76" for a known one.
  static std::string Blocker(const SassSlot& slot) {
    const std::string& why = slot.why_not;
    const size_t colon = why.rfind(": ");
    const std::string head = why.substr(0, why.find(" at +"));
    if (head.rfind("op 0x", 0) == 0 || colon == std::string::npos) return head;
    std::string what = why.substr(colon + 2);
    if (what.rfind("bits ", 0) == 0) what = "unread bits";
    return absl::StrCat(head, ": ", what);
  }

  void Trace(const SassInstruction& i, std::vector<SassTraceStep>& trace) {
    SassTraceStep step{.pc = i.pc,
                       .text = SassText(i),
                       .word_lo = i.word_lo,
                       .word_hi = i.word_hi,
                       .executed = guard_held_};
    if (const Word* w = Slot(i.dst, i.uniform || i.op == SassOp::kR2ur)) {
      step.dst_value = w->value;
    }
    step.reads = std::move(reads_);
    step.writes = std::move(writes_);
    trace.push_back(std::move(step));
  }

  void Fail(std::string why, std::string blocker) {
    if (!error_.empty()) return;
    error_ = std::move(why);
    blocker_ = std::move(blocker);
  }
  // Refuses the current instruction: `what` is also its census key.
  void Refuse(const std::string& what) {
    Fail(absl::StrFormat("%s at +0x%04x: %s", SassText(*current_), current_->pc,
                         what),
         absl::StrCat(SassOpName(current_->op, current_->uniform), ": ", what));
  }

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
  std::optional<size_t> Step(const SassInstruction& i) {
    const size_t next = i.pc + 16;
    tainted_ = false;
    guard_held_ = ReadPred(i.guard);
    if (!guard_held_) return next;
    switch (i.op) {
      case SassOp::kNop:
      case SassOp::kBssy:
      case SassOp::kBsync:  // one thread: always converged
        return next;
      case SassOp::kBra:
        return ReadPred(i.psrc[0]) ? static_cast<size_t>(i.target) : next;
      case SassOp::kCall:
        return static_cast<size_t>(i.target);
      case SassOp::kRet: {
        const uint64_t to = i.target + ReadPair(i.src[0]);
        if (!RequireDefined("a return address")) return next;
        return static_cast<size_t>(to);
      }
      case SassOp::kExit:
        return std::nullopt;
      case SassOp::kMov:
        Move(i.src[1], i.dst, i.uniform);
        return next;
      case SassOp::kHfma2Mov:
        if (!Hfma2GivesBack(i.src[1].value)) {
          Refuse("an fp16 NaN the unit does not give back");
        }
        WriteDst(i.src[1].value);
        return next;
      case SassOp::kSel: {
        const bool p = ReadPred(i.psrc[0]);
        WriteDst(p ? Read(i.src[0]) : Read(i.src[1]));
        return next;
      }
      case SassOp::kIsetp:
        Isetp(i);
        return next;
      case SassOp::kIadd3:
        Iadd3(i);
        return next;
      case SassOp::kLea:
        Lea(i);
        return next;
      case SassOp::kLop3: {
        const uint32_t d =
            Lut3(i.lut, Read(i.src[0]), Read(i.src[1]), Read(i.src[2]));
        WriteDst(d);
        WritePred(i.pdst[0], i.pdst_uniform, d != 0);
        return next;
      }
      case SassOp::kIabs: {
        const int32_t b = static_cast<int32_t>(Read(i.src[1]));
        WriteDst(b < 0 ? 0u - static_cast<uint32_t>(b)
                       : static_cast<uint32_t>(b));
        return next;
      }
      case SassOp::kIabsdiff: {
        const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
        const int64_t x =
            i.is_signed ? int64_t{static_cast<int32_t>(a)} : int64_t{a};
        const int64_t y =
            i.is_signed ? int64_t{static_cast<int32_t>(b)} : int64_t{b};
        WriteDst(static_cast<uint32_t>(x > y ? x - y : y - x) + Read(i.src[2]));
        return next;
      }
      case SassOp::kPrmt:
        Prmt(i);
        return next;
      case SassOp::kShf:
        Shf(i);
        return next;
      case SassOp::kSgxt:
        WriteDst(Sgxt(Read(i.src[0]), Read(i.src[1]), i.is_signed, i.wrap));
        return next;
      case SassOp::kBmsk:
        WriteDst(Bmsk(Read(i.src[0]), Read(i.src[1]), i.wrap));
        return next;
      case SassOp::kImad:
        Imad(i);
        return next;
      case SassOp::kImadHi:
      case SassOp::kImadWide:
        ImadWide(i);
        return next;
      case SassOp::kIdp4a:
        WriteDst(Idp(i, Read(i.src[0]), Read(i.src[1]), Read(i.src[2])));
        return next;
      case SassOp::kFlo:
        WriteDst(Flo(i));
        return next;
      case SassOp::kBrev: {
        uint32_t b = Read(i.src[1]), d = 0;
        for (int k = 0; k < 32; ++k) d |= ((b >> k) & 1) << (31 - k);
        WriteDst(d);
        return next;
      }
      case SassOp::kPopc: {
        const uint32_t b = Read(i.src[1]);
        WriteDst(
            static_cast<uint32_t>(std::popcount(i.src[1].invert ? ~b : b)));
        return next;
      }
      case SassOp::kPlop3:
        Plop3(i);
        return next;
      case SassOp::kViadd: {
        const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
        WriteDst(i.simd16 ? Add16x2(a, b) : a + b);
        return next;
      }
      case SassOp::kVimnmx: {
        const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
        const bool min = ReadPred(i.psrc[0]);
        if (i.relu && !i.is_signed) Refuse("VIMNMX.RELU of unsigned values");
        uint32_t d = i.simd16 ? MinMax16x2(a, b, i.is_signed, min)
                              : MinMax(a, b, i.is_signed, min);
        if (i.relu) {  // then the maximum with 0, lane by lane
          d = i.simd16 ? MinMax16x2(d, 0, true, false)
                       : MinMax(d, 0, true, false);
        }
        WriteDst(d);
        return next;
      }
      case SassOp::kI2i: {
        const int64_t x = static_cast<int32_t>(Read(i.src[1]));
        const int64_t hi = i.is_signed ? (int64_t{1} << (i.width - 1)) - 1
                                       : (int64_t{1} << i.width) - 1;
        const int64_t lo = i.is_signed ? -(int64_t{1} << (i.width - 1)) : 0;
        WriteDst(static_cast<uint32_t>(std::clamp(x, lo, hi)));
        return next;
      }
      case SassOp::kI2f: {
        const uint64_t b = i.width == 64
                               ? ReadPair(i.src[1])
                               : Read(i.src[1]) >> (i.source_part * i.width);
        WriteDst(IntegerToF32(b, i.width, i.is_signed, i.round));
        return next;
      }
      case SassOp::kMufuRcp:
        WriteDst(std::bit_cast<uint32_t>(
            1.0f / std::bit_cast<float>(Read(i.src[1]))));
        return next;
      case SassOp::kF2i:
        if (i.width == 64) {
          const uint64_t d =
              F2iTruncU64(std::bit_cast<float>(Read(i.src[1])));
          WriteReg(i.dst, false, static_cast<uint32_t>(d));
          WriteReg(i.dst + 1, false, static_cast<uint32_t>(d >> 32));
          return next;
        }
        WriteDst(F2iTruncU32(std::bit_cast<float>(Read(i.src[1]))));
        return next;
      case SassOp::kSignLut: {
        const uint32_t index = (Read(i.src[0]) >> 31) << 2 |
                               (Read(i.src[1]) >> 31) << 1 |
                               Read(i.src[2]) >> 31;
        WritePred(i.pdst[0], false, (i.lut >> index) & 1);
        return next;
      }
      case SassOp::kR2ur:
        Move(i.src[0], i.dst, true);
        return next;
      case SassOp::kS2r:
        if (i.special == kSassSrTidX || i.special == kSassSrLaneId) {
          WriteDst(launch_.thread);
          return next;
        }
        Refuse(absl::StrFormat("special register 0x%x is not modelled",
                               i.special));
        return next;
      case SassOp::kCs2r:
        if (i.special != 0xff) Refuse("special registers are not modelled");
        WriteReg(i.dst, false, 0);
        if (i.width == 64) WriteReg(i.dst + 1, false, 0);
        return next;
      case SassOp::kLdc:
        Ldc(i);
        return next;
      case SassOp::kStg:
        Stg(i);
        return next;
      case SassOp::kLdg:
        Ldg(i);
        return next;
    }
    Refuse("an operation the machine does not run");
    return next;
  }

  // A move carries a driver's word along without using it (-O0 moves the
  // memory descriptor through registers into the store's uniform ones).
  void Move(const SassOperand& from, int dst, bool uniform) {
    if (from.kind == SassOperand::kRegister ||
        from.kind == SassOperand::kUniform) {
      const Word* w = Slot(from.reg, from.kind == SassOperand::kUniform);
      Word* to = Slot(dst, uniform);
      if (w != nullptr && to != nullptr) {
        *to = *w;  // value, definedness and opacity as they are
        const auto kind = from.kind == SassOperand::kUniform
                              ? SassAccess::kUniform
                              : SassAccess::kRegister;
        Note(reads_, kind, from.reg, w->value);
        Note(writes_, uniform ? SassAccess::kUniform : SassAccess::kRegister,
             dst, w->value);
        return;
      }
    }
    WriteReg(dst, uniform, Read(from));
  }

  // PRMT moves bytes, and their definedness with them.
  void Prmt(const SassInstruction& i) {
    const uint32_t a = Read(i.src[0]);
    const uint32_t c = Read(i.src[2]);
    tainted_ = false;  // only the selector taints the whole result
    const uint32_t sel = Read(i.src[1]);
    const uint8_t undefined_in =
        UndefinedBytes(i.src[0]) | UndefinedBytes(i.src[2]) << 4;
    const uint64_t bytes = uint64_t{c} << 32 | a;
    uint32_t d = 0;
    uint8_t undefined = 0;
    const std::array<BytePick, 4> picks = PermutePicks(sel, i.prmt_mode);
    for (int k = 0; k < 4; ++k) {
      uint32_t byte =
          static_cast<uint32_t>(bytes >> (8 * picks[k].from)) & 0xff;
      if (picks[k].sign) byte = (byte & 0x80) ? 0xff : 0;
      d |= byte << (8 * k);
      if ((undefined_in >> picks[k].from) & 1) undefined |= 1 << k;
    }
    if (tainted_) undefined = 0xf;
    if (Word* w = Slot(i.dst, i.uniform)) {
      *w = {d, undefined, false};
      Note(writes_, i.uniform ? SassAccess::kUniform : SassAccess::kRegister,
           i.dst, d);
    }
  }

  void Isetp(const SassInstruction& i) {
    if (i.pdst[1] != kSassPt) {
      Refuse("a second predicate destination");
      return;
    }
    const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
    bool r = Compare(i.compare, a, b, i.is_signed);
    if (i.extended) {
      // The high words decide, the low compare where they are equal.
      if (i.compare == SassCompare::kF || i.compare == SassCompare::kT) {
        Refuse("ISETP.EX with a constant compare");
        return;
      }
      if (a == b) r = ReadPred(i.psrc[0]);
    }
    WritePred(i.pdst[0], i.pdst_uniform,
              SetOp(i.set_op, r, ReadPred(i.psrc[1])));
  }

  // An operand of an addition: negated in two's complement (the +1 is part
  // of the sum, and so of its carry), or bitwise in an extended addition
  // (IADD3.X, IMAD.X: the high word of a subtraction, its borrow the carry).
  static uint64_t Negated(uint32_t v, bool negate, bool extended) {
    if (!negate) return v;
    return extended ? uint64_t{~v} : uint64_t{~v} + 1;
  }
  uint64_t Addend(const SassOperand& o, bool extended) {
    return Negated(Read(o), o.negate, extended);
  }

  // The carry out of a 32-bit sum into `pdst`: 0 or 1. A sum of three
  // operands can carry 2, which the hardware's two carry flags split in a
  // way not yet pinned: not run.
  void WriteCarry(uint64_t sum, int pdst, bool uniform) {
    if (pdst == kSassPt) return;
    const uint64_t carry = sum >> 32;
    if (carry > 1) {
      Refuse("a carry of 2 out of a three-operand sum");
      return;
    }
    WritePred(pdst, uniform, carry == 1);
  }

  void Iadd3(const SassInstruction& i) {
    const uint64_t a = Addend(i.src[0], i.extended),
                   b = Addend(i.src[1], i.extended),
                   c = Addend(i.src[2], i.extended);
    uint64_t sum = a + b + c;
    if (i.extended) sum += ReadPred(i.psrc[0]) + ReadPred(i.psrc[1]);
    WriteDst(static_cast<uint32_t>(sum));
    if (i.pdst[1] == kSassPt) {
      WriteCarry(sum, i.pdst[0], i.pdst_uniform);
      return;
    }
    // Two carries out: that of a + b, then that of its low word + c, so
    // that they add up to the sum's (a calibration question: only their
    // sum is pinned by the code that reads them, docs/sass-evaluator.md).
    if (i.extended) {
      Refuse("IADD3.X with two carries out");
      return;
    }
    const uint64_t ab = a + b;
    WritePred(i.pdst[0], i.pdst_uniform, (ab >> 32) != 0);
    WritePred(i.pdst[1], i.pdst_uniform, ((ab & 0xffffffff) + c) >> 32 != 0);
  }

  void Lea(const SassInstruction& i) {
    const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
    uint64_t shifted;
    if (i.hi) {
      // .SX32: the pair is a sign-extended (c is not read).
      const uint32_t high =
          i.is_signed ? static_cast<uint32_t>(static_cast<int32_t>(a) >> 31)
                      : Read(i.src[2]);
      const uint64_t pair = uint64_t{high} << 32 | a;
      shifted = (pair << i.shift) >> 32 & 0xffffffff;
    } else {
      if (i.extended) {
        Refuse("LEA.X without .HI");
        return;
      }
      shifted = uint64_t{a << i.shift};
    }
    // b negated as IADD3's: in two's complement, bitwise with .X.
    uint64_t sum = shifted + Negated(b, i.src[1].negate, i.extended);
    if (i.extended) sum += ReadPred(i.psrc[0]);
    WriteDst(static_cast<uint32_t>(sum));
    WriteCarry(sum, i.pdst[0], i.pdst_uniform);
  }

  // SHF: {c:a} shifted by b, a 32- or 64-bit funnel; .HI keeps the high word.
  void Shf(const SassInstruction& i) {
    const uint64_t pair = uint64_t{Read(i.src[2])} << 32 | Read(i.src[0]);
    uint32_t s = Read(i.src[1]);
    const uint32_t width = static_cast<uint32_t>(i.width);
    s = i.wrap ? s & (width - 1) : std::min(s, width);
    uint64_t r;
    if (!i.right) {
      r = s >= 64 ? 0 : pair << s;
    } else if (i.is_signed) {
      r = static_cast<uint64_t>(static_cast<int64_t>(pair) >> std::min(s, 63u));
    } else {
      r = s >= 64 ? 0 : pair >> s;
    }
    WriteDst(static_cast<uint32_t>(i.hi ? r >> 32 : r));
  }

  static uint32_t Sgxt(uint32_t a, uint32_t b, bool is_signed, bool wrap) {
    const uint32_t n = wrap ? b & 31 : std::min(b, 32u);
    if (n == 0) return 0;
    if (n >= 32) return a;
    const uint32_t mask = (1u << n) - 1;
    const uint32_t low = a & mask;
    if (is_signed && ((low >> (n - 1)) & 1)) return low | ~mask;
    return low;
  }

  static uint32_t Bmsk(uint32_t pos, uint32_t width, bool wrap) {
    if (wrap) {
      pos &= 31;
      width &= 31;
    } else {
      pos = std::min(pos, 32u);
      width = std::min(width, 32u);
    }
    const uint64_t mask = ((uint64_t{1} << width) - 1) << pos;
    return static_cast<uint32_t>(mask);
  }

  void Imad(const SassInstruction& i) {
    const uint32_t c = Read(i.src[2]);
    uint64_t sum = uint64_t{Read(i.src[0]) * Read(i.src[1])} +
                   Negated(c, i.src[2].negate, i.extended);
    if (i.extended) sum += ReadPred(i.psrc[0]);
    WriteDst(static_cast<uint32_t>(sum));
  }

  // IMAD.WIDE: {d+1:d} = a * b + {c+1:c} (+ a carry in with .X), the carry
  // out of that 64-bit sum in its predicate; IMAD.HI: d = (a * b + {c+1:c})
  // >> 32.
  void ImadWide(const SassInstruction& i) {
    const uint32_t a = Read(i.src[0]), b = Read(i.src[1]);
    const uint64_t product =
        i.is_signed ? static_cast<uint64_t>(int64_t{static_cast<int32_t>(a)} *
                                            int64_t{static_cast<int32_t>(b)})
                    : uint64_t{a} * b;
    if (i.op == SassOp::kImadHi) {
      // c is a pair too: the high word of a * b + {c+1:c} (-O3 passes
      // mad.hi's c as {c:0}); the carry out of that sum of 64-bit words, a
      // signed product taken as its two's-complement word (64-bit
      // division's Newton steps; mad.hi.cc's carry).
      if (i.extended) {
        Refuse("IMAD.HI with a carry in");
        return;
      }
      const unsigned __int128 sum =
          static_cast<unsigned __int128>(product) + PairAddend(i);
      WriteDst(static_cast<uint32_t>(static_cast<uint64_t>(sum) >> 32));
      WritePred(i.pdst[0], i.pdst_uniform, (sum >> 64) != 0);
      return;
    }
    // ptxas writes IMAD.WIDE by RZ inside -O3 carry chains (madc.hi.cc.u64)
    // where reading it as a product of zero gives values the oracle refutes:
    // it means something not yet understood, so it is not run.
    if (i.src[1].kind == SassOperand::kRegister && i.src[1].reg == kSassRz) {
      Refuse("IMAD.WIDE by RZ");
      return;
    }
    if (i.is_signed && (i.extended || i.pdst[0] != kSassPt)) {
      Refuse("a signed IMAD.WIDE with a carry");
      return;
    }
    unsigned __int128 sum =
        static_cast<unsigned __int128>(product) + PairAddend(i);
    if (i.extended) sum += ReadPred(i.psrc[0]);
    const uint64_t d = static_cast<uint64_t>(sum);
    WriteReg(i.dst, i.uniform, static_cast<uint32_t>(d));
    if (i.dst != (i.uniform ? kSassUrz : kSassRz)) {
      WriteReg(i.dst + 1, i.uniform, static_cast<uint32_t>(d >> 32));
    }
    WritePred(i.pdst[0], i.pdst_uniform, (sum >> 64) != 0);
  }

  // IMAD.HI's and IMAD.WIDE's c, a pair: negated as a 64-bit value (bitwise
  // in .X, as IADD3.X).
  uint64_t PairAddend(const SassInstruction& i) {
    const uint64_t c = ReadPair(i.src[2]);
    if (!i.src[2].negate) return c;
    return i.extended ? ~c : ~c + 1;
  }

  static uint32_t MinMax(uint32_t a, uint32_t b, bool is_signed, bool min) {
    const bool a_less = Compare(SassCompare::kLt, a, b, is_signed);
    return min == a_less ? a : b;
  }

  // The low `width` bits of b, as a signed or unsigned integer, as the f32
  // `round` picks: the nearest (ties to even) or the next one toward -inf,
  // +inf or zero. A long double holds every 64-bit integer exactly, so the
  // cast to float is the one rounding.
  static uint32_t IntegerToF32(uint64_t b, int width, bool is_signed,
                               SassRound round) {
    const int unused = 64 - width;
    const uint64_t low = b << unused >> unused;
    const long double v =
        is_signed ? static_cast<long double>(static_cast<int64_t>(b << unused) >>
                                             unused)
                  : static_cast<long double>(low);
    float f = static_cast<float>(v);
    const long double rounded = f;
    if (round == SassRound::kUp && rounded < v) {
      f = std::nextafter(f, HUGE_VALF);
    } else if (round == SassRound::kDown && rounded > v) {
      f = std::nextafter(f, -HUGE_VALF);
    } else if (round == SassRound::kZero && std::fabs(rounded) > std::fabs(v)) {
      f = std::nextafter(f, 0.0f);
    }
    return std::bit_cast<uint32_t>(f);
  }

  // An f32 truncated toward zero into [0, 2^64 - 1]; NaN is 0.
  static uint64_t F2iTruncU64(float f) {
    if (std::isnan(f) || f <= 0) return 0;
    if (f >= 18446744073709551616.0f) return ~uint64_t{0};
    return static_cast<uint64_t>(f);
  }

  // An f32 truncated toward zero into [0, 2^32 - 1]; NaN is 0.
  static uint32_t F2iTruncU32(float f) {
    if (std::isnan(f) || f <= 0) return 0;
    if (f >= 4294967296.0f) return 0xffffffffu;
    return static_cast<uint32_t>(f);
  }

  static uint32_t Add16x2(uint32_t a, uint32_t b) {
    return ((a & 0xffff0000u) + (b & 0xffff0000u)) |
           ((a + b) & 0xffffu);
  }

  static uint32_t MinMax16x2(uint32_t a, uint32_t b, bool is_signed, bool min) {
    uint32_t d = 0;
    for (int lane = 0; lane < 2; ++lane) {
      uint32_t x = (a >> (16 * lane)) & 0xffff, y = (b >> (16 * lane)) & 0xffff;
      if (is_signed) {  // compare as sign-extended halves
        x = static_cast<uint32_t>(static_cast<int16_t>(x));
        y = static_cast<uint32_t>(static_cast<int16_t>(y));
      }
      d |= (MinMax(x, y, is_signed, min) & 0xffff) << (16 * lane);
    }
    return d;
  }

  // IDP.4A: c + the four products of a's and b's bytes; IDP.2A: c + a's two
  // halves times b's bytes 0, 1 (2, 3 with .HI).
  static uint32_t Idp(const SassInstruction& i, uint32_t a, uint32_t b,
                      uint32_t c) {
    auto part = [](uint32_t v, int bits, int k, bool is_signed) -> int64_t {
      const uint32_t x = (v >> (bits * k)) & ((1u << bits) - 1);
      if (!is_signed) return x;
      return bits == 8 ? int64_t{static_cast<int8_t>(x)}
                       : int64_t{static_cast<int16_t>(x)};
    };
    uint32_t sum = c;
    const int terms = i.dp2a ? 2 : 4;
    for (int k = 0; k < terms; ++k) {
      const int64_t x = part(a, i.dp2a ? 16 : 8, k, i.a_signed);
      const int64_t y = part(b, 8, i.dp2a && i.hi ? k + 2 : k, i.b_signed);
      sum += static_cast<uint32_t>(x * y);
    }
    return sum;
  }

  uint32_t Flo(const SassInstruction& i) {
    uint32_t x = Read(i.src[1]);
    if (i.src[1].invert) x = ~x;
    if (i.is_signed && static_cast<int32_t>(x) < 0) x = ~x;
    if (x == 0) return 0xffffffff;
    const uint32_t pos = 31 - static_cast<uint32_t>(std::countl_zero(x));
    return i.shift_amount ? 31 - pos : pos;
  }

  void Plop3(const SassInstruction& i) {
    const uint32_t a = ReadPred(i.psrc[0]) ? 0xff : 0;
    const uint32_t b = ReadPred(i.psrc[1]) ? 0xff : 0;
    const uint32_t c = ReadPred(i.psrc[2]) ? 0xff : 0;
    const bool p = Lut3(i.lut & 0xff, a, b, c) & 1;
    const bool q = Lut3(i.lut >> 8, a, b, c) & 1;
    WritePred(i.pdst[0], i.pdst_uniform, p);
    WritePred(i.pdst[1], i.pdst_uniform, q);
  }

  void Ldc(const SassInstruction& i) {
    uint64_t offset = i.src[1].value;
    if (i.src[0].kind == SassOperand::kRegister)
      offset += ReadReg(i.src[0].reg, false);
    if (!RequireDefined("a constant load's index")) return;
    if (i.width < 4) {
      const uint32_t v = ReadConstant(i.src[1].bank, offset, i.width);
      const int bits = 8 * i.width;
      const uint32_t mask = (1u << bits) - 1;
      uint32_t d = v & mask;
      if (i.is_signed && ((d >> (bits - 1)) & 1)) d |= ~mask;
      WriteDst(d);
      return;
    }
    for (int w = 0; w < i.width / 4; ++w) {
      bool opaque = false;
      const uint32_t v =
          ReadConstant(i.src[1].bank, offset + 4 * w, 4, &opaque);
      const bool uniform = i.uniform;
      const int zero = uniform ? kSassUrz : kSassRz;
      if (i.dst == zero) break;
      if (w > 0 && (i.dst % 2 != 0 || i.dst + 1 >= zero)) {
        Refuse("an odd register pair");
        return;
      }
      WriteReg(i.dst + w, uniform, v, opaque);
    }
  }

  // A global access's address, [Ra.64 + offset] (a signed 24-bit offset);
  // nullopt (refused) where it depends on a byte never written.
  std::optional<uint64_t> GlobalAddress(const SassInstruction& i,
                                        const char* what) {
    const uint64_t base = ReadPair(i.src[0]);
    if (!RequireDefined(what)) return std::nullopt;
    return base + (static_cast<int32_t>(i.src[2].value << 8) >> 8);
  }

  // The launch's buffer that holds `size` bytes at `address`, or null.
  const SassBuffer* BufferAt(uint64_t address, int size) const {
    for (const SassBuffer& buffer : launch_.buffers) {
      if (address >= buffer.address &&
          address + size <= buffer.address + buffer.bytes.size()) {
        return &buffer;
      }
    }
    return nullptr;
  }

  void Stg(const SassInstruction& i) {
    const std::optional<uint64_t> address =
        GlobalAddress(i, "a store's address");
    if (!address.has_value()) return;
    SassStore store{
        .pc = i.pc, .step = step_, .address = *address, .size = i.width};
    const int words = std::max(1, i.width / 4);
    const int data = i.src[1].reg;
    if (data != kSassRz && (data % words != 0 || data + words > kSassRz)) {
      Refuse("data registers");
      return;
    }
    for (int w = 0; w < words; ++w) {
      if (data == kSassRz) break;
      storing_ = true;
      store.words[w] = ReadReg(data + w, false);
      storing_ = false;
      const int stored = std::min(4, i.width - 4 * w);
      if (r_[data + w].undefined & ((1u << stored) - 1)) {
        Refuse(absl::StrCat("stores bytes of R", data + w, " never written"));
        return;
      }
    }
    if (i.width < 4) store.words[0] &= (1u << (8 * i.width)) - 1;
    if (!error_.empty()) return;
    const SassBuffer* buffer = BufferAt(store.address, i.width);
    if (buffer == nullptr || !buffer->writable) {
      Refuse(absl::StrFormat("stores to 0x%x, outside the launch's buffers",
                             store.address));
      return;
    }
    stores_.push_back(store);
  }

  // A load from one of the launch's read-only buffers (its inputs), sign-
  // or zero-extended to 32 bits; 64 bits into a register pair. The stores
  // are kept as a list, not in the buffers, so a load from a writable one
  // would not see them: refused.
  void Ldg(const SassInstruction& i) {
    const std::optional<uint64_t> address =
        GlobalAddress(i, "a load's address");
    if (!address.has_value()) return;
    const SassBuffer* buffer = BufferAt(*address, i.width);
    if (buffer == nullptr) {
      Refuse(absl::StrFormat("loads from 0x%x, outside the launch's buffers",
                             *address));
      return;
    }
    if (buffer->writable) {
      Refuse("loads from a buffer the kernel stores to");
      return;
    }
    uint64_t value = 0;
    for (int b = 0; b < i.width; ++b) {
      value |= uint64_t{buffer->bytes[*address - buffer->address + b]}
               << (8 * b);
    }
    if (i.width < 4 && i.is_signed) {
      const int shift = 64 - 8 * i.width;
      value =
          static_cast<uint64_t>(static_cast<int64_t>(value << shift) >> shift);
    }
    if (i.width == 8 && (i.dst % 2 != 0 || i.dst + 1 >= kSassRz) &&
        i.dst != kSassRz) {
      Refuse("an odd register pair");
      return;
    }
    WriteDst(static_cast<uint32_t>(value));
    if (i.width == 8 && i.dst != kSassRz)
      WriteReg(i.dst + 1, false, static_cast<uint32_t>(value >> 32));
  }

  const std::vector<SassSlot>& kernel_;
  const SassLaunch& launch_;
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
  std::vector<SassStore> stores_;
  std::string error_, blocker_;
};

}  // namespace

SassRun RunSass(const std::vector<SassSlot>& kernel, const SassLaunch& launch) {
  return Machine(kernel, launch).Run();
}

}  // namespace ptxdiff
