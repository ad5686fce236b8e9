// The campaign's filer (campaign.h): each mismatch queued once per
// (variant, trigger class), contrasted in registers where that tells its
// cause, minimized on the filer's own worker (or isolated, for a fault) and
// filed in the triage store; repeats counted into their entries.

#include "campaign/campaign.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "harness/judge.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "protocol/fault_kind.h"
#include "triage/finding.h"
#include "triage/minimizer.h"
#include "triage/pending_journal.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

constexpr size_t kMaxFilingBacklog = 4096;
// At Stop, the filer goes on filing for at most this long; what is left
// stays in the journal for the next campaign.
constexpr absl::Duration kFilingGrace = absl::Seconds(10);
// The contrast batch of the mismatches left at the end: one batch.
constexpr absl::Duration kContrastTimeout = absl::Seconds(5);
// The most mismatches contrasted in one run while the campaign runs.
constexpr size_t kContrastsPerRun = 1024;

// A job's sightings: itself, and the `repeats` an earlier run kept with it.
int64_t Occurrences(int64_t repeats) {
  return repeats < std::numeric_limits<int64_t>::max() ? repeats + 1 : repeats;
}

// The class a finding of `t` is filed under for the rest of the process.
std::string CauseClass(const Tuple& t, const Result& oracle, CaseFault fault) {
  if (fault == CaseFault::kNone) return TriggerClassOf(t, oracle);
  return fault == CaseFault::kHang ? "hang" : "crash";
}

}  // namespace

void Campaign::QueueMismatch(const Tuple& t, const Judgement& j,
                             CaseFault fault, std::string message) {
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
  it->second.seq = journal_->Add(pending);
  if (filing_.size() >= kMaxFilingBacklog) {
    // The journal keeps it for the next campaign rather than stall (counted
    // in CampaignStats::unfiled; not a filing error: nothing failed).
    return;
  }
  filing_.push_back({.seq = it->second.seq,
                     .tuple = t,
                     .backend_bits = j.backend_bits,
                     .backend_carry = j.backend_carry,
                     .tuple_fault = fault,
                     .fault_message = std::move(message)});
  filing_ready_.notify_one();
}

void Campaign::FilerLoop() {
  std::optional<absl::Time> deadline;
  // While both wait, the lane's findings get half the filer's time: a
  // backend wrong on a family keeps tuple findings queued all run, and the
  // lane's waited behind them, unfiled, run after run (the eighteenth fault
  // run: 45, then 157, then 437 kept pending). One of the lane's after each
  // tuple finding was too few where most are repeats of a cause filed, each
  // taken in milliseconds (the nineteenth: 81, 116, 151).
  LaneShare filer_time(0.5);
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
        return senders_done() || !filing_.empty() || LaneHasFindings();
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
        // Between the tuple findings, one of the lane's at a time: a tuple
        // finding judged meanwhile goes first.
        if (FileLaneFinding()) continue;
        if (last) return;
        continue;
      }
      if (filer_time.LanesTurn() && LaneHasFindings()) {
        lock.unlock();
        const absl::Time start = absl::Now();
        FileLaneFinding();
        filer_time.LaneTook(absl::Now() - start);
        continue;
      }
      job = std::move(filing_.front());
      filing_.pop_front();
      filer_busy_ = true;
    }
    const absl::Time start = absl::Now();
    FileJob(std::move(job));
    filer_time.TuplesTook(absl::Now() - start);
    std::lock_guard<std::mutex> lock(mu_);
    filer_busy_ = false;
  }
}

bool Campaign::LaneHasFindings() const {
  return lane_ && !options_.lane_files_on_senders && !minimizing_stopped_ &&
         !lane_filer_failed_ && lane_->HasFound();
}

bool Campaign::FileLaneFinding() {
  // Set before the lane is asked: LaneFinished must not see it between.
  lane_filing_ = true;
  const bool filed = FileLaneFindingOnce();
  lane_filing_ = false;
  return filed;
}

bool Campaign::FileLaneFindingOnce() {
  if (!LaneHasFindings()) return false;
  const absl::StatusOr<WorkerClient*> client = MinimizerClient();
  if (!client.ok()) {
    // What the lane found stays in its journal, for the next campaign.
    lane_filer_failed_ = true;
    return false;
  }
  lane_->FileFound(**client, options_.deadline);
  return true;
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
  repeat->occurrences = Occurrences(job.repeats);
  repeat->found_as = {Spell(job.tuple.variant)};
  if (!Record(*repeat, /*repeats=*/false)) return true;  // the journal keeps it
  if (job.seq >= 0) journal_->Done(job.seq);
  // Its later repeats are counted in the same entry (FlushRepeats): its
  // journal line is done, so nothing else would count them.
  const Result oracle = EvaluateWithReading(options_.reading, job.tuple.variant,
                                            job.tuple.operands);
  std::lock_guard<std::mutex> lock(mu_);
  causes_[{job.tuple.variant, CauseClass(job.tuple, oracle, job.tuple_fault)}]
      .filed = *repeat;
  return true;
}

bool Campaign::CountFaultUnderItsCause(const FilingJob& job) {
  if (job.fault || job.tuple_fault == CaseFault::kNone) return false;
  Finding seen;
  seen.kind = job.tuple_fault == CaseFault::kHang ? FindingKind::kHang
                                                  : FindingKind::kCrash;
  seen.tuple = job.tuple;
  seen.oracle = EvaluateWithReading(options_.reading, job.tuple.variant,
                                    job.tuple.operands);
  seen.detail = job.fault_message;
  const std::string cause = FaultCause(seen);
  if (cause.empty()) return false;
  std::optional<Finding> repeat;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, filed_cause] : causes_) {
      const std::optional<Finding>& f = filed_cause.filed;
      if (f && f->kind == seen.kind && !f->unisolated &&
          FaultCause(*f) == cause) {
        repeat = *f;
        break;
      }
    }
    if (!repeat) return false;
    // Its later repeats are counted in the same entry (FlushRepeats).
    causes_[{job.tuple.variant, CauseClass(job.tuple, seen.oracle,
                                           job.tuple_fault)}]
        .filed = *repeat;
  }
  repeat->occurrences = Occurrences(job.repeats);
  repeat->found_as = {Spell(job.tuple.variant)};
  if (!Record(*repeat, /*repeats=*/false)) return true;
  if (job.seq >= 0) journal_->Done(job.seq);
  return true;
}

bool Campaign::KeptPendingForTheEnvironment(const absl::Status& status) {
  if (!IsEnvironmentFailure(status)) return false;
  NoteEnvironmentFailure(status.message());  // its journal line stays
  return true;
}

void Campaign::FileJob(FilingJob job) {
  if (CountUnderItsCause(job) || CountFaultUnderItsCause(job)) return;
  Finding f;
  // A hang is filed as found, and a fault the sender could not isolate: no
  // worker needed.
  const absl::StatusOr<WorkerClient*> minimizer =
      job.tuple_fault == CaseFault::kHang || !job.unisolated_why.empty()
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
    // The harness's own files failed: kept pending, as the run stops.
    if (KeptPendingForTheEnvironment(isolated.status())) return;
    // Not isolated, the batch's first tuple is no more to blame than the
    // others.
    f = isolated.ok() ? *isolated
                      : UnisolatedFault(job, isolated.status().message());
    std::lock_guard<std::mutex> lock(mu_);
    not_to_send_.insert(f.batch.begin(), f.batch.end());
  } else if (job.tuple_fault == CaseFault::kHang) {
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
    if (KeptPendingForTheEnvironment(minimized.status())) return;
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
      if (job.tuple_fault != CaseFault::kNone) {
        f.kind = job.tuple_fault == CaseFault::kHang ? FindingKind::kHang
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
  f.occurrences = Occurrences(job.repeats);
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

void Campaign::KeepRepeatsOfUnfiled() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, cause] : causes_) {
    if (cause.filed || cause.unflushed == 0 || !journal_->IsOpen(cause.seq))
      continue;
    journal_->AddRepeats(cause.seq, cause.unflushed);
    stats_.known_findings -= cause.unflushed;
    stats_.pending_repeats += cause.unflushed;
    cause.unflushed = 0;
  }
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

}  // namespace ptxdiff
