// The conformance report as one self-contained HTML page (docs/report.md):
// the page (report_page.html, compiled in) with the report's JSON inside it,
// so that it opens from disk with no server, no network and no other file.

#ifndef PTXDIFF_REPORT_REPORT_HTML_H_
#define PTXDIFF_REPORT_REPORT_HTML_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ptxdiff {

// The page with `json` (ReportJson) as its data.
std::string ReportHtml(absl::string_view json);

}  // namespace ptxdiff

#endif  // PTXDIFF_REPORT_REPORT_HTML_H_
