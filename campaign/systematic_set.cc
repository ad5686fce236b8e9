// Each variant's systematic set (systematic_set_internal.h): the value lists,
// the tuple builders of each tier, relation and pair, the order the set is
// visited in, and the random tail that follows it.
#include <algorithm>
#include <array>
#include <iterator>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "campaign/systematic_set_internal.h"
#include "campaign/systematic_source.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace systematic_set_internal {


std::vector<uint64_t> BuildShortEdges(int width) {
  const uint64_t mask = LowMask(width);
  const uint64_t min = uint64_t{1} << (width - 1);
  std::vector<uint64_t> values = {
      0,    1,        2,          3,          4,          7,
      8,    15,       16,         17,         31,         32,
      33,   63,       64,         65,         127,        128,
      255,  256,      257,        min - 1,    min,        min + 1,
      mask, mask - 1, 0x80808080, 0x7f7f7f7f, 0x80007fff, 0xffff0000};
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint64_t> out;
  for (uint64_t x : values) {
    if (seen.insert(x & mask).second) out.push_back(x & mask);
  }
  return out;
}

// Equal extreme `e` of a width: MIN, MAX, 0, all ones.
uint64_t EqualExtreme(int e, int width) {
  const uint64_t min = uint64_t{1} << (width - 1);
  const uint64_t values[kNumEqualExtremes] = {min, min - 1, 0, LowMask(width)};
  return values[e];
}

// What a source is tried at alone first: the equal extremes, then 1, in that
// order, without repeats (a 1-bit carry-in has two).
std::vector<uint64_t> BuildExtremes(int width) {
  std::vector<uint64_t> out;
  for (int e = 0; e <= kNumEqualExtremes; ++e) {
    const uint64_t x = e < kNumEqualExtremes ? EqualExtreme(e, width) : 1;
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

const std::vector<uint64_t>& ExtremeValues(int width) {
  static const auto* tables = [] {
    auto* t = new std::array<std::vector<uint64_t>, 65>();
    for (int w = 1; w <= 64; ++w) (*t)[w] = BuildExtremes(w);
    return t;
  }();
  return (*tables)[width];
}

// Values inside a width's range, where the extremes put nothing: each byte
// boundary below the width (2^(k-1) - 1, 2^(k-1), 2^k - 1, 2^k: 0x7f, 0x80,
// 0xff, 0x100, ... 0x100000000), the alternating patterns 0x55.., 0xaa..
// and 0x0f0f.., and 2^k + 1 (two set bits); without the extremes and without
// repeats. What a clamp at the wrong bound, a mask one bit short or a carry
// out of a byte needs. An amount (a shift amount, a bit position or length)
// gets the byte and half boundaries alone: its edge pairs already hold its
// magnitudes against 32, 64 and 256, and its patterns say little.
std::vector<uint64_t> BuildMiddleValues(int width, bool amount) {
  const uint64_t mask = LowMask(width);
  const std::vector<uint64_t>& extremes = ExtremeValues(width);
  std::vector<uint64_t> out;
  const auto add = [&](uint64_t x) {
    if (x > mask || std::find(extremes.begin(), extremes.end(), x) !=
                        extremes.end() ||
        std::find(out.begin(), out.end(), x) != out.end()) {
      return;
    }
    out.push_back(x);
  };
  // Byte and half boundaries first: the likeliest to matter.
  for (const int k : {8, 16, 24, 32}) {
    if (k >= width || (amount && k > 16)) break;
    const uint64_t top = uint64_t{1} << k;
    for (const uint64_t x : {top / 2 - 1, top / 2, top - 1, top}) add(x);
  }
  if (amount) return out;
  if (width >= 8) {
    for (const uint64_t pattern :
         {0x5555555555555555ull, 0xaaaaaaaaaaaaaaaaull, 0x0f0f0f0f0f0f0f0full})
      add(pattern & mask);
  }
  for (const int k : {8, 16, 32}) {
    if (k < width - 1) add((uint64_t{1} << k) + 1);
  }
  return out;
}

std::vector<uint64_t> Bounds(int width) {
  const uint64_t min = uint64_t{1} << (width - 1);
  return {min - 1, min, 0, static_cast<uint64_t>(width), 32, 64, 256};
}

// The edge values of a SIMD video selector: the default first (the common
// case, and the only one ptxas folds), then every lane from one part, the
// lanes reversed, a's and b's parts swapped, and the reverse of both.
std::vector<uint64_t> BuildSelectorEdges(int lanes) {
  const uint64_t d = DefaultSimdSelector(lanes);
  if (lanes == 2) return {d, 0x0000, 0x3333, 0x2301, 0x1032, 0x0123};
  return {d, 0x00000000, 0x77777777, 0x45670123, 0x32107654, 0x01234567};
}

const std::vector<uint64_t>& SelectorEdgeValues(int lanes) {
  static const auto* two = new std::vector<uint64_t>(BuildSelectorEdges(2));
  static const auto* four = new std::vector<uint64_t>(BuildSelectorEdges(4));
  return lanes == 2 ? *two : *four;
}

// The selector edges under which a and b of every lane are different parts
// (not all lanes from one part), so that a lane's a and b can be set apart.
std::vector<uint64_t> BuildLaneSelectors(int lanes) {
  std::vector<uint64_t> out;
  for (const uint64_t sel : SelectorEdgeValues(lanes)) {
    const SimdSelector selector{lanes, static_cast<uint32_t>(sel)};
    bool apart = true;
    for (int lane = 0; lane < lanes; ++lane) {
      apart &= selector.AselPart(lane) != selector.BselPart(lane);
    }
    if (apart) out.push_back(sel);
  }
  return out;
}

const std::vector<uint64_t>& LaneSelectorValues(int lanes) {
  static const auto* two = new std::vector<uint64_t>(BuildLaneSelectors(2));
  static const auto* four = new std::vector<uint64_t>(BuildLaneSelectors(4));
  return lanes == 2 ? *two : *four;
}

// The edge list of source `i` of `v`: its width's, or a selector's.
const std::vector<uint64_t>& EdgeValuesOf(const Variant& v, int i) {
  return IsSelectorSource(v, i) ? SelectorEdgeValues(SimdLanes(v.family))
                                : ShortEdgeValues(SourceWidth(v, i));
}

Part SelectedPart(Sel sel, int width) {
  if (IsByteSel(sel)) {
    return {8 * (static_cast<int>(sel) - static_cast<int>(Sel::kB0)), 8};
  }
  if (IsHalfSel(sel)) return {sel == Sel::kH1 ? 16 : 0, 16};
  return {0, width};
}
// Source i as the instruction reads it: a and b through their selectors.
Part SourcePart(const Variant& v, int i, int width) {
  if (i == 0) return SelectedPart(v.asel, width);
  if (i == 1) return SelectedPart(v.bsel, width);
  return {0, width};
}

// The value a source not in the pair is held at: 0, 1 or -1, and a selector
// at its default.
uint64_t Filler(const Shape& s, int f, int source) {
  if (s.selector[source]) return (*s.edge_values[source])[0];
  return f == 0 ? 0 : f == 1 ? 1 : LowMask(s.width[source]);
}

Operands Filled(const Shape& s, int f) {
  Operands ops;
  for (int k = 0; k < s.sources; ++k) ops.v[k] = Filler(s, f, k);
  return ops;
}

// Sources i and j at equal extreme e, in form `form` (kEqualDeltas); the
// others at 0.
Operands AtEqualExtreme(const Shape& s, int i, int j, int e, int form) {
  Operands ops = Filled(s, 0);
  ops.v[i] =
      Low(EqualExtreme(e, s.width[i]) + kEqualDeltas[form][0], s.width[i]);
  ops.v[j] =
      Low(EqualExtreme(e, s.width[j]) + kEqualDeltas[form][1], s.width[j]);
  return ops;
}

// The first tier, in order: every source at MIN (the others at 0, then -1,
// then 1), then every source at MAX, at 0, at all ones and at 1; then a against
// b at each equal extreme e: a == e, e + 1, e - 1 with b == e.
Operands TierTuple(const Shape& s, uint64_t idx) {
  if (idx >= s.single_total) {
    idx -= s.single_total;
    return AtEqualExtreme(s, s.first_pair[0], s.first_pair[1],
                          idx / kTierEqualForms, idx % kTierEqualForms);
  }
  const uint64_t fillers = s.single_fillers();
  for (size_t e = 0;; ++e) {
    for (int i = 0; i < s.sources; ++i) {
      const std::vector<uint64_t>& extremes = ExtremeValues(s.width[i]);
      if (s.selector[i] || e >= extremes.size()) continue;
      if (idx >= fillers) {
        idx -= fillers;
        continue;
      }
      Operands ops = Filled(s, kTierFillerOrder[idx]);
      ops.v[i] = extremes[e];
      return ops;
    }
  }
}

// The runtime tier, probe by probe: source r a runtime value, another
// source j alone at an extreme (the others at a tier filler), as the first
// tier has it; each probe's witnesses (r at each extreme) are consecutive,
// so that a compiler's claim for the probe is judged at all of them at the
// cost of one instruction (the backend compiles tuples that share their
// immediates once).
Tuple RuntimeTierTuple(const Variant& v, const Shape& s, uint64_t idx) {
  int r = 0;
  while (idx >= s.runtime_probes[r] * ExtremeValues(s.width[r]).size()) {
    idx -= s.runtime_probes[r] * ExtremeValues(s.width[r]).size();
    ++r;
  }
  const std::vector<uint64_t>& witnesses = ExtremeValues(s.width[r]);
  uint64_t probe = idx / witnesses.size();
  const uint64_t fillers = s.single_fillers();
  Operands ops;
  for (int j = 0; j < s.sources; ++j) {
    if (j == r || s.selector[j]) continue;
    const std::vector<uint64_t>& extremes = ExtremeValues(s.width[j]);
    if (probe >= extremes.size() * fillers) {
      probe -= extremes.size() * fillers;
      continue;
    }
    ops = Filled(s, kTierFillerOrder[probe % fillers]);
    ops.v[j] = extremes[probe / fillers];
    break;
  }
  ops.v[r] = witnesses[idx % witnesses.size()];
  return {v, ops, static_cast<uint8_t>(1 << r)};
}

// A source wider than the destination at one of the destination's bounds,
// the others at 0.
Operands DestinationTuple(const Variant& v, const Shape& s, uint64_t idx) {
  Operands ops = Filled(s, 0);
  for (int i = 0; i < s.sources; ++i) {
    if (!s.narrowing[i]) continue;
    if (idx < kNumDestinationBoundaryValues) {
      ops.v[i] = DestinationBoundaryValues(v, i)[idx];
      return ops;
    }
    idx -= kNumDestinationBoundaryValues;
  }
  return ops;
}

// x + y == target, x in `xr` and y in `yr`: x at the extreme nearest the
// target and y small, as far as the ranges allow.
std::pair<int64_t, int64_t> Split(int64_t target, LaneRange xr, LaneRange yr) {
  const int64_t x =
      std::clamp(target - std::clamp<int64_t>(1, yr.lo, yr.hi), xr.lo, xr.hi);
  return {x, std::clamp(target - x, yr.lo, yr.hi)};
}

// One lane of a SIMD video variant whose a and b, as a selector picks them
// and the lane types read them, sum or differ to exactly one past the
// destination lane's MIN or MAX; the other lanes, and c, at 0.
Operands LaneTuple(const Variant& v, const Shape& s, uint64_t idx) {
  const bool difference = idx % kLaneForms == 1;
  idx /= kLaneForms;
  const LaneRange d = SimdDestinationLane(v);
  const int64_t target = idx % kLaneTargets == 0 ? d.lo - 1 : d.hi + 1;
  idx /= kLaneTargets;
  const std::vector<uint64_t>& selectors = LaneSelectorValues(s.lanes);
  const uint32_t sel = selectors[idx % selectors.size()];
  const int lane = idx / selectors.size();
  const LaneRange ar = LaneRangeOf(d.bits, IsSigned(v.atype));
  const LaneRange br = LaneRangeOf(d.bits, IsSigned(v.btype));
  // x - y == target is x + (-y) == target, -y in -br.
  const LaneRange yr = difference ? LaneRange{d.bits, -br.hi, -br.lo} : br;
  const auto [x, y] = Split(target, ar, yr);
  const SimdSelector selector{s.lanes, sel};
  uint64_t ba = 0;
  ba |= Low(x, d.bits) << (d.bits * selector.AselPart(lane));
  ba |= Low(difference ? -y : y, d.bits) << (d.bits * selector.BselPart(lane));
  Operands ops = Filled(s, 0);
  ops.v[0] = Low(ba, 32);
  ops.v[1] = ba >> 32;
  for (int i = 0; i < s.sources; ++i) {
    if (s.selector[i]) ops.v[i] = sel;
  }
  return ops;
}

// a and b, as their selectors read them, chosen so that their exact sum or
// difference is one past or one inside the destination part's MIN or MAX:
// where the part saturates, wraps or is merged, which the extremes' parts
// (0, 1, all ones) do not reach.
Operands PartBoundTuple(const Variant& v, const Shape& s, uint64_t idx) {
  const bool difference = idx % kPartForms == 1;
  const LaneRange d = LaneRangeOf(s.destination_part_bits, IsSigned(v.type));
  const int64_t targets[kPartTargets] = {d.hi + 1, d.hi - 1, d.lo - 1,
                                         d.lo + 1};
  const int64_t target = targets[idx / kPartForms];
  const Part a = s.part[0], b = s.part[1];
  const LaneRange ar = LaneRangeOf(a.bits, IsSigned(v.atype));
  const LaneRange br = LaneRangeOf(b.bits, IsSigned(v.btype));
  // x - y == target is x + (-y) == target, -y in -br.
  const LaneRange yr = difference ? LaneRange{b.bits, -br.hi, -br.lo} : br;
  const auto [x, y] = Split(target, ar, yr);
  Operands ops = Filled(s, 0);
  ops.v[0] = Low(x, a.bits) << a.shift;
  ops.v[1] = Low(difference ? -y : y, b.bits) << b.shift;
  return ops;
}

// The first tier with the destination part's bounds after its tuple 0 (a
// variant's likeliest trigger stays first: the breadth pass's).
Operands FirstTierTuple(const Variant& v, const Shape& s, uint64_t idx) {
  if (idx == 0 || s.part_total == 0) return TierTuple(s, idx);
  if (idx <= s.part_total) return PartBoundTuple(v, s, idx - 1);
  return TierTuple(s, idx - s.part_total);
}

// Two numbers at an equal extreme e (MIN, MAX, 0, all ones): (e, e),
// (e + 1, e), (e - 1, e), (e, e + 1), (e, e - 1); the others at 0.
Operands EqualTuple(const Shape& s, uint64_t idx) {
  for (int i = 0; i < s.sources; ++i) {
    for (int j = 0; j < s.sources; ++j) {
      if (!s.EqualPair(i, j)) continue;
      const uint64_t block = kNumEqualExtremes * kEqualForms;
      if (idx >= block) {
        idx -= block;
        continue;
      }
      return AtEqualExtreme(s, i, j, idx / kEqualForms, idx % kEqualForms);
    }
  }
  return Filled(s, 0);
}

Operands RelationTuple(const Variant& v, const Shape& s, uint64_t idx) {
  if (idx < s.destination_total) return DestinationTuple(v, s, idx);
  idx -= s.destination_total;
  if (idx < s.lane_total) return LaneTuple(v, s, idx);
  idx -= s.lane_total;
  if (idx < s.product_bounds->size()) return (*s.product_bounds)[idx];
  return EqualTuple(s, idx - s.product_bounds->size());
}

// The middle tier, value by value: every number at its first middle value
// (the others at 0), then every number at its second, ..., so that a
// variant's first few middle tuples already cover each of its sources.
Operands MiddleTuple(const Shape& s, uint64_t idx) {
  for (size_t round = 0; round < s.middle_rounds; ++round) {
    for (int i = 0; i < s.sources; ++i) {
      const std::vector<uint64_t>* values = s.middle_values[i];
      if (values == nullptr || round >= values->size()) continue;
      if (idx-- > 0) continue;
      Operands ops = Filled(s, 0);
      ops.v[i] = (*values)[round] << s.part[i].shift;
      if (s.product && i < 2) ops.v[1 - i] = 1;  // the other factor
      return ops;
    }
  }
  return Filled(s, 0);
}

Operands EdgeTuple(const Shape& s, uint64_t idx) {
  Operands ops;
  if (s.sources == 1) {
    ops.v[0] = (*s.edge_values[0])[idx];
    return ops;
  }
  const uint64_t fillers = s.sources > 2 ? kFillers : 1;
  for (int i = 0; i < s.sources; ++i) {
    for (int j = i + 1; j < s.sources; ++j) {
      const uint64_t block = s.edges[i] * s.edges[j] * fillers;
      if (idx >= block) {
        idx -= block;
        continue;
      }
      const int fill = idx % fillers;
      idx /= fillers;
      for (int k = 0; k < s.sources; ++k) ops.v[k] = Filler(s, fill, k);
      ops.v[i] = (*s.edge_values[i])[idx % s.edges[i]];
      ops.v[j] = (*s.edge_values[j])[idx / s.edges[i]];
      return ops;
    }
  }
  return ops;
}

Operands BoundaryTuple(const Shape& s, uint64_t idx) {
  Operands ops;
  for (int k = 0; k < s.sources; ++k) ops.v[k] = Filler(s, 0, k);
  for (int i = 0; i < s.sources; ++i) {
    for (int j = 0; j < s.sources; ++j) {
      if (!s.BoundaryPair(i, j)) continue;
      const uint64_t block = kNumBounds * s.edges[i] * kBoundForms;
      if (idx >= block) {
        idx -= block;
        continue;
      }
      const int form = idx % kBoundForms;
      idx /= kBoundForms;
      const uint64_t bound = Bounds(s.width[j])[idx % kNumBounds];
      const uint64_t x = (*s.edge_values[i])[idx / kNumBounds];
      const uint64_t delta = static_cast<uint64_t>(form % 3) - 1;  // -1, 0, +1
      ops.v[i] = x;
      // x + y == bound + delta, or x - y == bound - delta.
      ops.v[j] =
          Low(form < 3 ? bound + delta - x : x - bound + delta, s.width[j]);
      return ops;
    }
  }
  return ops;
}

// A stride coprime with n, so that k -> k * stride mod n visits every index.
uint64_t Stride(uint64_t n, uint64_t seed) {
  if (n <= 1) return 1;
  uint64_t stride = (seed % n) | 1;
  while (std::gcd(stride, n) != 1) stride = (stride + 2) % n;
  return stride == 0 ? 1 : stride;
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// One operand of the random tail: an edge value, a small value for an
// amount, or random bits, in about equal shares; a selector is its default
// half of the time.
uint64_t TailOperand(const Variant& v, int source, uint64_t bits) {
  const int width = SourceWidth(v, source);
  const uint64_t pick = bits >> 62, value = bits & 0x3fffffffffffffffull;
  if (IsSelectorSource(v, source) && pick <= 1) {
    return DefaultSimdSelector(SimdLanes(v.family));
  }
  if (pick == 0 || (pick == 1 && !IsAmountSource(v, source))) {
    const std::vector<uint64_t>& edges = EdgeValuesOf(v, source);
    return edges[value % edges.size()];
  }
  if (pick == 1) return value % 301;  // shift amounts, positions, lengths
  return Low(SplitMix64(bits), width);
}

// `ops` within each source's SourceMask: a SIMD selector in canonical form.
Operands Canonical(const Variant& v, Operands ops) {
  for (int i = 0; i < NumSources(v); ++i) ops.v[i] &= SourceMask(v, i);
  return ops;
}


// Tuple i of a variant's set, given its shape `s` (i < s.total()).
Tuple NthOfSet(const Variant& v, const Shape& s, const Order& order,
               uint64_t i) {
  const auto runtime_tier = [&](uint64_t r) {
    Tuple t = RuntimeTierTuple(v, s, r);
    t.operands = Canonical(v, t.operands);
    return t;
  };
  if (i < s.tier()) return {v, Canonical(v, FirstTierTuple(v, s, i))};
  i -= s.tier();
  if (i < s.relations()) {
    return {v,
            Canonical(v, RelationTuple(v, s,
                                       order.Shuffled(i, s.relations(),
                                                      order.relation_stride)))};
  }
  i -= s.relations();
  if (s.runtime_early) {
    if (i < s.runtime_total) return runtime_tier(i);
    i -= s.runtime_total;
  }
  if (i < s.middle_total) return {v, Canonical(v, MiddleTuple(s, i))};
  i -= s.middle_total;
  if (!s.runtime_early) {
    if (i < s.runtime_total) return runtime_tier(i);
    i -= s.runtime_total;
  }
  const uint64_t idx = order.Shuffled(i, s.pairs(), order.pair_stride);
  return {v, Canonical(v, idx < s.edge_total
                              ? EdgeTuple(s, idx)
                              : BoundaryTuple(s, idx - s.edge_total))};
}

void AppendSetTuples(const Variant& v, const Shape& s, uint64_t k,
                     uint64_t count, std::vector<Tuple>& out) {
  const Order order(s, StableId(v));
  for (uint64_t i = k; i < std::min(s.total(), k + count); ++i) {
    out.push_back(NthOfSet(v, s, order, i));
  }
}

}  // namespace systematic_set_internal

using systematic_set_internal::BuildMiddleValues;
using systematic_set_internal::BuildShortEdges;
using systematic_set_internal::Canonical;
using systematic_set_internal::Shape;
using systematic_set_internal::AppendSetTuples;
using systematic_set_internal::SplitMix64;
using systematic_set_internal::TailOperand;

void TailTuples(const Variant& v, uint64_t k, uint64_t count,
                std::vector<Tuple>& out) {
  const uint64_t seed = StableId(v);
  const int sources = NumSources(v);
  for (uint64_t i = k; i < k + count; ++i) {
    Operands ops;
    for (int s = 0; s < sources; ++s) {
      ops.v[s] =
          TailOperand(v, s, SplitMix64(seed ^ SplitMix64(i * kMaxSources + s)));
    }
    out.push_back({v, Canonical(v, ops)});
  }
}

const std::vector<uint64_t>& ShortEdgeValues(int width) {
  static const auto* tables = [] {
    auto* t = new std::array<std::vector<uint64_t>, 65>();
    for (int w = 1; w <= 64; ++w) (*t)[w] = BuildShortEdges(w);
    return t;
  }();
  return (*tables)[width];
}

const std::vector<uint64_t>& MiddleValues(int width, bool amount) {
  static const auto* tables = [] {
    auto* t = new std::array<std::array<std::vector<uint64_t>, 65>, 2>();
    for (int w = 1; w <= 64; ++w) {
      (*t)[0][w] = BuildMiddleValues(w, /*amount=*/false);
      (*t)[1][w] = BuildMiddleValues(w, /*amount=*/true);
    }
    return t;
  }();
  return (*tables)[amount][width];
}

uint64_t SystematicCount(const Variant& v, bool forms) {
  return Shape(v, forms).total();
}

void SystematicTuples(const Variant& v, uint64_t k, uint64_t count,
                      std::vector<Tuple>& out, bool forms) {
  AppendSetTuples(v, Shape(v, forms), k, count, out);
}

uint64_t PlannedCount(const Variant& v, bool forms) {
  return Shape(v, forms).planned();
}

Tuple SystematicTuple(const Variant& v, uint64_t k, bool forms) {
  std::vector<Tuple> one;
  SystematicTuples(v, k, 1, one, forms);
  return one[0];
}

}  // namespace ptxdiff
