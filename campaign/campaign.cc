#include "campaign/campaign.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <tuple>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "campaign/batch_pacer.h"
#include "campaign/compiled_source.h"
#include "campaign/decline_model.h"
#include "campaign/systematic_source.h"
#include "isa/operand_form.h"
#include "harness/judge.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"
#include "triage/minimizer.h"

namespace ptxdiff {
namespace {

constexpr size_t kMaxFilingBacklog = 4096;
constexpr absl::Duration kBatchWait = absl::Milliseconds(50);
// What a paced batch should take (BatchPacer): well inside the stop grace.
constexpr absl::Duration kBatchTarget = absl::Seconds(1);
// Tuples per family in the calibration batch at start: at most
// kCalibrationTuples, and a 32nd of the backend's batch. They are each
// family's first systematic tuples (edge pairs, boundaries), so a backend
// that is cheap per call gets a deep first look at every family, and ptxas
// (4,096-tuple batches, a compile per family) 128 tuples each, so that it
// does not spend its start-up compiling whole batches to time families.
constexpr size_t kCalibrationTuples = 512;
constexpr size_t kCalibrationShareOfBatch = 32;
// At Stop, the filer goes on filing for at most this long; what is left
// stays in the journal for the next campaign.
constexpr absl::Duration kFilingGrace = absl::Seconds(10);
// The contrast batch of the mismatches left at the end: one batch.
constexpr absl::Duration kContrastTimeout = absl::Seconds(5);
// The most mismatches contrasted in one run while the campaign runs.
constexpr size_t kContrastsPerRun = 1024;

}  // namespace

size_t BatchSizeFor(absl::string_view backend_name) {
  const BuiltinBackend* builtin = FindBuiltinBackend(backend_name);
  return builtin != nullptr ? builtin->batch_tuples : 16384;  // exec: workers
}

absl::StatusOr<std::unique_ptr<Campaign>> Campaign::Start(
    CampaignOptions options) {
  // The workers start first, side by side, while this process opens the
  // triage directory and builds its tables: each worker's start-up (its
  // HELLO, working out what it supports) is the campaign's time to first
  // tuple. The minimizer's worker waits for the first finding
  // (MinimizerClient), so that its start-up takes no core from these.
  std::vector<std::future<absl::StatusOr<std::unique_ptr<WorkerClient>>>>
      starting;
  for (int i = 0; i < std::max(1, options.in_flight); ++i) {
    // Senders isolate a tuple that faults the worker, so that one such
    // tuple costs its batch nothing but the isolation (and is a finding).
    WorkerCommand command = options.worker;
    command.isolate_faults = true;
    command.isolation_budget = options.isolation_budget;
    command.isolation_deadline = options.deadline;
    command.start_deadline = options.deadline;
    starting.push_back(
        std::async(std::launch::async, [command = std::move(command)] {
          return WorkerClient::Start(command);
        }));
  }
  auto store = TriageStore::Open(options.triage_dir, /*create=*/true);
  if (!store.ok()) return store.status();
  auto journal = PendingJournal::Open(options.triage_dir);
  if (!journal.ok()) return journal.status();
  if (options.variants.empty())
    options.variants.assign(AllVariants().begin(), AllVariants().end());
  std::unique_ptr<Campaign> c(
      new Campaign(std::move(options), *std::move(store), *std::move(journal)));
  if (absl::Status s = c->StartWorkers(starting); !s.ok()) {
    c->journal_->Remove();
    return s;
  }
  return c;
}

Campaign::Campaign(CampaignOptions options, TriageStore store,
                   std::unique_ptr<PendingJournal> journal)
    : options_(std::move(options)),
      store_(std::move(store)),
      journal_(std::move(journal)),
      queue_(options_.dedup_slots > 0
                 ? TupleQueue::Options{.seen_slots = options_.dedup_slots}
                 : TupleQueue::Options{}),
      supported_(AllVariants().size()),
      offered_classes_(AllVariants().size()),
      declines_(std::make_unique<DeclineModel>()),
      fuzz_undefined_(options_.undefined_share) {
  compiled_ = std::make_unique<std::atomic<bool>[]>(AllVariants().size());
  stats_.reached.resize(AllVariants().size());
  stats_.reached_runtime.resize(AllVariants().size());
}

absl::Status Campaign::StartWorkers(WorkerStarts& starting) {
  std::vector<absl::StatusOr<std::unique_ptr<WorkerClient>>> started;
  for (auto& start : starting) started.push_back(start.get());
  for (auto& client : started) {
    if (!client.ok()) return client.status();
  }
  identity_ = started[0].value()->identity();
  for (auto& client : started) senders_.push_back(*std::move(client));
  batch_size_ = options_.batch_size > 0 ? options_.batch_size
                                        : BatchSizeFor(identity_.name);
  queue_.SetLaneCapacity(options_.lane_capacity > 0
                             ? options_.lane_capacity
                             : std::max<size_t>(2 * batch_size_, 4096));
  if (UsesCompiledLane()) {
    const size_t per_batch = options_.compiled_per_batch > 0
                                 ? options_.compiled_per_batch
                                 : 16 * batch_size_;
    queue_.SetCompiledLane(2 * per_batch, per_batch);
  }
  const std::vector<bool>& supported = senders_[0]->supported_variants();
  std::vector<int> to_explore;
  for (const Variant& v : options_.variants) {
    const int index = VariantIndex(v);
    if (index >= 0 && supported[index]) {
      supported_[index] = 1;
      ++stats_.supported_variants;
      to_explore.push_back(index);
    }
  }
  exploration_ = std::make_unique<ExplorationBudget>(std::move(to_explore),
                                                     AllVariants().size());
  // Mismatches an earlier campaign judged but did not live to file.
  for (const auto& [seq, m] :
       AdoptOrphanedJournals(options_.triage_dir, *journal_)) {
    filing_.push_back({.seq = seq,
                       .tuple = m.tuple,
                       .backend_bits = m.backend_bits,
                       .backend_carry = m.backend_carry});
    ++stats_.adopted;
  }
  // The systematic source is built while the families are timed (its
  // constructor walks every variant, which was start-up on the critical
  // path), and starts producing once the costs are known.
  if (options_.systematic) {
    threads_.emplace_back([this] { SystematicLoop(); });
  } else {
    breadth_done_ = true;
  }
  Calibrate();
  calibrated_.count_down();
  senders_running_ = senders_.size();
  for (auto& client : senders_) {
    threads_.emplace_back([this, c = client.get()] {
      SenderLoop(c);
      std::lock_guard<std::mutex> lock(mu_);
      --senders_running_;
      filing_ready_.notify_all();  // the filer's last round waits for this
    });
  }
  threads_.emplace_back([this] { FilerLoop(); });
  if (UsesCompiledLane()) threads_.emplace_back([this] { CompiledLoop(); });
  return absl::OkStatus();
}

Campaign::~Campaign() { Stop(); }

void Campaign::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  queue_.Close();
  filing_ready_.notify_all();
  // Past the deadline the filer minimizes nothing more (a fault's
  // isolation, a crash's minimization): what it holds is filed as found,
  // or kept in the journal for the next campaign.
  if (absl::Now() >= options_.deadline) StopMinimizing();
  // A batch in flight may take a slow backend long (a tool isolating a
  // hang): the deadline holds, so what is not done in the grace is dropped.
  // Findings already seen are in the journal; unjudged tuples are no loss.
  const absl::Time give_up = absl::Now() + options_.stop_grace;
  while (senders_running_.load() > 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  for (auto& sender : senders_) sender->Interrupt();
  StopMinimizing();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  // Repeats a sender judged after the filer's last round (one cut short by
  // kFilingGrace): every mismatch counted is counted in its entry too.
  FlushRepeats();
  // What the journal still holds was not filed: a filing failed, the
  // backlog overflowed, or the filer ran out of time. It stays for the next
  // campaign on this directory (it adopts the journals of processes that
  // are gone), never removed with the findings in it.
  journal_->RemoveIfAllDone();
}

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
    const Lane lane = LaneFor(index, classes);
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
    if (compiled_[index].load(std::memory_order_relaxed)) {
      const Tuple twin = InRegisterShape(t);
      if (twin.runtime != t.runtime &&
          declines_->Worth(index, [&] { return DeclineClass(twin, oracle); })) {
        queue_.Offer(twin, Lane::kCompiled);
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

namespace {

// The tuples of a batch the backend answered with a value (all of them, for
// a batch it did not survive: its cost is not the declines').
size_t Evaluated(const BatchOutcome& out, size_t tuples) {
  if (out.fault) return tuples;
  size_t n = 0;
  for (const TupleResult& r : out.results) n += r.kind == ResultKind::kValue;
  return n;
}

// At most `n` of a family's variants, spread evenly over its table order:
// the calibration batch is one systematic tuple each of as many variants as
// it holds (the breadth pass), so building the source over a video family's
// ten thousand variants would be wasted.
std::vector<Variant> CalibrationSample(const std::vector<Variant>& variants,
                                       size_t n) {
  if (variants.size() <= n) return variants;
  std::vector<Variant> sample;
  for (size_t i = 0; i < n; ++i)
    sample.push_back(variants[i * variants.size() / n]);
  return sample;
}

}  // namespace

void Campaign::CostUntimedFamilies(const std::vector<int>& families) {
  std::vector<double> timed;
  for (int f : families) {
    if (family_cost_[f] > 0) timed.push_back(family_cost_[f]);
  }
  if (timed.empty()) return;
  std::nth_element(timed.begin(), timed.begin() + timed.size() / 2,
                   timed.end());
  for (int f : families) {
    if (family_cost_[f] == 0) family_cost_[f] = timed[timed.size() / 2];
  }
}

void Campaign::Calibrate() {
  if (!options_.systematic) return;
  const absl::Time start = absl::Now();
  std::vector<std::vector<Variant>> by_family(kNumFamilies);
  for (const Variant& v : options_.variants) {
    if (Wanted(v, VariantIndex(v)))
      by_family[static_cast<int>(v.family)].push_back(v);
  }
  std::vector<int> families;
  for (int f = 0; f < kNumFamilies; ++f) {
    if (!by_family[f].empty()) families.push_back(f);
  }
  // Families split over the senders' workers, timed one batch each. The
  // tuples are the systematic source's first ones, judged like any other.
  const size_t per_family = std::max<size_t>(
      1, std::min(kCalibrationTuples, batch_size_ / kCalibrationShareOfBatch));
  std::atomic<bool> cheap{false};
  std::atomic<int64_t> timed{0};
  // A batch on a slow backend (a tool that hangs uses its whole batch
  // budget, 45 s) must not hold the run past its deadline (issue 42, item
  // 4: --max-time 20 ran 48 s): there the senders are interrupted, which
  // ends their batches, as Stop would.
  absl::Notification timed_all;
  std::thread watchdog([&] {
    if (!timed_all.WaitForNotificationWithDeadline(options_.deadline)) {
      for (auto& sender : senders_) sender->Interrupt();
    }
  });
  std::vector<std::thread> timers;
  for (size_t s = 0; s < senders_.size(); ++s) {
    timers.emplace_back([&, s] {
      for (size_t i = s; i < families.size() && !cheap &&
                         absl::Now() - start < options_.calibration_budget;
           i += senders_.size()) {
        SystematicSource source(
            CalibrationSample(by_family[families[i]], per_family));
        std::vector<Tuple> tuples;
        while (tuples.size() < per_family) {
          const std::optional<Tuple> t = source.Next();
          if (!t) break;
          tuples.push_back(*t);
        }
        const absl::Time t0 = absl::Now();
        const BatchOutcome out = senders_[s]->Run(tuples);
        // The time per tuple checked, not per tuple sent: a family whose
        // tuples the backend mostly declines cheaply (SIMD video with other
        // than the default selectors, on ptxas) must not look cheap, or
        // the systematic source would spend its time producing what the
        // decline model then skips.
        family_cost_[families[i]] =
            absl::ToDoubleSeconds(absl::Now() - t0) /
            std::max<size_t>(1, Evaluated(out, tuples.size()));
        queue_.MarkSent(tuples);
        // Interrupted at the deadline (the watchdog below): not a finding.
        if (out.fault && senders_[s]->interrupted()) break;
        Judge(tuples, out);
        ++timed;
        if (family_cost_[families[i]] < options_.cheap_seconds_per_tuple)
          cheap = true;
      }
    });
  }
  for (std::thread& t : timers) t.join();
  timed_all.Notify();
  watchdog.join();
  if (cheap) family_cost_.fill(0);  // equal: the systematic source's default
  CostUntimedFamilies(families);
  double cheapest = 0;
  for (int f : families) {
    if (family_cost_[f] > 0 && (cheapest == 0 || family_cost_[f] < cheapest)) {
      cheapest = family_cost_[f];
    }
  }
  for (int f : families) {
    routine_keep_one_in_[f] =
        cheapest > 0
            ? std::max<int64_t>(1, std::llround(family_cost_[f] / cheapest))
            : 1;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.calibration_ms = absl::ToInt64Milliseconds(absl::Now() - start);
  stats_.families_timed = timed;
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
    if (!breadth_over && source.breadth_done())
      breadth_done_ = breadth_over = true;
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

void Campaign::SenderLoop(WorkerClient* client) {
  // With the compiled lane, a batch's folding checks and compiles are paced
  // to take about kBatchTarget (its compiled-lane tuples cost little).
  BatchPacer pacer(batch_size_, kBatchTarget);
  while (true) {
    const size_t size = UsesCompiledLane() ? pacer.size() : batch_size_;
    std::vector<Tuple> batch = queue_.TakeBatch(size, size / 4, kBatchWait);
    // Stopping drops what is still queued (it was never judged); the batch
    // in flight is finished.
    if (stopping_) return;
    if (batch.empty()) continue;
    const size_t taken = batch.size();
    WithholdKnownFaulting(batch);
    if (!batch.empty()) {
      const absl::Time start = absl::Now();
      const BatchOutcome out = client->Run(batch);
      pacer.Took(absl::Now() - start);
      // A batch cut short by Stop (Interrupt) is not the backend's fault.
      if (!(out.fault && client->interrupted())) Judge(batch, out);
    }
    queue_.Done(taken);
  }
}

namespace {

// The class a finding of `t` is filed under for the rest of the process.
std::string CauseClass(const Tuple& t, const Result& oracle, TupleFault fault) {
  if (fault == TupleFault::kNone) return TriggerClassOf(t, oracle);
  return fault == TupleFault::kHang ? "hang" : "crash";
}

}  // namespace

void Campaign::MarkCompiledLocked(const Tuple& t, int index) {
  if (compiled_[index].exchange(true, std::memory_order_relaxed)) return;
  newly_compiled_.push_back(t);
}

void Campaign::CompiledLoop() {
  // A run of a tuple each of kRun variants, as the systematic loop's runs:
  // evaluated together (the decline model and the undefined share ask the
  // oracle) and queued under one lock, blocking while the lane is full.
  constexpr size_t kRun = 64;
  CompiledSource source;
  UndefinedShare undefined_share(options_.undefined_share);
  std::vector<Tuple> run;
  std::vector<Operands> ops;
  std::vector<int> indices;
  std::vector<Result> results;
  calibrated_.wait();
  while (!stopping_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const Tuple& t : newly_compiled_) source.Add(t);
      newly_compiled_.clear();
    }
    run.clear();
    if (!source.NextRun(kRun, run)) {
      absl::SleepFor(absl::Milliseconds(20));
      continue;
    }
    if (!EvaluateWanted(run, ops, indices, results)) continue;
    if (!PutWorthSending(run, indices, results, Lane::kCompiled,
                         undefined_share)) {
      break;
    }
  }
}

bool Campaign::PutWorthSending(const std::vector<Tuple>& run,
                               const std::vector<int>& indices,
                               const std::vector<Result>& results, Lane lane,
                               UndefinedShare& undefined_share) {
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
  return keep.empty() || queue_.PutMany(keep, lane, admit);
}

void Campaign::WithholdKnownFaulting(std::vector<Tuple>& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (not_to_send_.empty()) return;
  const size_t before = batch.size();
  batch.erase(
      std::remove_if(batch.begin(), batch.end(),
                     [&](const Tuple& t) { return not_to_send_.contains(t); }),
      batch.end());
  stats_.withheld_faulting += before - batch.size();
}

void Campaign::QueueUnisolated(const std::vector<Tuple>& batch,
                               const BatchOutcome& out) {
  std::vector<Tuple> not_run;
  std::string why;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!NotRun(out.results[i], out.messages)) continue;
    if (why.empty())
      why = out.messages[out.results[i].message].substr(kNotRunPrefix.size());
    not_run.push_back(batch[i]);
  }
  if (not_run.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.counts.faulty_batches;
  not_to_send_.insert(not_run.begin(), not_run.end());
  filing_.push_back({.tuple = not_run[0],
                     .fault_batch = std::move(not_run),
                     .fault = out.unisolated,
                     .unisolated_why = std::move(why)});
  filing_ready_.notify_one();
}

std::vector<Campaign::Unrun> Campaign::SendAgain(
    const std::vector<Tuple>& batch, const std::vector<size_t>& unrun) {
  // At the campaign's end they are dropped, as the queue's tuples are.
  if (stopping_) return std::vector<Unrun>(unrun.size(), Unrun::kDropped);
  std::vector<Tuple> requeue;
  std::vector<Unrun> fate(unrun.size(), Unrun::kDeclined);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t k = 0; k < unrun.size(); ++k) {
      const Tuple& t = batch[unrun[k]];
      const auto sent = times_sent_again_.find(t);
      if (sent != times_sent_again_.end() && sent->second >= kMaxSendsAgain)
        continue;
      // Only what is still worth sending: the classes this batch found
      // faulting are quarantined by now. The others are dropped, as the
      // model drops such tuples before they are sent (and counts them).
      if (!declines_->Worth(VariantIndex(t.variant), [&] {
            return DeclineClass(t, Evaluate(t.variant, t.operands));
          })) {
        fate[k] = Unrun::kDropped;
        continue;
      }
      ++times_sent_again_[t];  // a count only for what is sent again
      fate[k] = Unrun::kSentAgain;
      requeue.push_back(t);
    }
    stats_.sent_again += requeue.size();
  }
  queue_.Requeue(requeue);
  return fate;
}

void Campaign::Judge(const std::vector<Tuple>& batch, const BatchOutcome& out) {
  JudgeCounts counts;
  counts.tuples = batch.size();
  if (out.unisolated) QueueUnisolated(batch, out);
  if (out.fault) {
    counts.faulty_batches = 1;
    std::lock_guard<std::mutex> lock(mu_);
    stats_.counts += counts;
    filing_.push_back(
        {.tuple = batch[0], .fault_batch = batch, .fault = out.fault});
    filing_ready_.notify_one();
    return;
  }
  std::vector<int> reached, reached_runtime;
  int64_t by_code[5] = {}, declined_not_run = 0, on_reused_code = 0;
  std::vector<size_t> compiled_now;  // register shapes answered with a value
  std::vector<int64_t> by_message(out.messages.size());
  int64_t first_mismatch = -1;  // its index in `batch`
  std::vector<const Erratum*> errata;
  std::vector<Tuple> faulting;
  // Tuples the backend left unrun (its time budget ran out), unless an
  // unisolated fault's (QueueUnisolated withholds those): judged after the
  // others, whose faults may quarantine their classes, then sent again,
  // dropped (a quarantined class), or counted as declined (sent again
  // kMaxSendsAgain times already).
  std::vector<size_t> unrun;
  std::vector<CountedOutcome> outcomes;  // counted under the lock below
  if (options_.record_outcomes) outcomes.reserve(batch.size());
  auto judge = [&](size_t i) {
    const TupleResult& r = out.results[i];
    const int index = VariantIndex(batch[i].variant);
    const Judgement j = JudgeTuple(batch[i], r, options_.reading);
    const bool not_run = NotRun(r, out.messages);
    if (options_.record_outcomes) {
      outcomes.push_back(
          {index,
           batch[i].runtime != 0 ? OutcomeForm::kRuntime
                                 : OutcomeForm::kImmediate,
           OutcomeOf(j.verdict, r, not_run), r.message});
    }
    if (!not_run) {
      declines_->Learn(index, r,
                       [&] { return DeclineClass(batch[i], j.oracle); });
    }
    if (r.kind != ResultKind::kDecline) {
      on_reused_code += r.kind == ResultKind::kValue && r.reused;
      if (r.kind == ResultKind::kValue && batch[i].runtime != 0 &&
          IsRegisterShape(batch[i].variant, batch[i].runtime) &&
          !compiled_[index].load(std::memory_order_relaxed)) {
        compiled_now.push_back(i);
      }
      reached.push_back(index);
      if (batch[i].runtime != 0) reached_runtime.push_back(index);
    } else {
      ++(not_run ? declined_not_run
                 : by_code[std::min<int>(static_cast<int>(r.code), 4)]);
      if (r.message < by_message.size()) ++by_message[r.message];
    }
    counts.Count(j.verdict);
    if (j.verdict == Verdict::kMismatch) {
      QueueMismatch(batch[i], j);
      if (first_mismatch < 0) first_mismatch = i;
    }
    if (j.verdict == Verdict::kFault) {
      declines_->Quarantine(index,
                            [&] { return DeclineClass(batch[i], j.oracle); });
      faulting.push_back(batch[i]);
      QueueMismatch(
          batch[i], j, r.fault,
          r.message < out.messages.size() ? out.messages[r.message] : "");
      if (first_mismatch < 0) first_mismatch = i;
    }
    if (j.verdict == Verdict::kOtherReading) errata.push_back(j.erratum);
  };
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!out.unisolated && NotRun(out.results[i], out.messages)) {
      unrun.push_back(i);
    } else {
      judge(i);
    }
  }
  const std::vector<Unrun> fate = SendAgain(batch, unrun);
  for (size_t k = 0; k < unrun.size(); ++k) {
    if (fate[k] == Unrun::kDeclined) {
      judge(unrun[k]);
    } else {
      --counts.tuples;  // judged when it runs, or never
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (first_mismatch >= 0 && stats_.first_mismatch_after == 0) {
    stats_.first_mismatch_after = stats_.counts.tuples + first_mismatch + 1;
    stats_.first_mismatch_unix_ms = absl::ToUnixMillis(absl::Now());
  }
  stats_.counts += counts;
  for (int c = 0; c < 5; ++c) stats_.declined_by_code[c] += by_code[c];
  stats_.declined_not_run += declined_not_run;
  stats_.on_reused_code += on_reused_code;
  if (UsesCompiledLane()) {
    for (size_t i : compiled_now) {
      MarkCompiledLocked(batch[i], VariantIndex(batch[i].variant));
    }
  }
  for (size_t m = 0; m < by_message.size(); ++m) {
    if (by_message[m] > 0) decline_reasons_.Add(out.messages[m], by_message[m]);
  }
  for (const Erratum* e : errata)
    ++stats_.other_reading_by_erratum[std::string(e->id)];
  CountOutcomes(outcomes, out.messages);
  not_to_send_.insert(faulting.begin(), faulting.end());
  for (int index : reached) {
    if (!stats_.reached[index])
      stats_.reached[index] = true, ++stats_.variants_reached;
  }
  for (int index : reached_runtime) {
    if (!stats_.reached_runtime[index]) {
      stats_.reached_runtime[index] = true;
      ++stats_.variants_reached_runtime;
    }
  }
}

void Campaign::CountOutcomes(const std::vector<CountedOutcome>& outcomes,
                             const std::vector<std::string>& messages) {
  // A batch's declines mostly share a few messages: each interned once.
  absl::flat_hash_map<uint32_t, int> reason_of_message;
  for (const CountedOutcome& c : outcomes) {
    outcomes_.Count(c.index, c.form, c.outcome);
    if (c.outcome < Outcome::kUnsupported || c.message >= messages.size())
      continue;
    auto [it, is_new] = reason_of_message.try_emplace(c.message, -1);
    if (is_new) it->second = outcomes_.InternReason(messages[c.message]);
    outcomes_.SetDeclineReason(c.index, it->second);
  }
}

OutcomeTable Campaign::OutcomesSnapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outcomes_;
}

void Campaign::QueueMismatch(const Tuple& t, const Judgement& j,
                             TupleFault fault, std::string message) {
  const PendingMismatch pending{t, j.backend_bits, j.backend_carry};
  const std::string trigger = CauseClass(t, j.oracle, fault);
  std::lock_guard<std::mutex> lock(mu_);
  // One minimization per (variant, trigger class) per process: the rest are
  // repeats of a cause already being filed, counted in bulk.
  auto [it, is_new] = causes_.try_emplace({t.variant, trigger});
  if (!is_new) {
    ++stats_.known_findings;
    ++it->second.unflushed;
    return;
  }
  if (filing_.size() >= kMaxFilingBacklog) {
    // The journal keeps it for the next campaign rather than stall (counted
    // in CampaignStats::unfiled; not a filing error: nothing failed).
    journal_->Add(pending);
    return;
  }
  filing_.push_back({.seq = journal_->Add(pending),
                     .tuple = t,
                     .backend_bits = j.backend_bits,
                     .backend_carry = j.backend_carry,
                     .tuple_fault = fault,
                     .fault_message = std::move(message)});
  filing_ready_.notify_one();
}

void Campaign::FilerLoop() {
  std::optional<absl::Time> deadline;
  while (true) {
    FilingJob job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Stopping, the filer's last round waits for the senders' batches in
      // flight: what they judge is filed, and their repeats counted.
      const auto senders_done = [&] {
        return stopping_.load() && senders_running_ == 0;
      };
      filing_ready_.wait_for(lock, std::chrono::seconds(1), [&] {
        return senders_done() || !filing_.empty();
      });
      if (stopping_ && !deadline) deadline = absl::Now() + kFilingGrace;
      // Past the grace what is left stays in the journal, for the next
      // campaign (a backend wrong on thousands of variants leaves thousands:
      // filing them all would not end). Before it, once Stop has stopped
      // minimizing, the rest is filed as found, in milliseconds each.
      if (deadline && absl::Now() > *deadline) {
        lock.unlock();
        FlushRepeats();
        return;
      }
      // Contrasted in one batch, and again for those the senders' last
      // batches add after it.
      if (minimizing_stopped_ &&
          absl::c_any_of(filing_,
                         [](const FilingJob& j) { return !j.end_of_run; })) {
        std::deque<FilingJob> left = std::move(filing_);
        filing_.clear();
        lock.unlock();
        ContrastAtTheEnd(left);
        lock.lock();
        for (FilingJob& j : left) filing_.push_back(std::move(j));
        continue;
      }
      if (filing_.empty()) {
        const bool last = senders_done();
        lock.unlock();
        FlushRepeats();
        if (last) return;
        continue;
      }
      job = std::move(filing_.front());
      filing_.pop_front();
      filer_busy_ = true;
    }
    FileJob(std::move(job));
    std::lock_guard<std::mutex> lock(mu_);
    filer_busy_ = false;
  }
}

void Campaign::ContrastAtTheEnd(std::deque<FilingJob>& jobs) {
  std::vector<Tuple> contrasts;
  std::vector<FilingJob*> of;
  for (FilingJob& job : jobs) {
    if (job.end_of_run || !job.value_mismatch()) continue;
    if (std::optional<Tuple> t = InRegisters(job.tuple)) {
      contrasts.push_back(*t);
      of.push_back(&job);
    }
  }
  for (FilingJob& job : jobs) job.end_of_run = true;
  if (contrasts.empty() || !identity_.forms) return;
  WorkerCommand command = options_.worker;
  command.timeout = kContrastTimeout;
  command.start_deadline = absl::Now() + kContrastTimeout;
  absl::StatusOr<std::unique_ptr<WorkerClient>> client =
      WorkerClient::Start(command);
  if (!client.ok()) return;  // filed without a cause
  const BatchOutcome out = (*client)->Run(contrasts);
  if (!out.fault) TellCausesByContrast(contrasts, out, of);
}

void Campaign::TellCausesByContrast(std::span<const Tuple> contrasts,
                                    const BatchOutcome& out,
                                    std::span<FilingJob* const> of) const {
  for (size_t i = 0; i < of.size(); ++i) {
    if (JudgeTuple(contrasts[i], out.results[i], options_.reading).verdict ==
        Verdict::kAgree) {
      of[i]->cause =
          ImmediatesCause(of[i]->tuple, of[i]->backend_bits, options_.reading);
    }
  }
}

void Campaign::StopMinimizing() {
  minimizing_stopped_ = true;
  if (WorkerClient* m = minimizer_started_.load()) m->Interrupt();
}

absl::StatusOr<WorkerClient*> Campaign::MinimizerClient() {
  if (minimizer_client_ == nullptr) {
    if (minimizing_stopped_) {
      return absl::CancelledError(
          "the campaign stopped before it could be minimized");
    }
    absl::StatusOr<std::unique_ptr<WorkerClient>> started =
        WorkerClient::Start(options_.worker);
    if (!started.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot start a worker to minimize with: ",
                       started.status().message()));
    }
    minimizer_client_ = *std::move(started);
    minimizer_started_ = minimizer_client_.get();
    // StopMinimizing may have come while it started, and found none to stop.
    if (minimizing_stopped_) minimizer_client_->Interrupt();
  }
  return minimizer_client_.get();
}

void Campaign::ContrastBeforeMinimizing(WorkerClient& client, FilingJob& job) {
  const auto wants_contrast = [](const FilingJob& j) {
    return !j.end_of_run && j.value_mismatch() && j.cause.empty() &&
           !j.contrasted && InRegisters(j.tuple);
  };
  if (!wants_contrast(job) || !identity_.forms) return;
  std::vector<FilingJob*> jobs = {&job};
  std::vector<Tuple> contrasts = {*InRegisters(job.tuple)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!absl::c_any_of(causes_, [](const auto& key_and_cause) {
          const std::optional<Finding>& f = key_and_cause.second.filed;
          return f && !f->cause.empty() && f->minimize_backend_calls > 0;
        })) {
      return;
    }
    // Only the filer takes jobs off the queue, so these stay where they are
    // while the batch runs (a deque's ends grow without moving them).
    for (FilingJob& queued : filing_) {
      if (jobs.size() == kContrastsPerRun) break;
      if (!wants_contrast(queued)) continue;
      jobs.push_back(&queued);
      contrasts.push_back(*InRegisters(queued.tuple));
    }
  }
  const BatchOutcome out = client.Run(contrasts);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.contrast_runs;
  // A batch the tool faulted on tells nothing: the queued jobs are tried
  // again each on its own turn.
  if (out.fault) jobs.resize(1);
  stats_.contrasted += jobs.size();
  for (FilingJob* j : jobs) j->contrasted = true;
  if (!out.fault) TellCausesByContrast(contrasts, out, jobs);
}

bool Campaign::CountUnderItsCause(const FilingJob& job) {
  if (!job.value_mismatch() || (!job.end_of_run && job.cause.empty())) {
    return false;
  }
  std::optional<Finding> repeat;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, cause] : causes_) {
      const std::optional<Finding>& f = cause.filed;
      if (!f || f->kind != FindingKind::kValueMismatch ||
          f->minimize_backend_calls == 0) {
        continue;
      }
      // Its cause, told by contrast; else its family's minimized entry, the
      // one the minimizer most likely steps it to (the plainest variant).
      const bool same = job.cause.empty()
                            ? f->cause.empty() && f->tuple.variant.family ==
                                                      job.tuple.variant.family
                            : f->cause == job.cause;
      if (same) {
        repeat = *f;
        break;
      }
    }
  }
  if (!repeat) return false;
  repeat->occurrences = 1;
  repeat->found_as = {Spell(job.tuple.variant)};
  if (!Record(*repeat, /*repeats=*/false)) return true;  // the journal keeps it
  if (job.seq >= 0) journal_->Done(job.seq);
  return true;
}

void Campaign::FileJob(FilingJob job) {
  if (CountUnderItsCause(job)) return;
  Finding f;
  // A hang is filed as found, and a fault the sender could not isolate: no
  // worker needed.
  const absl::StatusOr<WorkerClient*> minimizer =
      job.tuple_fault == TupleFault::kHang || !job.unisolated_why.empty()
          ? absl::StatusOr<WorkerClient*>(absl::UnavailableError("not needed"))
          : MinimizerClient();
  if (minimizer.ok()) {
    ContrastBeforeMinimizing(**minimizer, job);
    if (CountUnderItsCause(job)) return;
  }
  if (job.fault && !job.unisolated_why.empty()) {
    f = UnisolatedFault(job, job.unisolated_why);
  } else if (job.fault) {
    auto isolated =
        minimizer.ok()
            ? IsolateFault(**minimizer, job.fault_batch, options_.deadline)
            : absl::StatusOr<Finding>(minimizer.status());
    // Not isolated, the batch's first tuple is no more to blame than the
    // others.
    f = isolated.ok() ? *isolated
                      : UnisolatedFault(job, isolated.status().message());
    std::lock_guard<std::mutex> lock(mu_);
    not_to_send_.insert(f.batch.begin(), f.batch.end());
  } else if (job.tuple_fault == TupleFault::kHang) {
    // Isolated already, and each run of it costs a timeout: filed as found.
    f.kind = FindingKind::kHang;
    f.tuple = job.tuple;
    f.batch = {job.tuple};
    f.oracle = EvaluateWithReading(options_.reading, job.tuple.variant,
                                   job.tuple.operands);
    f.reading = options_.reading;
    f.backend = identity_.name;
    f.backend_identity = identity_.Describe();
    f.detail = job.fault_message;
  } else {
    auto minimized =
        minimizer.ok()
            ? MinimizeMismatch(**minimizer, job.tuple, options_.reading)
            : absl::StatusOr<Finding>(minimizer.status());
    const bool cut_short = minimizer.ok()
                               ? (*minimizer)->interrupted()
                               : absl::IsCancelled(minimizer.status());
    const bool whole = minimized.ok() && !minimized->flaky;
    if (cut_short && !whole && !job.end_of_run) {
      // The campaign's end cut it short (its last runs interrupted, so not
      // flaky): back in the queue, contrasted with the end's other jobs and
      // filed as found, under its cause where one is told.
      std::lock_guard<std::mutex> lock(mu_);
      filing_.push_front(job);
      return;
    }
    if (minimized.ok() && !(cut_short && minimized->flaky)) {
      f = *minimized;
    } else {
      // The tuple no longer disagrees (FailedPrecondition: flaky), the backend
      // faulted while minimizing, or no worker to minimize with could start:
      // file what was seen, with the reason.
      f.tuple = job.tuple;
      f.oracle = EvaluateWithReading(options_.reading, job.tuple.variant,
                                     job.tuple.operands);
      f.reading = options_.reading;
      f.backend_bits = job.backend_bits;
      f.backend_carry = job.backend_carry;
      f.backend = identity_.name;
      f.backend_identity = identity_.Describe();
      f.flaky = absl::IsFailedPrecondition(minimized.status()) && !cut_short;
      // Cut short by the campaign's end: filed as found rather than left
      // for the next campaign (nothing pending when the run ends).
      f.detail = cut_short ? "not minimized: the campaign ended first"
                           : std::string(minimized.status().message());
      f.cause = job.cause;
      if (job.tuple_fault != TupleFault::kNone) {
        f.kind = job.tuple_fault == TupleFault::kHang ? FindingKind::kHang
                                                      : FindingKind::kCrash;
        f.backend_bits.reset();
        f.batch = {job.tuple};
        f.detail = absl::StrCat(job.fault_message,
                                "\n(not minimized: ", f.detail, ")");
      }
    }
    if (f.tuple.variant != job.tuple.variant) {
      f.detail = absl::StrCat(f.detail, f.detail.empty() ? "" : "; ",
                              "found as ", Spell(job.tuple.variant));
    }
  }
  if (!job.fault) {
    f.found_as = {Spell(job.tuple.variant)};
    // The tuple as found, as a fuzz input: `ptxdiff repro input.bin` replays
    // it.
    f.raw_input = EncodeFuzzInput(std::vector<Tuple>{job.tuple});
  }
  if (!Record(f, /*repeats=*/false)) return;
  if (job.seq >= 0) journal_->Done(job.seq);
  if (!job.fault) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string trigger =
        CauseClass(job.tuple,
                   EvaluateWithReading(options_.reading, job.tuple.variant,
                                       job.tuple.operands),
                   job.tuple_fault);
    causes_[{job.tuple.variant, trigger}].filed = f;
  }
}

namespace {

// The distinct variants of `batch`, the first `at_most` by name: "add.s32,
// add.cc.s32 and 3 more".
std::string NamedVariants(const std::vector<Tuple>& batch, size_t at_most) {
  absl::flat_hash_set<Variant> seen;
  std::vector<std::string> named;
  for (const Tuple& t : batch) {
    if (seen.insert(t.variant).second && named.size() < at_most) {
      named.push_back(Spell(t.variant));
    }
  }
  const size_t more = seen.size() - named.size();
  return absl::StrCat(absl::StrJoin(named, ", "),
                      more > 0 ? absl::StrCat(" and ", more, " more") : "");
}

}  // namespace

Finding Campaign::UnisolatedFault(const FilingJob& job,
                                  absl::string_view why) const {
  Finding f;
  f.kind = FromFault(job.fault->kind);
  f.tuple = job.fault_batch[0];
  f.batch = job.fault_batch;
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend = identity_.name;
  f.backend_identity = identity_.Describe();
  if (job.fault_batch.size() ==
      1) {  // it faulted the worker twice alone: the cause
    f.detail =
        absl::StrCat(job.fault->detail, "\n(not re-run alone: ", why, ")");
    return f;
  }
  f.unisolated = true;
  f.detail = absl::StrCat(
      "unisolated ", FaultKindName(job.fault->kind), " of a batch of ",
      job.fault_batch.size(), " tuple(s) not narrowed to one tuple: ", why,
      "\nthe batch's variants: ", NamedVariants(job.fault_batch, 12),
      " (none is known to be at fault; the case holds every tuple of the "
      "batch)\nthe worker: ",
      job.fault->detail);
  return f;
}

void Campaign::FlushRepeats() {
  std::vector<Finding> repeats;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, cause] : causes_) {
      if (!cause.filed || cause.unflushed == 0) continue;
      repeats.push_back(*cause.filed);
      repeats.back().occurrences = cause.unflushed;
      repeats.back().found_as.clear();
      cause.unflushed = 0;
    }
  }
  for (const Finding& f : repeats) Record(f, /*repeats=*/true);
}

bool Campaign::Flush(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    bool idle;
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle = filing_.empty() && !filer_busy_;
    }
    if (idle && queue_.Idle()) {
      FlushRepeats();
      return true;
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return false;
}

bool Campaign::Record(const Finding& f, bool repeats) {
  auto filed = store_.File(f);
  std::lock_guard<std::mutex> lock(mu_);
  if (!filed.ok()) {
    // Nothing found is lost silently: say so (the summary repeats the
    // reason), and keep fuzzing. The journal still holds the mismatch, for
    // the next campaign.
    ++stats_.filing_errors;
    stats_.filing_error = std::string(filed.status().message());
    std::fprintf(stderr, "ptxdiff: cannot file a finding: %s\n",
                 stats_.filing_error.c_str());
    return false;
  }
  if (!filed->repaired.empty()) {
    std::fprintf(stderr, "ptxdiff: repaired the damaged entry %s/%s: %s\n",
                 store_.dir().c_str(), filed->entry.c_str(),
                 filed->repaired.c_str());
  }
  if (!filed->index_error.empty()) {
    // Filed, so not to be filed again; but the directory is short of space.
    ++stats_.filing_errors;
    stats_.filing_error = filed->index_error;
    std::fprintf(stderr, "ptxdiff: filed %s/%s, but %s\n", store_.dir().c_str(),
                 filed->entry.c_str(), stats_.filing_error.c_str());
  }
  if (repeats) return true;  // counted as known when they were seen
  if (filed->explained) {
    ++stats_.explained_findings;
  } else if (filed->is_new) {
    ++stats_.new_findings;
    std::fprintf(stderr, "ptxdiff: NEW finding %s/%s\n", store_.dir().c_str(),
                 filed->entry.c_str());
  } else {
    ++stats_.known_findings;
  }
  return true;
}

CampaignStats Campaign::Snapshot() const {
  CampaignStats s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = stats_;
    std::tie(s.top_decline, s.top_decline_count) = decline_reasons_.Top();
  }
  // Every worker's restarts: the senders' and the filer's (minimizer's).
  s.worker_restarts = 0;
  for (const auto& sender : senders_) s.worker_restarts += sender->restarts();
  if (const WorkerClient* m = minimizer_started_.load())
    s.worker_restarts += m->restarts();
  s.unfiled = journal_->unfiled();
  s.unjournaled = journal_->unwritten();
  s.queue = queue_.counts();
  s.skipped_declining = declines_->skipped();
  s.offered = offered_.load(std::memory_order_relaxed);
  s.skipped_unsupported = skipped_unsupported_.load(std::memory_order_relaxed);
  s.skipped_undefined = skipped_undefined_.load(std::memory_order_relaxed);
  if (exploration_) s.explored = exploration_->Histogram();
  s.planned_variants = planned_variants_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace ptxdiff
