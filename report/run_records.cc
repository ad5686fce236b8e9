#include "report/run_records.h"

#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kTimelineHeader =
    "# ptxdiff timeline 1: seconds tuples variants_reached "
    "variants_reached_runtime mismatches faults new_entries";
constexpr int kTimelineFields = 7;

constexpr absl::string_view kProgramTimelineHeader =
    "# ptxdiff program timeline 1: seconds programs judged_immediate "
    "judged_runtime disagreements faults new_entries";
constexpr absl::string_view kBackendLine = "# backend: ";
constexpr int kProgramTimelineFields = 7;

// A path longer than this is no path a run wrote.
constexpr size_t kMaxRecordedPathBytes = 4096;
// The most a record file may hold: a timeline gains ~50 bytes a progress
// line (a day at one a second: 4 MB), an outcome file ~100 bytes a variant
// and form (16 MB). A larger one is damage, not read.
constexpr size_t kMaxRecordBytes = size_t{64} << 20;

// The start time in "<prefix><unix time>-<pid>", 0 if the name has none.
int64_t StartOf(absl::string_view dir, absl::string_view prefix = "run-") {
  absl::string_view name = dir.substr(dir.rfind('/') + 1);
  int64_t start = 0;
  if (!absl::ConsumePrefix(&name, prefix) ||
      !absl::SimpleAtoi(name.substr(0, name.find('-')), &start)) {
    return 0;
  }
  return start;
}

bool ParsePoint(absl::string_view line, TimelinePoint& p) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
  return f.size() == kTimelineFields && absl::SimpleAtod(f[0], &p.seconds) &&
         absl::SimpleAtoi(f[1], &p.tuples) &&
         absl::SimpleAtoi(f[2], &p.variants_reached) &&
         absl::SimpleAtoi(f[3], &p.variants_reached_runtime) &&
         absl::SimpleAtoi(f[4], &p.mismatches) &&
         absl::SimpleAtoi(f[5], &p.faults) &&
         absl::SimpleAtoi(f[6], &p.new_entries);
}

// Gives `read` each line of the timeline `text` at `path` after its
// `header`; a line it cannot read is named in `damage`.
void ReadTimelineLines(const std::string& path, absl::string_view text,
                       absl::string_view header,
                       const std::function<bool(absl::string_view)>& read,
                       std::vector<std::string>& damage) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 0 && lines[i] == header) continue;
    if (!read(lines[i]) && bad++ == 0) first_bad = i + 1;
  }
  // One phrase a file, however many of its lines are bad.
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

void ReadTimeline(const std::string& path, RunRecord& run) {
  const absl::StatusOr<std::string> text =
      ReadRecordFile(path, kMaxRecordBytes);
  // A run stopped before its first progress line has none.
  if (absl::IsNotFound(text.status())) return;
  if (!text.ok()) {
    run.damage.push_back(std::string(text.status().message()));
    return;
  }
  ReadTimelineLines(
      path, *text, kTimelineHeader,
      [&](absl::string_view line) {
        TimelinePoint p;
        if (!ParsePoint(line, p)) return false;
        run.timeline.push_back(p);
        return true;
      },
      run.damage);
}

// Runs of either kind by start time, then directory.
template <typename Run>
void SortOldestFirst(std::vector<Run>& runs) {
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    return std::tie(a.started_unix, a.dir) < std::tie(b.started_unix, b.dir);
  });
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

bool ParseProgramPoint(absl::string_view line, ProgramTimelinePoint& p) {
  const std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
  return f.size() == kProgramTimelineFields &&
         absl::SimpleAtod(f[0], &p.seconds) &&
         absl::SimpleAtoi(f[1], &p.programs) &&
         absl::SimpleAtoi(f[2], &p.judged_immediate) &&
         absl::SimpleAtoi(f[3], &p.judged_runtime) &&
         absl::SimpleAtoi(f[4], &p.disagreements) &&
         absl::SimpleAtoi(f[5], &p.faults) &&
         absl::SimpleAtoi(f[6], &p.new_entries);
}

void ReadProgramTimeline(const std::string& path, ProgramRunRecord& run) {
  const absl::StatusOr<std::string> text =
      ReadRecordFile(path, kMaxRecordBytes);
  if (!text.ok()) {
    run.damage.push_back(std::string(text.status().message()));
    return;
  }
  ReadTimelineLines(
      path, *text, kProgramTimelineHeader,
      [&](absl::string_view line) {
        if (absl::ConsumePrefix(&line, kBackendLine)) {
          run.backend = std::string(line);
          return true;
        }
        ProgramTimelinePoint p;
        if (!ParseProgramPoint(line, p)) return false;
        run.timeline.push_back(p);
        return true;
      },
      run.damage);
  if (!run.backend.empty()) return;
  if (!run.damage.empty() && absl::StartsWith(run.damage.back(), path)) {
    absl::StrAppend(&run.damage.back(), "; it names no backend");
  } else {
    run.damage.push_back(absl::StrCat(path, ": it names no backend"));
  }
}

}  // namespace

std::string TimelineHeader() { return absl::StrCat(kTimelineHeader, "\n"); }

std::string FormatTimelinePoint(const TimelinePoint& p) {
  return absl::StrCat(absl::StrFormat("%.1f", p.seconds), "\t", p.tuples, "\t",
                      p.variants_reached, "\t", p.variants_reached_runtime,
                      "\t", p.mismatches, "\t", p.faults, "\t", p.new_entries,
                      "\n");
}

std::vector<RunRecord> ReadRuns(const std::string& out_dir) {
  std::vector<RunRecord> runs;
  for (const std::string& dir : FilesIn(out_dir + "/stats")) {
    if (StartOf(dir) == 0) continue;
    RunRecord run{.dir = dir, .started_unix = StartOf(dir)};
    ReadTimeline(absl::StrCat(dir, "/", kTimelineFile), run);
    for (const std::string& path : FilesIn(dir, ".outcomes"))
      ReadOutcomes(path, run);
    runs.push_back(std::move(run));
  }
  SortOldestFirst(runs);
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

std::string RecordedTriageDir(const std::string& out_dir) {
  std::string newest;
  int64_t newest_start = 0;
  for (const std::string& dir : FilesIn(out_dir + "/stats")) {
    const int64_t start =
        std::max(StartOf(dir), StartOf(dir, kProgramRunPrefix));
    const absl::StatusOr<std::string> recorded = ReadRecordFile(
        absl::StrCat(dir, "/", kRunTriageDirFile), kMaxRecordedPathBytes);
    if (!recorded.ok() || start < newest_start) continue;
    const absl::string_view path =
        absl::StripTrailingAsciiWhitespace(*recorded);
    if (path.empty() || absl::StrContains(path, '\n')) continue;
    newest = std::string(path);
    newest_start = start;
  }
  return newest;
}

std::string ProgramTimelineHeader(absl::string_view backend) {
  return absl::StrCat(kProgramTimelineHeader, "\n", kBackendLine, backend,
                      "\n");
}

std::string FormatProgramTimelinePoint(const ProgramTimelinePoint& p) {
  return absl::StrCat(absl::StrFormat("%.1f", p.seconds), "\t", p.programs,
                      "\t", p.judged_immediate, "\t", p.judged_runtime, "\t",
                      p.disagreements, "\t", p.faults, "\t", p.new_entries,
                      "\n");
}

std::vector<ProgramRunRecord> ReadProgramRuns(const std::string& out_dir) {
  std::vector<ProgramRunRecord> runs;
  for (const std::string& dir : FilesIn(out_dir + "/stats")) {
    const int64_t start = StartOf(dir, kProgramRunPrefix);
    if (start == 0) continue;
    ProgramRunRecord run{.dir = dir, .started_unix = start};
    ReadProgramTimeline(absl::StrCat(dir, "/", kProgramTimelineFile), run);
    runs.push_back(std::move(run));
  }
  SortOldestFirst(runs);
  return runs;
}

}  // namespace ptxdiff
