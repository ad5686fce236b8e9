#include "program/program_search.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_recheck.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "program/alone_checks.h"
#include "program/composed_oracle.h"
#include "program/filed_causes.h"
#include "program/one_step_finding.h"
#include "program/program_finding.h"
#include "program/program_generator.h"
#include "program/program_minimizer.h"
#include "triage/pending_journal.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using Found = ProgramFound;

// Whether `check` shows what `found` is.
bool ShowsLike(const ProgramCheck& check, const Found& found) {
  if (found.fault != CaseFault::kNone)
    return check.fault && check.fault->kind == found.fault;
  return check.mismatch.has_value();
}

// Why a last check said nothing of what was found: the fault it ended in,
// or why it was not judged.
std::string NoVerdictWhy(const ProgramCheck& check) {
  if (check.fault) {
    return absl::StrCat(
        check.fault->kind == CaseFault::kHang ? "it hung: " : "it crashed: ",
        check.fault->what);
  }
  return check.why_not.empty() ? "not judged" : check.why_not;
}

}  // namespace

class ProgramSearch::Impl {
 public:
  Impl(ProgramCampaignOptions o,
       std::shared_ptr<const ProgramBackend> presenter, TriageStore store,
       std::unique_ptr<PendingJournal> journal,
       std::function<void(const std::string&)> progress)
      : o_(std::move(o)),
        presenter_(std::move(presenter)),
        backend_(*presenter_),
        store_(std::move(store)),
        journal_(std::move(journal)),
        progress_(std::move(progress)),
        start_(absl::Now()),
        end_(start_ + o_.max_time),
        suppressed_(o_.shape.suppressed),
        refusals_(o_.refusal_memory),
        alone_(o_.reading, end_) {}

  // What the tool is remembered refusing, kept out of the programs from the
  // start; a memory that cannot be read is said and the run goes on.
  void LoadRefusals() {
    report_.refusals_file = refusals_.Where();
    if (absl::Status s = refusals_.Load(GeneratedSpellings()); !s.ok())
      Error(absl::StrCat("the tool's refusals: ", s.message()));
  }

  void RecheckRefusals(ProgramBackend& on) {
    std::call_once(rechecked_, [&] {
      std::vector<std::string> errors;
      const std::vector<Forgotten> forgotten =
          refusals_.Recheck(on, GeneratedSpellings(), o_.reading, end_, errors);
      for (const std::string& e : errors) Error(e);
      std::lock_guard<std::mutex> lock(mu_);
      for (const Forgotten& f : forgotten)
        report_.forgotten.push_back(DescribeForgotten(f));
    });
  }

  // The variants the triage directory holds a tuple entry of, on this
  // backend: their causes are filed as one instruction already (by the
  // tuple campaign, or this one), so programs with them are not generated,
  // and what minimizes to one of them alone is counted as known, not filed
  // again as a program. A variant that crashed or hung the backend is kept
  // out too: in a program that is not about it, it would only fault again,
  // and cost an isolation each time (issue 41, item 5).
  void SuppressTupleCauses() {
    const absl::StatusOr<std::vector<EntryInfo>> entries = store_.List();
    if (!entries.ok()) return;
    for (const EntryInfo& e : *entries) {
      const Signature& s = e.signature;
      causes_.Note(e, backend_.Name());
      const bool tuple_kind = s.kind == FindingKind::kValueMismatch ||
                              s.kind == FindingKind::kCrash ||
                              s.kind == FindingKind::kHang;
      if (NamesAProgram(s) || NamesABatch(s) || !tuple_kind ||
          s.backend != backend_.Name()) {
        continue;
      }
      tuple_causes_.insert(s.spelling);
      if (std::find(suppressed_.begin(), suppressed_.end(), s.spelling) ==
          suppressed_.end()) {
        suppressed_.push_back(s.spelling);
      }
    }
  }

  // What earlier runs left in the pending journal: this backend's to file
  // first, another's kept for a run on it.
  void AdoptPending() {
    for (const auto& [seq, record] : AdoptOrphanedRecords(
             o_.triage_dir, *journal_, [](absl::string_view r) {
               return ParseProgramJournalRecord(r).has_value();
             })) {
      std::optional<PendingProgram> p = ParseProgramJournalRecord(record);
      if (p->identity != backend_.Identity()) {
        ++report_.other_backend;
        continue;
      }
      backlog_.push_back({.program = std::move(p->program),
                          .form = p->form,
                          .fault = p->fault,
                          .seq = seq});
      ++report_.adopted;
    }
  }

  // The counts so far, while the run goes on.
  ProgramCampaignReport Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return report_;
  }

  ProgramCampaignReport TakeReport() {
    report_.suppressed = suppressed_;
    report_.refused = refusals_.All();
    report_.repeats = causes_.repeats();
    report_.discouraged = causes_.discouraged();
    report_.interrupted = Interrupted();
    // What is not filed stays for the next run (never removed with it).
    report_.pending = journal_->unfiled();
    report_.unjournaled = journal_->unwritten();
    journal_->RemoveIfAllDone();
    return std::move(report_);
  }

  // Past max_time, stopped (a filing failed: nothing more would be filed
  // either), or interrupted (Ctrl-C: common/interrupt.h).
  bool OutOfTime() const {
    return stopping_ || Interrupted() || absl::Now() >= end_;
  }

  bool HasBacklog() {
    std::lock_guard<std::mutex> lock(mu_);
    return !backlog_.empty() && !OutOfTime();
  }

  std::optional<Found> TakeBacklog() {
    std::lock_guard<std::mutex> lock(mu_);
    if (backlog_.empty() || OutOfTime()) return std::nullopt;
    Found f = std::move(backlog_.front());
    backlog_.pop_front();
    return f;
  }

  // The next programs to check, as many as one ptxas run takes; fewer when
  // `next` runs out. `next` is called by one thread at a time, and not
  // under the lock that filing takes: it may wait (the program fuzzer's
  // queue).
  std::vector<Program> NextBatch(std::mt19937_64& rng) {
    ProgramShape shape = o_.shape;
    // Not for a backend that would only say "not judged".
    shape.thread_inputs = backend_.JudgesThreadInputs();
    shape.loaded_inputs = backend_.JudgesLoadedInputs();
    {
      std::lock_guard<std::mutex> lock(mu_);
      shape.suppressed = suppressed_;
      for (std::string& spelling : refusals_.Spellings())
        shape.suppressed.push_back(std::move(spelling));
      shape.discouraged = causes_.discouraged();
    }
    if (!o_.next && !CanDrawAStep(shape)) {
      // Every step variant is filed or refused: the run has nothing to do.
      std::lock_guard<std::mutex> lock(mu_);
      report_.nothing_left_to_draw = true;
      return {};
    }
    if (o_.on_shape) o_.on_shape(shape);
    std::unique_lock<std::mutex> next_lock(next_mu_, std::defer_lock);
    if (o_.next) next_lock.lock();
    std::vector<Program> batch;
    while (static_cast<int>(batch.size()) < kProgramsPerPtxasRun) {
      std::optional<Program> p =
          o_.next ? o_.next(rng) : RandomProgram(rng, shape);
      if (!p) break;
      batch.push_back(std::move(*p));
    }
    return batch;
  }

  // Both forms of each program; what is found in the first form is not
  // looked for again in the second.
  std::vector<Found> CheckBatch(const std::vector<Program>& batch,
                                ProgramBackend& on) {
    std::vector<Found> found;
    // Per program: found (not looked for in the second form), cut at the
    // run's end (not counted), and judged in each form.
    std::vector<bool> done(batch.size()), cut(batch.size()),
        folded(batch.size()), claimed(batch.size()), executed(batch.size());
    std::vector<std::string> why(batch.size());  // not judged: why not
    std::vector<int64_t> vectors(batch.size());  // runtime inputs judged at
    std::vector<Program> hung;  // in a module that hung, not isolated
    // Refused alone by the tool: its batch index, and in which form.
    std::vector<std::pair<size_t, ProgramInputs>> refused;
    std::string hung_how;
    ProgramInputs hung_form = ProgramInputs::kImmediate;
    for (ProgramInputs form :
         {ProgramInputs::kImmediate, ProgramInputs::kRuntime}) {
      std::vector<Program> programs;
      std::vector<size_t> index;
      for (size_t k = 0; k < batch.size(); ++k) {
        // Without inputs the two kernels are one.
        if (done[k] ||
            (form == ProgramInputs::kRuntime && batch[k].inputs.empty()))
          continue;
        programs.push_back(batch[k]);
        index.push_back(k);
      }
      absl::StatusOr<std::vector<ProgramCheck>> checks =
          on.Check(programs, form, o_.reading, end_);
      if (!checks.ok()) {
        if (!StoppedForTheEnvironment(checks.status())) {
          Error(absl::StrCat(backend_.Name(),
                             " on programs: ", checks.status().message()));
        }
        return {};
      }
      for (size_t j = 0; j < checks->size(); ++j) {
        const ProgramCheck& check = (*checks)[j];
        if (o_.on_check) o_.on_check(programs[j], form, check);
        if (check.cut) cut[index[j]] = true;
        if (check.refused) refused.emplace_back(index[j], form);
        refusals_.NoteChecked(programs[j], form, check);
        if (!check.judged) why[index[j]] = check.why_not;
        if (!check.judged && !check.cut && !check.mismatch && !check.fault)
          CountWhy(report_.forms_not_judged, check.why_not);
        if (!check.hung_in_module.empty() &&
            (hung.empty() || hung_form == form)) {
          hung.push_back(programs[j]);
          hung_how = check.hung_in_module;
          hung_form = form;
        }
        if (check.judged) {
          (form == ProgramInputs::kImmediate ? folded : claimed)[index[j]] =
              true;
          if (check.executed) executed[index[j]] = true;
          if (form == ProgramInputs::kRuntime) {
            vectors[index[j]] = check.vectors;
          }
        }
        if (check.mismatch) {
          found.push_back(
              {.program = AtMismatch(programs[j], *check.mismatch),
               .form = form,
               .mismatch = *check.mismatch});
        } else if (check.fault) {
          found.push_back(
              {programs[j], form, check.fault->kind, -1,
               check.fault->kind == CaseFault::kHang ? check.fault->what : "",
               std::nullopt});
        } else {
          continue;
        }
        done[index[j]] = true;
      }
    }
    for (size_t k = 0; k < batch.size(); ++k) {
      if (cut[k]) {
        CountWhy(report_.not_run, why[k]);
        continue;
      }
      Count(&ProgramCampaignReport::programs);
      if (folded[k]) Count(&ProgramCampaignReport::folded);
      if (claimed[k]) Count(&ProgramCampaignReport::claimed);
      if (executed[k]) Count(&ProgramCampaignReport::executed);
      if (claimed[k]) {
        Count(&ProgramCampaignReport::runtime_vectors, vectors[k]);
      }
      if (HasThreadInputs(batch[k]))
        Count(&ProgramCampaignReport::with_thread_inputs);
      if (HasLoadedInputs(batch[k]))
        Count(&ProgramCampaignReport::with_loaded_inputs);
      if (!folded[k] && !claimed[k] && !done[k])
        CountWhy(report_.not_judged, why[k]);
    }
    LearnRefusals(batch, refused, on);
    for (const Found& f : found) {
      Count(f.fault == CaseFault::kNone ? &ProgramCampaignReport::disagreements
            : f.fault == CaseFault::kCrash ? &ProgramCampaignReport::crashes
                                           : &ProgramCampaignReport::hangs);
    }
    // Journaled before minimizing: a kill, a stop or a full disk from here
    // on leaves them for the next run.
    for (Found& f : found) {
      f.seq = journal_->AddRecord(ProgramJournalRecord(
          backend_.Identity(), f.program, f.form, f.fault));
    }
    if (!hung.empty()) FileUnisolatedHang(hung, hung_form, hung_how);
    return found;
  }

  // Learns what the tool refuses from the programs it refused alone.
  void LearnRefusals(
      const std::vector<Program>& batch,
      const std::vector<std::pair<size_t, ProgramInputs>>& refused,
      ProgramBackend& on) {
    absl::flat_hash_set<size_t> programs;
    std::vector<RefusedProgram> each;
    for (const auto& [k, form] : refused) {
      programs.insert(k);
      each.push_back({&batch[k], form});
    }
    Count(&ProgramCampaignReport::refused_programs,
          static_cast<int64_t>(programs.size()));
    if (each.empty() || OutOfTime()) return;
    const RefusalLearning learned =
        refusals_.LearnFrom(on, each, o_.reading, end_);
    Count(&ProgramCampaignReport::refusal_checks, learned.checks);
    for (const std::string& e : learned.errors) Error(e);
  }

  // A module the backend hung on whose halving the deadline cut: filed as
  // the module's hang (UnisolatedHangFinding). Not journaled, as no fault
  // is.
  void FileUnisolatedHang(const std::vector<Program>& programs,
                          ProgramInputs form, const std::string& how) {
    Count(&ProgramCampaignReport::hangs);
    File(UnisolatedHangFinding(backend_, o_.reading, programs, form, how),
         programs[0], /*may_suppress=*/false);
  }

  // Whether each candidate still shows what `found` is, in one run. None
  // does once the run is out of time, so that minimizing ends with what it
  // has; `cut` then says so.
  absl::StatusOr<std::vector<bool>> Shows(std::span<const Program> candidates,
                                          const Found& found, bool& cut,
                                          ProgramBackend& on) {
    std::vector<bool> out(candidates.size());
    if (OutOfTime()) {
      cut = true;
      return out;
    }
    PTXDIFF_ASSIGN_OR_RETURN(
        const std::vector<ProgramCheck> checks,
        found.fault != CaseFault::kNone
            ? on.CheckUntilFault(candidates, found.form, o_.reading, end_)
            : on.Check(candidates, found.form, o_.reading, end_));
    bool shown = false;
    for (size_t k = 0; k < checks.size(); ++k) {
      out[k] = ShowsLike(checks[k], found);
      // A candidate cut before the first that shows might have shown (after
      // it, CheckUntilFault leaves them unrun by design).
      if (checks[k].cut && !shown) cut = true;
      shown |= out[k];
    }
    return out;
  }

  // A hang's likeliest cause on a tool is one instruction: each one the
  // program ran, alone at the operands it had, in one run stopped at the
  // first that hangs (a few runs of the timeout, where delta debugging
  // would spend one on each of tens of rounds). That program and its check
  // (of it alone), or none.
  std::optional<std::pair<Program, ProgramCheck>> HangingInstruction(
      const Found& found, ProgramBackend& on) {
    const std::vector<Program> alone =
        InstructionsAlone(found.program, o_.reading);
    if (alone.empty() || OutOfTime()) return std::nullopt;
    const absl::StatusOr<std::vector<ProgramCheck>> checks =
        on.CheckUntilFault(alone, found.form, o_.reading, end_);
    if (!checks.ok()) return std::nullopt;
    for (size_t k = 0; k < alone.size(); ++k) {
      if (ShowsLike((*checks)[k], found))
        return std::pair{alone[k], (*checks)[k]};
    }
    return std::nullopt;
  }

  // Minimized (a hang only to one instruction that hangs alone: any other
  // round would cost the tool's timeout), checked once more for its files,
  // and filed; its journal line is then done. Cut short by the run's end,
  // it stays in the journal for the next run (unless file_unfinished):
  // filed half-minimized it would be a new root cause that is not one.
  void FileMinimized(const Found& found, ProgramBackend& on) {
    // A repeat of a filed cause first: counted in its entry.
    if (CountedAsAKnownRepeat(found, on)) return;
    if (o_.skip_known_causes && UsesSuppressed(found.program)) {
      Count(&ProgramCampaignReport::known);
      journal_->Done(found.seq);
      return;
    }
    // Out of time, it stays in the journal (see below) without the cost of
    // making candidates.
    if (found.hang_seen.empty() && OutOfTime() && !o_.file_unfinished) return;
    const absl::Time start = absl::Now();
    bool cut = false;
    const ProgramBatchPredicate shows = [this, &found, &cut,
                                         &on](std::span<const Program> c) {
      return Shows(c, found, cut, on);
    };
    // What a run of the filed program alone showed: not run again (a hang's
    // run costs the timeout, and the run's end must not keep it from being
    // filed).
    std::optional<ProgramCheck> seen;
    absl::StatusOr<ProgramMinimizeResult> min =
        ProgramMinimizeResult{.program = found.program};
    if (found.fault != CaseFault::kHang) {
      min = MinimizeProgram(found.program, shows, o_.max_minimize_candidates);
    } else if (auto alone = HangingInstruction(found, on)) {
      min = ProgramMinimizeResult{.program = alone->first, .rounds = 1};
      seen = alone->second;
    } else if (!found.hang_seen.empty()) {
      seen = ProgramCheck{.fault =
                              ProgramFault{CaseFault::kHang, found.hang_seen}};
    }
    if (cut && !o_.file_unfinished) return;
    // Minimizing cut by the harness's own files failing (a full TMPDIR):
    // half done, it stays in the journal (the sixteenth fault run saw it
    // filed whole once the disk had room for the last check).
    if (!min.ok() && StoppedForTheEnvironment(min.status())) return;
    const Program& program = min.ok() ? min->program : found.program;
    if (o_.skip_known_causes && IsATupleCause(program)) {
      Count(&ProgramCampaignReport::known);
      // Counted in the tuple's entry (which marks its journal line done).
      if (!CountInEntryOf(TupleCauseName(StepSpellings(program)[0]), found))
        journal_->Done(found.seq);
      return;
    }
    absl::StatusOr<std::vector<ProgramCheck>> check =
        seen ? std::vector<ProgramCheck>{*seen}
             : on.Check(
                   {&program, 1}, found.form, o_.reading,
                   o_.file_unfinished ? absl::InfiniteFuture() : end_);
    if (!check.ok()) {  // the harness's failure: the next run tries again
      if (!StoppedForTheEnvironment(check.status())) {
        Error(absl::StrCat(backend_.Name(),
                           " on a finding: ", check.status().message()));
      }
      return;
    }
    if ((*check)[0].cut) return;  // the next run confirms it
    // Gone only where the last check agrees. No verdict (the tool failed
    // for a while, refused it) or another fault than found (a tool that
    // now crashes on everything): it stays in the journal for the next
    // run, not dropped as not shown (the seventeenth and eighteenth fault
    // runs: a licence outage, a crashing tool).
    if (const ProgramCheck& last = (*check)[0];
        !ShowsLike(last, found) && (!last.judged || last.fault)) {
      Error(absl::StrCat("what was found could not be checked again (",
                         NoVerdictWhy(last), "): kept for the next run"));
      Count(&ProgramCampaignReport::unchecked);
      return;
    }
    if (!ShowsLike((*check)[0], found)) {
      Error(
          absl::StrCat("what was found did not show again after minimizing:\n",
                       FormatProgram(program)));
      journal_->Done(found.seq);
      return;
    }
    Finding f = FindingFor(program, found, (*check)[0], on);
    f.minimize_backend_calls = min.ok() ? min->rounds : 0;
    f.minimize_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    // One instruction is a tuple: filed as the tuple campaign files it.
    std::optional<Finding> as_tuple =
        (*check)[0].mismatch
            ? AsTupleFinding(f, program, *(*check)[0].mismatch)
            : std::nullopt;
    if (as_tuple) {  // what it was found as, as a repeat counted says it
      as_tuple->found_as.push_back(
          absl::StrJoin(StepSpellings(found.program), " then "));
    }
    if (File(f, program, true, as_tuple)) journal_->Done(found.seq);
  }

  Finding FindingFor(const Program& minimized, const Found& found,
                     const ProgramCheck& check, ProgramBackend& on) {
    CauseKey cause;
    if (check.mismatch) {
      const AloneCheck alone = alone_.On(on);
      cause = causes_.KeyOf(AtMismatch(minimized, *check.mismatch),
                            *check.mismatch, o_.reading, &alone);
    }
    return ProgramFinding(backend_, o_.reading, minimized, found.form, check,
                          cause);
  }

  // Files `f` (as `stored`, its tuple, where it is one step); false if it
  // could not, which ends the run: what it finds from then on could not be
  // filed either, and the journal keeps this one.
  bool File(const Finding& f, const Program& p, bool may_suppress = true,
            const std::optional<Finding>& stored = std::nullopt) {
    std::lock_guard<std::mutex> lock(mu_);
    absl::StatusOr<FileResult> filed = store_.File(stored ? *stored : f);
    if (!filed.ok()) {
      report_.errors.push_back(absl::StrCat("could not file ",
                                            f.program->name, ": ",
                                            filed.status().message(), "\n",
                                            f.program->case_text));
      ++report_.triage_write_errors;
      stopping_ = true;
      return false;
    }
    if (!filed->index_error.empty()) {
      // Filed, so not to be filed again; but the directory is short of
      // space, which the run's exit status must say.
      report_.errors.push_back(
          absl::StrCat("filed ", filed->entry, ", but ", filed->index_error));
      ++report_.triage_write_errors;
    }
    report_.filed.push_back(
        {filed->entry, filed->is_new, f.program->what,
         f.cause.empty() ? f.program->shape : f.cause, CountSteps(p)});
    if (f.kind == FindingKind::kValueMismatch)
      causes_.NoteFiled(f.cause, filed->entry, p);
    if (progress_) {
      progress_(absl::StrCat("[", absl::ToInt64Seconds(absl::Now() - start_),
                             " s] ", filed->is_new ? "filed " : "again ",
                             stored ? filed->entry : f.program->name, ": ",
                             f.program->what));
    }
    if (may_suppress) SuppressIfSingleInstruction(p);
    return true;
  }

  std::string TupleCauseName(const std::string& spelling) {
    std::lock_guard<std::mutex> lock(mu_);
    return causes_.TupleCauseName(spelling);
  }

  // A mismatch whose cause key names a cause already filed (in the
  // directory, or by this run) is counted in that cause's entry, not
  // minimized again: the search moves on.
  bool CountedAsAKnownRepeat(const Found& found, ProgramBackend& on) {
    if (!found.mismatch || !o_.skip_known_causes) return false;
    const AloneCheck alone = alone_.On(on);
    const std::string key =
        causes_.KeyOf(found.program, *found.mismatch, o_.reading, &alone).key;
    if (key.empty() || !CountInEntryOf(key, found)) return false;
    std::lock_guard<std::mutex> lock(mu_);
    ++report_.known_repeats;
    causes_.CountRepeat(key);
    return true;
  }

  // Counts `found` in the entry of the filed cause `key`, its journal line
  // then done; false if no entry of that cause is known, or counting failed.
  bool CountInEntryOf(const std::string& key, const Found& found) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<std::string> entry = causes_.EntryOf(key);
    if (!entry) return false;
    const std::string seen_as =
        absl::StrJoin(StepSpellings(found.program), " then ");
    if (!store_.CountRepeats(*entry, 1, seen_as).ok()) return false;
    journal_->Done(found.seq);
    return true;
  }

  // Whether `p` has a step of a variant no longer generated: what is found
  // in it is most likely that variant's known cause (generated before it
  // was filed).
  bool UsesSuppressed(const Program& p) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& spelling : StepSpellings(p)) {
      if (std::find(suppressed_.begin(), suppressed_.end(), spelling) !=
          suppressed_.end()) {
        return true;
      }
    }
    return false;
  }

  // Whether `p` is one instruction of a variant the triage directory holds
  // a tuple entry of (SuppressTupleCauses).
  bool IsATupleCause(const Program& p) {
    const std::vector<std::string> spellings = StepSpellings(p);
    return spellings.size() == 1 && BlockKinds(p).empty() &&
           tuple_causes_.contains(spellings[0]);
  }

  // A cause down to one instruction is the tuple campaign's: stop
  // generating its variant.
  void SuppressIfSingleInstruction(const Program& p) {
    const std::vector<std::string> spellings = StepSpellings(p);
    if (spellings.size() != 1 || !BlockKinds(p).empty() ||
        spellings[0] == "mov") {
      return;
    }
    if (std::find(suppressed_.begin(), suppressed_.end(), spellings[0]) ==
        suppressed_.end()) {
      suppressed_.push_back(spellings[0]);
    }
  }

  // One more program in `reasons`, counted under the first line of `why`
  // and said in the report by the whole of it, its lines joined (a tool's
  // "its output ends:" is followed by the output).
  void CountWhy(ProgramCampaignReport::Reasons& reasons,
                const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    ++reasons.programs;
    const std::string line = why.substr(0, std::min(why.find('\n'), 300ul));
    const int64_t n = ++why_counts_[&reasons][line];
    if (n > reasons.top_count) {
      reasons.top_count = n;
      reasons.top = OneLine(why, 600);
    }
  }

  static std::string OneLine(absl::string_view text, size_t max_bytes) {
    std::vector<absl::string_view> lines;
    for (absl::string_view l : absl::StrSplit(text, '\n', absl::SkipEmpty()))
      lines.push_back(absl::StripAsciiWhitespace(l));
    std::string joined = absl::StrJoin(lines, " / ");
    if (joined.size() > max_bytes) joined = joined.substr(0, max_bytes) + "...";
    return joined;
  }

  void Count(int64_t ProgramCampaignReport::*field, int64_t n = 1) {
    std::lock_guard<std::mutex> lock(mu_);
    report_.*field += n;
  }

  // Whether `s` is the harness's own temporary files failing: then the run
  // stops (each program would fail alike), saying it once.
  bool StoppedForTheEnvironment(const absl::Status& s) {
    if (!IsEnvironmentFailure(s)) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (report_.environment_failure.empty())
      report_.environment_failure = std::string(s.message());
    stopping_ = true;
    return true;
  }

  void Error(std::string e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (report_.errors.size() < 20) report_.errors.push_back(std::move(e));
  }

  const ProgramCampaignOptions o_;
  // What presents the cases (names, classes, reproducers); the checks run
  // on the backend each call is given.
  const std::shared_ptr<const ProgramBackend> presenter_;
  const ProgramBackend& backend_;
  TriageStore store_;
  std::unique_ptr<PendingJournal> journal_;
  const std::function<void(const std::string&)> progress_;
  const absl::Time start_, end_;
  std::atomic<bool> stopping_{false};  // a filing failed
  std::mutex mu_;
  std::mutex next_mu_;  // held while `next` is called
  std::vector<std::string> suppressed_;
  ProgramRefusals refusals_;  // what the tool refuses: not generated
  std::once_flag rechecked_;  // RecheckRefusals
  std::deque<Found> backlog_;  // adopted from the journal, to file first
  absl::flat_hash_set<std::string> tuple_causes_;  // SuppressTupleCauses
  FiledCauses causes_;  // keys, entries and repeats of what is filed
  AloneChecks alone_;  // a step that carries ptxas's constant, run alone
  // CountWhy's counts, per reason, of each of the report's Reasons.
  absl::flat_hash_map<const ProgramCampaignReport::Reasons*,
                      absl::flat_hash_map<std::string, int64_t>>
      why_counts_;
  ProgramCampaignReport report_;
};

absl::StatusOr<std::unique_ptr<ProgramSearch>> ProgramSearch::Open(
    const ProgramCampaignOptions& options,
    std::shared_ptr<const ProgramBackend> presenter,
    std::function<void(const std::string&)> progress) {
  PTXDIFF_ASSIGN_OR_RETURN(TriageStore store,
                           TriageStore::Open(options.triage_dir, true,
                                             CheckProgramText));
  PTXDIFF_ASSIGN_OR_RETURN(
      std::unique_ptr<PendingJournal> journal,
      PendingJournal::Open(options.triage_dir, JournalKind::kPrograms));
  auto impl = std::make_unique<Impl>(options, std::move(presenter),
                                     std::move(store), std::move(journal),
                                     std::move(progress));
  impl->SuppressTupleCauses();
  impl->LoadRefusals();
  if (options.adopt_pending) impl->AdoptPending();
  return std::unique_ptr<ProgramSearch>(new ProgramSearch(std::move(impl)));
}

ProgramSearch::ProgramSearch(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ProgramSearch::~ProgramSearch() = default;

void ProgramSearch::RecheckRefusals(ProgramBackend& on) {
  impl_->RecheckRefusals(on);
}
bool ProgramSearch::OutOfTime() const { return impl_->OutOfTime(); }
bool ProgramSearch::HasBacklog() { return impl_->HasBacklog(); }
std::optional<ProgramFound> ProgramSearch::TakeBacklog() {
  return impl_->TakeBacklog();
}
std::vector<Program> ProgramSearch::NextBatch(std::mt19937_64& rng) {
  return impl_->NextBatch(rng);
}
std::vector<ProgramFound> ProgramSearch::CheckBatch(
    const std::vector<Program>& batch, ProgramBackend& on) {
  return impl_->CheckBatch(batch, on);
}
void ProgramSearch::FileMinimized(const ProgramFound& found,
                                  ProgramBackend& on) {
  impl_->FileMinimized(found, on);
}
ProgramCampaignReport ProgramSearch::Snapshot() { return impl_->Snapshot(); }
ProgramCampaignReport ProgramSearch::TakeReport() {
  return impl_->TakeReport();
}

}  // namespace ptxdiff
