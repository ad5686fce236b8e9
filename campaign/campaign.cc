#include "campaign/campaign.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <tuple>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "campaign/batch_pacer.h"
#include "campaign/decline_model.h"
#include "campaign/systematic_source.h"
#include "isa/operand_form.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

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
  compiled_ = std::make_unique<std::atomic<int8_t>[]>(AllVariants().size());
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
    queue_.SetCompiledLane(2 * per_batch, per_batch,
                           static_cast<int>(senders_.size()));
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
  // Mismatches an earlier campaign judged but did not live to file; a
  // campaign of its lane alone runs no tuples, and leaves them to one that
  // does (on the backend they were found on).
  const bool runs_tuples = !options_.lane || options_.lane_share < 1;
  for (const auto& [seq, m] :
       runs_tuples ? AdoptOrphanedJournals(options_.triage_dir, *journal_)
                   : std::vector<std::pair<int64_t, PendingMismatch>>()) {
    filing_.push_back({.seq = seq,
                       .tuple = m.tuple,
                       .backend_bits = m.backend_bits,
                       .backend_carry = m.backend_carry,
                       .repeats = m.repeats});
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
  StartLane();
  senders_running_ = senders_.size();
  for (size_t s = 0; s < senders_.size(); ++s) {
    threads_.emplace_back([this, c = senders_[s].get(), s] {
      SenderLoop(c, static_cast<int>(s));
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
  KeepRepeatsOfUnfiled();
  // What the journal still holds was not filed: a filing failed, the
  // backlog overflowed, or the filer ran out of time. It stays for the next
  // campaign on this directory (it adopts the journals of processes that
  // are gone), never removed with the findings in it.
  journal_->RemoveIfAllDone();
  if (lane_) lane_->Finish();
}

void Campaign::StartLane() {
  if (!options_.lane || options_.lane_share <= 0) return;
  absl::StatusOr<std::unique_ptr<CaseLane>> lane = options_.lane(identity_);
  if (!lane.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.lane_not_started = std::string(lane.status().message());
    return;
  }
  lane_ = *std::move(lane);
}

bool Campaign::RunLaneBatch(WorkerClient& client, LaneShare& share) {
  // Counted before lane_done_ is read: LaneFinished sees every batch that
  // started before the lane said it is done.
  ++lane_batches_running_;
  if (lane_done_) {
    --lane_batches_running_;
    return false;
  }
  const absl::Time start = absl::Now();
  FileLaneFindingsOn(client);  // what earlier runs left, first
  const bool more = lane_->RunBatch(client, options_.deadline);
  FileLaneFindingsOn(client);
  share.LaneTook(absl::Now() - start);
  if (!more) lane_done_ = true;
  --lane_batches_running_;
  if (lane_->HasFound()) {
    std::lock_guard<std::mutex> lock(mu_);
    filing_ready_.notify_one();
  }
  return more;
}

void Campaign::FileLaneFindingsOn(WorkerClient& client) {
  if (!options_.lane_files_on_senders) return;
  // Stopping too: a finding past the deadline the lane keeps in its
  // journal (FileFound), and one it need not run is counted.
  while (lane_->HasFound()) lane_->FileFound(client, options_.deadline);
}

bool Campaign::LaneFinished() const {
  // In this order: a finding is queued before its batch ends, and taken
  // by the filer (HasFound false) only while lane_filing_ is set.
  return lane_ && lane_done_ && lane_batches_running_ == 0 &&
         !LaneHasFindings() && !lane_filing_;
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
        Judge(tuples, out, static_cast<int>(s));
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

void Campaign::SenderLoop(WorkerClient* client, int sender) {
  // With the compiled lane, a batch's folding checks and compiles are paced
  // to take about kBatchTarget (its compiled-lane tuples cost little).
  BatchPacer pacer(batch_size_, kBatchTarget);
  LaneShare share(lane_ ? options_.lane_share : 0);
  while (true) {
    if (share.LanesTurn() && !lane_done_) {
      if (stopping_) return;
      if (RunLaneBatch(*client, share)) continue;
    }
    const size_t size = UsesCompiledLane() ? pacer.size() : batch_size_;
    bool after_close = false;
    const absl::Time asked = lane_ ? absl::Now() : absl::InfinitePast();
    std::vector<Tuple> batch =
        queue_.TakeBatch(size, size / 4, kBatchWait, sender, &after_close);
    // Stopping drops what is still queued (it was never judged); a batch
    // taken before it is in flight, and is finished (its repeats counted).
    if (after_close) return;
    if (batch.empty()) {
      if (stopping_) return;
      // The lane's share is of the sender's time, waits for tuples
      // included: a lane run whenever the queue is empty would take far
      // more (a ptxas batch of programs takes seconds).
      if (lane_) share.TuplesTook(absl::Now() - asked);
      continue;
    }
    const size_t taken = batch.size();
    WithholdKnownFaulting(batch);
    if (!batch.empty()) {
      const absl::Time start = absl::Now();
      const BatchOutcome out = client->Run(batch);
      pacer.Took(absl::Now() - start);
      share.TuplesTook(absl::Now() - start);
      // A batch cut short by Stop (Interrupt) is not the backend's fault.
      if (!(out.fault && client->interrupted())) Judge(batch, out, sender);
    }
    queue_.Done(taken);
  }
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

void Campaign::NoteEnvironmentFailure(absl::string_view said) {
  std::lock_guard<std::mutex> lock(mu_);
  if (environment_failure_.empty()) environment_failure_ = std::string(said);
  environment_failed_ = true;
}

std::string Campaign::environment_failure() const {
  if (!environment_failed_) return "";
  std::lock_guard<std::mutex> lock(mu_);
  return environment_failure_;
}

void Campaign::Judge(const std::vector<Tuple>& batch, const BatchOutcome& out,
                     int sender) {
  if (out.fault && out.fault->kind == FaultKind::kEnvironment) {
    NoteEnvironmentFailure(out.fault->detail);  // not the backend's: unjudged
    return;
  }
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
    // A value of the register shape, or a decline of that value alone on
    // code kept for it: the variant's other values go to that code.
    if ((r.kind == ResultKind::kValue ||
         (r.kind == ResultKind::kDecline && r.kept_code)) &&
        batch[i].runtime != 0 &&
        IsRegisterShape(batch[i].variant, batch[i].runtime) &&
        CompiledBy(index) < 0) {
      compiled_now.push_back(i);
    }
    if (r.kind != ResultKind::kDecline) {
      on_reused_code += r.kind == ResultKind::kValue && r.reused;
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
      MarkCompiledLocked(batch[i], VariantIndex(batch[i].variant), sender);
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
  OutcomeTable table = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return outcomes_;
  }();
  if (lane_) lane_->AddOutcomesTo(table);
  return table;
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

CampaignStats Campaign::Snapshot() const {
  CampaignStats s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s = stats_;
    std::tie(s.top_decline, s.top_decline_count) = decline_reasons_.Top();
  }
  // Every worker's restarts: the senders' and the filer's (minimizer's).
  s.worker_restarts = 0;
  for (const auto& sender : senders_) {
    s.worker_restarts += sender->restarts();
    s.answered_given_longer += sender->answered_given_longer();
  }
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
  if (lane_) s.lane = lane_->Counts();
  return s;
}

}  // namespace ptxdiff
