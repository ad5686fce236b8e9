// A campaign over programs (issue 31), its options and report: random
// programs in the known shapes (program_generator.h) through a backend
// (ptxas, a tool that runs PTX, a GPU) in both input forms, judged by the
// composed oracle; each disagreement, or crash or hang of a tool, minimized
// (program_minimizer.h) and filed in the triage directory under its signature,
// with the minimized case and a standalone PTX module that shows it.
//
// A cause the minimizer brings down to one instruction is the tuple
// campaign's business: it is filed too, and its variant is then no longer
// generated, so that it does not flood the run.
//
// Nothing found is lost: each finding is written to the triage directory's
// pending journal (triage/pending_journal.h, JournalKind::kPrograms) before
// it is minimized, and marked done once filed. The run ends at max_time,
// minimizing included: what is not minimized and filed by then stays in the
// journal, and so does a finding whose filing failed (a full disk), which
// also ends the run. The next run on the directory files them first.
//
// It runs on the campaign engine's workers, as its program lane
// (RunProgramsOnEngine, program_lane.h); the work itself is
// program_search.h's.

#ifndef PTXDIFF_PROGRAM_PROGRAM_CAMPAIGN_H_
#define PTXDIFF_PROGRAM_PROGRAM_CAMPAIGN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_generator.h"
#include "program/program_ptx.h"
#include "program/program_refusals.h"

namespace ptxdiff {

// Programs checked in one ptxas run: its start-up is most of the cost of a
// few programs.
inline constexpr int kProgramsPerPtxasRun = 32;

struct ProgramCampaignReport;

struct ProgramCampaignOptions {
  absl::Duration max_time = absl::Seconds(60);
  uint64_t seed = 1;
  int threads = 2;  // the engine's senders, each with its worker
  Reading reading = Reading::kSpec;
  // The generator's; its thread_inputs is the backend's to say
  // (ProgramBackend::JudgesThreadInputs).
  ProgramShape shape;
  std::string triage_dir;
  int max_minimize_candidates = 2000;
  // The programs to check, in place of RandomProgram's (for tests); the run
  // also ends when it returns nullopt.
  std::function<std::optional<Program>(std::mt19937_64&)> next;
  // Whether to file first what earlier runs left in the pending journal
  // (`ptxdiff minimize` of one case does not).
  bool adopt_pending = true;
  // At max_time, a finding still being minimized is filed as far as it got
  // (`ptxdiff minimize`), not kept pending for the next run.
  bool file_unfinished = false;
  // A finding of a cause already filed is counted, not minimized and filed
  // again: its cause key names a filed cause (counted in that entry, issue
  // 64), it uses a variant no longer generated, or it minimizes to one
  // instruction of a filed tuple cause. Off, each is minimized and filed
  // whatever is filed (`ptxdiff minimize`, asked about its one case: filed
  // into an entry of the same cause, it is counted there).
  bool skip_known_causes = true;
  // Where the tool's refusals are remembered across runs: the tuple
  // campaign's file for the same tool, so that what either learns the other
  // skips (`ptxdiff programs` gives <out>/refusals for ptx-cmd). None:
  // learned for the run only (program_refusals.h).
  std::optional<RefusalMemory> refusal_memory;
  // Called before each batch with the shape its programs are drawn in, the
  // variants suppressed and discouraged so far included: for a fuzzer whose
  // mutator makes the programs (fuzzers/program_target.h).
  std::function<void(const ProgramShape&)> on_shape;
  // Called about every `tick` from a thread of its own with the counts so
  // far (a report's timeline, report/run_records.h); not at the end, whose
  // counts the run returns.
  std::function<void(const ProgramCampaignReport& so_far,
                     absl::Duration elapsed)>
      on_tick;
  absl::Duration tick = absl::Seconds(5);
  // Called with each check of a program in a form, from the thread that ran
  // it (several at once): the engine's outcome table counts them
  // (program_outcomes.h).
  std::function<void(const Program&, ProgramInputs, const ProgramCheck&)>
      on_check;
};

// One disagreement, minimized and filed.
struct FiledProgram {
  std::string entry;  // the triage entry's name
  bool is_new = false;
  std::string what;   // one line: the form, the steps, the values
  // What its root cause is known by: where its executed code departs
  // (Finding::cause), else its steps' shape.
  std::string cause;
  int steps = 0;      // CountSteps of the minimized program
};

struct ProgramCampaignReport {
  int64_t programs = 0;            // checked
  // Judged with the inputs immediate (ptxas: folded, or its code run on the
  // CPU) and with runtime inputs (claimed, or run).
  int64_t folded = 0;
  int64_t claimed = 0;
  int64_t executed = 0;  // of them, judged on code run on the CPU (ptxas)
  // The input vectors the programs judged with runtime inputs were judged
  // at, in all (a claim refuted or not, or their code's runs).
  int64_t runtime_vectors = 0;
  int64_t with_thread_inputs = 0;  // checked, reading %tid.x or %laneid
  int64_t with_loaded_inputs = 0;  // checked, loading an input (in[%tid.x])
  int64_t disagreements = 0;       // values the oracle refutes
  int64_t crashes = 0, hangs = 0;  // of the backend (hangs: unisolated too)
  // Disagreements in programs that use a variant no longer generated (its
  // one-instruction cause filed, or --suppress): counted, not filed.
  int64_t known = 0;
  // Disagreements whose cause key (where the code departs, or the
  // instruction whose value explains ptxas's constant) names a cause
  // already filed: counted in its entry, not minimized again; and how many
  // of them each cause had.
  int64_t known_repeats = 0;
  std::map<std::string, int64_t> repeats;
  // Programs and why, by the most common reason (its first line).
  struct Reasons {
    int64_t programs = 0;
    std::string top;
    int64_t top_count = 0;
  };
  // Checked but judged in no form (ptxas kept code; the tool refused them),
  // and not checked at all (the run ended, or was stopped, first).
  Reasons not_judged, not_run;
  // Each input form of a checked program that was not judged (ptxas past
  // --timeout, code kept that nothing runs, ...), whether or not its other
  // form was: `ptxdiff minimize` of one case says why it is no agreement.
  Reasons forms_not_judged;
  // Generated variants the backend refuses, no longer generated: read from
  // the refusal memory, or learned by this run from the programs it refused
  // (`refused_programs`, counted once however many forms refused them) in
  // `refusal_checks` checks of their instructions alone; `refusals_file` is
  // the memory's file ("" without one).
  std::vector<RefusedStep> refused;
  int64_t refused_programs = 0, refusal_checks = 0;
  std::string refusals_file;
  // Refusals the memory held that the tool runs now, forgotten at the run's
  // start (refusal_recheck.h): a line each (DescribeForgotten).
  std::vector<std::string> forgotten;
  // Findings an earlier run left in the pending journal, taken up here.
  int64_t adopted = 0;
  // Findings not filed when the run ended (out of time, or a filing failed),
  // kept in the pending journal for the next run; `unjournaled` of them
  // could not be written there either (said on stderr).
  int64_t pending = 0, unjournaled = 0;
  // Of `pending`, those found on another backend than this run's: kept for
  // a run on theirs.
  int64_t other_backend = 0;
  // Findings kept for the next run because their last check gave no
  // verdict on them (the tool failed or faulted), not for want of time.
  int64_t unchecked = 0;
  double seconds = 0;
  bool interrupted = false;         // stopped by Ctrl-C (common/interrupt.h)
  std::vector<FiledProgram> filed;  // in the order filed
  std::vector<std::string> suppressed;  // variants no longer generated
  // Variants drawn seldom: their causes came back kDiscourageAfter times.
  std::vector<std::string> discouraged;
  std::vector<std::string> errors;      // what could not be filed, or run
  // What the worker said when the harness's own temporary files failed (a
  // full TMPDIR): the run stopped there, nothing filed for it.
  std::string environment_failure;
  // The run ended before its time: every variant the generator draws as a
  // step is suppressed (filed as one instruction, or refused by the tool).
  bool nothing_left_to_draw = false;
  // Writes to the triage directory that failed (a full disk): a filing, or
  // the INDEX.md of an entry that was filed. Any makes the run fail.
  int64_t triage_write_errors = 0;
  // Times a worker was started again after it crashed, hung or answered
  // garbage (the engine's count: RunProgramsOnEngine).
  int64_t worker_restarts = 0;

  // Whether the run lost something it found: a filing that failed, or a
  // finding not filed that the journal could not keep either (the
  // twenty-first fault run: a full disk's findings lost, exit 0, where the
  // deadline came before a filing could fail).
  bool LostFindings() const {
    return triage_write_errors > 0 || unjournaled > 0;
  }
};

// One pending finding as a journal line's record, and back: `identity` is
// the backend's (ProgramBackend::Identity), which a run on another backend
// does not file; the program is written whole (FormatProgram), in hex.
std::string ProgramJournalRecord(const std::string& identity,
                                 const Program& program, ProgramInputs form,
                                 CaseFault fault);
struct PendingProgram {
  std::string identity;
  Program program;
  ProgramInputs form = ProgramInputs::kImmediate;
  CaseFault fault = CaseFault::kNone;  // kNone: a value mismatch
};
std::optional<PendingProgram> ParseProgramJournalRecord(
    absl::string_view record);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_CAMPAIGN_H_
