// What a campaign leaves under its --out directory for a report to read:
//
//   <out>/stats/run-<unix time>-<pid>/   one directory a `ptxdiff fuzz` run
//     <pid>.stats      a fuzz process's counters
//     (fuzzers/differential_target.h) <pid>.outcomes   its outcomes by variant
//     and form (campaign/outcome_table.h) timeline.tsv     the run's progress,
//     a line each progress line printed
//   <out>/stats/programs-<unix time>-<pid>/   a `ptxdiff programs` run
//     programs.tsv     its backend, and its progress every few seconds
//
// Every file is one run's or one process's, written whole or appended to,
// never rewritten from what another run wrote: a report sums them. A file
// that does not parse is named in the run's `damage`, its sound lines kept.

#ifndef PTXDIFF_REPORT_RUN_RECORDS_H_
#define PTXDIFF_REPORT_RUN_RECORDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "campaign/outcome_table.h"

namespace ptxdiff {

inline constexpr absl::string_view kTimelineFile = "timeline.tsv";

// The campaign's totals when a progress line was printed.
struct TimelinePoint {
  double seconds = 0;  // since the run started
  int64_t tuples = 0;  // judged
  int64_t variants_reached = 0;
  int64_t variants_reached_runtime = 0;
  int64_t mismatches = 0;
  int64_t faults = 0;         // tuples that crashed or hung the backend
  int64_t new_entries = 0;    // triage entries this run made
};
// The timeline's first line, and one point's line.
std::string TimelineHeader();
std::string FormatTimelinePoint(const TimelinePoint& point);

struct RunRecord {
  std::string dir;
  int64_t started_unix = 0;  // from the directory's name
  std::string backend;       // the outcome files' (empty without any)
  std::vector<TimelinePoint> timeline;
  std::vector<OutcomeFile> outcomes;  // one a fuzz process
  // "<file>: <what>", a phrase each.
  std::vector<std::string> damage;
};

// The runs under `out_dir`/stats, oldest first; none if there is none.
std::vector<RunRecord> ReadRuns(const std::string& out_dir);

// The triage directory a run (of either kind) filed its findings in, kept
// in the run's directory as an absolute path: a later `ptxdiff report` of
// its --out shows them, wherever --dir was.
inline constexpr absl::string_view kRunTriageDirFile = "triage-dir";
absl::Status RecordTriageDir(const std::string& run_dir,
                             const std::string& triage_dir);
// The one the newest run under `out_dir` recorded; "" if none did.
std::string RecordedTriageDir(const std::string& out_dir);

// A program campaign's (`ptxdiff programs`): programs are not one variant's,
// so its record is its progress, and its findings are in the triage
// directory.
inline constexpr absl::string_view kProgramRunPrefix = "programs-";
inline constexpr absl::string_view kProgramTimelineFile = "programs.tsv";

struct ProgramTimelinePoint {
  double seconds = 0;            // since the run started
  int64_t programs = 0;          // checked
  int64_t judged_immediate = 0;  // judged with the inputs as immediates
  int64_t judged_runtime = 0;    // and with runtime inputs
  int64_t disagreements = 0;
  int64_t faults = 0;       // crashes and hangs of the backend
  int64_t new_entries = 0;  // triage entries this run made
};
// The file's first lines (its format, the backend's identity), and a
// point's line.
std::string ProgramTimelineHeader(absl::string_view backend);
std::string FormatProgramTimelinePoint(const ProgramTimelinePoint& point);

struct ProgramRunRecord {
  std::string dir;
  int64_t started_unix = 0;
  std::string backend;  // ProgramBackend::Identity(); empty if unwritten
  std::vector<ProgramTimelinePoint> timeline;
  std::vector<std::string> damage;  // "<file>: <what>"
};

// The program runs under `out_dir`/stats, oldest first.
std::vector<ProgramRunRecord> ReadProgramRuns(const std::string& out_dir);

}  // namespace ptxdiff

#endif  // PTXDIFF_REPORT_RUN_RECORDS_H_
