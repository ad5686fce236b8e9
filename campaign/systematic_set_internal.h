// The systematic source's set arithmetic, shared by its .cc files: not an
// API (the campaign's is systematic_source.h). Internal to campaign/'s
// systematic source:
//   - systematic_set.cc: each variant's set of tuples: the value lists
//     (extremes, middle values, edges, selector edges), its Shape (the
//     sections and their sizes), the tuple builders of each tier, relation
//     and pair, the order the set is visited in (Order, NthOfSet) and the
//     random tail (TailTuples); SystematicCount, SystematicTuples,
//     PlannedCount, SystematicTuple;
//   - systematic_source.cc: the SystematicSource scheduler: the breadth
//     pass, the families' turns, the runs.

#ifndef PTXDIFF_CAMPAIGN_SYSTEMATIC_SET_INTERNAL_H_
#define PTXDIFF_CAMPAIGN_SYSTEMATIC_SET_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "campaign/systematic_source.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/tuple.h"
#include "isa/variant.h"

namespace ptxdiff {
namespace systematic_set_internal {

constexpr int kFillers = 3;     // other sources at 0, 1 or -1
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

// Bounds(width) has kNumBounds values.
constexpr int kNumBounds = 7;

// A destination part's bounds, each one past and one inside, as the exact
// sum or difference of a and b (the parts their selectors read).
constexpr int kPartTargets = 4;
constexpr int kPartForms = 2;

// ExtremeValues, LaneSelectorValues, EdgeValuesOf, SelectedPart,
// SourcePart, Stride: see systematic_set.cc.
const std::vector<uint64_t>& ExtremeValues(int width);
const std::vector<uint64_t>& LaneSelectorValues(int lanes);
const std::vector<uint64_t>& EdgeValuesOf(const Variant& v, int i);

// The part of a source or of the destination that a selector axis names (a
// scalar video `.asel`, `.bsel` or `.dsel`: a byte or a half-word): where it
// starts and how wide it is; the whole register for no selector.
struct Part {
  int shift;
  int bits;
};
Part SelectedPart(Sel sel, int width);
Part SourcePart(const Variant& v, int i, int width);
uint64_t Stride(uint64_t n, uint64_t seed);

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
               uint64_t i);
// Tuples k .. k + count - 1 of the set (clipped to s.total()), appended to
// `out`.
void AppendSetTuples(const Variant& v, const Shape& s, uint64_t k,
                     uint64_t count, std::vector<Tuple>& out);

}  // namespace systematic_set_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_SYSTEMATIC_SET_INTERNAL_H_
