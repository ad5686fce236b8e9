// The campaign engine: the fuzz loop runs at oracle speed and never waits
// for the backend; the backend is fed big batches asynchronously; the search
// is aimed at what the backend supports, at defined results and at what has
// not been sent yet; mismatches are minimized and filed off the loop's path.
//
//   fuzz loop ──Offer()──┐                    ┌─ sender 1 ─ worker ─┐
//                        ├─▶ TupleQueue ─────▶┤                     ├─▶ judge
//                        ─▶ counts
//   systematic source ───┘  (dedup, lanes)    └─ sender N ─ worker ─┘      │
//                                                               mismatch ▼
//                                       journal ◀── filer (minimize ─▶ triage
//                                       store)
//
// - Offer() (the fuzz loop's thread) drops tuples of variants the backend
//   does not support, most tuples of operand classes it declines
//   (decline_model.h), admits only a fixed share of
//   tuples whose result the spec leaves open, and puts tuples of a new
//   variant or semantic class into the novel lane, the rest into the routine
//   lane (tuple_queue.h).
// - `in_flight` sender threads, each with its own worker process, take
//   batches sized to the backend (BatchSizeFor) and judge the results as
//   they arrive (judge.h). Declines teach the decline model.
// - The first mismatch of each (variant, trigger class) is written to the
//   pending journal and queued for the filer thread, which minimizes it on
//   its own worker (minimizer.h) and files it (one entry per root cause,
//   finding.h); repeats are counted, not minimized again.
// - A case lane (case_lane.h: programs), where one is given, gets a share
//   of each sender's time on its worker between tuple batches; the filer
//   files what it finds on its own worker between tuple findings.
// - Stop() closes the queue, lets the batches in flight finish, files what
//   the filer still holds (past the deadline as found, not minimized:
//   nothing found is left pending when the disk is fine), and removes the
//   journal if everything in it was filed. A filing that failed (a full
//   disk) keeps its journal line, as does a process that dies first: the
//   next campaign adopts the journal and files what it holds.
//
// The engine's code: campaign.cc (Start and Stop, the calibration, the
// senders and judging, Flush and Snapshot), campaign_producers.cc (Offer,
// the systematic and compiled lanes' loops, what is worth sending) and
// campaign_filing.cc (the filer: contrast, minimize or isolate, file, count
// repeats).

#ifndef PTXDIFF_CAMPAIGN_CAMPAIGN_H_
#define PTXDIFF_CAMPAIGN_CAMPAIGN_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "campaign/case_lane.h"
#include "campaign/decline_model.h"
#include "campaign/exploration_budget.h"
#include "campaign/outcome_table.h"
#include "campaign/tuple_queue.h"
#include "client/worker_client.h"
#include "harness/judge.h"
#include "oracle/oracle.h"
#include "triage/finding.h"
#include "triage/pending_journal.h"
#include "triage/triage_store.h"

namespace ptxdiff {

// Tuples per batch for a backend: thousands per ptxas compile, up to a
// million for a GPU, tens of thousands across a pipe otherwise.
size_t BatchSizeFor(absl::string_view backend_name);

struct CampaignOptions {
  WorkerCommand worker;  // how to start one worker
  std::string triage_dir = "out/triage";
  std::vector<Variant> variants;  // what to fuzz (empty: every variant)
  int in_flight = 2;              // batches in flight = sender workers
  size_t batch_size = 0;          // 0: BatchSizeFor(the backend's name)
  bool systematic = true;         // run the systematic source
  // Give the systematic source its runtime tier where the backend runs
  // operand forms (WorkerIdentity::forms); false: immediates only.
  bool runtime_forms = true;
  // Where the backend compiles a case and runs the code (both_forms: ptxas
  // with its SASS evaluator), run each variant whose register shape it
  // compiled at many more inputs (compiled_source.h, and the register-shape
  // twin of each fuzz-input tuple), in a lane of their own: each costs a
  // run of code compiled once, not a compile. Up to `compiled_per_batch`
  // such tuples go with each batch (0: 16 batches' worth).
  bool compiled_lane = true;
  size_t compiled_per_batch = 0;
  double undefined_share = 0.05;     // of admitted tuples, at most
  Reading reading = Reading::kSpec;  // the oracle reading judged against
  // Tuples per queue lane; 0: two batches. Small on purpose: what is queued
  // was chosen with what the engine knew then (decline_model.h), and a slow
  // backend would otherwise work through stale choices for minutes.
  size_t lane_capacity = 0;
  // Count every judged tuple's outcome by variant and form (outcome_table.h;
  // off only to measure what counting costs).
  bool record_outcomes = true;
  // A backend this cheap per tuple checked (the oracle and exec workers are
  // below it, ptxas far above; docs/performance.md) is not timed family by
  // family: the campaign's own work, not the backend, sets the pace, so
  // balancing the backend's time would buy nothing, and timing every family
  // would only delay the first finding.
  double cheap_seconds_per_tuple = 10e-6;
  // Stop waits this long for the batches in flight, then interrupts the
  // workers (WorkerClient::Interrupt): --max-time holds on a slow backend.
  absl::Duration stop_grace = absl::Seconds(3);
  // Calibration stops timing families after this long (a tool that costs a
  // second a run must not spend a short campaign timing 65 families); the
  // families left are costed as the median of those timed.
  absl::Duration calibration_budget = absl::Seconds(10);
  // The most a sender's worker spends isolating the tuples of a batch that
  // faults it (WorkerCommand::isolation_budget).
  absl::Duration isolation_budget = absl::Seconds(30);
  // The campaign's end (--max-time). Isolating a fault, the senders' and
  // the filer's, stops there whatever its budget: what it has not narrowed
  // to one tuple by then is filed as an unisolated fault of the batch.
  absl::Time deadline = absl::InfiniteFuture();
  // The queue's dedup table (TupleQueue::Options::seen_slots); 0: its
  // default. Small in a test that needs a repeat to get through.
  size_t dedup_slots = 0;
  // A lane of other cases (case_lane.h: programs), made once the workers
  // have started, and the share of each sender's time it gets, in [0, 1]
  // (0, or no maker: tuples only, as without one).
  CaseLaneMaker lane;
  double lane_share = 0;
  // Each sender files what the lane found on its own worker, before and
  // after each of its lane batches, instead of the filer: where the lane
  // has all of the senders' time (`ptxdiff programs`), a sender's worker
  // has learned the tool's costs, and the filer's fresh one would wait its
  // first hang out to the whole --timeout (the dense-fault fixture: 13 s).
  bool lane_files_on_senders = false;
};

struct CampaignStats {
  JudgeCounts counts;
  QueueCounts queue;
  int64_t offered = 0;              // by the fuzz loop
  int64_t skipped_unsupported = 0;  // variants the backend does not take
  int64_t skipped_undefined = 0;    // over the undefined share
  int64_t skipped_declining =
      0;  // of classes the backend declines (decline_model.h)
  int64_t declined_by_code[5] = {};  // by DeclineCode: what the declines were
  // Declines saying a tuple was left unrun (kNotRunPrefix: a time budget ran
  // out first) after it was sent again kMaxSendsAgain times; apart from
  // declined_by_code.
  int64_t declined_not_run = 0;
  // kOtherReading verdicts by the erratum that explains them.
  std::map<std::string, int64_t> other_reading_by_erratum;
  int64_t systematic = 0;  // produced by the systematic source
  int64_t new_findings = 0, known_findings = 0, explained_findings = 0;
  // Writes to the triage directory that failed (a full disk), and the
  // reason the last one gave.
  int64_t filing_errors = 0;
  std::string filing_error;
  int64_t adopted =
      0;  // unfiled mismatches of earlier campaigns, filed by this one
  // Mismatches judged and not filed: while running, those being minimized;
  // after Stop, those whose filing failed or ran out of time, kept in the
  // journal for the next campaign. `unjournaled` of them could not be
  // written to the journal either (said on stderr).
  int64_t unfiled = 0, unjournaled = 0;
  // Repeats of findings not filed at the end (the filing failed, or the
  // run ended first): not counted in any entry, so not in known_findings;
  // kept in the journal with their finding, whose filing counts them.
  int64_t pending_repeats = 0;
  // Why the backend declined, its most common reason (first line) and how
  // many tuples gave it: what to tell a user when nothing was tested.
  std::string top_decline;
  int64_t top_decline_count = 0;
  int64_t worker_restarts = 0;
  // Batches whose hang the senders could not narrow, answered when run
  // again given longer (WorkerClient::answered_given_longer): not filed.
  int64_t answered_given_longer = 0;
  // Tuples not sent because they faulted the worker before (or were in a
  // batch whose fault could not be isolated): each would cost it again.
  int64_t withheld_faulting = 0;
  // Values the backend computed with code compiled before for another
  // tuple (TupleResult::reused: compile once, run every input).
  int64_t on_reused_code = 0;
  // Tuples a batch left unrun (a backend's time budget ran out while it
  // isolated a fault) and that were sent again.
  int64_t sent_again = 0;
  // Mismatches run once more in registers to tell their cause before they
  // were minimized (ContrastBeforeMinimizing), and the runs that took.
  int64_t contrasted = 0, contrast_runs = 0;
  int64_t supported_variants = 0;  // of the campaign's variants
  int64_t calibration_ms = 0;      // spent timing the families at start
  int64_t families_timed = 0;  // by it (a cheap backend stops after a batch)
  // Tuples judged when the first mismatch was, that one included; 0 before
  // any (the finding-power benchmark's tuples-to-find).
  int64_t first_mismatch_after = 0;
  // When that was (wall clock, ms since the epoch), so that a benchmark that
  // started the process can tell time-to-find from time-to-file.
  int64_t first_mismatch_unix_ms = 0;
  std::vector<bool> reached;  // by VariantIndex: got a non-decline
  int64_t variants_reached = 0;
  // The same in a runtime form (a tuple with a source the compiler cannot
  // know): what a backend that folds or claims declines, and one that runs
  // the code (ptxas's SASS on the evaluator) answers.
  std::vector<bool> reached_runtime;
  int64_t variants_reached_runtime = 0;
  // The supported variants by how many tuples from fuzz inputs each got
  // queued (ExplorationBudget::Histogram, LeastExploredText).
  std::vector<int64_t> explored;
  // Variants whose planned tiers (the first tier, the relations and the
  // middle tier: SystematicSource::planned_done) the systematic source has
  // produced.
  int64_t planned_variants = 0;
  // The case lane's counts (CampaignOptions::lane), and why there is none
  // where one was asked for ("" otherwise).
  CaseLaneCounts lane;
  std::string lane_not_started;
};

// The undefined share (CampaignOptions::undefined_share) of one producer,
// counted over the tuples the queue took: a repeat it turns away as a
// duplicate must not make room for an undefined tuple.
class UndefinedShare {
 public:
  explicit UndefinedShare(double share) : share_(share) {}
  // True if a tuple with a result `defined` or not may be queued now.
  bool Admits(bool defined) const {
    return defined || undefined_ + 1 <= share_ * (queued_ + 1);
  }
  void CountQueued(bool defined) {
    ++queued_;
    if (!defined) ++undefined_;
  }

 private:
  double share_;
  int64_t queued_ = 0, undefined_ = 0;
};

class Campaign {
 public:
  // Starts the workers, the senders, the filer and the systematic source.
  // Fails (with the worker's reason) when the first worker cannot start,
  // or the triage directory cannot be opened.
  static absl::StatusOr<std::unique_ptr<Campaign>> Start(
      CampaignOptions options);
  ~Campaign();
  Campaign(const Campaign&) = delete;
  Campaign& operator=(const Campaign&) = delete;

  // The fuzz loop's entry: never blocks on the backend.
  void Offer(const Tuple& t, const Result& oracle, uint32_t classes);

  // Waits until every tuple offered so far by the fuzz loop has been judged
  // and every mismatch filed (the systematic lane aside), and repeats are
  // written to their entries' counts; false if `timeout` passed first.
  bool Flush(absl::Duration timeout);

  // Finishes the batches in flight and (for a few seconds) the filing, then
  // returns; idempotent.
  void Stop();

  // The fuzz loop may yield the CPU (on two cores it competes with the
  // backend and the systematic source for the same time): while the backend
  // is behind, and while the breadth pass (a tuple of every variant, the
  // surest new ground at the start) is underway.
  bool FuzzLoopShouldYield() const {
    return queue_.Saturated() || !breadth_done_.load(std::memory_order_relaxed);
  }

  // Where the fuzz stage is wanted (exploration_budget.h), for the fuzz
  // loop's mutator, on its thread: whether `v` has had its share of
  // fuzz-input tuples this pass, and the next variant still under it
  // (nullopt when none is wanted).
  bool HadItsShare(const Variant& v) const;
  std::optional<Variant> NextToExplore();

  // The case lane (CampaignOptions::lane) has nothing more to run, and the
  // filer nothing more of it to file (it filed it, or cannot: its worker
  // did not start): a campaign of the lane alone is done. False without a
  // lane.
  bool LaneFinished() const;

  CampaignStats Snapshot() const;
  // What a worker said when the harness's own temporary files failed (a
  // FaultKind::kEnvironment: TMPDIR full or read-only), the first time; ""
  // while they work. Nothing is filed for it, and the findings whose
  // minimizing met it stay in the pending journal: the run is to stop.
  std::string environment_failure() const;
  // A copy of the outcomes counted so far (copied under the lock, so that
  // formatting it does not hold the senders up).
  OutcomeTable OutcomesSnapshot() const;
  // Variants the backend supports, by VariantIndex.
  std::vector<bool> SupportedVariants() const {
    return std::vector<bool>(supported_.begin(), supported_.end());
  }
  const WorkerIdentity& identity() const { return identity_; }
  size_t batch_size() const { return batch_size_; }

 private:
  struct FilingJob {
    int64_t seq = -1;  // in the journal; -1 for faults
    Tuple tuple;
    uint64_t backend_bits = 0;
    bool backend_carry = false;  // of a `.cc` variant
    // A tuple the implementation crashed or hung on (ResultKind::kFault),
    // and what the worker said of it.
    CaseFault tuple_fault = CaseFault::kNone;
    std::string fault_message;
    std::vector<Tuple> fault_batch;  // non-empty for a faulty batch
    std::optional<BackendFault> fault;
    // Why `fault` of `fault_batch` could not be isolated by the sender
    // (BatchOutcome::unisolated): filed as an unisolated fault at once.
    std::string unisolated_why;
    // Left when the campaign ended (ContrastAtTheEnd), and its cause, if
    // the contrast run then told one.
    bool end_of_run = false;
    std::string cause;
    // Adopted: repeats an earlier run saw and could not count.
    int64_t repeats = 0;
    // Run in registers once already (ContrastBeforeMinimizing), whatever it
    // told.
    bool contrasted = false;

    // A value mismatch, not a crash or hang: what a contrast can explain.
    bool value_mismatch() const {
      return !fault && tuple_fault == CaseFault::kNone;
    }
  };

  Campaign(CampaignOptions options, TriageStore store,
           std::unique_ptr<PendingJournal> journal);
  using WorkerStarts =
      std::vector<std::future<absl::StatusOr<std::unique_ptr<WorkerClient>>>>;
  // Takes the started senders' workers, learns what they support, and starts
  // the campaign's threads.
  absl::Status StartWorkers(WorkerStarts& starting);
  // The jobs left when the campaign ran out of time, to be filed as found:
  // their value mismatches with immediates run once more with them in
  // registers, in one batch on a fresh worker, so that each is filed under
  // the cause that contrast tells (FilingJob::cause), as a minimized one
  // would be. Bounded by kContrastTimeout. Jobs contrasted before (marked
  // end_of_run) are left as they are.
  void ContrastAtTheEnd(std::deque<FilingJob>& jobs);
  // Once this run has filed a minimized entry with a cause told by
  // contrast, a value mismatch with immediates is run once in registers
  // before it is minimized, and its cause told the same way: a tool that
  // reads 64-bit immediates as 32 bits is wrong in every 64-bit variant,
  // and minimizing each cost ~8 tool runs to file what one run tells. The
  // queued jobs that want a contrast too are run in the same batch: one
  // run of a tool costs its start-up, each more tuple next to nothing, and
  // such a tool's mismatches of a new variant came one run each. Sets the
  // cause of each job whose register form agrees.
  void ContrastBeforeMinimizing(WorkerClient& client, FilingJob& job);
  // Sets the cause of each job in `of` whose contrast (its tuple in
  // registers, `contrasts[i]`) the backend's `out` agrees with.
  void TellCausesByContrast(std::span<const Tuple> contrasts,
                            const BatchOutcome& out,
                            std::span<FilingJob* const> of) const;
  // A mismatch whose cause a contrast told, where this run filed a
  // minimized entry of that cause, or (left at the campaign's end, no cause
  // told) of its family: counted as a repeat of that entry (its variant
  // added to the entry's found_as), not minimized or filed as an entry of
  // its own. False if there is none.
  bool CountUnderItsCause(const FilingJob& job);
  // A crash or hang of the tool on one tuple whose cause (triage's
  // FaultCause: its family and how it ended, or the condition the spec
  // leaves open) this run filed already: counted in that entry, its variant
  // added to found_as. A tool that crashes on every variant of a family
  // files one entry, not one per variant (issue 62: 338 for `set`).
  bool CountFaultUnderItsCause(const FilingJob& job);
  // Times a batch of each family's systematic tuples on the senders' workers
  // (judging them too) to learn the backend's cost per tuple by family.
  void Calibrate();
  // Families the calibration budget left untimed cost the median of those
  // timed (the budget must not make them look free).
  void CostUntimedFamilies(const std::vector<int>& families);
  void SenderLoop(WorkerClient* client, int sender);
  // Queues the tuples of `run` (their VariantIndex and oracle results from
  // EvaluateWanted) that are worth sending (decline_model.h) in `lane`,
  // within `undefined_share` (a kCompiled lane: `sender`'s); false once the
  // queue is closed.
  bool PutWorthSending(const std::vector<Tuple>& run,
                       const std::vector<int>& indices,
                       const std::vector<Result>& results, Lane lane,
                       UndefinedShare& undefined_share, int sender = 0);
  // Feeds the compiled lane from a CompiledSource of the variants whose
  // register shape the backend compiled (MarkCompiled).
  void CompiledLoop();
  // Notes that the backend answered `t` (in its register shape) with a
  // value: its code is compiled (sender threads, mu_ held).
  void MarkCompiledLocked(const Tuple& t, int index, int sender);
  // The share of each batch the systematic lane gets with the compiled lane
  // while its breadth pass is on (kSystematicShareWithCompiledLane after):
  // a variant's first compile then pays for thousands of runs, a fuzz
  // input's folding check for one (docs/performance.md, "The main job").
  static constexpr double kSystematicShareDuringPass = 0.9;
  // The compiled lane is in use (a backend that runs the code it compiles).
  bool UsesCompiledLane() const {
    return options_.compiled_lane && identity_.both_forms &&
           options_.runtime_forms;
  }
  void FilerLoop();
  // Makes the case lane (CampaignOptions::lane) for the workers started.
  void StartLane();
  // Runs one of the lane's batches on `client` (a sender's); false when the
  // lane has nothing more.
  bool RunLaneBatch(WorkerClient& client, LaneShare& share);
  // Files on `client` what the lane found, while it has anything
  // (lane_files_on_senders).
  void FileLaneFindingsOn(WorkerClient& client);
  // Files one thing the lane found, on the minimizer's worker (filer
  // thread); false if there was nothing to file, or no worker.
  bool FileLaneFinding();
  bool FileLaneFindingOnce();  // FileLaneFinding's work
  // The lane found what the filer is to file (and can: minimizing has not
  // stopped, a worker to do it with started).
  bool LaneHasFindings() const;
  void SystematicLoop();
  // `sender`: whose worker answered (its compiled lane gets what it
  // compiled).
  void Judge(const std::vector<Tuple>& batch, const BatchOutcome& out,
             int sender);
  // Keeps the first environment failure (environment_failure()).
  void NoteEnvironmentFailure(absl::string_view said);
  // Whether `status`, a filing's minimizing, is an environment failure:
  // noted, and its finding left in the pending journal.
  bool KeptPendingForTheEnvironment(const absl::Status& status);
  // A judged tuple's outcome, gathered by Judge off the lock.
  struct CountedOutcome {
    int index;  // VariantIndex
    OutcomeForm form;
    Outcome outcome;
    uint32_t message;  // a decline's, in the batch's messages
  };
  // Adds a batch's outcomes to outcomes_ (mu_ held).
  void CountOutcomes(const std::vector<CountedOutcome>& outcomes,
                     const std::vector<std::string>& messages);
  // Files the fault of a batch whose isolation ran out of budget (with the
  // tuples it left not run) as unisolated, and withholds those tuples.
  void QueueUnisolated(const std::vector<Tuple>& batch,
                       const BatchOutcome& out);
  // What becomes of a tuple the backend left unrun (kNotRunPrefix).
  enum class Unrun : uint8_t {
    kSentAgain,  // put back in the queue, behind the tuples waiting
    kDropped,    // not judged: its class is quarantined, or the run ends
    kDeclined,   // judged as declined: sent again kMaxSendsAgain times
  };
  // The fate of each tuple batch[unrun[k]]: sent again while it was sent
  // again fewer than kMaxSendsAgain times and is still worth sending
  // (decline_model.h); all dropped once the campaign stops.
  std::vector<Unrun> SendAgain(const std::vector<Tuple>& batch,
                               const std::vector<size_t>& unrun);
  // Drops from `batch` the tuples in not_to_send_.
  void WithholdKnownFaulting(std::vector<Tuple>& batch);
  // The finding for `job`'s fault, which could not be narrowed to one
  // tuple (`why`): unisolated, naming the batch's variants (unless the
  // batch is one tuple).
  Finding UnisolatedFault(const FilingJob& job, absl::string_view why) const;
  // Files `t` once per (variant, class) per process: its trigger class for
  // a mismatch, "crash" or "hang" for a tuple fault (`fault`, `message`).
  void QueueMismatch(const Tuple& t, const Judgement& j,
                     CaseFault fault = CaseFault::kNone,
                     std::string message = "");
  void FileJob(FilingJob job);
  // The worker that minimizes, started on the first finding (filer thread);
  // Cancelled once StopMinimizing was called.
  absl::StatusOr<WorkerClient*> MinimizerClient();
  // Ends the minimizer's work in flight (Interrupt) and starts no more.
  void StopMinimizing();
  bool Record(const Finding& f,
              bool repeats);  // false if it could not be filed
  void FlushRepeats();
  // At Stop: the repeats of each finding still unfiled in the journal are
  // written there with it (an R line), not counted as filed.
  void KeepRepeatsOfUnfiled();
  bool Wanted(const Variant& v, int index) const;
  // Evaluates the wanted tuples of a systematic run into `results`, their
  // VariantIndex in `indices` (-1, and the result left as it is, for the
  // others); false if none is wanted.
  bool EvaluateWanted(const std::vector<Tuple>& run, std::vector<Operands>& ops,
                      std::vector<int>& indices,
                      std::vector<Result>& results) const;
  Lane LaneFor(int index, uint32_t classes);

  CampaignOptions options_;
  TriageStore store_;
  std::unique_ptr<PendingJournal> journal_;
  WorkerIdentity identity_;
  size_t batch_size_ = 0;
  TupleQueue queue_;
  std::vector<std::unique_ptr<WorkerClient>> senders_;
  std::unique_ptr<WorkerClient>
      minimizer_client_;  // filer thread only; null until needed
  std::atomic<WorkerClient*> minimizer_started_{
      nullptr};  // for Stop's Interrupt
  std::atomic<bool> minimizing_stopped_{false};
  std::vector<std::thread> threads_;
  std::unique_ptr<CaseLane> lane_;  // null: tuples only
  std::atomic<bool> lane_done_{false};  // RunBatch said it has nothing more
  std::atomic<int> lane_batches_running_{0};    // RunLaneBatch calls under way
  std::atomic<bool> lane_filing_{false};        // FileLaneFinding under way
  std::atomic<bool> lane_filer_failed_{false};  // no worker to file with
  std::atomic<bool> stopping_{false};
  std::atomic<int> senders_running_{0};    // SenderLoops not yet returned
  std::atomic<bool> breadth_done_{false};  // the systematic source's, or none
  // Per variant (by VariantIndex): 1 + the sender whose worker compiled its
  // register shape (MarkCompiledLocked), 0 while none has; read by the fuzz
  // loop without a lock. The compiled lane's tuples of a variant go to that
  // worker: it keeps the code, another would compile it again.
  std::unique_ptr<std::atomic<int8_t>[]> compiled_;
  int CompiledBy(int index) const {
    return compiled_[index].load(std::memory_order_relaxed) - 1;
  }
  // Witnesses of variants compiled since CompiledLoop last looked (mu_).
  struct NewlyCompiled {
    Tuple witness;
    int sender;
  };
  std::vector<NewlyCompiled> newly_compiled_;
  std::latch calibrated_{1};  // family_cost_ and routine_keep_one_in_ are set
  bool stopped_ = false;

  // Per variant (by VariantIndex): supported here, and the semantic classes
  // already offered; what the backend declines, per operand class.
  std::vector<uint8_t> supported_;
  std::vector<uint32_t> offered_classes_;  // fuzz loop thread only
  // Fuzz-input tuples queued per variant; fuzz loop thread only.
  std::unique_ptr<ExplorationBudget> exploration_;
  std::unique_ptr<DeclineModel> declines_;
  // Seconds per tuple by family (Calibrate), and for the fuzz loop's
  // routine tuples, keep one in `routine_keep_one_in_` of each family so
  // that families get equal backend time.
  std::array<double, kNumFamilies> family_cost_{};
  std::array<int64_t, kNumFamilies> routine_keep_one_in_{};
  std::array<int64_t, kNumFamilies> routine_seen_{};  // fuzz loop thread only

  mutable std::mutex mu_;  // guards stats_ and the filing state below
  CampaignStats stats_;
  std::string environment_failure_;              // under mu_
  std::atomic<bool> environment_failed_{false};  // the fuzz loop's cheap look
  OutcomeTable outcomes_;
  // Per (variant, trigger class) of a raw mismatch: the finding filed for
  // it, and repeats seen since its count was last written.
  struct CauseState {
    std::optional<Finding> filed;
    int64_t unflushed = 0;
    int64_t seq = -1;  // the journal's line of its first sighting
  };
  absl::flat_hash_map<std::pair<Variant, std::string>, CauseState> causes_;
  // Tuples that faulted the worker, or were in a batch whose fault was not
  // isolated: never sent again this run.
  absl::flat_hash_set<Tuple> not_to_send_;
  // Tuples a batch left unrun (its time budget ran out, or a fault cap
  // stopped their family) and that were put back in the queue: how often.
  // After kMaxSendsAgain they are declined.
  absl::flat_hash_map<Tuple, int> times_sent_again_;
  DeclineReasons decline_reasons_;
  bool filer_busy_ = false;
  std::deque<FilingJob> filing_;
  std::condition_variable filing_ready_;
  UndefinedShare fuzz_undefined_;  // fuzz loop thread only
  // CampaignStats' fuzz loop counts: written by that thread only.
  static void Bump(std::atomic<int64_t>& n) {
    n.store(n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::atomic<int64_t> offered_{0}, skipped_unsupported_{0},
      skipped_undefined_{0};
  // The systematic source's planned_done, written by its loop.
  std::atomic<int64_t> planned_variants_{0};
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_CAMPAIGN_H_
