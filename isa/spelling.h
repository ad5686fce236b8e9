// The canonical spelling of a variant, and the parser back from it.
//
// The canonical spelling is the PTX instruction's opcode with its modifiers
// in the order of the spec's syntax line (`mad.hi.sat.s32`,
// `vshr.s32.u32.u32.clamp.add`). Where operands carry part of the variant —
// the video selectors `.b0`..`.h1` and vmad's negations — the operand list
// follows, with the spec's operand names: `vadd.u32.u32.u32 d.h1, a.b0, b, c`.
// Intel vISA SHL is spelled `visa.shl{.sat}.DST.SRC0.SRC1` with vISA's type
// names in lower case (`visa.shl.sat.d.ub.uw`).

#ifndef PTXDIFF_ISA_SPELLING_H_
#define PTXDIFF_ISA_SPELLING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

// The canonical spelling of a legal variant.
std::string Spell(const Variant& v);
// The same as a view of the spelling table (which lives as long as the
// process), for callers that would only copy it; empty if `v` is illegal.
absl::string_view SpellingInTable(const Variant& v);
// The same, composed from the family table instead of read from the tables
// computed at build time (isa/isa_tables.h): what those are checked
// against, and the spelling of an illegal variant.
std::string SpellWithoutTables(const Variant& v);

// The opcode with its modifiers only (`vshr.s32.u32.u32.clamp.add`), without
// the operand list.
std::string SpellOpcode(const Variant& v);

// The PTX register of a value `width` bits wide, number `n`: %p (1 bit, a
// predicate), %h (8 and 16 bits: PTX has no 8-bit registers, an 8-bit value
// lives in a 16-bit one), %rd (64) or %r (otherwise); what the generated
// modules declare.
std::string PtxRegister(int width, int n);

// The PTX line (with `;` and a newline) that sets `reg`, a register for a
// value `width` bits wide, to the immediate `value` (already masked to
// `width`): `mov.b16` for 8 and 16 bits (there is no `mov.b8`),
// `mov.b<width>` otherwise, and for a predicate (width 1), which `mov` of an
// immediate cannot set portably, `setp.ne.u32 reg, value, 0`.
std::string PtxSetRegister(int width, absl::string_view reg,
                           absl::string_view value);

// A kernel parameter for a runtime value `width` bits wide: its type in
// the entry's parameter list (".b16" for 8 and 16 bits, ".b32" for a
// predicate's word), and the line(s) that load it into `reg`, a register
// for that width (a predicate is set where the word is not 0).
std::string PtxParamType(int width);
// Its size in bytes: 2 for 8 and 16 bits, 4 for a predicate's word.
int PtxParamBytes(int width);
std::string PtxLoadParam(int width, absl::string_view reg,
                         absl::string_view param);

// One PTX instruction of `v` (without `;`): the opcode with its modifiers and
// the given operand texts (registers or immediates), decorated with the
// variant's selectors and negations:
//   PtxInstruction(v, "%r0", {"%r1", "%r2", "%r3"}) ==
//       "vadd.u32.u32.u32.sat %r0.b1, %r1, %r2.h0, %r3"
// `sources` must hold NumSources(v) entries; the entry of the carry-in
// source "cf" (addc, subc, madc) is not written, since the instruction reads
// CC.CF implicitly: PtxInstruction(addc.u32, "%r0", {"%r1", "%r2", "%r3"})
// == "addc.u32 %r0, %r1, %r2".
std::string PtxInstruction(const Variant& v, absl::string_view dest,
                           const std::vector<std::string>& sources);

// The `.asel` and `.bsel` suffixes (without the dot) a SIMD video
// instruction of `lanes` lanes writes for the selector value `sel`
// (FamilyInfo::selector_sources): SpellSimdSelector(2, 0x3210) ==
// {"h10", "h32"}, SpellSimdSelector(4, 0x76543210) == {"b3210", "b7654"}.
// Only each nibble's low 2 (3) bits are spelled.
std::pair<std::string, std::string> SpellSimdSelector(int lanes, uint32_t sel);

// The selector a SIMD video line spells on a and b (`vadd2.u32.u32.u32 d,
// a.h01, b, c`), with the default where a selector is not written (so the
// default for a bare spelling). InvalidArgument for a variant without a
// selector or a malformed selector (`.h4`, `.b01`).
absl::StatusOr<uint32_t> SpelledSimdSelector(const Variant& v,
                                             absl::string_view spelling);

// Parses a spelling back into its variant. Accepts the canonical spelling,
// extra white space, a trailing `;`, an operand list with plain names
// (`add.s32 d, a, b`) or registers and immediates in place of the names
// (`vadd.s32.u32.s32.sat r1, r2.b0, r3.h0;`), and the spec's alternative
// spellings noted in docs/spec-notes.md. An unknown spelling is InvalidArgument
// naming the nearest valid spellings.
absl::StatusOr<Variant> ParseVariant(absl::string_view spelling);

// Up to `n` valid spellings closest to `spelling` (edit distance), nearest
// first.
std::vector<std::string> NearestSpellings(absl::string_view spelling, int n);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_SPELLING_H_
