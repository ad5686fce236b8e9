// A fuzz process's counters (FuzzStats), and the stats file each process
// writes and `ptxdiff fuzz` sums over its processes (StatsFile).

#ifndef PTXDIFF_FUZZERS_FUZZ_STATS_H_
#define PTXDIFF_FUZZERS_FUZZ_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "harness/judge.h"

namespace ptxdiff {

// Counters a campaign reports (ptxdiff fuzz reads them from the stats file).
struct FuzzStats {
  int64_t inputs = 0;
  JudgeCounts counts;
  int64_t new_findings = 0, known_findings = 0, explained_findings = 0;
  int64_t worker_restarts = 0;
  int64_t answered_given_longer = 0;  // CampaignStats
  int64_t variants_reached = 0, supported_variants = 0;
  // The campaign's queue: offered by the fuzz loop, queued, duplicates,
  // dropped under backpressure, produced by the systematic source.
  int64_t offered = 0, queued = 0, duplicates = 0, dropped = 0, systematic = 0;
  int64_t skipped_undefined = 0, skipped_unsupported = 0, skipped_declining = 0;
  // Tuples not sent again because they faulted the backend, and tuples sent
  // again because a batch left them unrun (CampaignStats).
  int64_t withheld_faulting = 0, sent_again = 0;
  // Values computed by code compiled before for another tuple
  // (CampaignStats::on_reused_code).
  int64_t on_reused_code = 0;
  // Writes to the triage directory that failed, and the last one's reason.
  int64_t filing_errors = 0;
  std::string filing_error;
  // Mismatches judged and not filed (at the end: kept in the pending journal
  // for the next campaign), and of those, lines the journal could not take.
  int64_t unfiled = 0, unjournaled = 0;
  // Repeats of those unfiled findings, kept in the journal with them
  // (CampaignStats::pending_repeats): not among known_findings.
  int64_t pending_repeats = 0;
  // The backend's most common decline reason and its tuples (of the process
  // that saw it most): why, if nothing was tested.
  std::string top_decline;
  int64_t top_decline_count = 0;
  // Tuples this process had checked when it judged its first mismatch, that
  // one included; 0 before any. A campaign's figure is the earliest.
  int64_t first_mismatch_after = 0;
  // When (campaign.h): ms since the epoch, 0 before any; the earliest.
  int64_t first_mismatch_unix_ms = 0;
  // The campaign's calibration at start (campaign.h): how long it took and
  // how many families it timed; the largest of the processes.
  int64_t calibration_ms = 0, families_timed = 0;
  // Variants whose planned tiers the systematic source produced
  // (CampaignStats::planned_variants); the largest of the processes, each of
  // which plans every variant.
  int64_t planned_variants = 0;
  // Declines by code: unsupported variant, not evaluable, operand form,
  // other; and the tuples a backend left unrun (a time budget ran out).
  int64_t declined_unsupported = 0, declined_not_evaluable = 0,
          declined_operand_form = 0, declined_other = 0, declined_not_run = 0;
  std::map<std::string, int64_t> other_reading_by_erratum;
  // The program lane's (--programs, program/program_lane.h): programs
  // checked, judged with their inputs as immediates and as runtime values,
  // disagreements, crashes and hangs, entries filed (new ones), found again
  // and counted in the entry of a cause filed before, taken for a filed
  // cause and counted nowhere (CaseLaneCounts::not_filed_again), and found
  // but not filed.
  int64_t programs = 0, programs_judged_immediate = 0,
          programs_judged_runtime = 0, program_disagreements = 0,
          program_faults = 0, programs_filed = 0, programs_filed_new = 0,
          programs_known = 0, programs_not_filed_again = 0,
          programs_pending = 0;
  // Of programs_pending, those the journal could not keep (a full disk);
  // and the program lane's failed writes to the triage directory.
  int64_t programs_unjournaled = 0, program_write_errors = 0;
  // Why no program ran though --programs asked for some (the worker runs
  // none): one line.
  std::string programs_not_started;
};

// What one fuzz process writes to <stats_dir>/<pid>.stats and `ptxdiff
// fuzz` sums over its processes: key=value lines, each counter named once,
// in FormatStatsFile's table; the texts (filing_error, top_decline) on one
// line each.
struct StatsFile {
  FuzzStats stats;
  std::string backend;                // WorkerIdentity::Describe()
  std::vector<bool> reached;          // by VariantIndex: got a non-decline
  std::vector<bool> reached_runtime;  // the same in a runtime form
  // Variants by fuzz-input tuples (CampaignStats::explored); summed over
  // processes, so with -fork a variant counts once in each.
  std::vector<int64_t> explored;
};
std::string FormatStatsFile(const StatsFile& file);
// Adds one stats file's text to `sum`: counters summed (supported_variants,
// the same for every process of a campaign, as the largest;
// first_mismatch_after and first_mismatch_unix_ms as the earliest), reached
// bitmaps OR-ed, explored histograms added, the backend's description kept;
// calibration_ms and families_timed as the largest; the last filing error
// kept, and the top decline reason with the most tuples. Unknown lines are
// skipped.
void AddStatsFile(absl::string_view text, StatsFile& sum);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_FUZZ_STATS_H_
