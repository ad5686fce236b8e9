#include "backends/ptxas/foldability.h"

#include "isa/family_table.h"

namespace ptxdiff {
namespace {

// The extended-precision variants (their CC.CF set and read by add.cc/addc
// or sub.cc/subc of constants) that ptxas 13.0 folds for no operands on
// sm_75/80/90/100/120 (research §8, 24 edge tuples each): mad.cc and
// madc.hi (an IMAD.HI or IMAD.X stays), madc.lo.cc, and every 64-bit `.cc`
// variant (add.cc.u64 .. subc.cc.s64: the 64-bit add's carry chain stays).
bool NeverFoldedCarry(const Variant& v) {
  switch (v.family) {
    case Family::kMad:
      return v.cc;
    case Family::kMadc:
      return v.mul_mode == MulMode::kHi || v.cc;
    case Family::kAdd:
    case Family::kSub:
    case Family::kAddc:
    case Family::kSubc:
      return v.cc && TypeWidth(v.type) == 64;
    default:
      return false;
  }
}

// SIMD video variants of the foldable families (Foldable) that ptxas 13.0
// folds for no operands (research §8): all but the plain merge form (no
// .sat, no .add, every lane) with .u32 dtype, atype and btype, and for
// vmin2/vmax2 also all .s32. Those fold only with the default selectors
// (DefaultSelectorOnly).
bool SimdNeverFolded(const Variant& v) {
  const bool plain =
      !v.sat && v.secop == SecOp::kNone && v.mask == SimdMask::kNone;
  const bool all_u32 =
      v.type == Type::kU32 && v.atype == Type::kU32 && v.btype == Type::kU32;
  const bool all_s32 =
      v.type == Type::kS32 && v.atype == Type::kS32 && v.btype == Type::kS32;
  const bool min_max = v.family == Family::kVmin2 || v.family == Family::kVmax2;
  return !plain || !(all_u32 || (min_max && all_s32));
}

}  // namespace

// ---------------------------------------------------------------------------
// Which families fold where.

// From sweeps of every family with edge operands on every arch (ptxas 13.0;
// research §2): ptxas never folds bmsk or the scalar video instructions (it
// expands them into PRMT/IADD3/ISETP sequences), folds sad only from sm_120
// on, and folds dp4a/dp2a only where a multiplicand is 0 — the result is
// then c, the dot product is never computed, so there is nothing to test.
// lop3 and prmt fold for no operands on any arch (research §6: 0 of 512
// edge tuples on sm_75/80/90/100/120; LOP3/PRMT stay in the SASS). setp,
// selp, slct and integer cvt fold on sm_75/90/100/120 (research §7: every
// edge tuple from sm_90 on; sm_75 leaves a few 16/64-bit kernels unread).
// addc, subc and madc (CC.CF set by a constant add.cc/sub.cc) fold where
// the chain's hardware carry is 0 (research §8; NeverFolded lists their
// variants that never fold).
// The other families fold for all or some operands (div/rem: a dividend of
// 0 or 1, a divisor of 0); tuples that do not fold are declined one by one.
// Every family is named (no default), so that a family added to the table
// does not build (-Werror=switch) until someone decides whether ptxas folds
// it (and a sweep of docs/ptxas-folding-research.md's kind says so).
bool Foldable(Family f, int sm) {
  switch (f) {
    case Family::kVadd:
    case Family::kVsub:
    case Family::kVabsdiff:
    case Family::kVmin:
    case Family::kVmax:
    case Family::kVshl:
    case Family::kVshr:
    case Family::kVmad:
    case Family::kVset:
    case Family::kVisaShl:
    case Family::kBmsk:
    case Family::kDp4a:
    case Family::kDp2a:
    case Family::kLop3:
    case Family::kPrmt:
      return false;
    // SIMD video (research §8): only the plain forms of these fold
    // (SimdNeverFolded), and only with the default selectors.
    case Family::kVadd2:
    case Family::kVsub2:
    case Family::kVavrg2:
    case Family::kVmin2:
    case Family::kVmax2:
    case Family::kVadd4:
    case Family::kVsub4:
      return true;
    case Family::kVabsdiff2:
    case Family::kVset2:
    case Family::kVavrg4:
    case Family::kVabsdiff4:
    case Family::kVmin4:
    case Family::kVmax4:
    case Family::kVset4:
      return false;
    case Family::kSad:
      return sm >= 120;
    case Family::kAdd:
    case Family::kSub:
    case Family::kMul:
    case Family::kMad:
    case Family::kMul24:
    case Family::kMad24:
    case Family::kDiv:
    case Family::kRem:
    case Family::kAbs:
    case Family::kNeg:
    case Family::kMin:
    case Family::kMax:
    case Family::kPopc:
    case Family::kClz:
    case Family::kBfind:
    case Family::kFns:
    case Family::kBrev:
    case Family::kBfe:
    case Family::kBfi:
    case Family::kSzext:
    case Family::kShf:
    case Family::kAnd:
    case Family::kOr:
    case Family::kXor:
    case Family::kNot:
    case Family::kCnot:
    case Family::kShl:
    case Family::kShr:
    case Family::kSet:
    case Family::kSetp:
    case Family::kSelp:
    case Family::kSlct:
    case Family::kCvt:
    case Family::kAddc:
    case Family::kSubc:
    case Family::kMadc:
      return true;
  }
  return false;
}

// ptxas 13.0 folds a SIMD video instruction only with the default
// selectors (research §8): a tuple with another is declined before it costs
// a compile.
bool FoldsForSelector(const Variant& v, const Operands& o) {
  if (!IsSimdVideo(v.family)) return true;
  const int sel = NumSources(v) - 1;
  return (o.v[sel] & SourceMask(v, sel)) ==
         DefaultSimdSelector(SimdLanes(v.family));
}

// Variants of foldable families that ptxas 13.0 folds for no operands on
// any arch (research §2, 0/12 edge tuples; checked again by
// PtxasBackendTest.NeverFoldedVariantsDoNotFold): 32- and 64-bit mad.hi
// without .sat (IMAD.HI stays; with .sat, zeros fold), 16- and 64-bit
// div/rem (a call to a division routine stays), the packed .u16x2/.s16x2
// forms and min/max .relu. They are declined as unsupported, so a campaign
// spends nothing on them; the option all_variants=1 compiles them anyway,
// to check the list against another ptxas.
bool NeverFolded(const Variant& v) {
  const int width = TypeWidth(v.type);
  if (NeverFoldedCarry(v)) return true;
  if (IsSimdVideo(v.family)) return SimdNeverFolded(v);
  switch (v.family) {
    case Family::kMad:
      return v.mul_mode == MulMode::kHi && width >= 32 && !v.sat;
    case Family::kDiv:
    case Family::kRem:
      return width == 16 || width == 64;
    case Family::kAdd:
    case Family::kMin:
    case Family::kMax:
      return v.type == Type::kU16x2 || v.type == Type::kS16x2 || v.relu;
    default:
      return false;
  }
}

std::vector<Family> FoldableFamilies(int sm) {
  std::vector<Family> out;
  for (const FamilyInfo& info : AllFamilies()) {
    if (Foldable(info.family, sm)) out.push_back(info.family);
  }
  return out;
}

}  // namespace ptxdiff
