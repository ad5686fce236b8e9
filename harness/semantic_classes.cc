#include "harness/semantic_classes.h"

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

bool SelectsNegative(uint64_t x, Type t, Sel s) {
  if (!IsSigned(t)) return false;
  if (IsByteSel(s)) return (x >> (8 * (static_cast<int>(s) - static_cast<int>(Sel::kB0)) + 7)) & 1;
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

}  // namespace

uint32_t SemanticClasses(const Tuple& t, const Result& oracle) {
  const Variant& v = t.variant;
  uint32_t classes = 0;
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
    if (pos + len > static_cast<uint64_t>(TypeWidth(v.type))) classes |= kFieldCrossesTop;
  }
  if (Clamped(t, oracle)) classes |= kSaturated;
  if (IsVideo(v.family) && (SelectsNegative(t.operands.v[0], v.atype, v.asel) ||
                            SelectsNegative(t.operands.v[1], v.btype, v.bsel))) {
    classes |= kNegativeSelected;
  }
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
      {kAllOnesOperand, "all-ones"},   {kMinOperand, "min"},
      {kShiftAtLeast32, "ge32"},       {kShiftAtLeast64, "ge64"},
      {kAbove255, "ge256"},            {kFieldCrossesTop, "field-past-top"},
      {kSaturated, "saturated"},       {kNegativeSelected, "negative-part"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (classes & bit) absl::StrAppend(&out, out.empty() ? "" : "_", name);
  }
  return out.empty() ? "in-range" : out;
}

}  // namespace ptxdiff
