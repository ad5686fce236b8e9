#include "campaign/systematic_source.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

constexpr int kFillers = 3;     // other sources at 0, 1 or -1
// A family whose every variant is in its random tail (an endless source)
// is charged this many times a run: its random tuples are worth less than
// another family's planned ones, and small families reach their tails
// within seconds while the video families' 60k variants are still in their
// first tiers.
constexpr double kTailWeight = 16;
constexpr int kBoundForms = 6;  // sum or difference, each at B-1, B, B+1
// First tier: each source alone at an extreme, the others at 0, then -1,
// then 1 (Filler's 0, 2, 1): what puts MAX + 1, MIN - 1 and MIN * -1 early.
constexpr int kTierFillerOrder[] = {0, 2, 1};
constexpr int kTierFillers = std::size(kTierFillerOrder);
// Equal extremes (MIN, MAX, 0, all ones): the first tier pairs a with b at
// e, e+1 and e-1 (b at e); the relations section pairs every two numbers
// at those and at (e, e+1), (e, e-1).
constexpr int kNumEqualExtremes = 4;
constexpr int kEqualForms = 5;
// The forms, as what is added to (i, j) at e: the first kTierEqualForms are
// the first tier's.
constexpr uint64_t kEqualDeltas[kEqualForms][2] = {
    {0, 0}, {1, 0}, {~uint64_t{0}, 0}, {0, 1}, {0, ~uint64_t{0}}};
constexpr int kTierEqualForms = 3;
// Lane boundaries: one past the destination lane's MIN and MAX, as a sum or
// a difference.
constexpr int kLaneTargets = 2;
constexpr int kLaneForms = 2;

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
constexpr int kNumBounds = 7;

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

// The part of a source or of the destination that a selector axis names (a
// scalar video `.asel`, `.bsel` or `.dsel`: a byte or a half-word): where it
// starts and how wide it is; the whole register for no selector.
struct Part {
  int shift;
  int bits;
};
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
// A destination part's bounds, each one past and one inside, as the exact
// sum or difference of a and b (the parts their selectors read).
constexpr int kPartTargets = 4;
constexpr int kPartForms = 2;

// The shape of a variant's systematic set: its sections, in the order they
// are visited (SystematicTuples): the first tier in order (with a
// destination part's bounds after its tuple 0), then the relations in a
// pseudo-random order, then the middle tier in order, then (with forms) the
// runtime tier in order, then the edge and boundary pairs in a
// pseudo-random order. With `runtime_early`, the runtime tier comes right
// after the relations instead (SetBreadthInBothForms' runtime_first).
struct Shape {
  int sources;
  int width[kMaxSources];
  const std::vector<uint64_t>* edge_values[kMaxSources];  // EdgeValuesOf
  uint64_t edges[kMaxSources];   // edge_values[i]->size()
  bool selector[kMaxSources];    // held at the default, not at 0, 1 or -1
  bool number[kMaxSources];      // neither a selector nor the carry-in
  bool narrowing[kMaxSources];   // NarrowsToDestination
  bool amount[kMaxSources];      // IsAmountSource
  bool runtime[kMaxSources];     // a number that may be a runtime value (forms
                                 // only)
  int first_pair[2] = {-1, -1};  // the first two numbers, if any
  int lanes = 0;  // a SIMD video variant's: lane boundaries of a and b
  // The first tier.
  uint64_t single_total = 0, tier_equal_total = 0;
  // The runtime tier (with forms): per source that may be a runtime value,
  // its probes, each of ExtremeValues witnesses.
  uint64_t runtime_probes[kMaxSources] = {};
  uint64_t runtime_total = 0;
  // The relations: destination bounds, lane bounds, equal extremes,
  // product bounds.
  uint64_t destination_total = 0, lane_total = 0, equal_total = 0;
  // A variant whose result is a part of the product a * b: the factors at
  // the part's edges (ProductBoundOperands); and the middle tier holds the
  // other factor at 1, not 0, which would make every product 0.
  bool product = false;
  const std::vector<Operands>* product_bounds = nullptr;  // none: empty
  // What each source's selector reads of it (the whole source without one):
  // the middle tier's values are the part's, put in place.
  Part part[kMaxSources];
  // A variant that merges its result into a part of the destination: the
  // part's bounds right after tuple 0 (PartBoundTuple).
  int destination_part_bits = 0;
  uint64_t part_total = 0;
  // The middle tier: each number alone at its MiddleValues.
  const std::vector<uint64_t>* middle_values[kMaxSources] = {};
  uint64_t middle_total = 0;
  size_t middle_rounds = 0;  // the longest list: one value of each a round
  // The edge and boundary pairs.
  uint64_t edge_total = 0, boundary_total = 0;

  // The runtime tier right after the relations, not after the middle tier.
  bool runtime_early = false;

  Shape(const Variant& v, bool forms, bool early = false)
      : sources(NumSources(v)) {
    runtime_early = early && forms;
    for (int i = 0; i < sources; ++i) {
      width[i] = SourceWidth(v, i);
      part[i] = SourcePart(v, i, width[i]);
      edge_values[i] = &EdgeValuesOf(v, i);
      edges[i] = edge_values[i]->size();
      selector[i] = IsSelectorSource(v, i);
      number[i] = !selector[i] && !IsCarryInSource(v, i);
      narrowing[i] = NarrowsToDestination(v, i);
      amount[i] = IsAmountSource(v, i);
      runtime[i] = forms && number[i] && CanBeRuntime(v, i);
      if (number[i] && first_pair[0] < 0) {
        first_pair[0] = i;
      } else if (number[i] && first_pair[1] < 0) {
        first_pair[1] = i;
      }
    }
    CountPartBounds(v);
    CountFirstTier();
    CountRuntimeTier();
    CountRelations(v);
    CountMiddleTier();
    CountPairs();
  }
  uint64_t tier() const {
    return part_total + single_total + tier_equal_total;
  }
  uint64_t relations() const {
    return destination_total + lane_total + equal_total +
           product_bounds->size();
  }
  uint64_t pairs() const { return edge_total + boundary_total; }
  // The planned tiers (PlannedCount): the set up to the runtime tier (up to
  // the pairs where the runtime tier comes early).
  uint64_t planned() const {
    return tier() + relations() + middle_total +
           (runtime_early ? runtime_total : 0);
  }
  uint64_t total() const {
    return tier() + runtime_total + relations() + middle_total + pairs();
  }
  int single_fillers() const { return sources > 1 ? kTierFillers : 1; }
  // Sums and differences at a bound, between two sources that are numbers
  // (a selector is not one).
  bool BoundaryPair(int i, int j) const {
    return i != j && !selector[i] && !selector[j];
  }
  bool EqualPair(int i, int j) const { return i < j && number[i] && number[j]; }

 private:
  void CountPartBounds(const Variant& v) {
    const Part d = SelectedPart(v.dsel, 32);
    if (d.bits == 32 || sources < 2 || !number[0] || !number[1]) return;
    destination_part_bits = d.bits;
    part_total = kPartTargets * kPartForms;
  }
  void CountFirstTier() {
    for (int i = 0; i < sources; ++i) {
      if (!selector[i])
        single_total += ExtremeValues(width[i]).size() * single_fillers();
    }
    if (first_pair[1] >= 0)
      tier_equal_total = kNumEqualExtremes * kTierEqualForms;
  }
  // For runtime source r: each other source alone at each extreme, the rest
  // at each tier filler.
  void CountRuntimeTier() {
    for (int r = 0; r < sources; ++r) {
      if (!runtime[r]) continue;
      for (int j = 0; j < sources; ++j) {
        if (j != r && !selector[j]) {
          runtime_probes[r] +=
              ExtremeValues(width[j]).size() * single_fillers();
        }
      }
      runtime_total += runtime_probes[r] * ExtremeValues(width[r]).size();
    }
  }
  void CountRelations(const Variant& v) {
    for (int i = 0; i < sources; ++i) {
      if (narrowing[i]) destination_total += kNumDestinationBoundaryValues;
      for (int j = 0; j < sources; ++j) {
        if (EqualPair(i, j)) equal_total += kNumEqualExtremes * kEqualForms;
      }
    }
    product = ProductFactorWidth(v) > 0;
    product_bounds = &ProductBoundOperands(v);
    if (IsSimdVideo(v.family)) {
      lanes = SimdLanes(v.family);
      lane_total = uint64_t{kLaneForms} * kLaneTargets *
                   LaneSelectorValues(lanes).size() * lanes;
    }
  }
  void CountMiddleTier() {
    for (int i = 0; i < sources; ++i) {
      if (!number[i]) continue;
      middle_values[i] = &MiddleValues(part[i].bits, amount[i]);
      middle_total += middle_values[i]->size();
      middle_rounds = std::max(middle_rounds, middle_values[i]->size());
    }
  }
  void CountPairs() {
    if (sources == 1) edge_total = edges[0];
    const uint64_t fillers = sources > 2 ? kFillers : 1;
    for (int i = 0; i < sources; ++i) {
      for (int j = 0; j < sources; ++j) {
        if (i < j) edge_total += edges[i] * edges[j] * fillers;
        if (BoundaryPair(i, j))
          boundary_total += kNumBounds * edges[i] * kBoundForms;
      }
    }
  }
};

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

}  // namespace

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

namespace {

// How a variant's set is visited: its first tier in order, then its
// relations and its pairs each in a fixed pseudo-random order (index k ->
// k * stride + id mod the section's size), so that the first tuples of a
// section already cover its parts and every pair of sources.
struct Order {
  uint64_t id;                                    // StableId
  uint64_t relation_stride = 1, pair_stride = 1;  // Stride(section size, id)

  Order(const Shape& s, uint64_t stable_id)
      : id(stable_id),
        relation_stride(Stride(s.relations(), id)),
        pair_stride(Stride(s.pairs(), id)) {}
  // Tuple 0 only (the breadth pass's): the first tier's first; no strides.
  struct FirstOnly {};
  Order(FirstOnly, uint64_t stable_id) : id(stable_id) {}

  uint64_t Shuffled(uint64_t k, uint64_t n, uint64_t stride) const {
    return static_cast<uint64_t>(
        (static_cast<unsigned __int128>(k) * stride + id % n) % n);
  }
};

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

// The keys in ascending order, by an LSD radix sort (16-bit digits): the
// breadth pass's order of every variant, on the way to a campaign's first
// tuple, where std::sort was a visible share of start-up.
template <typename T>
void RadixSortByKey(std::vector<std::pair<uint64_t, T>>& items) {
  std::vector<std::pair<uint64_t, T>> scratch(items.size());
  std::vector<size_t> starts(size_t{1} << 16 | 1);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(starts.begin(), starts.end(), 0);
    for (const auto& item : items)
      ++starts[((item.first >> shift) & 0xffff) + 1];
    for (size_t d = 1; d < starts.size(); ++d) starts[d] += starts[d - 1];
    for (const auto& item : items)
      scratch[starts[(item.first >> shift) & 0xffff]++] = item;
    items.swap(scratch);
  }
}

}  // namespace

namespace {

void AppendSetTuples(const Variant& v, const Shape& s, uint64_t k,
                     uint64_t count, std::vector<Tuple>& out) {
  const Order order(s, StableId(v));
  for (uint64_t i = k; i < std::min(s.total(), k + count); ++i) {
    out.push_back(NthOfSet(v, s, order, i));
  }
}

}  // namespace

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

SystematicSource::SystematicSource(absl::Span<const Variant> variants, int run,
                                   bool endless, bool runtime_forms)
    : run_(std::max(1, run)), endless_(endless), forms_(runtime_forms) {
  // Sized up front: where a page fault is costly, growing these vectors by
  // doubling was most of the constructor's time, which a campaign's
  // start-up waits for (startup_benchmark).
  std::vector<FamilyState> by_family(kNumFamilies);
  std::array<size_t, kNumFamilies> family_sizes{};
  for (const Variant& v : variants) ++family_sizes[static_cast<int>(v.family)];
  for (int f = 0; f < kNumFamilies; ++f)
    by_family[f].variants.reserve(family_sizes[f]);
  for (const Variant& v : variants) {
    // Every source has edge values, so a variant with sources has a set.
    // Its size is known at its breadth tuple, which works out its shape.
    if (NumSources(v) > 0) {
      by_family[static_cast<int>(v.family)].variants.push_back(
          {.variant = v, .count = 0, .id = StableId(v)});
    }
  }
  for (int f = 0; f < kNumFamilies; ++f) {
    by_family[f].family = static_cast<Family>(f);
    by_family[f].in_set = by_family[f].variants.size();
  }
  for (FamilyState& f : by_family) {
    if (!f.variants.empty()) families_.push_back(std::move(f));
  }
  PlanBreadth();
}

void SystematicSource::PlanBreadth() {
  // Each family's variants in an order shuffled by stable id (fixed, and
  // unrelated to the table's order), its runtime-form copies after them.
  // (key, family << 24 | index in the family)
  std::vector<std::pair<uint64_t, uint32_t>> keyed;
  for (uint32_t f = 0; f < families_.size(); ++f) {
    for (size_t i = 0; i < families_[f].variants.size(); ++i) {
      keyed.emplace_back(families_[f].variants[i].id * 0x9e3779b97f4a7c15ull,
                         f << 24 | static_cast<uint32_t>(i));
    }
  }
  RadixSortByKey(keyed);
  const bool both = breadth_both_forms_ && forms_;
  std::vector<std::vector<BreadthItem>> turns(families_.size());
  for (const auto& [key, at] : keyed) {
    const uint32_t f = at >> 24;
    turns[f].push_back({&families_[f].variants[at & 0xffffff], f, false});
  }
  size_t items = 0, longest = 0;
  for (std::vector<BreadthItem>& family : turns) {
    const size_t n = family.size();
    for (size_t i = 0; both && i < n; ++i) {
      BreadthItem copy = family[i];
      copy.runtime = true;
      family.push_back(copy);
    }
    if (both && breadth_runtime_first_) {
      std::rotate(family.begin(), family.begin() + n, family.end());
    }
    items += family.size();
    longest = std::max(longest, family.size());
  }
  // One item of each family in turn, until each family's are all out.
  breadth_.clear();
  breadth_.reserve(items);
  for (size_t k = 0; k < longest; ++k) {
    for (const std::vector<BreadthItem>& family : turns) {
      if (k < family.size()) breadth_.push_back(family[k]);
    }
  }
  for (uint32_t f = 0; f < families_.size(); ++f)
    families_[f].breadth_left = turns[f].size();
}

Tuple SystematicSource::InDefaultForm(Tuple t) const {
  if (t.runtime == 0) t.runtime = DefaultForm(t.variant, runtime_by_default_);
  return t;
}

std::optional<Tuple> SystematicSource::NextBreadth() {
  while (breadth_cursor_ < breadth_.size()) {
    const BreadthItem item = breadth_[breadth_cursor_++];
    FamilyState& family = families_[item.family];
    --family.breadth_left;
    VariantState* v = item.variant;
    if (!item.runtime) {
      ++produced_;
      breadth_charged_ += family.cost;
      // The set's first tuple (the breadth pass is each variant's first
      // visit), from what the state already holds: the pass is most of a
      // campaign's start-up. Tuple 0 is the first tier's: no strides needed.
      const Shape shape(v->variant, forms_, runtime_tier_early());
      v->count = shape.total();
      v->planned = shape.planned();
      Produced(*v, 1);
      return InDefaultForm(NthOfSet(v->variant, shape,
                                    Order(Order::FirstOnly{}, v->id), /*i=*/0));
    }
    // In both forms, the same tuple again in the runtime form, after every
    // variant of its family had its default form.
    const uint8_t runtime = RuntimeCapableSources(v->variant);
    if (runtime == 0) continue;
    Tuple t = NthOfSet(v->variant,
                       Shape(v->variant, forms_, runtime_tier_early()),
                       Order(Order::FirstOnly{}, v->id), /*i=*/0);
    if (t.runtime == runtime) continue;  // the default form already
    t.runtime = runtime;
    ++produced_;
    breadth_charged_ += family.cost;
    return t;
  }
  return std::nullopt;
}

std::optional<Tuple> SystematicSource::Next() {
  if (std::optional<Tuple> t = NextBreadth()) return t;
  while (true) {
    if (current_ != nullptr && left_in_run_ > 0 &&
        (endless_ || current_->next < current_->count)) {
      --left_in_run_;
      ++produced_;
      if (current_->next < current_->count) {
        const uint64_t k = current_->next;
        Produced(*current_, 1);
        std::vector<Tuple> one;
        AppendSetTuples(current_->variant,
                        Shape(current_->variant, forms_, runtime_tier_early()),
                        k, 1, one);
        return InDefaultForm(one[0]);
      }
      std::vector<Tuple> one;
      TailTuples(current_->variant, current_->next++, 1, one);
      return InDefaultForm(one[0]);
    }
    if (!Advance()) return std::nullopt;
  }
}

bool SystematicSource::NextRun(std::vector<Tuple>& out) {
  if (!breadth_done()) {
    if (endless_ &&
        depth_charged_ < depth_share_ * breadth_charged_ &&
        Advance(/*passed_only=*/true)) {
      const size_t before = out.size();
      AppendRun(out);
      depth_charged_ += static_cast<double>(out.size() - before) *
                        families_[current_family_].cost;
      return true;
    }
    // Each breadth tuple is another variant: a run of kBreadthRun of them.
    int n = 0;
    for (; n < kBreadthRun; ++n) {
      std::optional<Tuple> next = NextBreadth();
      if (!next) break;
      out.push_back(*next);
    }
    if (n > 0) return true;
  }
  if (current_ == nullptr || left_in_run_ == 0 ||
      (!endless_ && current_->next >= current_->count)) {
    if (!Advance()) return false;
  }
  AppendRun(out);
  return true;
}

void SystematicSource::AppendRun(std::vector<Tuple>& out) {
  const size_t before = out.size();
  if (current_->next < current_->count) {
    AppendSetTuples(current_->variant,
                    Shape(current_->variant, forms_, runtime_tier_early()),
                    current_->next, left_in_run_, out);
  } else {
    TailTuples(current_->variant, current_->next, left_in_run_, out);
  }
  const uint64_t n = out.size() - before;
  if (runtime_by_default_) {
    for (size_t i = before; i < out.size(); ++i) out[i] = InDefaultForm(out[i]);
  }
  Produced(*current_, n);
  produced_ += n;
  left_in_run_ = 0;
}

void SystematicSource::Produced(VariantState& v, uint64_t n) {
  if (v.next < v.planned && v.next + n >= v.planned) ++planned_done_;
  v.next += n;
}

void SystematicSource::SetFamilyCost(Family f, double cost) {
  for (FamilyState& s : families_) {
    if (s.family == f) s.cost = cost > 0 ? cost : 1;
  }
}

bool SystematicSource::Advance(bool passed_only) {
  // Drop the variant just finished with, if its set is exhausted (and its
  // family, if that was its last variant); an endless source keeps it, for
  // its random tail.
  if (endless_ && current_ != nullptr && !current_->tail &&
      current_->next >= current_->count) {
    current_->tail = true;
    --families_[current_family_].in_set;
    ++exhausted_;
  } else if (!endless_ && current_ != nullptr &&
             current_->next >= current_->count) {
    const size_t f = current_family_;
    std::vector<VariantState>& vs = families_[f].variants;
    const size_t index = current_ - vs.data();
    vs.erase(vs.begin() + index);
    ++exhausted_;
    if (families_[f].cursor > index) --families_[f].cursor;
    if (vs.empty()) families_.erase(families_.begin() + f);
  }
  current_ = nullptr;
  if (families_.empty()) return false;
  // The family charged least so far; the first such on ties, which makes
  // equal costs a round-robin in table order.
  size_t f = families_.size();
  for (size_t i = 0; i < families_.size(); ++i) {
    if (passed_only && families_[i].breadth_left > 0) continue;
    if (f == families_.size() || families_[i].charged < families_[f].charged)
      f = i;
  }
  if (f == families_.size()) return false;
  current_family_ = f;
  FamilyState& family = families_[f];
  family.charged += run_ * family.cost * (family.in_set == 0 ? kTailWeight : 1);
  family.cursor %= family.variants.size();
  current_ = &family.variants[family.cursor++];
  left_in_run_ = run_;
  return true;
}

}  // namespace ptxdiff
