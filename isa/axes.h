// The axes an instruction variant is built from.
//
// A variant is a family (`add`, `vshr`, ...) plus one value on each axis the
// family accepts (type, mode, saturation, selectors, ...). Every enum here has
// `kNone` as its zero value, meaning "this axis is absent from the variant"
// (for a family that does not accept the axis, or an optional modifier that is
// not written). The spelling of each value is in axes.cc; the families and the
// values they accept are in family_table.cc. The list of axes, which every
// consumer expands, is axes.inc.

#ifndef PTXDIFF_ISA_AXES_H_
#define PTXDIFF_ISA_AXES_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace ptxdiff {

// An instruction family: one opcode of the PTX ISA (or of Intel vISA), with
// all its modifiers as axes. Order is the coverage-doc order; the stable
// identity of a variant never depends on it (see variant.h).
enum class Family : uint8_t {
#define PTXDIFF_FAMILY(Name, opcode) k##Name,
#include "isa/families.inc"
#undef PTXDIFF_FAMILY
};
inline constexpr int kNumFamilies = 0
#define PTXDIFF_FAMILY(Name, opcode) +1
#include "isa/families.inc"
#undef PTXDIFF_FAMILY
    ;

// An integer type. PTX spells these `.u32`, `.s16x2`, ...; Intel vISA spells
// the scalar ones `UD`, `W`, `B`, ... (see SpellType).
enum class Type : uint8_t {
  kNone,
  kU8,
  kS8,
  kU16,
  kS16,
  kU32,
  kS32,
  kU64,
  kS64,
  kB16,
  kB32,
  kB64,
  kU16x2,
  kS16x2,
  // Only as set's destination type: 1.0f or 0.0f, 32 bits.
  kF32,
};
inline constexpr int kNumTypes = static_cast<int>(Type::kF32) + 1;

// `.hi`/`.lo`/`.wide` of mul and mad; `.hi`/`.lo` of mul24, mad24 and dp2a.
enum class MulMode : uint8_t { kNone, kHi, kLo, kWide };
inline constexpr int kNumMulModes = static_cast<int>(MulMode::kWide) + 1;

// `.clamp`/`.wrap` of shf, szext, bmsk, vshl and vshr.
enum class ShiftMode : uint8_t { kNone, kClamp, kWrap };
inline constexpr int kNumShiftModes = static_cast<int>(ShiftMode::kWrap) + 1;

// `.l`/`.r` of shf.
enum class Direction : uint8_t { kNone, kLeft, kRight };
inline constexpr int kNumDirections = static_cast<int>(Direction::kRight) + 1;

// Byte or half-word selector of a video operand (`a.b1`, `d.h0`).
enum class Sel : uint8_t { kNone, kB0, kB1, kB2, kB3, kH0, kH1 };
inline constexpr int kNumSels = static_cast<int>(Sel::kH1) + 1;

// Secondary operation of a video instruction (`.add`, `.min`, `.max`).
enum class SecOp : uint8_t { kNone, kAdd, kMin, kMax };
inline constexpr int kNumSecOps = static_cast<int>(SecOp::kMax) + 1;

// Comparison of vset and setp. `lo`/`ls`/`hi`/`hs` are setp's unsigned
// comparisons (PTX ISA 9.3.1.1); vset has eq .. ge only.
enum class Cmp : uint8_t {
  kNone,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLo,
  kLs,
  kHi,
  kHs
};
inline constexpr int kNumCmps = static_cast<int>(Cmp::kHs) + 1;

// setp's `.and`/`.or`/`.xor`, which combine the comparison with a predicate
// source c (PTX ISA 9.7.6.2: `p = BoolOp(t, c)`); kNone is the plain form.
enum class BoolOp : uint8_t { kNone, kAnd, kOr, kXor };
inline constexpr int kNumBoolOps = static_cast<int>(BoolOp::kXor) + 1;

// prmt's `.f4e` .. `.rc16`; kNone is the generic form, whose selectors come
// from c's four nibbles.
enum class PrmtMode : uint8_t { kNone, kF4e, kB4e, kRc8, kEcl, kEcr, kRc16 };
inline constexpr int kNumPrmtModes = static_cast<int>(PrmtMode::kRc16) + 1;

// The lanes a SIMD video instruction writes (`d.h0`, `d.b310`; PTX ISA
// 9.7.18.2). kNone is every lane, the default `.h10` / `.b3210`, which the
// canonical spelling leaves out; h* are the 2-lane families' masks, b* the
// 4-lane ones', each digit a lane written.
enum class SimdMask : uint8_t {
  kNone,
  kH0,
  kH1,
  kB0,
  kB1,
  kB10,
  kB2,
  kB20,
  kB21,
  kB210,
  kB3,
  kB30,
  kB31,
  kB310,
  kB32,
  kB320,
  kB321,
};
inline constexpr int kNumSimdMasks = static_cast<int>(SimdMask::kB321) + 1;

// vmad's `.shr7`/`.shr15` scaling of the final result.
enum class Scale : uint8_t { kNone, kShr7, kShr15 };
inline constexpr int kNumScales = static_cast<int>(Scale::kShr15) + 1;

// vmad's operand negation. PTX lets `a` and `b` be negated separately, but
// only their product's sign matters (the spec: "(a*b) is negated if and only
// if exactly one of a or b is negated"), and it allows negating either the
// product or `c`, so these are the distinct cases. `kPlusOne` is `.po`, which
// forbids negation and is therefore a value of this axis too.
enum class VmadForm : uint8_t { kNone, kNegProduct, kNegC, kPlusOne };
inline constexpr int kNumVmadForms = static_cast<int>(VmadForm::kPlusOne) + 1;

absl::string_view SpellType(Type t);      // "u32", "s16x2" (no dot)
absl::string_view SpellVisaType(Type t);  // "ud", "w", "b" (lower case)
absl::string_view SpellMulMode(MulMode m);
absl::string_view SpellShiftMode(ShiftMode m);
absl::string_view SpellDirection(Direction d);
absl::string_view SpellSel(Sel s);
absl::string_view SpellSecOp(SecOp s);
absl::string_view SpellCmp(Cmp c);
absl::string_view SpellBoolOp(BoolOp b);
absl::string_view SpellScale(Scale s);
absl::string_view SpellPrmtMode(PrmtMode m);
absl::string_view SpellSimdMask(SimdMask m);  // "h0", "b310"; "" for all
// The opcode tokens of the flags and of vmad's form: the token when set.
absl::string_view SpellSat(bool sat);            // "sat" or ""
absl::string_view SpellRelu(bool relu);          // "relu" or ""
absl::string_view SpellShiftamt(bool shiftamt);  // "shiftamt" or ""
absl::string_view SpellCc(bool cc);              // "cc" or ""
absl::string_view SpellPlusOne(VmadForm f);      // "po" for kPlusOne; the
                                                 // negations are operands

// The instruction set a family belongs to (FamilyInfo::isa).
enum class TargetIsa : uint8_t { kPtx, kIntelVisa };

// An axis value's spelling in an instruction of `isa`. Intel vISA names its
// types its own way (SpellVisaType); every other axis spells alike.
template <typename Value>
absl::string_view SpellIn(TargetIsa /*isa*/, Value value,
                          absl::string_view (*spell)(Value)) {
  return spell(value);
}
inline absl::string_view SpellIn(TargetIsa isa, Type t,
                                 absl::string_view (*spell)(Type)) {
  return isa == TargetIsa::kIntelVisa ? SpellVisaType(t) : spell(t);
}

// Properties of scalar types. Width is in bits (16 for kS16, 32 for kU16x2).
// Inline: the oracle's inner loops call them per tuple.
constexpr int TypeWidth(Type t) {
  switch (t) {
    case Type::kNone:
      return 0;
    case Type::kU8:
    case Type::kS8:
      return 8;
    case Type::kU16:
    case Type::kS16:
    case Type::kB16:
      return 16;
    case Type::kU64:
    case Type::kS64:
    case Type::kB64:
      return 64;
    default:
      return 32;
  }
}
// s8..s64 and s16x2.
constexpr bool IsSigned(Type t) {
  return t == Type::kS8 || t == Type::kS16 || t == Type::kS32 ||
         t == Type::kS64 || t == Type::kS16x2;
}
constexpr bool IsPacked(Type t) {
  return t == Type::kU16x2 || t == Type::kS16x2;
}

// Bytes 0..3 and half-words 0..1 (kNone selects the whole word).
constexpr bool IsByteSel(Sel s) { return s >= Sel::kB0 && s <= Sel::kB3; }
constexpr bool IsHalfSel(Sel s) { return s == Sel::kH0 || s == Sel::kH1; }

// The lanes `m` writes, bit i for lane i, out of `lanes` (2 or 4): kNone
// writes them all.
constexpr uint32_t SimdMaskLanes(SimdMask m, int lanes) {
  switch (m) {
    case SimdMask::kNone:
      return (1u << lanes) - 1;
    case SimdMask::kH0:
      return 0b01;
    case SimdMask::kH1:
      return 0b10;
    default: {
      // kB0 .. kB321 count through the non-empty subsets of 4 lanes in
      // order: the k-th is the bit pattern k.
      return static_cast<uint32_t>(m) - static_cast<uint32_t>(SimdMask::kB0) +
             1;
    }
  }
}

// Plainness, for the minimizer (the Plainer column of axes.inc): the value
// one step plainer than `value` on its axis, or `value` itself if none is.
// A modifier is plainer left out (kNone, false).
template <typename Value>
constexpr Value ToNone(Value /*value*/) {
  return Value{};
}
// Axes whose values are all equally plain (mul.hi versus mul.lo).
template <typename Value>
constexpr Value NoPlainer(Value value) {
  return value;
}
// A signed type is one step less plain than its unsigned counterpart: a
// cause that shows in both forms is shown by the unsigned one. Each unsigned
// type precedes its signed one in Type.
constexpr Type UnsignedOf(Type t) {
  return IsSigned(t) ? static_cast<Type>(static_cast<int>(t) - 1) : t;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_AXES_H_
