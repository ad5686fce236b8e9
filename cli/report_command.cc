#include "cli/report_command.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/triage_commands.h"
#include "common/files.h"
#include "report/report_data.h"
#include "report/report_html.h"
#include "report/run_records.h"

namespace ptxdiff {
namespace {

// Each --out directory with its triage directory: --dir for a single one,
// else the one its newest run recorded, else the <out>/triage beside it,
// else the default (PTXDIFF_TRIAGE_DIR).
absl::StatusOr<std::vector<ReportSource>> SourcesOf(const ParsedArgs& args) {
  std::vector<std::string> outs = args.positional;
  if (outs.empty()) outs.push_back("out");
  if (args.Has("dir") && outs.size() > 1) {
    return absl::InvalidArgumentError(
        "--dir names the triage directory of one --out directory; with "
        "several, each one's is its triage/");
  }
  std::vector<ReportSource> sources;
  for (const std::string& out : outs) {
    std::string triage = args.Get("dir");
    std::vector<std::string> recorded;
    if (triage.empty()) {
      recorded = RecordedTriageDirs(out);
      if (!recorded.empty()) {
        triage = recorded.front();
        recorded.erase(recorded.begin());
      }
    }
    if (triage.empty())
      triage = IsDirectory(out + "/triage") ? out + "/triage" : DefaultTriageDir();
    sources.push_back(
        {.out_dir = out, .triage_dir = triage, .also_recorded = recorded});
  }
  return sources;
}

// Each damaged triage entry.
void SayDamagedEntries(const std::string& triage_dir,
                       const std::vector<EntryInfo>& entries,
                       std::ostream& err) {
  for (const EntryInfo& e : entries) {
    if (e.damage.empty()) continue;
    err << "report: damaged triage entry: " << triage_dir << "/" << e.name
        << ": " << absl::StrJoin(e.damage, "; ") << "\n";
  }
}

// What the report shows as damaged, said where a user sees it: a line for
// each damaged record file and each damaged triage entry.
void SayDamage(const ReportData& data, std::ostream& err) {
  for (const Implementation& impl : data.implementations) {
    for (const std::string& d : impl.damage)
      err << "report: damaged record: " << d << "\n";
    SayDamagedEntries(impl.triage_dir, impl.entries, err);
  }
  for (const ReportData::OtherEntries& o : data.other_entries)
    SayDamagedEntries(o.triage_dir, o.entries, err);
  for (const std::string& d : data.damage)
    err << "report: damaged record: " << d << "\n";
}

// "report: BACKEND: 2 runs, ...": one line an implementation.
void SayImplementation(const Implementation& impl, std::ostream& out) {
  out << "report: ";
  if (impl.kind == RunKind::kPrograms) {
    out << "programs on "
        << (impl.backend.empty() ? "a backend its record does not name"
                                 : impl.backend);
  } else {
    out << impl.backend;
  }
  out << ": " << impl.runs.size()
      << (impl.runs.size() == 1 ? " run, " : " runs, ");
  if (impl.kind == RunKind::kTuples) {
    out << std::count(impl.supported.begin(), impl.supported.end(), true)
        << " variants supported, ";
  }
  out << impl.entries.size() << " triage entries\n";
}

}  // namespace

absl::Status WriteReportFiles(const ReportData& data, const std::string& html,
                              const std::string& json) {
  const std::string text = ReportJson(data);
  for (const auto& [path, bytes] :
       {std::pair{html, ReportHtml(text)}, std::pair{json, text}}) {
    if (absl::Status s = WriteOutputFile(path, bytes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<ReportData> WriteReport(const std::vector<ReportSource>& sources,
                                       const std::string& html,
                                       const std::string& json) {
  absl::StatusOr<ReportData> data = ReadReport(sources);
  if (!data.ok()) return data.status();
  if (absl::Status s = WriteReportFiles(*data, html, json); !s.ok()) return s;
  return data;
}

bool WriteReportAtTheEnd(absl::string_view command, const std::string& out_dir,
                         const std::string& triage_dir, std::ostream& out,
                         std::ostream& err) {
  const std::string html = out_dir + "/report.html";
  const absl::StatusOr<ReportData> data =
      WriteReport({{.out_dir = out_dir, .triage_dir = triage_dir}}, html,
                  out_dir + "/report.json");
  if (!data.ok()) {
    out << command
        << ": the report could not be written: " << data.status().message()
        << "\n";
    return false;
  }
  SayDamage(*data, err);
  out << command << ": report: " << html << " (every run under " << out_dir
      << "; open it in a browser)\n";
  return true;
}

TimelineWriter::TimelineWriter(absl::string_view command, std::string path,
                               std::string header)
    : command_(command), path_(std::move(path)), header_(std::move(header)) {}

void TimelineWriter::Append(absl::string_view point, std::ostream& err) {
  absl::Status written = absl::OkStatus();
  if (!started_) written = MakeDirs(path_.substr(0, path_.rfind('/')));
  if (written.ok()) {
    written = AppendToFile(
        path_, started_ ? std::string(point) : absl::StrCat(header_, point));
  }
  if (!written.ok() && !failed_) {
    err << "ptxdiff " << command_ << ": " << written.message() << "\n";
  }
  failed_ = failed_ || !written.ok();
  started_ = started_ || written.ok();
}

int RunReport(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err) {
  const absl::StatusOr<ParsedArgs> parsed =
      ParseArgs(args, {}, {"dir", "html", "json"});
  if (!parsed.ok()) return Fail(err, "report", parsed.status());
  const absl::StatusOr<std::vector<ReportSource>> sources = SourcesOf(*parsed);
  if (!sources.ok()) return Fail(err, "report", sources.status());
  const std::string& first = (*sources)[0].out_dir;
  const std::string html = parsed->Get("html", first + "/report.html");
  const std::string json_path = parsed->Get("json", first + "/report.json");
  const absl::StatusOr<ReportData> data = ReadReport(*sources);
  if (!data.ok()) return Fail(err, "report", data.status());
  for (const std::string& note : data->notes) out << "report: " << note << "\n";
  SayDamage(*data, err);
  // A folder no campaign wrote is left as it was.
  if (data->implementations.empty()) {
    out << "report: no report written: no campaign's records to show\n";
    return 1;
  }
  if (absl::Status s = WriteReportFiles(*data, html, json_path); !s.ok())
    return Fail(err, "report", s);
  // Tuple implementations first, as the page shows them.
  for (const RunKind kind : {RunKind::kTuples, RunKind::kPrograms}) {
    for (const Implementation& impl : data->implementations) {
      if (impl.kind == kind) SayImplementation(impl, out);
    }
  }
  out << "report: " << html << " (open it in a browser; it needs nothing "
      << "else) and " << json_path << "\n";
  return 0;
}

}  // namespace ptxdiff
