#include "sass/sass_machine.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sass/sass_machine_internal.h"

namespace ptxdiff {
namespace sass_machine_internal {

void Machine::Run() {
  SassRun& run = run_;
  run.ran = false;
  run.steps = 0;
  run.trace.clear();
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
  run.why_not = std::move(error_);
  run.blocker = std::move(blocker_);
}

std::string Machine::Blocker(const SassSlot& slot) {
  const std::string& why = slot.why_not;
  const size_t colon = why.rfind(": ");
  const std::string head = why.substr(0, why.find(" at +"));
  if (head.rfind("op 0x", 0) == 0 || colon == std::string::npos) return head;
  std::string what = why.substr(colon + 2);
  if (what.rfind("bits ", 0) == 0) what = "unread bits";
  return absl::StrCat(head, ": ", what);
}

void Machine::Trace(const SassInstruction& i,
                    std::vector<SassTraceStep>& trace) {
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

void Machine::Fail(std::string why, std::string blocker) {
  if (!error_.empty()) return;
  error_ = std::move(why);
  blocker_ = std::move(blocker);
}

void Machine::Refuse(const std::string& what) {
  Fail(absl::StrFormat("%s at +0x%04x: %s", SassText(*current_), current_->pc,
                       what),
       absl::StrCat(SassOpName(current_->op, current_->uniform), ": ", what));
}

std::optional<size_t> Machine::Step(const SassInstruction& i) {
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
    case SassOp::kFsetp:
      Fsetp(i);
      return next;
    case SassOp::kFsel: {
      const bool p = ReadPred(i.psrc[0]);
      WriteDst(p ? Read(i.src[0]) : Read(i.src[1]));
      return next;
    }
    case SassOp::kFmul:
    case SassOp::kFadd:
      FloatArithmetic(i);
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
      // b negated as IADD3's is (VIADD R, R, -UR).
      const uint32_t a = Read(i.src[0]);
      const uint32_t b = static_cast<uint32_t>(Addend(i.src[1], false));
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
    case SassOp::kP2r:
      P2r(i);
      return next;
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

}  // namespace sass_machine_internal

SassRun RunSass(const std::vector<SassSlot>& kernel, const SassLaunch& launch) {
  SassRun run;
  RunSass(kernel, launch, run);
  return run;
}

void RunSass(const std::vector<SassSlot>& kernel, const SassLaunch& launch,
             SassRun& run) {
  sass_machine_internal::Machine(kernel, launch, run).Run();
}

}  // namespace ptxdiff
