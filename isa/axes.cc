#include "isa/axes.h"

#include <iterator>

#include "absl/strings/string_view.h"

namespace ptxdiff {

absl::string_view SpellType(Type t) {
  switch (t) {
    case Type::kNone:
      return "";
    case Type::kU8:
      return "u8";
    case Type::kS8:
      return "s8";
    case Type::kU16:
      return "u16";
    case Type::kS16:
      return "s16";
    case Type::kU32:
      return "u32";
    case Type::kS32:
      return "s32";
    case Type::kU64:
      return "u64";
    case Type::kS64:
      return "s64";
    case Type::kB16:
      return "b16";
    case Type::kB32:
      return "b32";
    case Type::kB64:
      return "b64";
    case Type::kU16x2:
      return "u16x2";
    case Type::kS16x2:
      return "s16x2";
    case Type::kF32:
      return "f32";
  }
  return "?";
}

// Intel vISA's names: B/UB byte, W/UW word, D/UD dword, Q/UQ qword.
absl::string_view SpellVisaType(Type t) {
  switch (t) {
    case Type::kU8:
      return "ub";
    case Type::kS8:
      return "b";
    case Type::kU16:
      return "uw";
    case Type::kS16:
      return "w";
    case Type::kU32:
      return "ud";
    case Type::kS32:
      return "d";
    case Type::kU64:
      return "uq";
    case Type::kS64:
      return "q";
    default:
      return "?";
  }
}

absl::string_view SpellMulMode(MulMode m) {
  static constexpr absl::string_view kNames[] = {"", "hi", "lo", "wide"};
  static_assert(std::size(kNames) == kNumMulModes);
  return kNames[static_cast<int>(m)];
}
absl::string_view SpellShiftMode(ShiftMode m) {
  static constexpr absl::string_view kNames[] = {"", "clamp", "wrap"};
  static_assert(std::size(kNames) == kNumShiftModes);
  return kNames[static_cast<int>(m)];
}
absl::string_view SpellDirection(Direction d) {
  static constexpr absl::string_view kNames[] = {"", "l", "r"};
  static_assert(std::size(kNames) == kNumDirections);
  return kNames[static_cast<int>(d)];
}
absl::string_view SpellSel(Sel s) {
  static constexpr absl::string_view kNames[] = {"",   "b0", "b1", "b2",
                                                 "b3", "h0", "h1"};
  static_assert(std::size(kNames) == kNumSels);
  return kNames[static_cast<int>(s)];
}
absl::string_view SpellSecOp(SecOp s) {
  static constexpr absl::string_view kNames[] = {"", "add", "min", "max"};
  static_assert(std::size(kNames) == kNumSecOps);
  return kNames[static_cast<int>(s)];
}
absl::string_view SpellCmp(Cmp c) {
  static constexpr absl::string_view kNames[] = {
      "", "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"};
  static_assert(std::size(kNames) == kNumCmps);
  return kNames[static_cast<int>(c)];
}
absl::string_view SpellBoolOp(BoolOp b) {
  static constexpr absl::string_view kNames[] = {"", "and", "or", "xor"};
  static_assert(std::size(kNames) == kNumBoolOps);
  return kNames[static_cast<int>(b)];
}
absl::string_view SpellScale(Scale s) {
  static constexpr absl::string_view kNames[] = {"", "shr7", "shr15"};
  static_assert(std::size(kNames) == kNumScales);
  return kNames[static_cast<int>(s)];
}

absl::string_view SpellPrmtMode(PrmtMode m) {
  static constexpr absl::string_view kNames[] = {"",    "f4e", "b4e", "rc8",
                                                 "ecl", "ecr", "rc16"};
  static_assert(std::size(kNames) == kNumPrmtModes);
  return kNames[static_cast<int>(m)];
}

absl::string_view SpellSimdMask(SimdMask m) {
  static constexpr absl::string_view kNames[] = {
      "",     "h0", "h1",  "b0",  "b1",   "b10", "b2",   "b20", "b21",
      "b210", "b3", "b30", "b31", "b310", "b32", "b320", "b321"};
  static_assert(std::size(kNames) == kNumSimdMasks);
  return kNames[static_cast<int>(m)];
}

absl::string_view SpellSat(bool sat) { return sat ? "sat" : ""; }
absl::string_view SpellRelu(bool relu) { return relu ? "relu" : ""; }
absl::string_view SpellShiftamt(bool shiftamt) {
  return shiftamt ? "shiftamt" : "";
}
absl::string_view SpellCc(bool cc) { return cc ? "cc" : ""; }
absl::string_view SpellPlusOne(VmadForm f) {
  return f == VmadForm::kPlusOne ? "po" : "";
}

static_assert(UnsignedOf(Type::kS8) == Type::kU8 &&
              UnsignedOf(Type::kS16) == Type::kU16 &&
              UnsignedOf(Type::kS32) == Type::kU32 &&
              UnsignedOf(Type::kS64) == Type::kU64 &&
              UnsignedOf(Type::kS16x2) == Type::kU16x2);

static_assert(SimdMaskLanes(SimdMask::kB0, 4) == 0b0001 &&
              SimdMaskLanes(SimdMask::kB10, 4) == 0b0011 &&
              SimdMaskLanes(SimdMask::kB3, 4) == 0b1000 &&
              SimdMaskLanes(SimdMask::kB320, 4) == 0b1101 &&
              SimdMaskLanes(SimdMask::kB321, 4) == 0b1110 &&
              SimdMaskLanes(SimdMask::kNone, 4) == 0b1111 &&
              SimdMaskLanes(SimdMask::kNone, 2) == 0b11);

}  // namespace ptxdiff
