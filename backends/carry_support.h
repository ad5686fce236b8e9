// The extended-precision instructions (PTX ISA 9.7.2) in the kernels the
// ptxas, cuda and ptx-cmd backends write: how a kernel sets the incoming
// CC.CF before the instruction under test, reads the outgoing one after it,
// and how the read-back word becomes Result::carry.
//
// CC.CF is no register, so it is set and read by instructions. The spec
// does not say how an add-kind instruction reads a sub-kind flag (a borrow)
// or the reverse (docs/spec-notes.md), so both are of the variant's own kind
// (CarryIsBorrow), each justified by the spec's pseudocode
// (docs/kernel-abi.md, "Carry flags"):
//   add kind  set:  add.cc.u32 t, cf, 0xffffffff   carries iff cf == 1
//             read: addc.u32 r, 0, 0               r = CC.CF (0 or 1)
//   sub kind  set:  sub.cc.u32 t, 0, cf            borrows iff cf == 1
//             read: subc.u32 r, 0, 0               r = 0 - (0 + CC.CF):
//                                                  0xffffffff iff borrow

#ifndef PTXDIFF_WORKER_BACKENDS_CARRY_SUPPORT_H_
#define PTXDIFF_WORKER_BACKENDS_CARRY_SUPPORT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "isa/family_table.h"

namespace ptxdiff {

// The line (indented, with `;` and a newline) that sets CC.CF to the incoming
// flag of `v` (HasCarryIn) from `cf`, a 32-bit register or immediate holding
// 0 or 1; `scratch` is a .b32 register whose value is discarded.
inline std::string PtxSetCarryIn(const Variant& v, absl::string_view cf,
                                 absl::string_view scratch) {
  return CarryIsBorrow(v)
             ? absl::StrCat("  sub.cc.u32 ", scratch, ", 0, ", cf, ";\n")
             : absl::StrCat("  add.cc.u32 ", scratch, ", ", cf,
                            ", 0xffffffff;\n");
}

// The line that copies the outgoing CC.CF of `v` (HasCarryOut) into `word`,
// a .b32 register: the flag word, which CarryOfFlagWord decodes.
inline std::string PtxReadCarryOut(const Variant& v, absl::string_view word) {
  return absl::StrCat("  ", CarryIsBorrow(v) ? "subc" : "addc", ".u32 ", word,
                      ", 0, 0;\n");
}

// The flag word a correct reader leaves for a set flag: 1 (addc of 0, 0
// and the carry), 0xffffffff (subc: 0 - (0 + borrow)).
inline uint32_t FlagWordOfSetCarry(const Variant& v) {
  return CarryIsBorrow(v) ? 0xffffffffu : 1u;
}

// Result::carry from the flag word the reader stored; nullopt for a word no
// correct reader leaves (neither 0 nor FlagWordOfSetCarry), which is
// declined rather than guessed.
inline std::optional<bool> CarryOfFlagWord(const Variant& v, uint64_t word) {
  if (word == 0) return false;
  if (word == FlagWordOfSetCarry(v)) return true;
  return std::nullopt;
}

// The decline message for a flag word CarryOfFlagWord rejects.
inline std::string UnreadableFlagWordMessage(const Variant& v, uint64_t word) {
  return absl::StrCat(
      "the CC.CF reader (", CarryIsBorrow(v) ? "subc" : "addc",
      ".u32 r, 0, 0) left 0x", absl::Hex(word), ", which is neither 0 nor 0x",
      absl::Hex(FlagWordOfSetCarry(v)), ": the carry out was not read");
}

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CARRY_SUPPORT_H_
