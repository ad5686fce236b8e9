#include "campaign/systematic_source.h"

// The SystematicSource scheduler: the breadth pass, the families' turns and
// the runs; each variant's set is systematic_set.cc's
// (systematic_set_internal.h).
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "campaign/systematic_set_internal.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"

namespace ptxdiff {
namespace {

// A family whose every variant is in its random tail (an endless source)
// is charged this many times a run: its random tuples are worth less than
// another family's planned ones, and small families reach their tails
// within seconds while the video families' 60k variants are still in their
// first tiers.
constexpr double kTailWeight = 16;

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

using systematic_set_internal::AppendSetTuples;
using systematic_set_internal::NthOfSet;
using systematic_set_internal::Order;
using systematic_set_internal::Shape;

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
    by_family[f].in_set = by_family[f].planned_left =
        by_family[f].variants.size();
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
    if (both && breadth_runtime_first_) {
      // Kept code: a variant's pass is its runtime form alone (its tuple 0
      // in the default form starts its set when its family goes deep), or
      // its default form where no source can be a runtime value.
      for (BreadthItem& item : family)
        item.runtime = RuntimeCapableSources(item.variant->variant) != 0;
    }
    for (size_t i = 0; both && !breadth_runtime_first_ && i < n; ++i) {
      BreadthItem copy = family[i];
      copy.runtime = true;
      family.push_back(copy);
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
      Produced(*v, family, 1);
      return InDefaultForm(NthOfSet(v->variant, shape,
                                    Order(Order::FirstOnly{}, v->id), /*i=*/0));
    }
    // In both forms, the same tuple again in the runtime form, after every
    // variant of its family had its default form.
    const uint8_t runtime = RuntimeCapableSources(v->variant);
    if (runtime == 0) continue;
    const Shape shape(v->variant, forms_, runtime_tier_early());
    if (v->count == 0) {
      // Its first visit (runtime first): its set is still to start.
      v->count = shape.total();
      v->planned = shape.planned();
    }
    Tuple t = NthOfSet(v->variant, shape, Order(Order::FirstOnly{}, v->id),
                       /*i=*/0);
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
        Produced(*current_, families_[current_family_], 1);
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
  Produced(*current_, families_[current_family_], n);
  produced_ += n;
  left_in_run_ = 0;
}

void SystematicSource::Produced(VariantState& v, FamilyState& family,
                                uint64_t n) {
  if (v.next < v.planned && v.next + n >= v.planned) {
    ++planned_done_;
    --family.planned_left;
  }
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
    if (passed_only && (families_[i].breadth_left > 0 ||
                        (depth_planned_only_ && families_[i].planned_left == 0)))
      continue;
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
