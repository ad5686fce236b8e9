// `ptxdiff report [OUT_DIR...] [--dir TRIAGE_DIR] [--html FILE] [--json FILE]`:
// the conformance report of campaigns (docs/report.md).

#ifndef PTXDIFF_CLI_REPORT_COMMAND_H_
#define PTXDIFF_CLI_REPORT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report_data.h"

namespace ptxdiff {

// Reads the report of `sources` and writes it to `html` and `json`.
absl::StatusOr<ReportData> WriteReport(const std::vector<ReportSource>& sources,
                                       const std::string& html,
                                       const std::string& json);

int RunReport(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_REPORT_COMMAND_H_
