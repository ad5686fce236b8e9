// What a campaign leaves under its --out directory for a report to read:
//
//   <out>/stats/run-<unix time>-<pid>/  a directory a run, of either kind
//     timeline.tsv    its kind (tuples: `ptxdiff fuzz`, programs: `ptxdiff
//                     programs`), a program run's backend, and a point each
//                     progress line or tick
//     <pid>.stats     a fuzz process's counters (fuzzers/fuzz_stats.h)
//     <pid>.outcomes  a fuzz process's outcomes by variant and form
//                     (campaign/outcome_table.h)
//     triage-dir      the triage directory the run filed in
//
// Earlier versions' records are read too: a tuple run's timeline of version
// 1, and a program run's `programs-<unix time>-<pid>/programs.tsv`.
//
// Every file is one run's or one process's, written whole or appended to,
// never rewritten from what another run wrote: a report sums them. A file
// that does not parse is named in the run's `damage`, its sound lines kept.

#ifndef PTXDIFF_REPORT_RUN_RECORDS_H_
#define PTXDIFF_REPORT_RUN_RECORDS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "campaign/outcome_table.h"

namespace ptxdiff {

inline constexpr absl::string_view kTimelineFile = "timeline.tsv";

// What a run checked: tuples (`ptxdiff fuzz`) or programs (`ptxdiff
// programs`).
enum class RunKind { kTuples, kPrograms };

// A run's totals at one of its progress lines. A count that does not apply
// to the run's kind is absent.
struct TimelinePoint {
  double seconds = 0;   // since the run started
  int64_t checked = 0;  // tuples or programs, judged or declined
  // A tuple run's: variants a tuple reached, in any form and with runtime
  // operands (a program is no one variant's).
  std::optional<int64_t> variants_reached, variants_reached_runtime;
  // A program run's: programs judged with the inputs as immediates, and
  // with runtime inputs (a tuple's outcome table has its forms).
  std::optional<int64_t> judged_immediate, judged_runtime;
  int64_t disagreements = 0;  // with the oracle: mismatches
  int64_t faults = 0;         // cases that crashed or hung the backend
  int64_t new_entries = 0;    // triage entries this run made
};

// A timeline's first lines (its format, the run's kind, and the backend's
// identity where the run knows it: a tuple run's outcome files say it), and
// a point's line: its seconds, then the counts of TimelineCounts.
std::string TimelineHeader(RunKind kind, absl::string_view backend = "");
std::string FormatTimelinePoint(RunKind kind, const TimelinePoint& point);
// The counts a kind's timeline has, in its columns' order: checked, the
// kind's own two, disagreements, faults, new entries. One the caller left
// absent is 0.
inline constexpr int kTimelineCounts = 6;
std::array<int64_t, kTimelineCounts> TimelineCounts(RunKind kind,
                                                    const TimelinePoint& point);

struct RunRecord {
  std::string dir;
  int64_t started_unix = 0;         // from the directory's name
  RunKind kind = RunKind::kTuples;  // a run without a timeline: tuples
  // The outcome files' or the timeline's; empty if neither says.
  std::string backend;
  std::vector<TimelinePoint> timeline;
  std::vector<OutcomeFile> outcomes;  // a tuple run's: one a fuzz process
  // "<file>: <what>", a phrase each.
  std::vector<std::string> damage;
};

// The runs of both kinds under `out_dir`/stats, oldest first; none if there
// is none.
std::vector<RunRecord> ReadRuns(const std::string& out_dir);
// The same runs, each read only when `visit` is to have it and dropped
// after: what is kept of them is the caller's.
void ForEachRun(const std::string& out_dir,
                absl::FunctionRef<void(RunRecord&)> visit);

// The triage directory a run (of either kind) filed its findings in, kept
// in the run's directory as an absolute path: a later `ptxdiff report` of
// its --out shows them, wherever --dir was.
inline constexpr absl::string_view kRunTriageDirFile = "triage-dir";
absl::Status RecordTriageDir(const std::string& run_dir,
                             const std::string& triage_dir);
// Every one the runs under `out_dir` recorded, once each, newest first.
std::vector<std::string> RecordedTriageDirs(const std::string& out_dir);
// The one the newest run under `out_dir` recorded; "" if none did.
std::string RecordedTriageDir(const std::string& out_dir);

}  // namespace ptxdiff

#endif  // PTXDIFF_REPORT_RUN_RECORDS_H_
