#include "harness/semantic_classes.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/container/node_hash_map.h"
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

namespace {

using i128 = __int128;

// A factor's range: its width read signed or not.
struct FactorRange {
  i128 lo, hi;
  bool Holds(i128 x) const { return x >= lo && x <= hi; }
};
FactorRange FactorRangeOf(int bits, bool is_signed) {
  const i128 top = i128{1} << bits;
  return is_signed ? FactorRange{-top / 2, top / 2 - 1}
                   : FactorRange{0, top - 1};
}

// x * y == t with both in `r`: t and 1, the powers of two split evenly, a
// divisor 2^j - 1 or 2^j + 1 and its quotient, each with its sign on either
// factor; else the nearest product on t's side of the edge it stands for
// (toward zero when t is just inside it, away from zero when t is at or
// past it): 2^j times t / 2^j, rounded so, for the least j that fits, or the
// largest factor times the other, rounded so. What puts a product at a
// part's edge where t has no factoring in range.
std::optional<std::pair<i128, i128>> FactorsAt(i128 t, FactorRange r,
                                               bool toward_zero) {
  const i128 m = t < 0 ? -t : t;
  // x * y as factors in `r` with t's sign, if any: exactly t, or (not
  // `exact`) any product of that sign.
  const auto signed_pair =
      [&](i128 x, i128 y,
          bool exact = true) -> std::optional<std::pair<i128, i128>> {
    const i128 sx = t < 0 ? -x : x;  // one factor carries t's sign
    for (const auto& [a, b] : {std::pair{sx, y}, std::pair{-sx, -y},
                               std::pair{y, sx}, std::pair{-y, -sx}}) {
      const bool at = exact ? a * b == t : (a * b < 0) == (t < 0);
      if (at && r.Holds(a) && r.Holds(b)) return std::pair{a, b};
    }
    return std::nullopt;
  };
  if (auto p = signed_pair(m, 1)) return p;
  if (m > 0 && (m & (m - 1)) == 0) {
    int k = 0;
    while ((i128{1} << k) < m) ++k;
    if (auto p = signed_pair(i128{1} << (k - k / 2), i128{1} << (k / 2)))
      return p;
  }
  for (int j = 2; j <= 64; ++j) {
    for (const i128 d : {(i128{1} << j) - 1, (i128{1} << j) + 1}) {
      if (m % d != 0) continue;
      if (auto p = signed_pair(m / d, d)) return p;
    }
  }
  const auto rounded = [&](i128 y) {
    return toward_zero ? m / y : (m + y - 1) / y;
  };
  for (int j = 1; j <= 64; ++j) {
    const i128 y = i128{1} << j;
    if (auto p = signed_pair(rounded(y), y, /*exact=*/false)) return p;
  }
  for (const i128 y : {r.hi, -r.lo}) {
    if (y <= 0) continue;  // -r.lo of unsigned factors
    if (auto p = signed_pair(rounded(y), y, /*exact=*/false)) return p;
  }
  return std::nullopt;
}

// The edges of the part of a product that `v` keeps: the exponents k of
// 2^k where the kept bits change (its lowest bit for .hi, its sign bit, one
// past its top for .lo, the factors' width for .wide), each below the
// product's own width and below 2^126, which i128 holds with its products
// (a 64-bit .hi's sign bit, 2^127, is left out).
std::vector<int> KeptPartEdges(const Variant& v, int factor_bits) {
  const int product_bits = 2 * factor_bits, kept = ResultWidth(v);
  const int low = v.mul_mode == MulMode::kHi ? product_bits - kept : 0;
  std::vector<int> edges;
  for (const int k :
       {low, low + kept - 1, low + kept, factor_bits - 1, factor_bits}) {
    if (k > 0 && k < std::min(product_bits, 126) &&
        std::find(edges.begin(), edges.end(), k) == edges.end()) {
      edges.push_back(k);
    }
  }
  return edges;
}

// The s32 part a saturating mad adds c to, of the product x * y.
int64_t KeptPart(const Variant& v, int factor_bits, i128 product) {
  const int low =
      v.mul_mode == MulMode::kHi ? 2 * factor_bits - ResultWidth(v) : 0;
  return SignExtend(static_cast<uint64_t>(product >> low), ResultWidth(v));
}

std::vector<Operands> WorkOutProductBounds(const Variant& v) {
  const int bits = ProductFactorWidth(v);
  if (bits == 0) return {};
  const bool is_signed = IsSigned(v.type);
  const FactorRange range = FactorRangeOf(bits, is_signed);
  std::vector<Operands> out;
  const auto add = [&](const Operands& o) {
    for (const Operands& seen : out) {
      if (std::equal(seen.v, seen.v + kMaxSources, o.v)) return;
    }
    out.push_back(o);
  };
  for (const int k : KeptPartEdges(v, bits)) {
    const i128 edge = i128{1} << k;
    // At the edge and just inside it; for signed factors also the
    // negative edge and just past it.
    std::vector<std::pair<i128, bool>> targets = {{edge, false},
                                                  {edge - 1, true}};
    if (is_signed)
      targets.insert(targets.end(), {{-edge, true}, {-edge - 1, false}});
    for (const auto& [target, inside] : targets) {
      const auto factors = FactorsAt(target, range, inside);
      if (!factors) continue;
      Operands o;
      o.v[0] = Low(static_cast<uint64_t>(factors->first), bits);
      o.v[1] = Low(static_cast<uint64_t>(factors->second), bits);
      if (!v.sat || NumSources(v) < 3) {
        add(o);
        continue;
      }
      // The part plus c at the s32 bounds and one past them.
      const int64_t part = KeptPart(v, bits, factors->first * factors->second);
      for (const int64_t bound : {int64_t{INT32_MAX}, int64_t{INT32_MAX} + 1,
                                  int64_t{INT32_MIN}, int64_t{INT32_MIN} - 1}) {
        const int64_t c = bound - part;
        if (c < INT32_MIN || c > INT32_MAX) continue;
        o.v[2] = Low(static_cast<uint64_t>(c), 32);
        add(o);
      }
    }
  }
  return out;
}

}  // namespace

const std::vector<Operands>& ProductBoundOperands(const Variant& v) {
  static const std::vector<Operands> kNone;
  if (ProductFactorWidth(v) == 0) return kNone;
  // A node map: the vectors handed out stay where they are as it grows.
  static std::mutex mu;
  static absl::node_hash_map<Variant, std::vector<Operands>> worked_out;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = worked_out.try_emplace(v);
  if (inserted) it->second = WorkOutProductBounds(v);
  return it->second;
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
