// The campaign's producers (campaign.h): the fuzz loop's Offer and the
// exploration it is steered by, the systematic source's loop, and the
// compiled lane's loop, each putting what is worth sending into the queue.

#include "campaign/campaign.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "campaign/compiled_source.h"
#include "campaign/decline_model.h"
#include "campaign/systematic_source.h"
#include "isa/family_table.h"
#include "oracle/oracle.h"
#include "protocol/backend_names.h"

namespace ptxdiff {

bool Campaign::Wanted(const Variant& v, int index) const {
  return index >= 0 && supported_[index] && !declines_->Unsupported(index);
}

Lane Campaign::LaneFor(int index, uint32_t classes) {
  uint32_t& seen = offered_classes_[index];
  if (seen == 0 || (classes & ~seen) != 0) {
    seen |= classes | (1u << 31);  // bit 31: the variant was offered at all
    return Lane::kNovel;
  }
  return Lane::kRoutine;
}

void Campaign::Offer(const Tuple& t, const Result& oracle, uint32_t classes) {
  const int index = VariantIndex(t.variant);
  // Counted without mu_ (which the senders hold while they judge): the fuzz
  // loop is the only writer.
  Bump(offered_);
  if (!Wanted(t.variant, index)) {
    Bump(skipped_unsupported_);
  } else if (!fuzz_undefined_.Admits(oracle.defined())) {
    Bump(skipped_undefined_);
  } else {
    Lane lane = LaneFor(index, classes);
    // A variant whose code is not compiled yet is reached in its register
    // shape first: that compile pays for every later fuzz tuple's run on
    // the compiled lane, a folding check for one tuple. The folding check
    // itself goes with the repeats, sent while the backend has room.
    // Only where code is kept: the fuzz loop offers every tuple here.
    const bool compiled_lane = UsesCompiledLane();
    const Tuple twin = compiled_lane ? InRegisterShape(t) : t;
    if (lane == Lane::kNovel && compiled_lane && CompiledBy(index) < 0 &&
        twin.runtime != t.runtime &&
        declines_->Worth(index, [&] { return DeclineClass(twin, oracle); }) &&
        queue_.Offer(twin, Lane::kNovel) == Admission::kQueued) {
      exploration_->Count(index);
      lane = Lane::kRoutine;
    }
    // While the backend cannot keep up, routine tuples of a family it is
    // slow on are thinned, so that families get equal backend time
    // (Calibrate); while it has room, every tuple is worth its time.
    const int f = static_cast<int>(t.variant.family);
    const bool thinned = lane == Lane::kRoutine && queue_.Saturated() &&
                         routine_keep_one_in_[f] > 1 &&
                         routine_seen_[f]++ % routine_keep_one_in_[f] != 0;
    if (!thinned &&
        declines_->Worth(index, [&] { return DeclineClass(t, oracle); }) &&
        queue_.Offer(t, lane) == Admission::kQueued) {
      fuzz_undefined_.CountQueued(oracle.defined());
      exploration_->Count(index);
    }
    // The same operands on the code compiled for the variant: a run, not a
    // compile (its own immediates are the folding check above).
    if (const int sender = CompiledBy(index); sender >= 0) {
      if (twin.runtime != t.runtime &&
          declines_->Worth(index, [&] { return DeclineClass(twin, oracle); })) {
        queue_.Offer(twin, Lane::kCompiled, sender);
      }
    }
  }
}

bool Campaign::HadItsShare(const Variant& v) const {
  const int index = VariantIndex(v);
  return index < 0 || exploration_->HadItsShare(index);
}

std::optional<Variant> Campaign::NextToExplore() {
  const int index =
      exploration_->Next([&](int i) { return Wanted(AllVariants()[i], i); });
  if (index < 0) return std::nullopt;
  return AllVariants()[index];
}

bool Campaign::EvaluateWanted(const std::vector<Tuple>& run,
                              std::vector<Operands>& ops,
                              std::vector<int>& indices,
                              std::vector<Result>& results) const {
  results.resize(run.size());
  indices.assign(run.size(), -1);
  const Variant& first = run[0].variant;
  const bool one_variant =
      std::all_of(run.begin(), run.end(),
                  [&](const Tuple& t) { return t.variant == first; });
  if (one_variant) {
    // A variant's run, evaluated as a batch.
    const int index = VariantIndex(first);
    if (!Wanted(first, index)) return false;
    indices.assign(run.size(), index);
    ops.clear();
    for (const Tuple& t : run) ops.push_back(t.operands);
    EvaluateBatch(first, ops, results);
    return true;
  }
  // The breadth pass: a tuple each of many variants.
  bool any = false;
  for (size_t i = 0; i < run.size(); ++i) {
    const int index = VariantIndex(run[i].variant);
    if (!Wanted(run[i].variant, index)) continue;
    indices[i] = index;
    results[i] = Evaluate(run[i].variant, run[i].operands);
    any = true;
  }
  return any;
}

void Campaign::SystematicLoop() {
  std::vector<Variant> wanted;
  for (const Variant& v : options_.variants) {
    if (Wanted(v, VariantIndex(v))) wanted.push_back(v);
  }
  // Endless: when every systematic set is done, the random tails keep the
  // backend busy (the fuzz loop alone mostly offers repeats by then).
  const BuiltinBackend* builtin = FindBuiltinBackend(identity_.name);
  SystematicSource source(
      wanted, builtin != nullptr ? builtin->systematic_run : 8,
      /*endless=*/true,
      /*runtime_forms=*/identity_.forms && options_.runtime_forms);
  source.SetRuntimeByDefault(identity_.runtime_by_default);
  source.SetBreadthInBothForms(identity_.both_forms && options_.runtime_forms,
                               /*runtime_first=*/UsesCompiledLane());
  if (UsesCompiledLane()) {
    source.SetDepthShareDuringBreadth(
        SystematicSource::kDepthShareWithKeptCode);
    source.SetDepthPlannedOnlyDuringBreadth(true);
    queue_.SetSystematicShare(kSystematicShareDuringPass);
  }
  calibrated_.wait();
  for (int f = 0; f < kNumFamilies; ++f) {
    if (family_cost_[f] > 0)
      source.SetFamilyCost(static_cast<Family>(f), family_cost_[f]);
  }
  int64_t produced = 0, unwanted_runs = 0;
  bool breadth_over =
      false;  // breadth_done_ set once, not an atomic store per run
  UndefinedShare undefined_share(options_.undefined_share);
  std::vector<Tuple> run;
  std::vector<Operands> ops;
  std::vector<int> indices;
  std::vector<Result> results;
  // One run at a time (a variant's tuples, or one each of many variants in
  // the breadth pass): evaluated together, and queued under one lock.
  while (!stopping_) {
    run.clear();
    if (!source.NextRun(run)) break;
    produced += run.size();
    planned_variants_.store(source.planned_done(), std::memory_order_relaxed);
    if (!breadth_over && source.breadth_done()) {
      breadth_done_ = breadth_over = true;
      if (UsesCompiledLane())
        queue_.SetSystematicShare(kSystematicShareWithCompiledLane);
    }
    if (!EvaluateWanted(run, ops, indices, results)) {
      // The endless source goes on with variants the campaign has since
      // dropped: do not spin when they are all that is left.
      if (++unwanted_runs % 1024 == 0) absl::SleepFor(absl::Milliseconds(10));
      continue;
    }
    unwanted_runs = 0;
    if (!PutWorthSending(run, indices, results, Lane::kSystematic,
                         undefined_share)) {
      break;
    }
    if (static_cast<size_t>(produced % 1024) < run.size()) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.systematic = produced;
    }
  }
  breadth_done_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  stats_.systematic = produced;
}

void Campaign::MarkCompiledLocked(const Tuple& t, int index, int sender) {
  int8_t none = 0;
  if (!compiled_[index].compare_exchange_strong(
          none, static_cast<int8_t>(sender + 1), std::memory_order_relaxed)) {
    return;
  }
  newly_compiled_.push_back({t, sender});
}

void Campaign::CompiledLoop() {
  // A run of a tuple each of kRun variants, as the systematic loop's runs:
  // evaluated together (the decline model and the undefined share ask the
  // oracle) and queued under one lock. One source per sender, each feeding
  // that sender's lane (the variants its worker compiled), in turn; a full
  // lane is passed over, not waited on, so the other's is not starved.
  constexpr size_t kRun = 64;
  std::vector<CompiledSource> sources(senders_.size());
  UndefinedShare undefined_share(options_.undefined_share);
  std::vector<Tuple> run;
  std::vector<Operands> ops;
  std::vector<int> indices;
  std::vector<Result> results;
  calibrated_.wait();
  while (!stopping_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const NewlyCompiled& c : newly_compiled_)
        sources[c.sender].Add(c.witness);
      newly_compiled_.clear();
    }
    bool put_any = false;
    for (size_t s = 0; s < sources.size() && !stopping_; ++s) {
      const int sender = static_cast<int>(s);
      run.clear();
      if (!queue_.CompiledHasRoom(sender) || !sources[s].NextRun(kRun, run))
        continue;
      if (!EvaluateWanted(run, ops, indices, results)) continue;
      if (!PutWorthSending(run, indices, results, Lane::kCompiled,
                           undefined_share, sender)) {
        return;
      }
      put_any = true;
    }
    if (!put_any) absl::SleepFor(absl::Milliseconds(20));
  }
}

bool Campaign::PutWorthSending(const std::vector<Tuple>& run,
                               const std::vector<int>& indices,
                               const std::vector<Result>& results, Lane lane,
                               UndefinedShare& undefined_share, int sender) {
  std::vector<Tuple> keep;
  std::vector<bool> keep_defined;
  for (size_t i = 0; i < run.size(); ++i) {
    if (indices[i] < 0 || !declines_->Worth(indices[i], [&] {
          return DeclineClass(run[i], results[i]);
        })) {
      continue;
    }
    keep.push_back(run[i]);
    keep_defined.push_back(results[i].defined());
  }
  // Counted over what the queue takes (the tails repeat defined tuples
  // more often than undefined ones).
  const auto admit = [&](size_t i) {
    if (!undefined_share.Admits(keep_defined[i])) return false;
    undefined_share.CountQueued(keep_defined[i]);
    return true;
  };
  return keep.empty() || queue_.PutMany(keep, lane, admit, sender);
}

}  // namespace ptxdiff
