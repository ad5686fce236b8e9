// The instruction table: one row per family, naming the axes it accepts.
//
// This is the single description of the instruction set. The variants of a
// family are the product of its axis values filtered by the family's legality
// rule; the oracle dispatches on it, the printer spells from its syntax
// template, the parser reads spellings back through it, the fuzz decoder
// picks axis values from it, and docs/isa-coverage.md is generated from it.

#ifndef PTXDIFF_ISA_FAMILY_TABLE_H_
#define PTXDIFF_ISA_FAMILY_TABLE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
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

// What FamilyInfo holds for an axis: a list of values, or for a flag whether
// it is optional.
template <typename Value>
using AxisValueList =
    std::conditional_t<std::is_same_v<Value, bool>, bool, std::vector<Value>>;

// How wide a source or the result is, from the variant's axes (SourceWidth,
// ResultWidth).
enum class WidthRule : uint8_t {
  kType,      // TypeWidth(v.type), 32 where the family has no type (dp4a,
              // vset): so 32 for every video family (`.dtype` .u32/.s32)
  kTypeWide,  // 2 * kType for `.wide` (mul's and mad's d, mad's c), else kType
  kAType,     // TypeWidth(v.atype) (cvt, vISA SHL src0)
  kBType,     // TypeWidth(v.btype) (vISA SHL src1)
  k24,        // mul24's and mad24's factors (the low 24 bits of a and b)
  k32,        // bit positions and lengths, shift amounts, slct's `.s32` c
  k8,         // lop3's LUT
  k1,         // a predicate (selp's c, setp's result and its boolop c)
};

struct FamilyInfo {
  Family family;
  absl::string_view opcode;         // "add", "vshr", "visa.shl"
  TargetIsa isa = TargetIsa::kPtx;  // Intel vISA: not PTX, no PTX level
  // The canonical spelling's modifier order, as the spec's syntax line gives
  // it, after the opcode: one token per axis (the token column of
  // isa/axes.inc: `.type`, `.mulmode`, `.dir`, `.sat`, `.po`, ...). Absent
  // axis values print nothing.
  absl::string_view syntax;
  absl::string_view section;  // where the semantics come from
  absl::string_view source;   // the seed file, or the PTX ISA text
  IsaLevel min_level;         // for the plainest variant; see LevelOf
  absl::string_view summary;  // one line for the coverage doc
  int num_sources;            // without the optional `c` of the video families
  // The names the spec gives the sources, where they are not a, b, c, d
  // (fns: mask, base, offset; vISA: src0, src1; the carry-in: cf).
  std::vector<absl::string_view> source_names;
  // How wide each source slot is, and the result. Slots past the family's
  // sources are never read; a row may fill them like its last source. Not
  // here: the carry-in (1 bit, carry_in) and a selector (16 or 32 bits,
  // selector_sources), already row facts.
  std::array<WidthRule, kMaxSources> source_widths = {};  // all kType
  WidthRule result_width = WidthRule::kType;
  // Where the result is a part (`.hi`, `.lo`, `.wide`: mul_modes) of the
  // exact product a * b: how wide a and b are as the product reads them.
  // Empty where the family multiplies nothing (dp2a's `.hi`/`.lo` pick b's
  // half-word, no product's part).
  std::optional<WidthRule> product_factors;
  // Bit i set: source i is an amount (a shift amount, a bit position or
  // length, a count), whose magnitude against 32, 64 and 256 is what a
  // bug may depend on; for other sources it says nothing.
  uint8_t amount_sources = 0;
  // Bit i set: source i must be written as an immediate (lop3's LUT), so a
  // kernel holds its value in the instruction text, never in a register.
  uint8_t immediate_sources = 0;
  // Bit i set: source i is a selector (the SIMD video families' "sel"): an
  // immediate the instruction text writes as the `.asel`/`.bsel` suffixes
  // of a and b, never as an operand. Each lane's nibble counts only in its
  // low 2 (2-lane) or 3 (4-lane) bits (SourceMask); see SimdSelector.
  uint8_t selector_sources = 0;
  // True for addc, subc and madc: their last source is the incoming CC.CF
  // ("cf", 1 bit wide), which is not written in the instruction text (the
  // condition code is implicit). For addc/madc it is the carry-in, for subc
  // the borrow-in (docs/spec-notes.md).
  bool carry_in = false;
  // The level of the extended-precision forms (every `.cc` variant and every
  // variant of a family with carry_in) with a 32-bit and a 64-bit type,
  // where higher than min_level; see LevelOf.
  IsaLevel carry_level_32;
  IsaLevel carry_level_64;
  // The level of the packed-type (`.u16x2`/`.s16x2`) and `.relu` forms,
  // where higher than min_level; see LevelOf.
  IsaLevel packed_or_relu_level;

  // The values the family accepts on each axis of isa/axes.inc: for an enum
  // axis a list, empty when the family lacks the axis (kNone), with kNone in
  // it where the axis is optional (selectors, secop, scale); for a flag
  // (`.sat`, `.relu`, `.shiftamt`) whether it may be written.
#define PTXDIFF_AXIS(Name, field, Value, values, ...) \
  AxisValueList<Value> values{};
#include "isa/axes.inc"
#undef PTXDIFF_AXIS

  // The family's legality rule over the product of the axes above; nullptr
  // accepts every combination.
  bool (*legal)(const Variant&) = nullptr;
};

// One axis of isa/axes.inc, its values as ints (static_cast of the enum or
// bool), so that the product, the spelling, the mutator, the minimizer and
// the coverage doc can treat every axis alike.
struct AxisInfo {
  Axis axis;
  absl::string_view token;  // in FamilyInfo::syntax: "mulmode"; "" if none
  absl::string_view label;  // in docs/isa-coverage.md: "mode"
  bool is_flag;             // a bool axis (`.sat`): FamilyInfo says optional
  int (*get)(const Variant& v);
  void (*set)(Variant& v, int value);
  // The values `info` accepts; empty when it lacks the axis, {0, 1} for an
  // optional flag.
  std::vector<int> (*values)(const FamilyInfo& info);
  absl::string_view (*spell)(Family family, int value);  // "" for none
  int (*plainer)(int value);  // one step plainer (axes.h), or `value`
};

// Every axis, in the order of isa/axes.inc.
std::span<const AxisInfo, kNumAxes> AllAxes();

// Every family, in Family order.
std::span<const FamilyInfo> AllFamilies();

// A family's opcode as families.inc spells it ("add", "visa.shl").
inline constexpr absl::string_view kFamilyOpcodes[kNumFamilies] = {
#define PTXDIFF_FAMILY(Name, opcode) opcode,
#include "isa/families.inc"
#undef PTXDIFF_FAMILY
};
constexpr absl::string_view OpcodeOf(Family f) {
  return kFamilyOpcodes[static_cast<int>(f)];
}

namespace family_table_internal {
// AllFamilies().data() once built: InfoOf reads it inline, because the
// campaign asks for rows many times per tuple (widths, sources, selectors),
// and a call through AllFamilies' guarded static each time would cost more
// than reading the row.
inline std::atomic<const FamilyInfo*> rows{nullptr};
const FamilyInfo* BuildRows();
}  // namespace family_table_internal

inline const FamilyInfo& InfoOf(Family f) {
  const FamilyInfo* rows =
      family_table_internal::rows.load(std::memory_order_acquire);
  if (rows == nullptr) [[unlikely]] {
    rows = family_table_internal::BuildRows();
  }
  return rows[static_cast<int>(f)];
}
// The family whose opcode is `opcode` ("add", "visa.shl"), if any.
std::optional<Family> FamilyByOpcode(absl::string_view opcode);

// Calls `fn` with every legal variant of `f`, in a fixed order.
void ForEachVariant(Family f, absl::FunctionRef<void(const Variant&)> fn);
// The same order, stopping when `fn` returns false: a video family has ~10k
// variants, and a caller that wants its first few need not build them all.
void ForEachVariantWhile(Family f, absl::FunctionRef<bool(const Variant&)> fn);

// Every legal variant of every family, family by family in ForEachVariant
// order (computed at build time: isa/isa_tables.h).
absl::Span<const Variant> AllVariants();
// The variants of `f`: its part of AllVariants(), in ForEachVariant order
// (read, not composed).
absl::Span<const Variant> VariantsOf(Family f);

// The index of `v` in AllVariants(), or -1 if it is not legal: for per-variant
// tables (reached bitmaps, learned decline rates).
int VariantIndex(const Variant& v);

// True if `v` is one of its family's variants.
bool IsLegal(const Variant& v);

// Per-variant properties. `v` must be legal.
IsaLevel LevelOf(const Variant& v);
inline int NumSources(const Variant& v);
// Width in bits of source `i` (0 = a, i < kMaxSources) and of the result
// (the destination; 64 for mul.wide.u32, 32 for the packed types): the row's
// WidthRule, resolved for `v`.
inline int SourceWidth(const Variant& v, int i);
inline int ResultWidth(const Variant& v);
// Where the result is a part of the exact product a * b (the row's
// product_factors): how wide its factors are (mul24: 24); 0 elsewhere.
inline int ProductFactorWidth(const Variant& v);
// The name the spec gives source `i` ("a", "b", "c", "d"; bfi's are a..d,
// fns's are mask, base, offset).
absl::string_view SourceName(const Variant& v, int i);
// True if source `i` may be written as an immediate in the instruction text.
bool MayBeImmediate(const Variant& v, int i);
// True if source `i` must be written as an immediate
// (FamilyInfo::immediate_sources).
bool MustBeImmediate(const Variant& v, int i);
// True if source `i` is a selector (FamilyInfo::selector_sources): written
// as `a.asel, b.bsel` suffixes, not as an operand.
inline bool IsSelectorSource(const Variant& v, int i);
// The bits of source `i` that the instruction reads: the low
// SourceWidth(v, i) bits, and of a selector only the low 2 (2-lane) or 3
// (4-lane) bits of each nibble. Generators keep operands within it, so that
// every tuple is in its canonical form.
inline uint64_t SourceMask(const Variant& v, int i);
// The sources written as operands in the instruction text: NumSources(v)
// without the implicit CC.CF and the selector.
int NumWrittenSources(const Variant& v);
// True if source `i` is an amount (FamilyInfo::amount_sources).
bool IsAmountSource(const Variant& v, int i);
// The first amount source of `v`, -1 if none: bfe's and bfi's position,
// whose length is the next source.
int FirstAmountSource(const Variant& v);

// The condition code (PTX ISA 9.7.2). True if `v` writes CC.CF (its `.cc`
// axis): then Result::carry is the carry-out (add kind) or the borrow-out
// (sub kind: sub.cc, subc.cc).
inline bool HasCarryOut(const Variant& v) { return v.cc; }
// True if `v` reads CC.CF (addc, subc, madc): its last source, "cf".
inline bool HasCarryIn(const Variant& v);
// True for the sub kind (sub.cc, subc): its CC.CF in and out is a borrow.
// The add kind (add.cc, addc, mad.cc, madc) carries. The spec does not say
// how one kind reads the other's flag (docs/spec-notes.md), so a kernel sets
// and reads CC.CF with instructions of the variant's own kind.
inline bool CarryIsBorrow(const Variant& v) {
  return v.family == Family::kSub || v.family == Family::kSubc;
}
// The index of the "cf" source, -1 if `v` has none.
inline int CarryInSource(const Variant& v);
// True if source `i` is the implicit CC.CF: it has no operand in the
// instruction text.
inline bool IsCarryInSource(const Variant& v, int i);

// True for the nine scalar video families (vadd .. vset).
inline bool IsVideo(Family f) {
  return f >= Family::kVadd && f <= Family::kVset;
}
// True for the fourteen SIMD video families (vadd2 .. vset4, PTX ISA
// 9.7.18.2).
inline bool IsSimdVideo(Family f) {
  return f >= Family::kVadd2 && f <= Family::kVset4;
}
// The lanes of a SIMD video family: 2 (half-words) or 4 (bytes); 0 for any
// other family.
inline int SimdLanes(Family f) {
  if (!IsSimdVideo(f)) return 0;
  return f <= Family::kVset2 ? 2 : 4;
}

// The SIMD video selector `sel` (source 3) of a 2- or 4-lane family, one
// nibble per lane: asel in the low half, bsel in the high half. Lane i of a
// takes part AselPart(i) of the 64-bit {b, a} (a half-word 0..3 or a byte
// 0..7), lane i of b takes BselPart(i).
struct SimdSelector {
  int lanes;     // 2 or 4
  uint32_t sel;  // the operand's value
  int AselPart(int lane) const { return Nibble(lane); }
  int BselPart(int lane) const { return Nibble(lane + lanes); }

 private:
  int Nibble(int index) const {
    return (sel >> (4 * index)) & (lanes == 2 ? 0x3 : 0x7);
  }
};
// The default `.asel`/`.bsel` (`.h10`/`.h32`, `.b3210`/`.b7654`): the
// selector when none is written.
uint32_t DefaultSimdSelector(int lanes);

// The per-variant properties above that the campaign asks for many times a
// tuple (generating, evaluating, judging), inline: as calls into this
// library they were a fifth of its systematic source's time.

namespace family_table_internal {
// The width `rule` gives `v`.
inline int Width(WidthRule rule, const Variant& v) {
  switch (rule) {
    case WidthRule::kType:
      return v.type == Type::kNone ? 32 : TypeWidth(v.type);
    case WidthRule::kTypeWide:
      return (v.mul_mode == MulMode::kWide ? 2 : 1) *
             Width(WidthRule::kType, v);
    case WidthRule::kAType:
      return TypeWidth(v.atype);
    case WidthRule::kBType:
      return TypeWidth(v.btype);
    case WidthRule::k24:
      return 24;
    case WidthRule::k32:
      return 32;
    case WidthRule::k8:
      return 8;
    case WidthRule::k1:
      return 1;
  }
  return 0;
}
}  // namespace family_table_internal

inline int NumSources(const Variant& v) {
  const int base = InfoOf(v.family).num_sources;
  const bool video_c = IsVideo(v.family) && v.family != Family::kVmad &&
                       (v.secop != SecOp::kNone || v.dsel != Sel::kNone);
  // setp's `.and`/`.or`/`.xor` read a predicate c.
  const bool bool_op_c = v.bool_op != BoolOp::kNone;
  return base + (video_c || bool_op_c ? 1 : 0);
}

inline bool HasCarryIn(const Variant& v) { return InfoOf(v.family).carry_in; }

inline int CarryInSource(const Variant& v) {
  return HasCarryIn(v) ? InfoOf(v.family).num_sources - 1 : -1;
}

inline bool IsCarryInSource(const Variant& v, int i) {
  return i >= 0 && i == CarryInSource(v);
}

inline bool IsSelectorSource(const Variant& v, int i) {
  return i >= 0 && ((InfoOf(v.family).selector_sources >> i) & 1);
}

inline int SourceWidth(const Variant& v, int i) {
  if (IsCarryInSource(v, i)) return 1;                         // CC.CF
  if (IsSelectorSource(v, i)) return 8 * SimdLanes(v.family);  // 16 or 32
  return family_table_internal::Width(InfoOf(v.family).source_widths[i], v);
}

inline int ResultWidth(const Variant& v) {
  return family_table_internal::Width(InfoOf(v.family).result_width, v);
}

inline int ProductFactorWidth(const Variant& v) {
  const std::optional<WidthRule>& rule = InfoOf(v.family).product_factors;
  if (!rule || v.mul_mode == MulMode::kNone) return 0;
  return family_table_internal::Width(*rule, v);
}

inline uint64_t SourceMask(const Variant& v, int i) {
  if (IsSelectorSource(v, i)) {
    return SimdLanes(v.family) == 2 ? 0x3333 : 0x77777777;
  }
  const int width = SourceWidth(v, i);
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_FAMILY_TABLE_H_
