#include "fuzzers/mutator.h"

#include <algorithm>
#include <cstring>

#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/operand_form.h"
#include "oracle/bits.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

constexpr size_t kMaxMutatedTuples = 64;
// A steered input (FuzzSteer) carries at most this many of its tuples. Most
// of what the fuzz stage offered before the budget was repeats, which the
// queue turns away; a steered input's tuples are all new, and every one
// checked is one the systematic tiers wait behind. At two, the fuzz stage
// sends the backend about as many tuples as before, and a pass over the
// variants is that much quicker.
constexpr size_t kSteeredTuples = 2;

// The legal variants of each family, built once.
const std::vector<std::vector<Variant>>& VariantsByFamily() {
  static const auto* by_family = [] {
    auto* v = new std::vector<std::vector<Variant>>(kNumFamilies);
    for (const Variant& x : AllVariants())
      (*v)[static_cast<int>(x.family)].push_back(x);
    return v;
  }();
  return *by_family;
}

Family RandomFamily(std::mt19937_64& rng, const VariantFilter& filter) {
  std::vector<Family> allowed;
  for (int f = 0; f < kNumFamilies; ++f) {
    if (filter.Allows(static_cast<Family>(f)))
      allowed.push_back(static_cast<Family>(f));
  }
  if (allowed.empty()) return Family::kAdd;
  return allowed[rng() % allowed.size()];
}

Variant RandomVariantOf(Family f, std::mt19937_64& rng) {
  const std::vector<Variant>& vs = VariantsByFamily()[static_cast<int>(f)];
  return vs[rng() % vs.size()];
}

// A variant of the same family that differs from `v` on as few axes as the
// table allows: a random one among those differing on exactly one axis.
Variant NeighbourVariant(const Variant& v, std::mt19937_64& rng) {
  std::vector<const Variant*> neighbours;
  for (const Variant& x : VariantsByFamily()[static_cast<int>(v.family)]) {
    if (DifferingAxes(x, v) == 1) neighbours.push_back(&x);
  }
  return neighbours.empty() ? v : *neighbours[rng() % neighbours.size()];
}

// The tuples as `v`'s: operands masked to its sources, forms to those that
// may be runtime values (none where the backend runs no forms).
std::vector<Tuple> Masked(const Variant& v, std::vector<Tuple> tuples,
                          bool forms) {
  const uint8_t capable = forms ? RuntimeCapableSources(v) : 0;
  for (Tuple& t : tuples) {
    t.variant = v;
    t.runtime &= capable;
    for (int i = 0; i < kMaxSources; ++i) {
      t.operands.v[i] =
          i < NumSources(v) ? t.operands.v[i] & SourceMask(v, i) : 0;
    }
  }
  return tuples;
}

size_t Emit(const Variant& v, std::vector<Tuple> tuples,
            const VariantFilter& filter, uint8_t* out, size_t max_out) {
  tuples = Masked(v, std::move(tuples), filter.runtime_forms);
  // All in the default form: written without forms, as the seeds are.
  const uint8_t default_form = DefaultForm(v, filter.runtime_by_default);
  if (std::all_of(tuples.begin(), tuples.end(),
                  [&](const Tuple& t) { return t.runtime == default_form; })) {
    for (Tuple& t : tuples) t.runtime = 0;
  }
  const bool any_form =
      std::any_of(tuples.begin(), tuples.end(),
                  [](const Tuple& t) { return t.runtime != 0; });
  const size_t header = any_form ? 16 : 8;
  const size_t per_tuple = 8 * NumSources(v) + (any_form ? 1 : 0);
  if (max_out < header + per_tuple) return 0;
  tuples.resize(std::min(tuples.size(), (max_out - header) / per_tuple));
  if (tuples.empty()) tuples.resize(1, Tuple{v, {}});
  const std::string bytes = EncodeFuzzInput(tuples);
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

// Makes one source of `t` that may be a runtime value one, or an immediate
// again: the form a compiler sees.
void ToggleRuntimeSource(Tuple& t, std::mt19937_64& rng) {
  const uint8_t capable = RuntimeCapableSources(t.variant);
  if (capable == 0) return;
  int i;
  do {
    i = static_cast<int>(rng() % NumSources(t.variant));
  } while (((capable >> i) & 1) == 0);
  t.runtime ^= 1 << i;
}

void MutateOperand(const Variant& v, Operands& o, std::mt19937_64& rng) {
  const int i = static_cast<int>(rng() % NumSources(v));
  const int width = SourceWidth(v, i);
  const std::vector<uint64_t>& edges = EdgeValues(width);
  switch (rng() % 4) {
    case 0:
    case 1:
      o.v[i] = edges[rng() % edges.size()];
      break;
    case 2:
      o.v[i] ^= uint64_t{1} << (rng() % width);
      break;
    default:
      o.v[i] = Low(rng(), width);
      break;
  }
}

// `n` of the tuples at random (all, if there are no more).
void KeepAtMost(size_t n, std::vector<Tuple>& tuples, std::mt19937_64& rng) {
  if (tuples.size() <= n) return;
  for (size_t i = 0; i < n; ++i)
    std::swap(tuples[i], tuples[i + rng() % (tuples.size() - i)]);
  tuples.resize(n);
}

// Where `steer` sends an input of `v`: nowhere else (nullopt) unless `v`
// had its share.
std::optional<Variant> Steered(const Variant& v, FuzzSteer* steer) {
  if (steer == nullptr || !steer->HadItsShare(v)) return std::nullopt;
  return steer->NextToExplore();
}

}  // namespace

bool VariantFilter::Allows(Family f) const {
  if (std::find(exclude.begin(), exclude.end(), f) != exclude.end())
    return false;
  return include.empty() ||
         std::find(include.begin(), include.end(), f) != include.end();
}

std::string RandomFuzzInput(std::mt19937_64& rng, const VariantFilter& filter,
                            size_t tuples) {
  const Variant v = RandomVariantOf(RandomFamily(rng, filter), rng);
  std::vector<Operands> ops(std::max<size_t>(tuples, 1));
  FillEdgeTuples(v, rng, ops);
  return EncodeFuzzInput(v, ops);
}

size_t MutateFuzzInput(uint8_t* data, size_t size, size_t max_size,
                       unsigned seed, const VariantFilter& filter,
                       FuzzSteer* steer) {
  std::mt19937_64 rng(seed);
  auto decoded = DecodeFuzzInputInDefaultForm(
      absl::string_view(reinterpret_cast<const char*>(data), size),
      filter.runtime_by_default);
  if (!decoded.ok() || !filter.Allows((*decoded)[0].variant.family)) {
    const std::string fresh = RandomFuzzInput(rng, filter, 1 + rng() % 16);
    const size_t n = std::min(fresh.size(), max_size);
    std::memcpy(data, fresh.data(), n);
    return n;
  }
  Variant v = (*decoded)[0].variant;
  std::vector<Tuple> tuples = *std::move(decoded);
  if (const std::optional<Variant> next = Steered(v, steer)) {
    // The input's values, each tuple with one of them changed: what the
    // corpus learned carries over, and the new variant gets values of its
    // own, not repeats.
    KeepAtMost(kSteeredTuples, tuples, rng);
    for (Tuple& t : tuples) MutateOperand(*next, t.operands, rng);
    return Emit(*next, std::move(tuples), filter, data, max_size);
  }
  switch (rng() % 9) {
    case 0:
      v = NeighbourVariant(v, rng);
      break;
    case 1:
      v = RandomVariantOf(v.family, rng);
      break;
    case 2:
      v = RandomVariantOf(RandomFamily(rng, filter), rng);
      break;
    case 3:  // duplicate a tuple, then change the copy
      if (tuples.size() < kMaxMutatedTuples)
        tuples.push_back(tuples[rng() % tuples.size()]);
      MutateOperand(v, tuples.back().operands, rng);
      break;
    case 4:  // drop a tuple
      if (tuples.size() > 1)
        tuples.erase(tuples.begin() + rng() % tuples.size());
      break;
    case 5:  // another form for a tuple
      if (filter.runtime_forms)
        ToggleRuntimeSource(tuples[rng() % tuples.size()], rng);
      break;
    default:
      MutateOperand(v, tuples[rng() % tuples.size()].operands, rng);
      break;
  }
  return Emit(v, std::move(tuples), filter, data, max_size);
}

size_t CrossOverFuzzInputs(const uint8_t* a, size_t a_size, const uint8_t* b,
                           size_t b_size, uint8_t* out, size_t max_out,
                           unsigned seed, const VariantFilter& filter,
                           FuzzSteer* steer) {
  std::mt19937_64 rng(seed);
  auto first = DecodeFuzzInputInDefaultForm(
      absl::string_view(reinterpret_cast<const char*>(a), a_size),
      filter.runtime_by_default);
  auto second = DecodeFuzzInputInDefaultForm(
      absl::string_view(reinterpret_cast<const char*>(b), b_size),
      filter.runtime_by_default);
  if (!first.ok() && !second.ok()) return 0;
  if (!first.ok()) std::swap(first, second);
  const std::optional<Variant> steered = Steered((*first)[0].variant, steer);
  const Variant v = steered.value_or((*first)[0].variant);
  std::vector<Tuple> tuples;
  for (const Tuple& t : *first) {
    if (rng() % 2 == 0) tuples.push_back(t);
  }
  if (second.ok()) {
    for (const Tuple& t : *second) {
      if (rng() % 2 == 0) tuples.push_back(t);
    }
  }
  if (tuples.empty()) tuples.push_back((*first)[0]);
  if (steered) KeepAtMost(kSteeredTuples, tuples, rng);
  if (tuples.size() > kMaxMutatedTuples) tuples.resize(kMaxMutatedTuples);
  return Emit(v, std::move(tuples), filter, out, max_out);
}

}  // namespace ptxdiff
