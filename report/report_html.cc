#include "report/report_html.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace ptxdiff {

extern const absl::string_view kReportPage;  // report_page.html

namespace {
constexpr absl::string_view kDataPlaceholder = "/*PTXDIFF_REPORT_DATA*/";
}  // namespace

std::string ReportHtml(absl::string_view json) {
  // Inside <script> only "</" (a "</script>" in a tool's output, quoted in
  // a case) and "<!--" could end or change it; both are still the same
  // JSON once escaped ("\/" is JSON's escape of "/").
  const std::string safe =
      absl::StrReplaceAll(json, {{"</", "<\\/"}, {"<!--", "<\\u0021--"}});
  const size_t at = kReportPage.find(kDataPlaceholder);
  return absl::StrCat(kReportPage.substr(0, at), safe,
                      kReportPage.substr(at + kDataPlaceholder.size()));
}

}  // namespace ptxdiff
