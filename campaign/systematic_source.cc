#include "campaign/systematic_source.h"

#include <algorithm>
#include <array>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "isa/family_table.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

constexpr int kFillers = 3;  // other sources at 0, 1 or -1
constexpr int kBoundForms = 6;  // sum or difference, each at B-1, B, B+1

std::vector<uint64_t> BuildShortEdges(int width) {
  const uint64_t mask = LowMask(width);
  const uint64_t min = uint64_t{1} << (width - 1);
  std::vector<uint64_t> values = {0,   1,   2,   3,   4,   7,   8,   15,  16,
                                  17,  31,  32,  33,  63,  64,  65,  127, 128,
                                  255, 256, 257, min - 1, min, min + 1, mask, mask - 1,
                                  0x80808080, 0x7f7f7f7f, 0x80007fff, 0xffff0000};
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint64_t> out;
  for (uint64_t x : values) {
    if (seen.insert(x & mask).second) out.push_back(x & mask);
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

// The edge list of source `i` of `v`: its width's, or a selector's.
const std::vector<uint64_t>& EdgeValuesOf(const Variant& v, int i) {
  return IsSelectorSource(v, i) ? SelectorEdgeValues(SimdLanes(v.family))
                                : ShortEdgeValues(SourceWidth(v, i));
}

// The shape of a variant's systematic set.
struct Shape {
  int sources;
  int width[kMaxSources];
  const std::vector<uint64_t>* edge_values[kMaxSources];  // EdgeValuesOf
  uint64_t edges[kMaxSources];  // edge_values[i]->size()
  bool selector[kMaxSources];   // held at the default, not at 0, 1 or -1
  uint64_t edge_total = 0, boundary_total = 0;

  explicit Shape(const Variant& v) : sources(NumSources(v)) {
    for (int i = 0; i < sources; ++i) {
      width[i] = SourceWidth(v, i);
      edge_values[i] = &EdgeValuesOf(v, i);
      edges[i] = edge_values[i]->size();
      selector[i] = IsSelectorSource(v, i);
    }
    if (sources == 1) edge_total = edges[0];
    const uint64_t fillers = sources > 2 ? kFillers : 1;
    for (int i = 0; i < sources; ++i) {
      for (int j = 0; j < sources; ++j) {
        if (i < j) edge_total += edges[i] * edges[j] * fillers;
        if (BoundaryPair(i, j)) boundary_total += kNumBounds * edges[i] * kBoundForms;
      }
    }
  }
  uint64_t total() const { return edge_total + boundary_total; }
  // Sums and differences at a bound, between two sources that are numbers
  // (a selector is not one).
  bool BoundaryPair(int i, int j) const { return i != j && !selector[i] && !selector[j]; }
};

// The value a source not in the pair is held at: 0, 1 or -1, and a selector
// at its default.
uint64_t Filler(const Shape& s, int f, int source) {
  if (s.selector[source]) return (*s.edge_values[source])[0];
  return f == 0 ? 0 : f == 1 ? 1 : LowMask(s.width[source]);
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
      ops.v[j] = Low(form < 3 ? bound + delta - x : x - bound + delta, s.width[j]);
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
      ops.v[s] = TailOperand(v, s, SplitMix64(seed ^ SplitMix64(i * kMaxSources + s)));
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

uint64_t SystematicCount(const Variant& v) { return Shape(v).total(); }

namespace {

// Tuple i of a variant's set in its fixed pseudo-random order (`stride` from
// Stride(n, id)), given the set's shape `s` and size `n` and the variant's
// stable id: the first tuples of a variant already cover both sections and
// every pair of sources.
Tuple NthOfSet(const Variant& v, const Shape& s, uint64_t n, uint64_t id, uint64_t stride,
               uint64_t i) {
  const uint64_t idx =
      static_cast<uint64_t>((static_cast<unsigned __int128>(i) * stride + id % n) % n);
  return {v, Canonical(v, idx < s.edge_total ? EdgeTuple(s, idx)
                                             : BoundaryTuple(s, idx - s.edge_total))};
}

// The keys in ascending order, by an LSD radix sort (16-bit digits): the
// breadth pass's order of ~80k variants, on the way to a campaign's first
// tuple, where std::sort took ~5 ms.
template <typename T>
void RadixSortByKey(std::vector<std::pair<uint64_t, T>>& items) {
  std::vector<std::pair<uint64_t, T>> scratch(items.size());
  std::vector<size_t> starts(size_t{1} << 16 | 1);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(starts.begin(), starts.end(), 0);
    for (const auto& item : items) ++starts[((item.first >> shift) & 0xffff) + 1];
    for (size_t d = 1; d < starts.size(); ++d) starts[d] += starts[d - 1];
    for (const auto& item : items) scratch[starts[(item.first >> shift) & 0xffff]++] = item;
    items.swap(scratch);
  }
}

}  // namespace

void SystematicTuples(const Variant& v, uint64_t k, uint64_t count, std::vector<Tuple>& out) {
  const Shape s(v);
  const uint64_t n = s.total();
  const uint64_t id = StableId(v);
  const uint64_t stride = Stride(n, id);
  for (uint64_t i = k; i < std::min(n, k + count); ++i) {
    out.push_back(NthOfSet(v, s, n, id, stride, i));
  }
}

Tuple SystematicTuple(const Variant& v, uint64_t k) {
  std::vector<Tuple> one;
  SystematicTuples(v, k, 1, one);
  return one[0];
}

SystematicSource::SystematicSource(absl::Span<const Variant> variants, int run,
                                   bool endless)
    : run_(std::max(1, run)), endless_(endless) {
  // Sized up front: on a host where a page fault costs microseconds, growing
  // these vectors by doubling was most of the constructor's ~50 ms (a
  // campaign's start-up waits for it).
  std::vector<FamilyState> by_family(kNumFamilies);
  std::array<size_t, kNumFamilies> family_sizes{};
  for (const Variant& v : variants) ++family_sizes[static_cast<int>(v.family)];
  for (int f = 0; f < kNumFamilies; ++f) by_family[f].variants.reserve(family_sizes[f]);
  for (const Variant& v : variants) {
    // Every source has edge values, so a variant with sources has a set.
    // Its size is known at its breadth tuple, which works out its shape.
    if (NumSources(v) > 0) {
      by_family[static_cast<int>(v.family)].variants.push_back(
          {.variant = v, .count = 0, .id = StableId(v)});
    }
  }
  for (int f = 0; f < kNumFamilies; ++f) by_family[f].family = static_cast<Family>(f);
  for (FamilyState& f : by_family) {
    if (!f.variants.empty()) families_.push_back(std::move(f));
  }
  // The breadth pass: every variant once, in an order shuffled by stable id
  // (fixed, and unrelated to the table's order).
  std::vector<std::pair<uint64_t, VariantState*>> keyed;
  keyed.reserve(variants.size());
  breadth_.reserve(variants.size());
  for (FamilyState& f : families_) {
    for (VariantState& v : f.variants) keyed.emplace_back(v.id * 0x9e3779b97f4a7c15ull, &v);
  }
  RadixSortByKey(keyed);
  for (const auto& [key, v] : keyed) breadth_.push_back(v);
}

std::optional<Tuple> SystematicSource::NextBreadth() {
  if (breadth_cursor_ >= breadth_.size()) return std::nullopt;
  VariantState* v = breadth_[breadth_cursor_++];
  ++produced_;
  // The set's first tuple (the breadth pass is each variant's first visit),
  // from what the state already holds: the pass is most of a campaign's
  // first ~0.1 s. The stride does not matter for tuple 0.
  ++v->next;
  const Shape shape(v->variant);
  v->count = shape.total();
  return NthOfSet(v->variant, shape, v->count, v->id, /*stride=*/1, /*i=*/0);
}

std::optional<Tuple> SystematicSource::Next() {
  if (std::optional<Tuple> t = NextBreadth()) return t;
  while (true) {
    if (current_ != nullptr && left_in_run_ > 0 &&
        (endless_ || current_->next < current_->count)) {
      --left_in_run_;
      ++produced_;
      if (current_->next < current_->count) {
        return SystematicTuple(current_->variant, current_->next++);
      }
      std::vector<Tuple> one;
      TailTuples(current_->variant, current_->next++, 1, one);
      return one[0];
    }
    if (!Advance()) return std::nullopt;
  }
}

bool SystematicSource::NextRun(std::vector<Tuple>& out) {
  if (std::optional<Tuple> t = NextBreadth()) {
    // Each breadth tuple is another variant: a run of kBreadthRun of them.
    out.push_back(*t);
    for (int i = 1; i < kBreadthRun; ++i) {
      std::optional<Tuple> next = NextBreadth();
      if (!next) break;
      out.push_back(*next);
    }
    return true;
  }
  if (current_ == nullptr || left_in_run_ == 0 ||
      (!endless_ && current_->next >= current_->count)) {
    if (!Advance()) return false;
  }
  const size_t before = out.size();
  if (current_->next < current_->count) {
    SystematicTuples(current_->variant, current_->next, left_in_run_, out);
  } else {
    TailTuples(current_->variant, current_->next, left_in_run_, out);
  }
  const uint64_t n = out.size() - before;
  current_->next += n;
  produced_ += n;
  left_in_run_ = 0;
  return true;
}

void SystematicSource::SetFamilyCost(Family f, double cost) {
  for (FamilyState& s : families_) {
    if (s.family == f) s.cost = cost > 0 ? cost : 1;
  }
}

bool SystematicSource::Advance() {
  // Drop the variant just finished with, if its set is exhausted (and its
  // family, if that was its last variant); an endless source keeps it, for
  // its random tail.
  if (endless_ && current_ != nullptr && !current_->tail &&
      current_->next >= current_->count) {
    current_->tail = true;
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
  size_t f = 0;
  for (size_t i = 1; i < families_.size(); ++i) {
    if (families_[i].charged < families_[f].charged) f = i;
  }
  current_family_ = f;
  FamilyState& family = families_[f];
  family.charged += run_ * family.cost;
  family.cursor %= family.variants.size();
  current_ = &family.variants[family.cursor++];
  left_in_run_ = run_;
  return true;
}

}  // namespace ptxdiff
