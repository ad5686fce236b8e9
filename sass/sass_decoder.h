// Decoding the integer SASS that ptxas emits into SassInstructions.
//
// The encodings are those of ptxas 13.0 for sm_90 (Volta's 128-bit format):
// bits 0..11 the opcode (for ALU operations, 0..8 the operation and 9..11
// which operands are registers, immediates, constant-bank words or uniform
// registers), 12..15 the guard, 16..23 the destination, 24..31 the first
// source, then per-operation fields up to bit 104; bits 105..127 are
// scheduling control and say nothing of what is computed. There is no
// disassembler on the machine: every field read here is pinned by tests
// that compile PTX which produces it (sass_decoder_test.cc).
//
// The decoder is strict: every set bit of an encoding must be one it read.
// An unknown opcode, or a known one with a bit it did not read (a modifier
// it has not met), gives a slot that says so, naming the bits; the machine
// refuses to run it. Decoding tables are per arch (SassArchInfo), so other
// archs can follow with tables, not new code.

#ifndef PTXDIFF_SASS_SASS_DECODER_H_
#define PTXDIFF_SASS_SASS_DECODER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sass/sass_instruction.h"

namespace ptxdiff {

// What the decoder and the machine need to know of an arch.
struct SassArchInfo {
  std::string name;             // "sm_90"
  int sm = 0;                   // 90
  uint32_t param_base = 0;      // c[0x0][param_base]: the first parameter
  uint16_t r2ur_opcode = 0;     // R2UR's opcode
  uint64_t store_fixed_hi = 0;  // STG's cache-policy bits, as ptxas writes them
  uint64_t load_fixed_hi = 0;   // LDG's
};

// The archs whose SASS the decoder reads ("sm_90", "sm_90a").
std::vector<std::string> SassExecutableArchs();

// The arch's description; InvalidArgument naming those it has if none.
absl::StatusOr<SassArchInfo> FindSassArchInfo(absl::string_view arch);

// One instruction at byte offset `pc`, from its two 64-bit words (the
// scheduling bits of `hi` are ignored).
SassSlot DecodeSassInstruction(const SassArchInfo& arch, uint64_t lo,
                               uint64_t hi, uint32_t pc);

// A kernel's `.text`: one slot per 16 bytes. InvalidArgument if the size is
// not whole instructions.
absl::StatusOr<std::vector<SassSlot>> DecodeSassKernel(const SassArchInfo& arch,
                                                       absl::string_view text);

// The kernel as a listing, one "/*0040*/  IADD3 R5, R4, R5, RZ" line per
// instruction up to the padding after the last EXIT; a slot not understood
// shows its raw words and why.
std::string SassListing(const std::vector<SassSlot>& kernel);

}  // namespace ptxdiff

#endif  // PTXDIFF_SASS_SASS_DECODER_H_
