// Reading the constants a folded kernel stores, from its SASS.
//
// The ptxas backend compiles kernels that materialize operands as constants,
// execute one instruction per tuple and store each result. When ptxas folds
// every instruction, what remains in the kernel's `.text` is setup (loads of
// the output pointer from the constant bank), moves of constants into
// registers, stores, EXIT and padding. This decoder recognizes exactly that
// and nothing else: every instruction of the kernel must be one whose effect
// on the registers it fully understands (docs/ptxas-folding-research.md §3),
// on the arch it was compiled for. Anything else — real arithmetic left in
// the kernel, a branch, a predicated instruction, an encoding not seen on
// that arch — makes the whole kernel "not folded". A wrong value would be a
// false finding; a kernel declined here is merely not tested.
//
// The encodings come from ptxas 13.0 output for sm_75 .. sm_121f; there is no
// disassembler on the machine, so every accepted form is pinned to the exact
// operand bits observed (scheduling bits excepted), per arch.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_CONSTANTS_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_CONSTANTS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {

// The instructions that put a constant into registers. A decoder accepts a
// form only on the archs where ptxas was seen to use it.
enum ConstantForm : uint32_t {
  kMovImm32 = 1 << 0,      // MOV Rd, imm32 (0x802)
  kImadMovImm32 = 1 << 1,  // IMAD.MOV.U32 Rd, RZ, RZ, imm32 (0x424)
  // HFMA2(.MMA) Rd, -RZ, RZ, imm (0x435 / 0x431): imm only where fp16
  // arithmetic gives it back exactly, so not for NaN halves but 0x7fff.
  kHfma2MmaImm = 1 << 2,
  kHfma2Imm = 1 << 3,
  kMov64Imm = 1 << 4,      // MOV.64 Rd, imm64 (0x402)
  kZeroRegister = 1 << 5,  // RZ as the stored register: 0, on every arch
};

// The instructions that load the output pointer and the store descriptor
// from the constant bank; the registers they write hold no known constant.
enum SetupForm : uint32_t {
  kMovCbank = 1 << 0,      // MOV Rd, c[][] (0xa02)
  kImadMovCbank = 1 << 1,  // IMAD.MOV.U32 Rd, RZ, RZ, c[][] (0x624)
  kLdc = 1 << 2,           // LDC(.64) Rd, c[][] (0xb82)
  kUldc = 1 << 3,          // ULDC(.64) URd, c[][] (0xab9)
  kLdcu = 1 << 4,          // LDCU(.64) URd, c[][] (0x7ac)
};

// What the decoder accepts for one -arch.
struct SassArch {
  std::string name;    // "sm_90a"
  int sm = 0;          // 90
  uint32_t forms = 0;  // ConstantForm bits
  uint32_t setup = 0;  // SetupForm bits
  // A store's operand bits but its size (bits 9..11) and uniform register
  // (0..7): STG.E.SYS [UR] on sm_75, STG.E desc[UR][R.64] later.
  uint64_t store_bits = 0;
  // sm_87 kernels open with a fixed 20-instruction block (ISETP, a branch
  // over register moves, UMOV) that is accepted only byte for byte.
  bool fixed_prologue = false;
};

// The archs the decoder knows, oldest first: those of ptxas 13.0 from sm_75.
std::vector<std::string> KnownArchs();

// The decoder's description of `arch`; InvalidArgument naming the known ones
// if it has none.
absl::StatusOr<SassArch> FindSassArch(absl::string_view arch);

// One store of constant bytes.
struct ConstantStore {
  int64_t offset = 0;                  // bytes from the output pointer
  int size = 0;                        // 1, 2, 4, 8 or 16 bytes
  std::array<uint32_t, 4> words = {};  // little-endian; words past size are 0
  uint32_t forms = 0;  // the ConstantForm bits that produced the stored words

  // The low 64 bits of the stored value.
  uint64_t Low64() const { return words[0] | uint64_t{words[1]} << 32; }
};

// Decodes one kernel's `.text` section. Returns its stores in program order,
// or FailedPrecondition whose message says why the kernel is not a folded
// kernel the decoder understands (the first offending instruction). Stores
// in a returned list never overlap and all use the same base address.
absl::StatusOr<std::vector<ConstantStore>> DecodeConstantStores(
    const SassArch& arch, absl::string_view text);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_CONSTANTS_H_
