#include "sass/sass_decoder.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sass/sass_decoder_internal.h"

namespace ptxdiff {
namespace sass_decoder_internal {
namespace {

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

// P2R Rd, PR, RZ, mask: the predicates P0..P6 under an immediate mask,
// ptxas's spill of a predicate when more are live than a thread has (it
// reads the bit back with ISETP.NE). Only the form with a = RZ and no byte
// selector (the high word all 0) is read: another a merges into it in a
// way not pinned here.
void DecodeP2r(Bits& bits, Decoding& d) {
  SassInstruction& insn = d.insn;
  insn.op = SassOp::kP2r;
  insn.dst = bits.Reg(16);
  insn.src[0] = {.kind = SassOperand::kRegister, .reg = bits.Reg(24)};
  insn.src[1] = {.kind = SassOperand::kImmediate,
                 .value = static_cast<uint32_t>(bits.Take(32, 32))};
  if (insn.src[0].reg != kSassRz) d.Refuse("P2R merging into a register");
  if (insn.src[1].value > 0x7f) d.Refuse("P2R's mask past P6");
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
    case 0x803:
      return DecodeP2r(bits, d);
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
}  // namespace sass_decoder_internal

using sass_decoder_internal::Bits;
using sass_decoder_internal::DecodeAluOperation;
using sass_decoder_internal::DecodeByOpcode;
using sass_decoder_internal::Decoding;
using sass_decoder_internal::kOperandMaskHi;

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
  // An ALU operation has a nonzero form (sass_decoder_alu.cc).
  if (!DecodeAluOperation(opcode, bits, d)) {
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
