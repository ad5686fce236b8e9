#include "report/run_records.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

// The headers a timeline may open with, and the kind of run each says.
// Each kind's columns are in one order in every version: seconds, checked,
// the kind's own two counts, disagreements, faults, new entries. Version 1
// had no kind in its header: a program run's was its own file's (see
// kRunDirForms).
struct Header {
  absl::string_view text;
  RunKind kind;
};
constexpr Header kHeaders[] = {
    {"# ptxdiff timeline 2 (tuples): seconds checked variants_reached "
     "variants_reached_runtime disagreements faults new_entries",
     RunKind::kTuples},
    {"# ptxdiff timeline 2 (programs): seconds checked judged_immediate "
     "judged_runtime disagreements faults new_entries",
     RunKind::kPrograms},
    {"# ptxdiff timeline 1: seconds tuples variants_reached "
     "variants_reached_runtime mismatches faults new_entries",
     RunKind::kTuples},
    {"# ptxdiff program timeline 1: seconds programs judged_immediate "
     "judged_runtime disagreements faults new_entries",
     RunKind::kPrograms},
};
constexpr absl::string_view kBackendLine = "# backend: ";

// Where a run directory is, and what it holds: today's `run-`, and the
// `programs-` of a program run of version 1, whose timeline was its own
// file.
struct RunDirForm {
  absl::string_view prefix;
  RunKind kind;  // until its timeline says
  absl::string_view timeline_file;
};
constexpr RunDirForm kRunDirForms[] = {
    {"run-", RunKind::kTuples, kTimelineFile},
    {"programs-", RunKind::kPrograms, "programs.tsv"},
};

// A path longer than this is no path a run wrote.
constexpr size_t kMaxRecordedPathBytes = 4096;
// The most a record file may hold: a timeline gains ~50 bytes a progress
// line (a day at one a second: 4 MB), an outcome file ~100 bytes a variant
// and form (16 MB). A larger one is damage, not read.
constexpr size_t kMaxRecordBytes = size_t{64} << 20;

// A point of a `kind` run from its line, in the order of TimelineCounts.
// Its time is finite and its counts are not negative, as a run writes them:
// "nan" or "inf" (which SimpleAtod takes) would be written into report.json
// as such, which is no JSON, and the page would show nothing.
bool ReadPoint(absl::string_view line, RunKind kind, TimelinePoint& p) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
  std::array<int64_t, kTimelineCounts> c;
  if (f.size() != c.size() + 1 || !absl::SimpleAtod(f[0], &p.seconds) ||
      !std::isfinite(p.seconds) || p.seconds < 0)
    return false;
  for (size_t i = 0; i < c.size(); ++i) {
    if (!absl::SimpleAtoi(f[i + 1], &c[i]) || c[i] < 0) return false;
  }
  p.checked = c[0];
  if (kind == RunKind::kTuples) {
    p.variants_reached = c[1];
    p.variants_reached_runtime = c[2];
  } else {
    p.judged_immediate = c[1];
    p.judged_runtime = c[2];
  }
  p.disagreements = c[3];
  p.faults = c[4];
  p.new_entries = c[5];
  return true;
}

// Whether `line` is a timeline's header; if it is, the kind it says.
bool ReadHeader(absl::string_view line, RunKind& kind) {
  for (const Header& header : kHeaders) {
    if (header.text != line) continue;
    kind = header.kind;
    return true;
  }
  return false;
}

// Names the lines of `path` that are no timeline point: one phrase a file,
// however many of its lines are bad.
void SayBadLines(const std::string& path, size_t bad, size_t first_bad,
                 std::vector<std::string>& damage) {
  if (bad == 1) {
    damage.push_back(
        absl::StrCat(path, ": line ", first_bad, " is no timeline point"));
  } else if (bad > 1) {
    damage.push_back(absl::StrCat(path, ": ", bad,
                                  " lines are no timeline points (the first: "
                                  "line ",
                                  first_bad, ")"));
  }
}

// Reads the run's kind, backend and points from its timeline `text` at
// `path`. A file without a header (damaged: every version wrote one) is
// read as its directory's kind.
void ReadTimelineText(const std::string& path, absl::string_view text,
                      RunRecord& run) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (i == 0 && ReadHeader(line, run.kind)) continue;
    if (absl::ConsumePrefix(&line, kBackendLine)) {
      if (run.backend.empty()) run.backend = std::string(line);
      continue;
    }
    TimelinePoint p;
    if (ReadPoint(line, run.kind, p)) {
      run.timeline.push_back(p);
    } else if (bad++ == 0) {
      first_bad = i + 1;
    }
  }
  SayBadLines(path, bad, first_bad, run.damage);
}

void ReadTimeline(const std::string& path, RunRecord& run) {
  const absl::StatusOr<std::string> text =
      ReadRecordFile(path, kMaxRecordBytes);
  // A tuple run stopped before its first progress line has none.
  if (absl::IsNotFound(text.status()) && run.kind == RunKind::kTuples) return;
  if (!text.ok()) {
    run.damage.push_back(std::string(text.status().message()));
    return;
  }
  ReadTimelineText(path, *text, run);
  // A program run's timeline is all that says its backend.
  if (run.kind != RunKind::kPrograms || !run.backend.empty()) return;
  if (!run.damage.empty() && absl::StartsWith(run.damage.back(), path)) {
    absl::StrAppend(&run.damage.back(), "; it names no backend");
  } else {
    run.damage.push_back(absl::StrCat(path, ": it names no backend"));
  }
}

void ReadOutcomes(const std::string& path, RunRecord& run) {
  const absl::StatusOr<std::string> text =
      ReadRecordFile(path, kMaxRecordBytes);
  if (!text.ok()) {
    run.damage.push_back(std::string(text.status().message()));
    return;
  }
  absl::StatusOr<OutcomeFile> file = ParseOutcomeFile(*text);
  if (!file.ok()) {
    run.damage.push_back(absl::StrCat(path, ": ", file.status().message()));
    return;
  }
  for (const std::string& d : file->damage)
    run.damage.push_back(absl::StrCat(path, ": ", d));
  if (run.backend.empty()) run.backend = file->backend;
  run.outcomes.push_back(*std::move(file));
}

// The triage directory the run in `run_dir` recorded; NotFound where it
// recorded none (a run of an older version), else why it is no one path.
absl::StatusOr<std::string> RecordedTriageDirOf(const std::string& run_dir) {
  const std::string path = absl::StrCat(run_dir, "/", kRunTriageDirFile);
  PTXDIFF_ASSIGN_OR_RETURN(const std::string text,
                           ReadRecordFile(path, kMaxRecordedPathBytes));
  const absl::string_view recorded = absl::StripTrailingAsciiWhitespace(text);
  if (recorded.empty() || absl::StrContains(recorded, '\n')) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not one directory's path"));
  }
  return std::string(recorded);
}

// A record of the triage directory that is there but cannot be read (a
// FIFO, a link to a device, past its bound) or holds no one path is the
// run's damage (the twelfth fault run: skipped without a word, the report
// fell back to out/triage).
void ReadTriageDirRecord(const std::string& run_dir, RunRecord& run) {
  const absl::StatusOr<std::string> dir = RecordedTriageDirOf(run_dir);
  if (!dir.ok() && !absl::IsNotFound(dir.status()))
    run.damage.push_back(std::string(dir.status().message()));
}

// The form of the run directory `dir` and its start time; null and 0 for a
// directory no run made.
const RunDirForm* RunDirFormOf(absl::string_view dir, int64_t& started_unix) {
  for (const RunDirForm& form : kRunDirForms) {
    absl::string_view name = dir.substr(dir.rfind('/') + 1);
    int64_t start = 0;
    if (absl::ConsumePrefix(&name, form.prefix) &&
        absl::SimpleAtoi(name.substr(0, name.find('-')), &start) && start > 0) {
      started_unix = start;
      return &form;
    }
  }
  started_unix = 0;
  return nullptr;
}

}  // namespace

std::string TimelineHeader(RunKind kind, absl::string_view backend) {
  std::string header =
      absl::StrCat(kHeaders[kind == RunKind::kTuples ? 0 : 1].text, "\n");
  if (!backend.empty()) absl::StrAppend(&header, kBackendLine, backend, "\n");
  return header;
}

std::array<int64_t, kTimelineCounts> TimelineCounts(RunKind kind,
                                                    const TimelinePoint& p) {
  const bool tuples = kind == RunKind::kTuples;
  const std::optional<int64_t>& first =
      tuples ? p.variants_reached : p.judged_immediate;
  const std::optional<int64_t>& second =
      tuples ? p.variants_reached_runtime : p.judged_runtime;
  return {p.checked,       first.value_or(0), second.value_or(0),
          p.disagreements, p.faults,          p.new_entries};
}

std::string FormatTimelinePoint(RunKind kind, const TimelinePoint& point) {
  return absl::StrCat(absl::StrFormat("%.1f", point.seconds), "\t",
                      absl::StrJoin(TimelineCounts(kind, point), "\t"), "\n");
}

void ForEachRun(const std::string& out_dir,
                absl::FunctionRef<void(RunRecord&)> visit) {
  struct RunDir {
    int64_t started_unix;
    std::string dir;
    const RunDirForm* form;
  };
  std::vector<RunDir> dirs;
  for (std::string& dir : FilesIn(out_dir + "/stats")) {
    int64_t started_unix = 0;
    const RunDirForm* form = RunDirFormOf(dir, started_unix);
    if (form != nullptr) dirs.push_back({started_unix, std::move(dir), form});
  }
  std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.started_unix, a.dir) < std::tie(b.started_unix, b.dir);
  });
  // Read one at a time: a run's outcome records are ~15 MB in memory, and
  // an OUT may hold a thousand runs.
  for (const RunDir& d : dirs) {
    RunRecord run{
        .dir = d.dir, .started_unix = d.started_unix, .kind = d.form->kind};
    for (const std::string& path : FilesIn(d.dir, ".outcomes"))
      ReadOutcomes(path, run);
    ReadTimeline(absl::StrCat(d.dir, "/", d.form->timeline_file), run);
    ReadTriageDirRecord(d.dir, run);
    visit(run);
  }
}

std::vector<RunRecord> ReadRuns(const std::string& out_dir) {
  std::vector<RunRecord> runs;
  ForEachRun(out_dir, [&](RunRecord& run) { runs.push_back(std::move(run)); });
  return runs;
}

absl::Status RecordTriageDir(const std::string& run_dir,
                             const std::string& triage_dir) {
  std::string absolute = triage_dir;
  if (!absl::StartsWith(triage_dir, "/")) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) {
      return absl::InternalError("cannot tell the working directory");
    }
    absolute = absl::StrCat(cwd, "/", triage_dir);
  }
  return WriteFileAtomic(absl::StrCat(run_dir, "/", kRunTriageDirFile),
                         absl::StrCat(absolute, "\n"));
}

std::vector<std::string> RecordedTriageDirs(const std::string& out_dir) {
  std::vector<std::pair<int64_t, std::string>> recorded;  // start, path
  for (const std::string& dir : FilesIn(out_dir + "/stats")) {
    int64_t start = 0;
    RunDirFormOf(dir, start);
    absl::StatusOr<std::string> path = RecordedTriageDirOf(dir);
    if (path.ok()) recorded.emplace_back(start, *std::move(path));
  }
  // Newest first; of runs that started in one second, the last listed.
  std::reverse(recorded.begin(), recorded.end());
  std::stable_sort(
      recorded.begin(), recorded.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> dirs;
  for (const auto& [start, path] : recorded) {
    if (absl::c_find(dirs, path) == dirs.end()) dirs.push_back(path);
  }
  return dirs;
}

std::string RecordedTriageDir(const std::string& out_dir) {
  const std::vector<std::string> dirs = RecordedTriageDirs(out_dir);
  return dirs.empty() ? "" : dirs.front();
}

}  // namespace ptxdiff
