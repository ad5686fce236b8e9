#include "backends/ptxas/scalar_video_findings.h"

#include <algorithm>

#include "absl/strings/string_view.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

using i128 = __int128;

// partSelectSignExtend: the selected part of x, sign- or zero-extended by
// its type.
int64_t SelectedPart(uint64_t x, Type t, Sel s) {
  int bits = 32, shift = 0;
  if (IsHalfSel(s)) {
    bits = 16, shift = s == Sel::kH1 ? 16 : 0;
  } else if (IsByteSel(s)) {
    bits = 8, shift = 8 * (static_cast<int>(s) - static_cast<int>(Sel::kB0));
  }
  const uint64_t part = Low(x >> shift, bits);
  return IsSigned(t) ? SignExtend(part, bits) : static_cast<int64_t>(part);
}

bool Compare(Cmp c, int64_t a, int64_t b) {
  switch (c) {
    case Cmp::kEq:
      return a == b;
    case Cmp::kNe:
      return a != b;
    case Cmp::kLt:
      return a < b;
    case Cmp::kLe:
      return a <= b;
    case Cmp::kGt:
      return a > b;
    case Cmp::kGe:
      return a >= b;
    default:
      return false;
  }
}

// vmad's sum before its scale and `.sat`, as its pseudocode computes it
// (c sign-extended when the final result is signed).
i128 VmadSum(const Variant& v, i128 a, i128 b, uint32_t c) {
  const bool neg_product = v.vmad_form == VmadForm::kNegProduct;
  const bool neg_c = v.vmad_form == VmadForm::kNegC;
  const bool signed_final =
      IsSigned(v.atype) || IsSigned(v.btype) || neg_product || neg_c;
  i128 product = a * b;
  if (neg_product) product = ~product;
  if (neg_c) c = ~c;
  const i128 c128 = signed_final ? i128{static_cast<int32_t>(c)} : i128{c};
  return product + c128 + (v.vmad_form != VmadForm::kNone ? 1 : 0);
}

// The spec's intermediate before `.sat` (vset: its 0 or 1; vmad: its sum
// before the scale), exact: vshl's can take 65 bits.
i128 Intermediate(const Variant& v, const Operands& o) {
  const i128 a = SelectedPart(o.v[0], v.atype, v.asel);
  i128 b = SelectedPart(o.v[1], v.btype, v.bsel);
  switch (v.family) {
    case Family::kVadd:
      return a + b;
    case Family::kVsub:
      return a - b;
    case Family::kVabsdiff:
      return a > b ? a - b : b - a;
    case Family::kVmin:
      return std::min(a, b);
    case Family::kVmax:
      return std::max(a, b);
    case Family::kVshl:
    case Family::kVshr: {
      b = v.shift_mode == ShiftMode::kClamp ? std::min<i128>(b, 32) : b & 31;
      const int n = static_cast<int>(b);
      return v.family == Family::kVshl ? a * (i128{1} << n) : a >> n;
    }
    case Family::kVset:
      return Compare(v.cmp, static_cast<int64_t>(a), static_cast<int64_t>(b));
    default:
      return VmadSum(v, a, b, static_cast<uint32_t>(o.v[2]));
  }
}

// optSaturate: clamps to the (sub)word range of dtype's signedness.
i128 Saturated(i128 tmp, bool sign, Sel dsel) {
  const int bits = IsByteSel(dsel) ? 8 : IsHalfSel(dsel) ? 16 : 32;
  const i128 lo = sign ? -(i128{1} << (bits - 1)) : 0;
  const i128 hi = (i128{1} << (bits - sign)) - 1;
  return std::clamp(tmp, lo, hi);
}

// The part a destination selector writes: its shift and mask.
int PartShift(Sel s) {
  if (s == Sel::kH1) return 16;
  if (IsByteSel(s))
    return 8 * (static_cast<int>(s) - static_cast<int>(Sel::kB0));
  return 0;
}
uint32_t PartMask(Sel s) { return IsByteSel(s) ? 0xff : 0xffff; }

bool IsShift(const Variant& v) {
  return v.family == Family::kVshl || v.family == Family::kVshr;
}
bool SecondaryMinMax(const Variant& v) {
  return v.secop == SecOp::kMin || v.secop == SecOp::kMax;
}
// Operand types of both signednesses among dtype, atype and btype.
bool MixedSignedness(const Variant& v) {
  const bool d = IsSigned(v.type), a = IsSigned(v.atype);
  return d != a || a != IsSigned(v.btype);
}

bool FitsS32(i128 x) { return x == static_cast<i128>(static_cast<int32_t>(x)); }

// A finding: its name, the variants its evidence covers, and the operands
// on which its pattern gives another value than the spec's.
struct Finding {
  const char* name;
  bool (*covers)(const Variant& v);
  bool (*shows)(const Variant& v, i128 tmp, const Operands& o);
};

// Ordered: a tuple several cover is named by the first that shows.
constexpr Finding kFindings[] = {
    // The -O0 code's final PRMT takes the part at the destination's
    // position of the 32-bit result, where optMerge shifts its low part.
    {"scalar video part merges: ptxas's code merges the result's high half",
     [](const Variant& v) {
       return v.dsel == Sel::kH1 || (IsByteSel(v.dsel) && v.dsel != Sel::kB0);
     },
     [](const Variant& v, i128 tmp, const Operands&) {
       const uint32_t t =
           static_cast<uint32_t>(v.sat && v.family != Family::kVset
                                     ? Saturated(tmp, IsSigned(v.type), v.dsel)
                                     : tmp);
       const uint32_t mask = PartMask(v.dsel);
       return (t & mask) != ((t >> PartShift(v.dsel)) & mask);
     }},
    // vshl/vshr `.sat` into a part: the code clamps to 32 bits, then
    // merges the low part, where optSaturate clamps to the part's range.
    {"scalar video shift .sat into a part: ptxas's code clamps to 32 bits",
     [](const Variant& v) {
       return IsShift(v) && v.sat && v.dsel != Sel::kNone;
     },
     [](const Variant& v, i128 tmp, const Operands&) {
       const bool sign = IsSigned(v.type);
       const uint32_t mask = PartMask(v.dsel);
       return (static_cast<uint32_t>(Saturated(tmp, sign, v.dsel)) & mask) !=
              (static_cast<uint32_t>(Saturated(tmp, sign, Sel::kNone)) & mask);
     }},
    // `.sat` or a secondary min/max with a .u32 dtype, mixed signedness or
    // a destination part: the code compares with the range's top and with
    // c unsigned (ISETP.GT.U32), so a negative intermediate is above both.
    {"scalar video unsigned reading: ptxas's code clamps and takes min/max "
     "of a negative intermediate as unsigned",
     [](const Variant& v) {
       return v.family != Family::kVset && v.family != Family::kVmad &&
              (v.sat || SecondaryMinMax(v)) &&
              (!IsSigned(v.type) || MixedSignedness(v) || v.dsel != Sel::kNone);
     },
     [](const Variant&, i128 tmp, const Operands&) { return tmp < 0; }},
    // `.sat`, a secondary min/max or vmad's scale: the code takes the
    // 32-bit sum's (and vmad's product's) sign extension (SHF.R.S32.HI of
    // its low word), where the spec keeps the full precision.
    {"scalar video intermediate: ptxas's code saturates and takes min/max "
     "of the 32-bit sum sign-extended",
     [](const Variant& v) {
       if (v.family == Family::kVset) return false;
       return v.sat || SecondaryMinMax(v) ||
              (v.family == Family::kVmad && v.scale != Scale::kNone);
     },
     [](const Variant& v, i128 tmp, const Operands& o) {
       // vmad: its operands and product too are taken as 32-bit words,
       // sign-extended.
       if (v.family == Family::kVmad) {
         const i128 a = SelectedPart(o.v[0], v.atype, v.asel);
         const i128 b = SelectedPart(o.v[1], v.btype, v.bsel);
         const i128 as = static_cast<int32_t>(a), bs = static_cast<int32_t>(b);
         if (a * b != as * bs || !FitsS32(a * b)) return true;
       }
       return !FitsS32(tmp);
     }},
    // vset's secondary min/max: the code compares c as signed, where the
    // spec makes vset's c unsigned (docs/spec-notes.md, "Sign of c").
    {"scalar video vset min/max: ptxas's code compares c as signed",
     [](const Variant& v) {
       return v.family == Family::kVset && SecondaryMinMax(v);
     },
     [](const Variant&, i128, const Operands& o) {
       return static_cast<int32_t>(o.v[2]) < 0;
     }},
};

}  // namespace

bool IsScalarVideoFamily(Family f) {
  const absl::string_view op = InfoOf(f).opcode;
  return op[0] == 'v' && op.back() != '2' && op.back() != '4';
}

std::optional<std::string> ScalarVideoFinding(const Variant& v,
                                              const Operands* o) {
  const i128 tmp = o != nullptr ? Intermediate(v, *o) : 0;
  for (const Finding& f : kFindings) {
    if (f.covers(v) && (o == nullptr || f.shows(v, tmp, *o))) return f.name;
  }
  return std::nullopt;
}

}  // namespace ptxdiff
