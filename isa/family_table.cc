#include "isa/family_table.h"

#include <algorithm>
#include <array>
#include <bit>
#include <iterator>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "common/check.h"
#include "isa/isa_tables.h"

namespace ptxdiff {
namespace {

using T = Type;
using W = WidthRule;

const std::vector<Type> kIntTypes = {T::kU16, T::kU32, T::kU64,
                                     T::kS16, T::kS32, T::kS64};
const std::vector<Type> kU32S32 = {T::kU32, T::kS32};
const std::vector<Type> kVisaTypes = {T::kU32, T::kS32, T::kU16, T::kS16,
                                      T::kU8,  T::kS8,  T::kU64, T::kS64};
const std::vector<Sel> kAllSels = {Sel::kNone, Sel::kB0, Sel::kB1, Sel::kB2,
                                   Sel::kB3,   Sel::kH0, Sel::kH1};
const std::vector<SecOp> kAllSecOps = {SecOp::kNone, SecOp::kAdd, SecOp::kMin,
                                       SecOp::kMax};
const std::vector<ShiftMode> kClampWrap = {ShiftMode::kClamp, ShiftMode::kWrap};

constexpr IsaLevel kPtx10AllSm = {10, 0};
constexpr IsaLevel kPtx20Sm20 = {20, 20};
// The extended-precision instructions (PTX ISA 9.7.2): add.cc, addc, sub.cc,
// subc at 32 bits PTX 1.2 on all targets, mad.cc and madc at 32 bits PTX 3.0
// sm_20; all of them at 64 bits PTX 4.3 sm_20.
constexpr IsaLevel kPtx12AllSm = {12, 0};
constexpr IsaLevel kPtx30Sm20 = {30, 20};
constexpr IsaLevel kPtx43Sm20 = {43, 20};
// add/min/max `.u16x2`/`.s16x2` and min/max `.relu`.
constexpr IsaLevel kPtx80Sm90 = {80, 90};

// ---- Legality rules: one per family that needs more than the product. ----

// The types of the extended-precision instructions (PTX ISA 9.7.2).
bool IsCarryType(Type t) {
  return t == T::kU32 || t == T::kS32 || t == T::kU64 || t == T::kS64;
}

// `.sat` applies only to `.s32` (add, sub); `.cc` only to .u32 .s32 .u64
// .s64 and never with `.sat` (add.cc, sub.cc: PTX ISA 9.7.2.1, 9.7.2.3).
bool AddSubRule(const Variant& v) {
  if (v.cc && (v.sat || !IsCarryType(v.type))) return false;
  return !v.sat || v.type == T::kS32;
}

// `.wide` is only for 16- and 32-bit types; mad's `.sat` only in `.hi.s32`.
bool MulMadRule(const Variant& v) {
  if (v.mul_mode == MulMode::kWide && TypeWidth(v.type) > 32) return false;
  return !v.sat || (v.mul_mode == MulMode::kHi && v.type == T::kS32);
}

// mad's `.cc` (mad.cc, PTX ISA 9.7.2.5): only `.hi`/`.lo`, no `.sat`, the
// types .u32 .s32 .u64 .s64.
bool MadRule(const Variant& v) {
  if (!MulMadRule(v)) return false;
  return !v.cc ||
         (v.mul_mode != MulMode::kWide && !v.sat && IsCarryType(v.type));
}

// mad24's `.sat` only in `.hi.s32`.
bool Mad24Rule(const Variant& v) {
  return !v.sat || (v.mul_mode == MulMode::kHi && v.type == T::kS32);
}

// `.relu` only with the `.btype` types `.s16x2` and `.s32`.
bool ReluRule(const Variant& v) {
  return !v.relu || v.type == T::kS16x2 || v.type == T::kS32;
}

// A video instruction has a secondary operation or a data merge, not both.
bool VideoRule(const Variant& v) {
  return v.secop == SecOp::kNone || v.dsel == Sel::kNone;
}

// SIMD video (PTX ISA 9.7.18.2): "Saturation cannot be used with the
// secondary accumulate operation."
bool SimdVideoRule(const Variant& v) {
  return !(v.sat && v.secop == SecOp::kAdd);
}

// setp's comparisons by type (PTX ISA 9.7.6.2, Integer Notes): "The signed
// and unsigned comparison operators are eq, ne, lt, le, gt, ge. For unsigned
// values, the comparison operators lo, ls, hi, and hs [...] may be used
// instead of lt, le, gt, ge"; "The untyped, bit-size comparisons are eq and
// ne." (9.3.1.1's Table 22 lists only lo..hs for unsigned; setp's own notes
// allow both.)
bool ComparisonAllowed(Cmp cmp, Type compared) {
  const bool bits =
      compared == T::kB16 || compared == T::kB32 || compared == T::kB64;
  switch (cmp) {
    case Cmp::kEq:
    case Cmp::kNe:
      return true;
    case Cmp::kLt:
    case Cmp::kLe:
    case Cmp::kGt:
    case Cmp::kGe:
      return !bits;
    case Cmp::kLo:
    case Cmp::kLs:
    case Cmp::kHi:
    case Cmp::kHs:
      return !bits && !IsSigned(compared);
    case Cmp::kNone:
      return false;
  }
  return false;
}
bool SetpRule(const Variant& v) { return ComparisonAllowed(v.cmp, v.type); }
// set (PTX ISA 9.7.6.1) compares `.stype` operands (atype here) as setp
// compares `.type` ones.
bool SetRule(const Variant& v) { return ComparisonAllowed(v.cmp, v.atype); }

// True if every value of integer type `src` is a value of `dst`.
bool RangeContains(Type dst, Type src) {
  const int wd = TypeWidth(dst), ws = TypeWidth(src);
  if (IsSigned(dst) == IsSigned(src)) return wd >= ws;
  return IsSigned(dst) && wd > ws;  // an unsigned dst never holds a negative
}

// cvt's `.sat` "is allowed only in cases where the destination type's value
// range is not a superset of the source type's value range" (PTX ISA
// 9.7.9.21).
bool CvtRule(const Variant& v) {
  return !v.sat || !RangeContains(v.type, v.atype);
}

// The SIMD video families (PTX ISA 9.7.18.2.1 - 9.7.18.2.4): vop2/vop4 and
// vset2/vset4 on two half-word or four byte lanes, their sources a, b, c
// (all required) and the selector "sel" (the `.asel`/`.bsel` suffixes).
void AddSimdVideoRows(std::vector<FamilyInfo>& t) {
  struct SimdRow {
    Family family;
    absl::string_view summary;
  };
  const std::vector<SimdMask> kMasks2 = {SimdMask::kNone, SimdMask::kH0,
                                         SimdMask::kH1};
  std::vector<SimdMask> masks4 = {SimdMask::kNone};
  for (int m = static_cast<int>(SimdMask::kB0);
       m <= static_cast<int>(SimdMask::kB321); ++m) {
    masks4.push_back(static_cast<SimdMask>(m));
  }
  const std::vector<Cmp> kVsetCmps = {Cmp::kEq, Cmp::kNe, Cmp::kLt,
                                      Cmp::kLe, Cmp::kGt, Cmp::kGe};
  for (const SimdRow& row : std::initializer_list<SimdRow>{
           {Family::kVadd2, "per half-word: t = a + b"},
           {Family::kVsub2, "per half-word: t = a - b"},
           {Family::kVavrg2, "per half-word: t = (a + b) / 2, rounded"},
           {Family::kVabsdiff2, "per half-word: t = |a - b|"},
           {Family::kVmin2, "per half-word: t = min(a, b)"},
           {Family::kVmax2, "per half-word: t = max(a, b)"},
           {Family::kVset2, "per half-word: t = compare(a, b) ? 1 : 0"},
           {Family::kVadd4, "per byte: t = a + b"},
           {Family::kVsub4, "per byte: t = a - b"},
           {Family::kVavrg4, "per byte: t = (a + b) / 2, rounded"},
           {Family::kVabsdiff4, "per byte: t = |a - b|"},
           {Family::kVmin4, "per byte: t = min(a, b)"},
           {Family::kVmax4, "per byte: t = max(a, b)"},
           {Family::kVset4, "per byte: t = compare(a, b) ? 1 : 0"}}) {
    const bool vset =
        row.family == Family::kVset2 || row.family == Family::kVset4;
    const bool two = SimdLanes(row.family) == 2;
    const absl::string_view section =
        two ? (vset ? "PTX ISA 9.7.18.2.2" : "PTX ISA 9.7.18.2.1")
            : (vset ? "PTX ISA 9.7.18.2.4" : "PTX ISA 9.7.18.2.3");
    t.push_back({.family = row.family,
                 .opcode = OpcodeOf(row.family),
                 .syntax = vset ? ".atype.btype.cmp.secop"
                                : ".type.atype.btype.sat.secop",
                 .section = section,
                 .source = "PTX ISA text (9.7.18.2)",
                 .min_level = {30, 30},
                 .summary = row.summary,
                 .num_sources = 4,
                 .immediate_sources = 0b1000,  // sel
                 .selector_sources = 0b1000});
    FamilyInfo& f = t.back();
    f.source_names = {"a", "b", "c", "sel"};
    if (!vset) f.types = kU32S32, f.optional_sat = true;
    if (vset) f.cmps = kVsetCmps;
    f.atypes = kU32S32, f.btypes = kU32S32;
    f.secops = {SecOp::kNone, SecOp::kAdd};
    f.masks = two ? kMasks2 : masks4;
    f.legal = SimdVideoRule;
  }
}

// The rows indexed by family (InfoOf reads row f for family f), whatever
// order they were written in; every family of families.inc has exactly one.
std::vector<FamilyInfo> InFamilyOrder(std::vector<FamilyInfo> rows) {
  std::vector<FamilyInfo> ordered(kNumFamilies);
  std::vector<bool> seen(kNumFamilies);
  for (FamilyInfo& row : rows) {
    const int f = static_cast<int>(row.family);
    PTXDIFF_CHECK(!seen[f], "two rows for ", row.opcode);
    seen[f] = true;
    ordered[f] = std::move(row);
  }
  for (int f = 0; f < kNumFamilies; ++f) {
    PTXDIFF_CHECK(seen[f], "no row for ", OpcodeOf(static_cast<Family>(f)));
  }
  return ordered;
}

std::vector<FamilyInfo> BuildTable() {
  const absl::string_view kSeedInt = "003_0456e5ea2429454c.txt";
  const absl::string_view kSeedVideo = "002_e0c447847d9489fe.txt";
  std::vector<FamilyInfo> t;
  auto simple = [&](Family f, absl::string_view section, IsaLevel level,
                    absl::string_view summary, int sources,
                    std::vector<Type> types) {
    t.push_back({.family = f,
                 .opcode = OpcodeOf(f),
                 .syntax = "",
                 .section = section,
                 .source = kSeedInt,
                 .min_level = level,
                 .summary = summary,
                 .num_sources = sources,
                 .types = std::move(types)});
    return &t.back();
  };
  const std::vector<Type> kB32B64 = {T::kB32, T::kB64};
  const std::vector<Type> kUS3264 = {T::kU32, T::kU64, T::kS32, T::kS64};

  FamilyInfo* f;
  f = simple(Family::kAdd, "PTX ISA 9.7.1.1", kPtx10AllSm, "d = a + b", 2,
             {T::kU16, T::kU32, T::kU64, T::kS16, T::kS32, T::kS64, T::kU16x2,
              T::kS16x2});
  f->syntax = ".sat.cc.type", f->optional_sat = true, f->legal = AddSubRule;
  f->optional_cc = true;
  f->carry_level_32 = kPtx12AllSm, f->carry_level_64 = kPtx43Sm20;
  f->packed_or_relu_level = kPtx80Sm90;
  f = simple(Family::kSub, "PTX ISA 9.7.1.2", kPtx10AllSm, "d = a - b", 2,
             kIntTypes);
  f->syntax = ".sat.cc.type", f->optional_sat = true, f->legal = AddSubRule;
  f->optional_cc = true;
  f->carry_level_32 = kPtx12AllSm, f->carry_level_64 = kPtx43Sm20;
  f = simple(Family::kMul, "PTX ISA 9.7.1.3", kPtx10AllSm,
             "d = (a * b) high, low or wide", 2, kIntTypes);
  f->syntax = ".mulmode.type", f->legal = MulMadRule;
  f->mul_modes = {MulMode::kHi, MulMode::kLo, MulMode::kWide};
  f->result_width = W::kTypeWide, f->product_factors = W::kType;
  f = simple(Family::kMad, "PTX ISA 9.7.1.4", kPtx10AllSm,
             "d = (a * b) high, low or wide + c", 3, kIntTypes);
  f->syntax = ".mulmode.sat.cc.type", f->optional_sat = true,
  f->legal = MadRule;
  f->mul_modes = {MulMode::kHi, MulMode::kLo, MulMode::kWide};
  f->source_widths = {W::kType, W::kType, W::kTypeWide};  // c as wide as d
  f->result_width = W::kTypeWide, f->product_factors = W::kType;
  f->optional_cc = true;
  f->carry_level_32 = kPtx30Sm20, f->carry_level_64 = kPtx43Sm20;
  f = simple(Family::kMul24, "PTX ISA 9.7.1.5", kPtx10AllSm,
             "d = 24x24-bit product, bits 47..16 or 31..0", 2, kU32S32);
  f->syntax = ".mulmode.type";
  f->mul_modes = {MulMode::kHi, MulMode::kLo}, f->product_factors = W::k24;
  f = simple(Family::kMad24, "PTX ISA 9.7.1.6", kPtx10AllSm,
             "d = 24x24-bit product, bits 47..16 or 31..0, + c", 3, kU32S32);
  f->syntax = ".mulmode.sat.type", f->optional_sat = true, f->legal = Mad24Rule;
  f->mul_modes = {MulMode::kHi, MulMode::kLo}, f->product_factors = W::k24;
  simple(Family::kSad, "PTX ISA 9.7.1.7", kPtx10AllSm, "d = c + |a - b|", 3,
         kIntTypes);
  simple(Family::kDiv, "PTX ISA 9.7.1.8", kPtx10AllSm, "d = a / b", 2,
         kIntTypes);
  simple(Family::kRem, "PTX ISA 9.7.1.9", kPtx10AllSm, "d = a % b", 2,
         kIntTypes);
  simple(Family::kAbs, "PTX ISA 9.7.1.10", kPtx10AllSm, "d = |a|", 1,
         {T::kS16, T::kS32, T::kS64});
  simple(Family::kNeg, "PTX ISA 9.7.1.11", kPtx10AllSm, "d = -a", 1,
         {T::kS16, T::kS32, T::kS64});
  const std::vector<Type> kMinMaxTypes = {T::kU16,   T::kU32, T::kU64,
                                          T::kU16x2, T::kS16, T::kS64,
                                          T::kS16x2, T::kS32};
  f = simple(Family::kMin, "PTX ISA 9.7.1.12", kPtx10AllSm,
             "d = min(a, b), optionally clamped at 0", 2, kMinMaxTypes);
  f->syntax = ".relu.type", f->optional_relu = true, f->legal = ReluRule;
  f->packed_or_relu_level = kPtx80Sm90;
  f = simple(Family::kMax, "PTX ISA 9.7.1.13", kPtx10AllSm,
             "d = max(a, b), optionally clamped at 0", 2, kMinMaxTypes);
  f->syntax = ".relu.type", f->optional_relu = true, f->legal = ReluRule;
  f->packed_or_relu_level = kPtx80Sm90;
  // popc, clz and bfind count or position bits: a `.u32` d at any width.
  f = simple(Family::kPopc, "PTX ISA 9.7.1.14", kPtx20Sm20,
             "d = number of one bits in a", 1, kB32B64);
  f->result_width = W::k32;
  f = simple(Family::kClz, "PTX ISA 9.7.1.15", kPtx20Sm20,
             "d = number of leading zeros in a", 1, kB32B64);
  f->result_width = W::k32;
  f = simple(Family::kBfind, "PTX ISA 9.7.1.16", kPtx20Sm20,
             "d = position of the most significant non-sign bit", 1, kUS3264);
  f->syntax = ".shiftamt.type", f->optional_shiftamt = true;
  f->result_width = W::k32;
  f = simple(Family::kFns, "PTX ISA 9.7.1.17", {60, 30},
             "d = position of the n-th set bit from base", 3, {T::kB32});
  f->amount_sources = 0b110;  // base, offset
  f->source_names = {"mask", "base", "offset"};
  simple(Family::kBrev, "PTX ISA 9.7.1.18", kPtx20Sm20,
         "d = a with its bits reversed", 1, kB32B64);
  f = simple(Family::kBfe, "PTX ISA 9.7.1.19", kPtx20Sm20,
             "d = bit field of a at position b, length c", 3, kUS3264);
  f->amount_sources = 0b110;  // position, length
  f->source_widths = {W::kType, W::k32, W::k32, W::k32};
  f = simple(Family::kBfi, "PTX ISA 9.7.1.20", kPtx20Sm20,
             "f = b with a inserted at position c, length d", 4, kB32B64);
  f->amount_sources = 0b1100;  // position, length
  f->source_widths = {W::kType, W::kType, W::k32, W::k32};
  f = simple(Family::kBmsk, "PTX ISA 9.7.1.22", {76, 70},
             "d = mask of b bits starting at bit a", 2, {T::kB32});
  f->syntax = ".shiftmode.type", f->shift_modes = kClampWrap;
  f->amount_sources = 0b11;  // position, width
  f = simple(Family::kSzext, "PTX ISA 9.7.1.21", {76, 70},
             "d = a sign- or zero-extended from its low b bits", 2, kU32S32);
  f->syntax = ".shiftmode.type", f->shift_modes = kClampWrap;
  f->amount_sources = 0b10;  // width
  f = simple(Family::kDp4a, "PTX ISA 9.7.1.23", {50, 61},
             "d = c + four-way byte dot product of a and b", 3, {});
  f->syntax = ".atype.btype", f->atypes = kU32S32, f->btypes = kU32S32;
  f = simple(Family::kDp2a, "PTX ISA 9.7.1.24", {50, 61},
             "d = c + two-way dot product of a's half-words and b's bytes", 3,
             {});
  f->syntax = ".mulmode.atype.btype", f->atypes = kU32S32, f->btypes = kU32S32;
  f->mul_modes = {MulMode::kLo, MulMode::kHi};
  f = simple(Family::kShf, "PTX ISA 9.7.8.7", {31, 32},
             "d = 32 bits of the funnel-shifted [b, a]", 3, {T::kB32});
  f->syntax = ".dir.shiftmode.type", f->source = "001_f49adf3aed9ff0c2.txt";
  f->directions = {Direction::kLeft, Direction::kRight},
  f->shift_modes = kClampWrap;
  f->amount_sources = 0b100;  // shift amount

  // Logic and shift (PTX ISA 9.7.8) and prmt (9.7.9.7). The `.pred` forms of
  // and/or/xor/not/cnot are left out: a tuple's result is an integer
  // register (docs/spec-notes.md).
  const std::vector<Type> kBitTypes = {T::kB16, T::kB32, T::kB64};
  const absl::string_view kPtxText = "PTX ISA text (9.7.8, 9.7.9.7)";
  struct LogicRow {
    Family family;
    absl::string_view section, summary;
    int sources;
  };
  for (const LogicRow& row : std::initializer_list<LogicRow>{
           {Family::kAnd, "PTX ISA 9.7.8.1", "d = a & b", 2},
           {Family::kOr, "PTX ISA 9.7.8.2", "d = a | b", 2},
           {Family::kXor, "PTX ISA 9.7.8.3", "d = a ^ b", 2},
           {Family::kNot, "PTX ISA 9.7.8.4", "d = ~a", 1},
           {Family::kCnot, "PTX ISA 9.7.8.5", "d = (a == 0) ? 1 : 0", 1}}) {
    f = simple(row.family, row.section, kPtx10AllSm, row.summary, row.sources,
               kBitTypes);
    f->source = kPtxText;
  }
  f = simple(Family::kLop3, "PTX ISA 9.7.8.6", {43, 50},
             "d = any logic function of a, b, c, given by its truth table", 4,
             {T::kB32});
  f->source = kPtxText;
  f->immediate_sources = 0b1000;  // immLut
  f->source_names = {"a", "b", "c", "immLut"};
  f->source_widths = {W::kType, W::kType, W::kType, W::k8};
  f = simple(Family::kShl, "PTX ISA 9.7.8.8", kPtx10AllSm,
             "d = a << b, 0 once b >= the width", 2, kBitTypes);
  f->source = kPtxText;
  f->amount_sources = 0b10;  // shift amount
  f->source_widths = {W::kType, W::k32, W::k32, W::k32};
  f = simple(Family::kShr, "PTX ISA 9.7.8.9", kPtx10AllSm,
             "d = a >> b, sign- or zero-filled", 2,
             {T::kB16, T::kB32, T::kB64, T::kU16, T::kU32, T::kU64, T::kS16,
              T::kS32, T::kS64});
  f->source = kPtxText;
  f->amount_sources = 0b10;  // shift amount
  f->source_widths = {W::kType, W::k32, W::k32, W::k32};
  f = simple(Family::kPrmt, "PTX ISA 9.7.9.7", kPtx20Sm20,
             "d = four bytes picked from {b, a} by c", 3, {T::kB32});
  f->syntax = ".type.prmtmode", f->source = kPtxText;
  f->prmt_modes = {PrmtMode::kNone, PrmtMode::kF4e, PrmtMode::kB4e,
                   PrmtMode::kRc8,  PrmtMode::kEcl, PrmtMode::kEcr,
                   PrmtMode::kRc16};

  // Comparison and selection (PTX ISA 9.7.6) and integer-to-integer cvt
  // (9.7.9.21). setp's second destination (`p|q`), slct's `.f32` c (and
  // `.ftz`), and cvt's rounding and floating-point forms are left out.
  const std::vector<Type> kCompareTypes = {T::kB16, T::kB32, T::kB64,
                                           T::kU16, T::kU32, T::kU64,
                                           T::kS16, T::kS32, T::kS64};
  const std::vector<Type> kCvtTypes = {T::kU8, T::kU16, T::kU32, T::kU64,
                                       T::kS8, T::kS16, T::kS32, T::kS64};
  const absl::string_view kPtxCompareText = "PTX ISA text (9.7.6, 9.7.9.21)";
  f = simple(Family::kSetp, "PTX ISA 9.7.6.2", kPtx10AllSm,
             "p = a cmp b, or (a cmp b) boolop c (predicates: 1 or 0)", 2,
             kCompareTypes);
  f->syntax = ".cmp.boolop.type", f->source = kPtxCompareText,
  f->legal = SetpRule;
  f->cmps = {Cmp::kEq, Cmp::kNe, Cmp::kLt, Cmp::kLe, Cmp::kGt,
             Cmp::kGe, Cmp::kLo, Cmp::kLs, Cmp::kHi, Cmp::kHs};
  f->bool_ops = {BoolOp::kNone, BoolOp::kAnd, BoolOp::kOr, BoolOp::kXor};
  f->source_widths = {W::kType, W::kType, W::k1};  // the boolop's c
  f->result_width = W::k1;
  f = simple(Family::kSet, "PTX ISA 9.7.6.1", kPtx10AllSm,
             "d = a cmp b, or (a cmp b) boolop c, as all ones (1.0f for .f32) "
             "or 0",
             2, {T::kU32, T::kS32, T::kF32});
  f->syntax = ".cmp.boolop.type.atype", f->source = kPtxCompareText,
  f->legal = SetRule, f->atypes = kCompareTypes;
  f->cmps = {Cmp::kEq, Cmp::kNe, Cmp::kLt, Cmp::kLe, Cmp::kGt,
             Cmp::kGe, Cmp::kLo, Cmp::kLs, Cmp::kHi, Cmp::kHs};
  f->bool_ops = {BoolOp::kNone, BoolOp::kAnd, BoolOp::kOr, BoolOp::kXor};
  f->source_widths = {W::kAType, W::kAType, W::k1};  // the boolop's c
  f = simple(Family::kSelp, "PTX ISA 9.7.6.3", kPtx10AllSm,
             "d = c ? a : b (c a predicate)", 3, kCompareTypes);
  f->source = kPtxCompareText;
  f->source_widths = {W::kType, W::kType, W::k1};
  f = simple(Family::kSlct, "PTX ISA 9.7.6.4", kPtx10AllSm,
             "d = (c >= 0) ? a : b (c a signed 32-bit value)", 3,
             kCompareTypes);
  f->syntax = ".type.atype", f->source = kPtxCompareText, f->atypes = {T::kS32};
  f->source_widths = {W::kType, W::kType, W::k32};
  f = simple(Family::kCvt, "PTX ISA 9.7.9.21", kPtx10AllSm,
             "d = a converted: truncated, extended or saturated", 1, kCvtTypes);
  f->syntax = ".sat.type.atype", f->source = kPtxCompareText,
  f->atypes = kCvtTypes, f->optional_sat = true, f->legal = CvtRule;
  f->source_widths = {W::kAType, W::kAType, W::kAType, W::kAType};
  // Extended precision with carry in (PTX ISA 9.7.2): the incoming CC.CF is
  // the last source, "cf". The `.cc` forms of add, sub and mad are rows
  // above.
  const std::vector<Type> kCarryTypes = {T::kU32, T::kS32, T::kU64, T::kS64};
  const absl::string_view kCarryText = "PTX ISA text (9.7.2)";
  struct CarryRow {
    Family family;
    absl::string_view section, summary;
  };
  for (const CarryRow& row : std::initializer_list<CarryRow>{
           {Family::kAddc, "PTX ISA 9.7.2.2",
            "d = a + b + CC.CF, optionally carry-out to CC.CF"},
           {Family::kSubc, "PTX ISA 9.7.2.4",
            "d = a - (b + CC.CF), optionally borrow-out to CC.CF"}}) {
    f = simple(row.family, row.section, kPtx12AllSm, row.summary, 3,
               kCarryTypes);
    f->syntax = ".cc.type", f->source = kCarryText, f->optional_cc = true;
    f->carry_in = true, f->source_names = {"a", "b", "cf"};
    f->carry_level_32 = kPtx12AllSm, f->carry_level_64 = kPtx43Sm20;
  }
  f = simple(Family::kMadc, "PTX ISA 9.7.2.6", kPtx30Sm20,
             "d = (a * b) high or low + c + CC.CF, optionally carry-out to "
             "CC.CF",
             4, kCarryTypes);
  f->syntax = ".mulmode.cc.type", f->source = kCarryText, f->optional_cc = true;
  f->mul_modes = {MulMode::kHi, MulMode::kLo}, f->product_factors = W::kType;
  f->carry_in = true, f->source_names = {"a", "b", "c", "cf"};
  f->carry_level_32 = kPtx30Sm20, f->carry_level_64 = kPtx43Sm20;

  struct VideoRow {
    Family family;
    absl::string_view summary;
  };
  for (const VideoRow& row :
       std::initializer_list<VideoRow>{{Family::kVadd, "tmp = a + b"},
                                       {Family::kVsub, "tmp = a - b"},
                                       {Family::kVabsdiff, "tmp = |a - b|"},
                                       {Family::kVmin, "tmp = min(a, b)"},
                                       {Family::kVmax, "tmp = max(a, b)"}}) {
    f = simple(row.family, "PTX ISA 9.7.18.1.1", kPtx20Sm20, row.summary, 2,
               kU32S32);
    f->syntax = "", f->source = kSeedVideo, f->atypes = kU32S32,
    f->btypes = kU32S32, f->optional_sat = true, f->asels = kAllSels,
    f->bsels = kAllSels, f->dsels = kAllSels, f->secops = kAllSecOps,
    f->legal = VideoRule;
  }
  for (const VideoRow& row : std::initializer_list<VideoRow>{
           {Family::kVshl, "tmp = a << b"}, {Family::kVshr, "tmp = a >> b"}}) {
    f = simple(row.family, "PTX ISA 9.7.18.1.2", kPtx20Sm20, row.summary, 2,
               kU32S32);
    f->syntax = "", f->source = "000_9b31c0f0b7344ca8.txt", f->atypes = kU32S32,
    f->btypes = {T::kU32}, f->shift_modes = kClampWrap, f->optional_sat = true,
    f->asels = kAllSels, f->bsels = kAllSels, f->dsels = kAllSels,
    f->secops = kAllSecOps, f->legal = VideoRule;
    f->amount_sources = 0b10;  // shift amount
  }
  f = simple(Family::kVmad, "PTX ISA 9.7.18.1.3", kPtx20Sm20,
             "d = (+/-)(a * b) + (+/-)c (+1), scaled", 3, kU32S32);
  f->syntax = ".type.atype.btype.po.sat.scale",
  f->source = "PTX ISA text (vmad)", f->atypes = kU32S32, f->btypes = kU32S32,
  f->optional_sat = true, f->asels = kAllSels, f->bsels = kAllSels,
  f->scales = {Scale::kNone, Scale::kShr7, Scale::kShr15};
  f->vmad_forms = {VmadForm::kNone, VmadForm::kNegProduct, VmadForm::kNegC,
                   VmadForm::kPlusOne};
  f = simple(Family::kVset, "PTX ISA 9.7.18.1.4", kPtx20Sm20,
             "tmp = compare(a, b) ? 1 : 0", 2, {});
  f->syntax = ".atype.btype.cmp.secop", f->source = "PTX ISA text (vset)",
  f->atypes = kU32S32, f->btypes = kU32S32, f->asels = kAllSels,
  f->bsels = kAllSels, f->dsels = kAllSels, f->secops = kAllSecOps,
  f->legal = VideoRule;
  f->cmps = {Cmp::kEq, Cmp::kNe, Cmp::kLt, Cmp::kLe, Cmp::kGt, Cmp::kGe};
  AddSimdVideoRows(t);
  f = simple(Family::kVisaShl, "Intel vISA SHL (opcode 0x24)", {0, 0},
             "dst = src0 << (src1 & 31, or & 63 for Q/UQ dst)", 2, kVisaTypes);
  f->isa = TargetIsa::kIntelVisa, f->source_names = {"src0", "src1"};
  f->syntax = ".sat.type.atype.btype", f->source = "004_d740d6e62bd706dd.txt",
  f->atypes = kVisaTypes, f->btypes = kVisaTypes, f->optional_sat = true;
  f->amount_sources = 0b10;  // shift amount
  f->source_widths = {W::kAType, W::kBType, W::kBType, W::kBType};

  for (FamilyInfo& row : t) {
    if (row.syntax.empty() && IsVideo(row.family)) {
      row.syntax = row.family == Family::kVshl || row.family == Family::kVshr
                       ? absl::string_view(
                             ".type.atype.btype.sat."
                             "shiftmode.secop")
                       : absl::string_view(".type.atype.btype.sat.secop");
    } else if (row.syntax.empty()) {
      row.syntax = ".type";
    }
  }
  return InFamilyOrder(std::move(t));
}

template <typename Value>
std::vector<int> AsInts(const std::vector<Value>& values) {
  std::vector<int> ints;
  for (Value value : values) ints.push_back(static_cast<int>(value));
  return ints;
}
// A flag: written or not if optional, absent otherwise.
std::vector<int> AsInts(bool optional) {
  return optional ? std::vector<int>{0, 1} : std::vector<int>{};
}

constexpr AxisInfo kAxes[] = {
#define PTXDIFF_AXIS(Name, field, Value, values_, token_, Spell, Plainer, \
                     label_)                                              \
  {.axis = Axis::k##Name,                                                 \
   .token = token_,                                                       \
   .label = label_,                                                       \
   .is_flag = std::is_same_v<Value, bool>,                                \
   .get = [](const Variant& v) { return static_cast<int>(v.field); },     \
   .set = [](Variant& v, int x) { v.field = static_cast<Value>(x); },     \
   .values = [](const FamilyInfo& info) { return AsInts(info.values_); }, \
   .spell =                                                               \
       [](Family f, int x) {                                              \
         return SpellIn(InfoOf(f).isa, static_cast<Value>(x), Spell);     \
       },                                                                 \
   .plainer =                                                             \
       [](int x) {                                                        \
         return static_cast<int>(Plainer(static_cast<Value>(x)));         \
       }},
#include "isa/axes.inc"
#undef PTXDIFF_AXIS
};
static_assert(std::size(kAxes) == kNumAxes);

// The values each axis of `info` takes in its product: {0} (kNone, false)
// for an axis it lacks.
using AxisValueLists = std::array<std::vector<int>, kNumAxes>;
AxisValueLists ProductValues(const FamilyInfo& info) {
  AxisValueLists lists;
  for (int a = 0; a < kNumAxes; ++a) {
    lists[a] = kAxes[a].values(info);
    if (lists[a].empty()) lists[a] = {0};
  }
  return lists;
}

// The product of the axes from `first` on, `v` holding the values of the
// axes before it; the last axis turns fastest. False once `fn` returned
// false (the walk stops there).
bool ForEachInProduct(const FamilyInfo& info, const AxisValueLists& values,
                      int first, Variant& v,
                      absl::FunctionRef<bool(const Variant&)> fn) {
  if (first == kNumAxes) {
    return (info.legal != nullptr && !info.legal(v)) || fn(v);
  }
  for (int value : values[first]) {
    kAxes[first].set(v, value);
    if (!ForEachInProduct(info, values, first + 1, v, fn)) return false;
  }
  return true;
}

}  // namespace

std::span<const FamilyInfo> AllFamilies() {
  static const std::vector<FamilyInfo>* table = [] {
    auto* t = new std::vector<FamilyInfo>(BuildTable());
    family_table_internal::rows.store(t->data(), std::memory_order_release);
    return t;
  }();
  return *table;
}

const FamilyInfo* family_table_internal::BuildRows() {
  return AllFamilies().data();
}

std::optional<Family> FamilyByOpcode(absl::string_view opcode) {
  for (const FamilyInfo& info : AllFamilies()) {
    if (info.opcode == opcode) return info.family;
  }
  return std::nullopt;
}

uint32_t DefaultSimdSelector(int lanes) {
  return lanes == 2 ? 0x3210 : 0x76543210;  // .h10 .h32; .b3210 .b7654
}

std::span<const AxisInfo, kNumAxes> AllAxes() { return kAxes; }

void ForEachVariantWhile(Family family,
                         absl::FunctionRef<bool(const Variant&)> fn) {
  Variant v;
  v.family = family;
  const FamilyInfo& info = InfoOf(family);
  ForEachInProduct(info, ProductValues(info), 0, v, fn);
}

void ForEachVariant(Family family, absl::FunctionRef<void(const Variant&)> fn) {
  ForEachVariantWhile(family, [&](const Variant& v) {
    fn(v);
    return true;
  });
}

absl::Span<const Variant> AllVariants() { return TheIsaTables().variants; }

absl::Span<const Variant> VariantsOf(Family f) {
  // AllVariants() is family by family, in Family order.
  const absl::Span<const Variant> all = AllVariants();
  const auto begin = std::partition_point(
      all.begin(), all.end(), [f](const Variant& v) { return v.family < f; });
  const auto end = std::partition_point(
      begin, all.end(), [f](const Variant& v) { return v.family == f; });
  return all.subspan(begin - all.begin(), end - begin);
}

namespace {

// VariantIndex by arithmetic instead of hashing: the campaign looks a
// variant up several times per tuple, on tables too big for the cache.
// Each family's variants sit in a dense table over the product of the
// values its axes accept (~200k slots for ~81k variants); an axis value's
// place in that product is read from `offset`.
class DenseVariantIndex {
 public:
  static constexpr int kValueLimit = 32;  // every axis value is below this

  DenseVariantIndex() {
    for (auto& family : offset_) {
      for (auto& axis : family) axis.fill(kRejected);
    }
    int32_t base = 0;
    for (const FamilyInfo& info : AllFamilies()) {
      const int f = static_cast<int>(info.family);
      base_[f] = base;
      int32_t stride = 1;
      const AxisValueLists lists = ProductValues(info);
      for (int a = kNumAxes - 1; a >= 0; --a) {  // the last axis turns fastest
        const std::vector<int>& values = lists[a];
        for (size_t i = 0; i < values.size(); ++i) {
          PTXDIFF_CHECK(values[i] >= 0 && values[i] < kValueLimit);
          offset_[f][a][values[i]] = static_cast<int32_t>(i) * stride;
        }
        stride *= static_cast<int32_t>(values.size());
      }
      base += stride;
    }
    slots_.assign(base, -1);
    const absl::Span<const Variant> all = AllVariants();
    for (size_t i = 0; i < all.size(); ++i) {
      const int32_t slot = Slot(all[i]);
      PTXDIFF_CHECK(slot >= 0 && slots_[slot] == -1);
      slots_[slot] = static_cast<int32_t>(i);
    }
  }

  int Find(const Variant& v) const {
    const int32_t slot = Slot(v);
    return slot < 0 ? -1 : slots_[slot];
  }

 private:
  static constexpr int32_t kRejected = -1;

  // `v`'s slot in its family's table, or -1 if an axis holds a value the
  // family does not accept.
  int32_t Slot(const Variant& v) const {
    const int f = static_cast<int>(v.family);
    if (f < 0 || f >= kNumFamilies) return -1;
    int32_t slot = base_[f];
    bool rejected = false;
    int a = 0;
#define PTXDIFF_AXIS(Name, field, ...)                          \
  {                                                             \
    const unsigned value = static_cast<uint8_t>(v.field);       \
    const int32_t offset =                                      \
        value < kValueLimit ? offset_[f][a][value] : kRejected; \
    rejected |= offset == kRejected;                            \
    slot += offset;                                             \
    ++a;                                                        \
  }
#include "isa/axes.inc"
#undef PTXDIFF_AXIS
    return rejected ? -1 : slot;
  }

  std::array<std::array<std::array<int32_t, kValueLimit>, kNumAxes>,
             kNumFamilies>
      offset_;
  std::array<int32_t, kNumFamilies> base_{};
  std::vector<int32_t> slots_;  // the index in AllVariants(), or -1
};

}  // namespace

int VariantIndex(const Variant& v) {
  static const DenseVariantIndex* index = new DenseVariantIndex();
  return index->Find(v);
}

bool IsLegal(const Variant& v) { return VariantIndex(v) >= 0; }

IsaLevel LevelOf(const Variant& v) {
  const FamilyInfo& info = InfoOf(v.family);
  IsaLevel level = info.min_level;
  if (IsPacked(v.type) || v.relu) {
    level = {std::max(level.ptx, info.packed_or_relu_level.ptx),
             std::max(level.sm, info.packed_or_relu_level.sm)};
  }
  if (v.cc || HasCarryIn(v)) {  // extended precision: per width
    const IsaLevel& carry =
        TypeWidth(v.type) == 64 ? info.carry_level_64 : info.carry_level_32;
    level = {std::max(level.ptx, carry.ptx), std::max(level.sm, carry.sm)};
  }
  return level;
}

absl::string_view SourceName(const Variant& v, int i) {
  static constexpr std::array<absl::string_view, 4> kPlain = {"a", "b", "c",
                                                              "d"};
  const std::vector<absl::string_view>& names = InfoOf(v.family).source_names;
  return names.empty() ? kPlain[i] : names[i];
}

bool MayBeImmediate(const Variant& v, int i) {
  // The video instructions take "32-bit registers" only (PTX ISA 9.7.18.1);
  // the other PTX integer instructions take "register and constant immediate
  // forms" (9.7.1); vISA SHL's sources are "general, indirect, immediate".
  // A predicate source (selp's c: "operand c is a predicate") is a predicate
  // register; CC.CF (the carry-in source) is no operand at all: it is never
  // written in the text.
  // The SIMD video instructions' a, b, c are registers too (9.7.18.2's
  // syntax has no immediate form); their selector is an immediate only.
  if (IsSimdVideo(v.family)) return IsSelectorSource(v, i);
  return !IsVideo(v.family) && SourceWidth(v, i) != 1 && !IsCarryInSource(v, i);
}

int NumWrittenSources(const Variant& v) {
  const uint8_t selectors = InfoOf(v.family).selector_sources;
  return NumSources(v) - (HasCarryIn(v) ? 1 : 0) - std::popcount(selectors);
}

bool MustBeImmediate(const Variant& v, int i) {
  return (InfoOf(v.family).immediate_sources >> i) & 1;
}

bool IsAmountSource(const Variant& v, int i) {
  return (InfoOf(v.family).amount_sources >> i) & 1;
}

int FirstAmountSource(const Variant& v) {
  const uint8_t amounts = InfoOf(v.family).amount_sources;
  return amounts == 0 ? -1 : std::countr_zero(amounts);
}

}  // namespace ptxdiff
