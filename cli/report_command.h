// `ptxdiff report [OUT_DIR...] [--dir TRIAGE_DIR] [--html FILE] [--json FILE]`:
// the conformance report of campaigns (docs/report.md).

#ifndef PTXDIFF_CLI_REPORT_COMMAND_H_
#define PTXDIFF_CLI_REPORT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "report/report_data.h"

namespace ptxdiff {

// Reads the report of `sources` and writes it to `html` and `json`.
absl::StatusOr<ReportData> WriteReport(const std::vector<ReportSource>& sources,
                                       const std::string& html,
                                       const std::string& json);

// `ptxdiff fuzz --report` and `ptxdiff programs --report`: the report of
// every run under `out_dir` (docs/report.md), written beside them; its path,
// or why it could not be written, said as `command`'s (the run's findings
// are filed whatever happens to it). False if it was not written: the run
// did not keep what it was asked to. What it shows as damaged (records,
// triage entries) is said on `err`, as `ptxdiff report` says it.
bool WriteReportAtTheEnd(absl::string_view command, const std::string& out_dir,
                         const std::string& triage_dir, std::ostream& out,
                         std::ostream& err);

// A run's timeline for its report (report/run_records.h), appended a point
// at a time: `header` before the first, the file's directory made with it.
// A write that fails is said once on `err` as `command`'s and the run goes
// on: the timeline is a picture of the run, not a finding.
class TimelineWriter {
 public:
  TimelineWriter(absl::string_view command, std::string path,
                 std::string header);
  void Append(absl::string_view point, std::ostream& err);
  // Whether a point could not be kept.
  bool failed() const { return failed_; }

 private:
  const std::string command_, path_, header_;
  bool started_ = false;  // the header written
  bool failed_ = false;   // and said so
};

int RunReport(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_REPORT_COMMAND_H_
