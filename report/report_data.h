// What a conformance report shows (docs/report.md), read from campaigns'
// --out directories and their triage directories: per implementation (a
// backend identity), the outcomes of every variant in both operand forms
// summed over its runs, each run's timeline, and the findings filed for it.

#ifndef PTXDIFF_REPORT_REPORT_DATA_H_
#define PTXDIFF_REPORT_REPORT_DATA_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "campaign/outcome_table.h"
#include "report/run_records.h"
#include "report/tool_refusals.h"
#include "triage/triage_store.h"

namespace ptxdiff {

// Where one column of the report comes from.
struct ReportSource {
  std::string out_dir;     // a campaign's --out
  std::string triage_dir;  // its --dir
  // Other triage directories its older runs filed in: not shown, said.
  std::vector<std::string> also_recorded;
};

// One backend's runs of one kind from one source: a column of the
// instruction set's maps for tuple runs, a program campaign's section for
// program runs.
struct Implementation {
  RunKind kind = RunKind::kTuples;
  std::string backend;  // WorkerIdentity::Describe() or, for programs,
                        // ProgramBackend::Identity()
  std::string out_dir, triage_dir;
  // A tuple implementation's, empty for programs (no one variant's): by
  // VariantIndex * kNumTupleForms + form, summed over runs.
  std::vector<OutcomeCounts> counts;
  // The programs its runs' program lanes checked, by the VariantIndex of
  // each variant they held: with immediate and with runtime inputs (the
  // outcome files' program forms). Sparse: programs reach a few hundred.
  std::map<int, std::array<OutcomeCounts, 2>> program_counts;
  std::vector<bool> supported;  // by VariantIndex: in some run's outcomes
  // By VariantIndex: the latest decline reason, an index in `reasons`; -1.
  std::vector<int32_t> reason_of;
  std::vector<std::string> reasons;
  struct Run {
    std::string dir;
    int64_t started_unix = 0;
    std::vector<TimelinePoint> timeline;
  };
  std::vector<Run> runs;
  std::vector<EntryInfo> entries;  // the triage directory's, of this backend
  std::vector<std::string> damage;  // of its records
};

struct ReportData {
  // Of both kinds, each source's in order of their first run.
  std::vector<Implementation> implementations;
  // Entries of the triage directories that none of the runs made (a
  // backend since changed, a run older than its records): listed apart.
  struct OtherEntries {
    std::string triage_dir;
    std::vector<EntryInfo> entries;
  };
  std::vector<OtherEntries> other_entries;
  // What the ptx-cmd tools run from each --out refused (tool_refusals.h).
  std::vector<ToolRefusals> refusals;
  // Sources without a run that kept records, and records of runs with
  // none (written before outcomes were kept): said, not hidden.
  std::vector<std::string> notes;
  // Damaged records that belong to no implementation shown (a run whose
  // every outcome record is damaged, a refusal memory that cannot be read):
  // a line each, said as the implementations' damage is.
  std::vector<std::string> damage;
};

// A run's rate (tuples or programs a second) at one of its points.
struct RatePoint {
  double seconds = 0;
  double per_second = 0;
};
// The rate at each point of a run's totals (seconds since its start, count
// so far; the start is 0, 0), as a trailing moving average over at least
// kRateWindowSeconds and at least kRateWindowIntervals of the typical
// interval between points: counters are written every few seconds and
// read by progress lines at another pace, so the rate between two
// neighbours alternates between nothing and twice the rate. Across a gap
// wider than the window (a pause), the rate since the previous point.
// Points that do not move forward in time are skipped.
inline constexpr double kRateWindowSeconds = 10;
inline constexpr int kRateWindowIntervals = 4;
std::vector<RatePoint> SmoothedRate(
    const std::vector<std::pair<double, int64_t>>& totals);

// Reads every source; an error only when a source's directories cannot be
// read at all. Runs of several backends in one --out give a column each.
// A triage entry goes to the implementation whose runs have its backend:
// a program's to the program runs', another's to the tuple runs'.
absl::StatusOr<ReportData> ReadReport(const std::vector<ReportSource>& sources);

// A JSON string literal of `s` (its bytes as they are, controls escaped).
std::string JsonString(absl::string_view s);

// The report's content as JSON (docs/report.md gives its shape).
std::string ReportJson(const ReportData& data);

}  // namespace ptxdiff

#endif  // PTXDIFF_REPORT_REPORT_DATA_H_
