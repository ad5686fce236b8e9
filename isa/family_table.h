// The instruction table: one row per family, naming the axes it accepts.
//
// This is the single description of the instruction set. The variants of a
// family are the product of its axis values filtered by the family's legality
// rule; the oracle dispatches on it, the printer spells from its syntax
// template, the parser reads spellings back through it, the fuzz decoder
// picks axis values from it, and docs/isa-coverage.md is generated from it.

#ifndef PTXDIFF_ISA_FAMILY_TABLE_H_
#define PTXDIFF_ISA_FAMILY_TABLE_H_

#include <cstdint>
#include <optional>
#include <span>

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/functional/function_ref.h"
#include "isa/axes.h"
#include "isa/variant.h"

namespace ptxdiff {

// What a variant needs from the target: PTX ISA version (as major*10+minor,
// so 80 is PTX ISA 8.0) and SM (as 90 for sm_90). Zero where the family is
// not a PTX instruction (Intel vISA).
struct IsaLevel {
  int ptx = 0;
  int sm = 0;
};

struct FamilyInfo {
  Family family;
  absl::string_view opcode;  // "add", "vshr", "visa.shl"
  // The canonical spelling's modifier order, as the spec's syntax line gives
  // it, after the opcode: one token per axis (`.type`, `.atype`, `.btype`,
  // `.mulmode`, `.shiftmode`, `.dir`, `.sat`, `.relu`, `.shiftamt`, `.po`,
  // `.scale`, `.cmp`, `.secop`). Absent axis values print nothing.
  absl::string_view syntax;
  absl::string_view section;  // where the semantics come from
  absl::string_view source;   // the seed file, or the PTX ISA text
  IsaLevel min_level;        // for the plainest variant; see LevelOf
  absl::string_view summary;  // one line for the coverage doc
  int num_sources;  // without the optional `c` of the video families
  // Bit i set: source i is an amount (a shift amount, a bit position or
  // length, a count), whose magnitude against 32, 64 and 256 is what a
  // bug may depend on; for other sources it says nothing.
  uint8_t amount_sources = 0;

  // The values of each axis. An empty list means the axis is absent (kNone).
  std::vector<Type> types, atypes, btypes;
  std::vector<MulMode> mul_modes;
  std::vector<ShiftMode> shift_modes;
  std::vector<Direction> directions;
  std::vector<Sel> asels, bsels, dsels;  // kNone included where optional
  std::vector<SecOp> secops;             // kNone included where optional
  std::vector<Cmp> cmps;
  std::vector<Scale> scales;  // kNone included where optional
  std::vector<VmadForm> vmad_forms;
  bool optional_sat = false;
  bool optional_relu = false;
  bool optional_shiftamt = false;

  // The family's legality rule over the product of the axes above; nullptr
  // accepts every combination.
  bool (*legal)(const Variant&) = nullptr;
};

// Every family, in Family order.
std::span<const FamilyInfo> AllFamilies();
const FamilyInfo& InfoOf(Family f);
// The family whose opcode is `opcode` ("add", "visa.shl"), if any.
std::optional<Family> FamilyByOpcode(absl::string_view opcode);

// Calls `fn` with every legal variant of `f`, in a fixed order.
void ForEachVariant(Family f, absl::FunctionRef<void(const Variant&)> fn);

// Every legal variant of every family (built once, then cached).
const std::vector<Variant>& AllVariants();

// The index of `v` in AllVariants(), or -1 if it is not legal: for per-variant
// tables (reached bitmaps, learned decline rates).
int VariantIndex(const Variant& v);

// True if `v` is one of its family's variants.
bool IsLegal(const Variant& v);

// Per-variant properties. `v` must be legal.
IsaLevel LevelOf(const Variant& v);
int NumSources(const Variant& v);
// Width in bits of source `i` (0 = a) and of the result (the destination;
// 64 for mul.wide.u32, 32 for the packed types).
int SourceWidth(const Variant& v, int i);
int ResultWidth(const Variant& v);
// The name the spec gives source `i` ("a", "b", "c", "d"; bfi's are a..d,
// fns's are mask, base, offset).
absl::string_view SourceName(const Variant& v, int i);
// True if source `i` may be written as an immediate in the instruction text.
bool MayBeImmediate(const Variant& v, int i);
// True if source `i` is an amount (FamilyInfo::amount_sources).
bool IsAmountSource(const Variant& v, int i);
// The first amount source of `v`, -1 if none: bfe's and bfi's position,
// whose length is the next source.
int FirstAmountSource(const Variant& v);

// True for the nine scalar video families (vadd .. vset).
bool IsVideo(Family f);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_FAMILY_TABLE_H_
