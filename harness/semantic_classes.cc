#include "harness/semantic_classes.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

bool SelectsNegative(uint64_t x, Type t, Sel s) {
  if (!IsSigned(t)) return false;
  if (IsByteSel(s))
    return (x >> (8 * (static_cast<int>(s) - static_cast<int>(Sel::kB0)) + 7)) &
           1;
  if (IsHalfSel(s)) return (x >> (s == Sel::kH1 ? 31 : 15)) & 1;
  return (x >> 31) & 1;
}

// Whether .sat or .relu changed the result: the variant without them gives
// another value.
bool Clamped(const Tuple& t, const Result& oracle) {
  if (!t.variant.sat && !t.variant.relu) return false;
  Variant plain = t.variant;
  plain.sat = plain.relu = false;
  return IsLegal(plain) && Evaluate(plain, t.operands).bits != oracle.bits;
}

// A number, not a selector or the carry-in.
bool IsNumber(const Variant& v, int i) {
  return !IsSelectorSource(v, i) && !IsCarryInSource(v, i);
}

// The signed MIN or MAX of the width.
bool IsSignedEnd(uint64_t x, int width) {
  const uint64_t min = uint64_t{1} << (width - 1);
  return x == min || x == min - 1;
}

bool EqualExtremes(const Variant& v, const Operands& o) {
  for (int i = 0; i < NumSources(v); ++i) {
    for (int j = i + 1; j < NumSources(v); ++j) {
      const int width = SourceWidth(v, i);
      if (!IsNumber(v, i) || !IsNumber(v, j) || width < 2 ||
          SourceWidth(v, j) != width) {
        continue;
      }
      const uint64_t x = Low(o.v[i], width), y = Low(o.v[j], width);
      const bool near = Low(x - y + 1, width) <= 2;  // x - y in {-1, 0, 1}
      // All ones only equal: one apart, it is 0 and -1, far too common.
      if ((near && (IsSignedEnd(x, width) || IsSignedEnd(y, width))) ||
          (x == y && x == LowMask(width))) {
        return true;
      }
    }
  }
  return false;
}

bool AtDestinationBoundary(const Variant& v, const Operands& o) {
  for (int i = 0; i < NumSources(v); ++i) {
    if (!NarrowsToDestination(v, i)) continue;
    const auto values = DestinationBoundaryValues(v, i);
    if (std::find(values.begin(), values.end(),
                  Low(o.v[i], SourceWidth(v, i))) != values.end()) {
      return true;
    }
  }
  return false;
}

bool AtLaneBoundary(const Variant& v, const Operands& o) {
  if (!IsSimdVideo(v.family)) return false;
  const LaneRange d = SimdDestinationLane(v);
  for (int lane = 0; lane < SimdLanes(v.family); ++lane) {
    const auto [a, b] = SimdLaneOperands(v, o, lane);
    for (const int64_t exact : {a + b, a - b}) {
      if (exact == d.lo - 1 || exact == d.hi + 1) return true;
    }
  }
  return false;
}

}  // namespace

bool NarrowsToDestination(const Variant& v, int i) {
  const int result = ResultWidth(v);
  return IsNumber(v, i) && result > 1 && result < SourceWidth(v, i);
}

std::array<uint64_t, kNumDestinationBoundaryValues> DestinationBoundaryValues(
    const Variant& v, int i) {
  const LaneRange s = LaneRangeOf(ResultWidth(v), true),
                  u = LaneRangeOf(ResultWidth(v), false);
  const int64_t bounds[] = {s.lo, s.hi, u.lo, u.hi};
  std::array<uint64_t, kNumDestinationBoundaryValues> out;
  int n = 0;
  for (const int64_t bound : bounds) {
    for (const int64_t delta : {-1, 0, 1}) {
      out[n++] = Low(static_cast<uint64_t>(bound + delta), SourceWidth(v, i));
    }
  }
  return out;
}

LaneRange LaneRangeOf(int bits, bool is_signed) {
  const int64_t half = int64_t{1} << (bits - 1);
  return is_signed ? LaneRange{bits, -half, half - 1}
                   : LaneRange{bits, 0, 2 * half - 1};
}

LaneRange SimdDestinationLane(const Variant& v) {
  return LaneRangeOf(32 / SimdLanes(v.family), IsSigned(v.type));
}

std::pair<int64_t, int64_t> SimdLaneOperands(const Variant& v,
                                             const Operands& o, int lane) {
  const int lanes = SimdLanes(v.family), bits = 32 / lanes;
  const uint64_t ba = (Low(o.v[1], 32) << 32) | Low(o.v[0], 32);
  const SimdSelector sel{lanes, static_cast<uint32_t>(o.v[3])};
  const auto part = [&](int index, Type t) {
    const uint64_t x = Low(ba >> (bits * index), bits);
    return IsSigned(t) ? SignExtend(x, bits) : static_cast<int64_t>(x);
  };
  return {part(sel.AselPart(lane), v.atype), part(sel.BselPart(lane), v.btype)};
}

uint32_t SemanticClasses(const Tuple& t, const Result& oracle) {
  const Variant& v = t.variant;
  uint32_t classes = t.runtime != 0 ? kRuntimeSource : 0;
  for (int i = 0; i < NumSources(v); ++i) {
    const int width = SourceWidth(v, i);
    const uint64_t x = Low(t.operands.v[i], width);
    if (x == 0) classes |= kZeroOperand;
    if (x == LowMask(width)) classes |= kAllOnesOperand;
    if (IsAmountSource(v, i)) {
      if (x >= 32 && x < 64) classes |= kShiftAtLeast32;
      if (x >= 64 && x < 256) classes |= kShiftAtLeast64;
      if (x >= 256 && x < 65536) classes |= kAbove255;
    }
    if (width > 1 && x == uint64_t{1} << (width - 1)) classes |= kMinOperand;
  }
  if (v.family == Family::kBfe || v.family == Family::kBfi) {
    const int pos_index = FirstAmountSource(v);
    const uint64_t pos = t.operands.v[pos_index] & 0xff;
    const uint64_t len = t.operands.v[pos_index + 1] & 0xff;
    if (pos + len > static_cast<uint64_t>(TypeWidth(v.type)))
      classes |= kFieldCrossesTop;
  }
  if (Clamped(t, oracle)) classes |= kSaturated;
  if (IsVideo(v.family) &&
      (SelectsNegative(t.operands.v[0], v.atype, v.asel) ||
       SelectsNegative(t.operands.v[1], v.btype, v.bsel))) {
    classes |= kNegativeSelected;
  }
  if (EqualExtremes(v, t.operands)) classes |= kEqualExtremes;
  if (AtDestinationBoundary(v, t.operands)) classes |= kDestinationBoundary;
  if (AtLaneBoundary(v, t.operands)) classes |= kLaneBoundary;
  if (!oracle.defined()) classes |= kUndefined;
  const int width = ResultWidth(v);
  if (oracle.bits == 0) classes |= kResultZero;
  if (oracle.bits == LowMask(width)) classes |= kResultAllOnes;
  if ((oracle.bits >> (width - 1)) & 1) classes |= kTopBitSet;
  return classes;
}

uint32_t TriggerClasses(uint32_t classes) {
  classes &= kTriggerClasses;
  // A clamped result explains extreme operands: MIN or -1 is only the
  // plainest way to reach the bound, not a cause of its own.
  if (classes & kSaturated) classes &= ~(kMinOperand | kAllOnesOperand);
  return classes;
}

std::string TriggerClassName(uint32_t classes) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {kAllOnesOperand, "all-ones"}, {kMinOperand, "min"},
      {kShiftAtLeast32, "ge32"},     {kShiftAtLeast64, "ge64"},
      {kAbove255, "ge256"},          {kFieldCrossesTop, "field-past-top"},
      {kSaturated, "saturated"},     {kNegativeSelected, "negative-part"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (classes & bit) absl::StrAppend(&out, out.empty() ? "" : "_", name);
  }
  return out.empty() ? "in-range" : out;
}

}  // namespace ptxdiff
