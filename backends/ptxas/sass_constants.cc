#include "backends/ptxas/sass_constants.h"

#include <algorithm>
#include <optional>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sass/sass_instruction.h"

namespace ptxdiff {
namespace {

// Bits 41..63 of the high word are scheduling control (stall counts,
// barriers, reuse); they change with the neighbouring instructions and say
// nothing about what an instruction computes.
constexpr uint64_t kOperandMask = (uint64_t{1} << 41) - 1;
constexpr int kRz = 255;
constexpr int kNumRegisters = 256;
constexpr int kUrz = 63;
constexpr int kNumUniformRegisters = 64;
constexpr uint32_t kPredicateTrue = 7;  // guard PT (not negated)

enum Opcode : uint32_t {
  kOpMovImm = 0x802,
  kOpImadImm = 0x424,
  kOpHfma2MmaImm = 0x435,
  kOpHfma2Imm = 0x431,
  kOpMov64Imm = 0x402,
  kOpMovCbank = 0xa02,
  kOpImadCbank = 0x624,
  kOpLdc = 0xb82,
  kOpUldc = 0xab9,
  kOpLdcu = 0x7ac,
  kOpStg = 0x986,
  kOpExit = 0x94d,
  kOpBra = 0x947,
  kOpNop = 0x918,
};

// One 128-bit instruction, the high word without its scheduling bits.
struct Insn {
  uint64_t lo = 0;
  uint64_t hi = 0;

  uint32_t Field(int bit, int width) const {
    const uint64_t word = bit < 64 ? lo : hi;
    return static_cast<uint32_t>((word >> (bit % 64)) & ((1ull << width) - 1));
  }
  uint32_t Opcode() const { return Field(0, 12); }
  uint32_t Guard() const { return Field(12, 4); }
  int Rd() const { return static_cast<int>(Field(16, 8)); }
  int Ra() const { return static_cast<int>(Field(24, 8)); }
  uint32_t Imm32() const { return Field(32, 32); }
};

// sm_87's kernel prologue (docs/ptxas-folding-research.md §3.4), identical in
// every sm_87 kernel ptxas 13.0 wrote: ISETP P0; @P0 BRA past the block; 16
// register moves; UMOV UR2, 0x1. Both paths reach the body at +0x140, and the
// walk after it starts with every register unknown, so nothing the block
// writes can reach a decoded value.
constexpr std::array<std::pair<uint64_t, uint64_t>, 20> kSm87Prologue = {{
    {0x00000002ff007c0c, 0x0000bf05070}, {0x0000012000000947, 0x00003800000},
    {0xffffffff00007956, 0x00000000000}, {0x0000000000017f55, 0x00000100000},
    {0x0000000001027f55, 0x00000100000}, {0x0000000002037f55, 0x00000100000},
    {0x0000000003047f55, 0x00000100000}, {0x0000000004057f55, 0x00000100000},
    {0x0000000005067f55, 0x00000100000}, {0x0000000006077f55, 0x00000100000},
    {0x0000000007087f55, 0x00000100000}, {0x0000000008097f55, 0x00000100000},
    {0x00000000090a7f55, 0x00000100000}, {0x000000000a0b7f55, 0x00000100000},
    {0x000000000b0c7f55, 0x00000100000}, {0x000000000c0d7f55, 0x00000100000},
    {0x000000000d0e7f55, 0x00000100000}, {0x000000000e0f7f55, 0x00000100000},
    {0x000000000f007956, 0x00000000000}, {0x0000000100027882, 0x00000000000},
}};

struct ArchRow {
  absl::string_view name;
  int sm;
  uint32_t forms;
  uint32_t setup;
};

// Which forms ptxas 13.0 uses on each arch: those seen in sweeps of
// constants, of multi-store kernels and of folded instructions of every
// family (sass_constants_test.cc compiles the constants again on every arch).
// A form missing here is declined, not guessed: sm_86/88/89 never showed
// HFMA2.MMA, and sm_120/121 never IMAD.MOV.
constexpr uint32_t kTuringForms = kMovImm32 | kImadMovImm32 | kZeroRegister;
constexpr uint32_t kAmpereForms = kTuringForms | kHfma2MmaImm;
constexpr uint32_t kBlackwellForms = kTuringForms | kHfma2Imm;
constexpr uint32_t kSm120Forms =
    kMovImm32 | kHfma2Imm | kMov64Imm | kZeroRegister;
constexpr uint32_t kTuringSetup = kMovCbank | kImadMovCbank | kUldc;
constexpr uint32_t kHopperSetup = kLdc | kUldc;
constexpr uint32_t kBlackwellSetup = kLdc | kLdcu;

constexpr ArchRow kArchs[] = {
    {"sm_75", 75, kTuringForms, kTuringSetup},
    {"sm_80", 80, kAmpereForms, kTuringSetup},
    {"sm_86", 86, kTuringForms, kTuringSetup},
    {"sm_87", 87, kAmpereForms, kTuringSetup},
    {"sm_88", 88, kTuringForms, kTuringSetup},
    {"sm_89", 89, kTuringForms, kTuringSetup},
    {"sm_90", 90, kAmpereForms, kHopperSetup},
    {"sm_90a", 90, kAmpereForms, kHopperSetup},
    {"sm_100", 100, kBlackwellForms, kBlackwellSetup},
    {"sm_100a", 100, kBlackwellForms, kBlackwellSetup},
    {"sm_100f", 100, kBlackwellForms, kBlackwellSetup},
    {"sm_103", 103, kBlackwellForms, kBlackwellSetup},
    {"sm_103a", 103, kBlackwellForms, kBlackwellSetup},
    {"sm_103f", 103, kBlackwellForms, kBlackwellSetup},
    {"sm_110", 110, kBlackwellForms, kBlackwellSetup},
    {"sm_110a", 110, kBlackwellForms, kBlackwellSetup},
    {"sm_110f", 110, kBlackwellForms, kBlackwellSetup},
    {"sm_120", 120, kSm120Forms, kBlackwellSetup},
    {"sm_120a", 120, kSm120Forms, kBlackwellSetup},
    {"sm_120f", 120, kSm120Forms, kBlackwellSetup},
    {"sm_121", 121, kSm120Forms, kBlackwellSetup},
    {"sm_121a", 121, kSm120Forms, kBlackwellSetup},
    {"sm_121f", 121, kSm120Forms, kBlackwellSetup},
};

absl::Status NotFolded(absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat("not folded: ", why));
}

std::string Describe(const Insn& insn, size_t pc) {
  return absl::StrFormat("op 0x%03x at +0x%x (%016x %011x)", insn.Opcode(), pc,
                         insn.lo, insn.hi);
}

// What a register holds at some point of the walk.
struct RegisterState {
  enum Kind : uint8_t { kUnknown, kConstant, kCbank } kind = kUnknown;
  uint32_t value = 0;  // kConstant: the value
  uint32_t forms = 0;  // kConstant: the ConstantForm that wrote it
  // kCbank: which word of the constant bank it holds, as the loading
  // instruction without its destination field, plus the word's index in the
  // load. Equal sources hold equal values: the bank does not change while
  // the kernel runs.
  uint64_t source_lo = 0;
  uint64_t source_hi = 0;
};

// A constant move: the registers it writes and their values.
struct ConstantMove {
  int rd = 0;
  int count = 0;
  uint32_t values[2] = {};
  ConstantForm form = kMovImm32;
  bool exact = true;  // false: the value is not what the register gets
};

// Recognizes the constant forms, pinned to their operand bits. nullopt if
// `insn` is not one.
std::optional<ConstantMove> MatchConstantMove(const Insn& insn) {
  if (insn.Guard() != kPredicateTrue) return std::nullopt;
  const uint32_t imm = insn.Imm32();
  const ConstantMove one = {.rd = insn.Rd(), .count = 1, .values = {imm, 0}};
  switch (insn.Opcode()) {
    case kOpMovImm:
      if (insn.Ra() != 0 || insn.hi != 0xf00) return std::nullopt;
      return one;
    case kOpImadImm:
      if (insn.Ra() != kRz || insn.hi != 0x078e00ff) return std::nullopt;
      return ConstantMove{one.rd, 1, {imm, 0}, kImadMovImm32};
    case kOpHfma2MmaImm:
    case kOpHfma2Imm: {
      if (insn.Ra() != kRz || insn.hi != 0x1ff) return std::nullopt;
      const ConstantForm form =
          insn.Opcode() == kOpHfma2Imm ? kHfma2Imm : kHfma2MmaImm;
      return ConstantMove{one.rd, 1, {imm, 0}, form, Hfma2GivesBack(imm)};
    }
    case kOpMov64Imm: {
      // The 64-bit immediate spans bits 24..87; bits 88..104 are zero.
      if (insn.hi >> 24 != 0) return std::nullopt;
      const uint64_t value = (insn.lo >> 24) | (insn.hi << 40);
      return ConstantMove{
          one.rd,
          2,
          {static_cast<uint32_t>(value), static_cast<uint32_t>(value >> 32)},
          kMov64Imm};
    }
    default:
      return std::nullopt;
  }
}

// A constant-bank load: the registers it writes, uniform or not.
struct CbankLoad {
  int rd = 0;
  int count = 0;
  bool uniform = false;
  SetupForm form = kMovCbank;
};

// Recognizes the constant-bank loads, pinned to their operand bits: the size
// field (hi bits 9..11) is 4 for 32 and 5 for 64 bits, and the index
// register (bits 24..31) is RZ or 0 as ptxas writes it, so that the loaded
// word depends on the instruction's bits alone.
std::optional<CbankLoad> MatchCbankLoad(const Insn& insn) {
  if (insn.Guard() != kPredicateTrue) return std::nullopt;
  const int rd = insn.Rd();
  const int index = insn.Ra();
  switch (insn.Opcode()) {
    case kOpMovCbank:
      if (index != 0 || insn.hi != 0xf00) return std::nullopt;
      return CbankLoad{rd, 1, false, kMovCbank};
    case kOpImadCbank:
      if (index != kRz || insn.hi != 0x078e00ff) return std::nullopt;
      return CbankLoad{rd, 1, false, kImadMovCbank};
    case kOpLdc:
      if (index != kRz || (insn.hi != 0x800 && insn.hi != 0xa00)) {
        return std::nullopt;
      }
      return CbankLoad{rd, insn.hi == 0xa00 ? 2 : 1, false, kLdc};
    case kOpUldc:
      if (index != 0 || (insn.hi != 0x800 && insn.hi != 0xa00)) {
        return std::nullopt;
      }
      return CbankLoad{rd, insn.hi == 0xa00 ? 2 : 1, true, kUldc};
    case kOpLdcu:
      if (index != kRz || (insn.hi != 0x8000800 && insn.hi != 0x8000a00)) {
        return std::nullopt;
      }
      return CbankLoad{rd, insn.hi == 0x8000a00 ? 2 : 1, true, kLdcu};
    default:
      return std::nullopt;
  }
}

// The walk over a kernel's instructions before its EXIT.
class Walker {
 public:
  explicit Walker(const SassArch& arch) : arch_(arch) {}

  absl::Status Step(const Insn& insn, size_t pc) {
    if (std::optional<ConstantMove> move = MatchConstantMove(insn)) {
      return Move(*move, insn, pc);
    }
    if (std::optional<CbankLoad> load = MatchCbankLoad(insn)) {
      return Load(*load, insn, pc);
    }
    if (insn.Opcode() == kOpStg) return Store(insn, pc);
    if (insn.Opcode() == kOpNop) return absl::OkStatus();
    return NotFolded(absl::StrCat(Describe(insn, pc), " is not understood"));
  }

  std::vector<ConstantStore> TakeStores() { return std::move(stores_); }

 private:
  // Refuses writes to RZ (or past the end of the register file).
  absl::Status CheckWritable(int zero, int rd, int count, const Insn& insn,
                             size_t pc) {
    if (rd + count > zero) {
      return NotFolded(absl::StrCat(Describe(insn, pc), " writes RZ"));
    }
    return absl::OkStatus();
  }

  absl::Status Move(const ConstantMove& move, const Insn& insn, size_t pc) {
    if ((arch_.forms & move.form) == 0) {
      return NotFolded(absl::StrCat(Describe(insn, pc), ": a form not seen on ",
                                    arch_.name));
    }
    if (move.count == 2 && move.rd % 2 != 0) {
      return NotFolded(absl::StrCat(Describe(insn, pc), ": odd register pair"));
    }
    absl::Status ok = CheckWritable(kRz, move.rd, move.count, insn, pc);
    if (!ok.ok()) return ok;
    for (int i = 0; i < move.count; ++i) {
      RegisterState& r = r_[move.rd + i];
      r.kind = move.exact ? RegisterState::kConstant : RegisterState::kUnknown;
      r.value = move.values[i];
      r.forms = move.form;
    }
    return absl::OkStatus();
  }

  absl::Status Load(const CbankLoad& load, const Insn& insn, size_t pc) {
    if ((arch_.setup & load.form) == 0) {
      return NotFolded(absl::StrCat(Describe(insn, pc), ": a form not seen on ",
                                    arch_.name));
    }
    std::span<RegisterState> file(load.uniform ? ur_.data() : r_.data(),
                                  load.uniform ? ur_.size() : r_.size());
    const int zero = load.uniform ? kUrz : kRz;
    if (load.count == 2 && load.rd % 2 != 0) {
      return NotFolded(absl::StrCat(Describe(insn, pc), ": odd register pair"));
    }
    absl::Status ok = CheckWritable(zero, load.rd, load.count, insn, pc);
    if (!ok.ok()) return ok;
    for (int i = 0; i < load.count; ++i) {
      file[load.rd + i] = {
          .kind = RegisterState::kCbank,
          .source_lo = insn.lo & ~(uint64_t{0xff} << 16),
          .source_hi = insn.hi << 8 | static_cast<uint64_t>(i)};
    }
    return absl::OkStatus();
  }

  // The address of a store is Ra (a 64-bit pair, or RZ) plus a uniform
  // register pair (sm_75: the address; later: the memory descriptor). Both
  // must hold words of the constant bank, the same words at every store of
  // the kernel (ptxas may load them again, into other registers, when
  // registers run short), so that every offset is from the same base.
  absl::Status CheckAddress(const Insn& insn, size_t pc) {
    const int ra = insn.Ra();
    const int ur = static_cast<int>(insn.Field(64, 8));
    if (ur + 1 >= kUrz || (ra != kRz && (ra + 1 >= kRz || ra % 2 != 0))) {
      return NotFolded(absl::StrCat(Describe(insn, pc), ": unusual address"));
    }
    std::vector<const RegisterState*> address = {&ur_[ur], &ur_[ur + 1]};
    if (ra != kRz) address.insert(address.end(), {&r_[ra], &r_[ra + 1]});
    // Whether Ra is used, then the sources of the address registers (the
    // other operand bits are the same in every store, store_bits).
    std::vector<uint64_t> base = {ra == kRz};
    for (const RegisterState* r : address) {
      if (r->kind != RegisterState::kCbank) {
        return NotFolded(absl::StrCat(
            Describe(insn, pc), ": address not loaded from the constant bank"));
      }
      base.insert(base.end(), {r->source_lo, r->source_hi});
    }
    if (!base_.empty() && base_ != base) {
      return NotFolded(
          absl::StrCat(Describe(insn, pc), ": stores with different bases"));
    }
    base_ = std::move(base);
    return absl::OkStatus();
  }

  absl::Status Store(const Insn& insn, size_t pc) {
    if (insn.Guard() != kPredicateTrue) {
      return NotFolded(absl::StrCat(Describe(insn, pc), ": predicated store"));
    }
    static constexpr int kSizes[8] = {1, 0, 2, 0, 4, 8, 16, 0};
    const int size = kSizes[insn.Field(64 + 9, 3)];
    if (size == 0 || insn.Field(16, 8) != 0 ||
        (insn.hi & ~(uint64_t{7} << 9) & ~uint64_t{0xff}) != arch_.store_bits) {
      return NotFolded(absl::StrCat(Describe(insn, pc),
                                    ": a store form not seen on ", arch_.name));
    }
    absl::Status ok = CheckAddress(insn, pc);
    if (!ok.ok()) return ok;
    ConstantStore store;
    store.offset = static_cast<int32_t>(insn.Field(40, 24) << 8) >> 8;
    store.size = size;
    const int data = static_cast<int>(insn.Field(32, 8));
    const int words = std::max(1, size / 4);
    if (data == kRz) {
      store.forms = kZeroRegister;
    } else {
      if (data % words != 0 || data + words > kRz) {
        return NotFolded(absl::StrCat(Describe(insn, pc), ": data registers"));
      }
      for (int i = 0; i < words; ++i) {
        const RegisterState& r = r_[data + i];
        if (r.kind != RegisterState::kConstant) {
          return NotFolded(absl::StrCat(Describe(insn, pc), " stores R",
                                        data + i, ", not a known constant"));
        }
        store.words[i] = r.value;
        store.forms |= r.forms;
      }
      if (size < 4) store.words[0] &= (1u << (8 * size)) - 1;
    }
    stores_.push_back(store);
    return absl::OkStatus();
  }

  const SassArch& arch_;
  std::array<RegisterState, kNumRegisters> r_;
  std::array<RegisterState, kNumUniformRegisters> ur_;
  std::vector<uint64_t> base_;  // of the first store; see CheckAddress
  std::vector<ConstantStore> stores_;
};

std::vector<Insn> SplitInstructions(absl::string_view text) {
  std::vector<Insn> out(text.size() / 16);
  for (size_t i = 0; i < out.size(); ++i) {
    for (int b = 0; b < 8; ++b) {
      out[i].lo |= uint64_t{static_cast<uint8_t>(text[16 * i + b])} << (8 * b);
      out[i].hi |= uint64_t{static_cast<uint8_t>(text[16 * i + 8 + b])}
                   << (8 * b);
    }
    out[i].hi &= kOperandMask;
  }
  return out;
}

// The number of instructions the arch's fixed prologue takes, or an error if
// the kernel does not open with it.
absl::StatusOr<size_t> SkipPrologue(const SassArch& arch,
                                    const std::vector<Insn>& insns) {
  if (!arch.fixed_prologue) return 0;
  if (insns.size() < kSm87Prologue.size()) {
    return NotFolded("shorter than the sm_87 prologue");
  }
  for (size_t i = 0; i < kSm87Prologue.size(); ++i) {
    if (insns[i].lo != kSm87Prologue[i].first ||
        insns[i].hi != kSm87Prologue[i].second) {
      return NotFolded(absl::StrCat(Describe(insns[i], 16 * i),
                                    " differs from the sm_87 prologue"));
    }
  }
  return kSm87Prologue.size();
}

absl::Status CheckNoOverlap(std::vector<ConstantStore> stores) {
  std::sort(stores.begin(), stores.end(),
            [](const ConstantStore& a, const ConstantStore& b) {
              return a.offset < b.offset;
            });
  for (size_t i = 1; i < stores.size(); ++i) {
    if (stores[i - 1].offset + stores[i - 1].size > stores[i].offset) {
      return NotFolded(absl::StrCat("two stores to byte ", stores[i].offset));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> KnownArchs() {
  std::vector<std::string> out;
  for (const ArchRow& row : kArchs) out.emplace_back(row.name);
  return out;
}

absl::StatusOr<SassArch> FindSassArch(absl::string_view arch) {
  for (const ArchRow& row : kArchs) {
    if (row.name != arch) continue;
    return SassArch{.name = std::string(row.name),
                    .sm = row.sm,
                    .forms = row.forms,
                    .setup = row.setup,
                    .store_bits = row.sm == 75 ? 0x0c10e100u : 0x0c101100u,
                    .fixed_prologue = row.sm == 87};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("arch '", arch, "' is not one the SASS decoder knows: ",
                   absl::StrJoin(KnownArchs(), ", ")));
}

absl::StatusOr<std::vector<ConstantStore>> DecodeConstantStores(
    const SassArch& arch, absl::string_view text) {
  if (text.empty() || text.size() % 16 != 0) {
    return NotFolded(absl::StrCat(".text of ", text.size(),
                                  " bytes is not whole 16-byte instructions"));
  }
  const std::vector<Insn> insns = SplitInstructions(text);
  auto first = SkipPrologue(arch, insns);
  if (!first.ok()) return first.status();
  Walker walker(arch);
  size_t pc = *first;
  for (; pc < insns.size() && insns[pc].Opcode() != kOpExit; ++pc) {
    absl::Status ok = walker.Step(insns[pc], 16 * pc);
    if (!ok.ok()) return ok;
  }
  if (pc == insns.size() || insns[pc].Guard() != kPredicateTrue) {
    return NotFolded("no unconditional EXIT");
  }
  // Nothing after an unconditional EXIT runs: ptxas pads with a branch to
  // itself and NOPs, and anything else there means code this walk missed.
  for (++pc; pc < insns.size(); ++pc) {
    const uint32_t op = insns[pc].Opcode();
    if (op != kOpBra && op != kOpNop) {
      return NotFolded(
          absl::StrCat(Describe(insns[pc], 16 * pc), " after EXIT"));
    }
  }
  std::vector<ConstantStore> stores = walker.TakeStores();
  absl::Status ok = CheckNoOverlap(stores);
  if (!ok.ok()) return ok;
  return stores;
}

}  // namespace ptxdiff
