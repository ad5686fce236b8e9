#include "report/report_data.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "isa/family_table.h"
#include "isa/isa_tables.h"
#include "isa/spelling_table.h"
#include "program/program.h"

namespace ptxdiff {
namespace {

// A case.txt is a few lines; a program's or a tool's output tail can be
// long, and 80 of them must not make the page heavy.
constexpr size_t kMaxCaseBytes = 4096;
// The most of an entry's file read to show its start: more is damage
// (triage/entry_files.h has the same bound), said instead.
constexpr size_t kMaxEntryFileBytes = size_t{16} << 20;

Implementation NewImplementation(const RunRecord& run,
                                 const ReportSource& source) {
  Implementation impl{.kind = run.kind,
                      .backend = run.backend,
                      .out_dir = source.out_dir,
                      .triage_dir = source.triage_dir};
  if (run.kind == RunKind::kPrograms) return impl;
  const size_t n = AllVariants().size();
  impl.counts.assign(n * kNumTupleForms, OutcomeCounts{});
  impl.supported.assign(n, false);
  impl.reason_of.assign(n, -1);
  return impl;
}

// Adds one process's outcome file; rows of variants this build does not
// know (a table since changed) are counted in `unknown`.
void AddOutcomes(const OutcomeFile& file, Implementation& impl,
                 std::map<std::string, int32_t>& reason_index,
                 int64_t& unknown) {
  for (const OutcomeFile::Row& row : file.rows) {
    const Variant* v = VariantSpelled(row.spelling);
    const int index = v != nullptr ? VariantIndex(*v) : -1;
    if (index < 0) {
      ++unknown;
      continue;
    }
    const int form = static_cast<int>(row.form);
    if (IsProgramForm(row.form)) {
      OutcomeCounts& sum = impl.program_counts[index][form - kNumTupleForms];
      for (int o = 0; o < kNumOutcomes; ++o) sum[o] += row.counts[o];
      continue;  // a program's variant is not one the tuples reach
    }
    if (impl.supported.empty()) continue;  // a programs run's: none are
    impl.supported[index] = true;
    OutcomeCounts& sum = impl.counts[index * kNumTupleForms + form];
    for (int o = 0; o < kNumOutcomes; ++o) sum[o] += row.counts[o];
    if (!row.decline_reason.empty()) {
      auto [it, is_new] = reason_index.try_emplace(
          row.decline_reason, static_cast<int32_t>(impl.reasons.size()));
      if (is_new) impl.reasons.push_back(row.decline_reason);
      impl.reason_of[index] = it->second;  // runs are read oldest first
    }
  }
}

// The implementations one source's runs were against, in order of their
// first run. A tuple run without an outcome record that reads is left out:
// said in `notes`, and its damaged records in `damage`.
std::vector<Implementation> ImplementationsOf(const ReportSource& source,
                                              std::vector<std::string>& notes,
                                              std::vector<std::string>& damage) {
  std::vector<Implementation> impls;
  std::vector<std::map<std::string, int32_t>> reason_indices;
  int64_t runs_unrecorded = 0, runs_without = 0, runs_damaged = 0;
  int64_t unknown = 0;
  // A run's outcomes are summed as it is read, never all runs' at once.
  ForEachRun(source.out_dir, [&](RunRecord& run) {
    if (run.kind == RunKind::kTuples && run.outcomes.empty()) {
      // Damaged records are damage, not the records of an older ptxdiff;
      // a run with no record at all, of either kind (its timeline empty
      // says no kind), stopped before its first.
      ++(!run.damage.empty()    ? runs_damaged
         : run.timeline.empty() ? runs_unrecorded
                                : runs_without);
      damage.insert(damage.end(), run.damage.begin(), run.damage.end());
      return;
    }
    auto it = std::find_if(impls.begin(), impls.end(), [&](const auto& i) {
      return i.kind == run.kind && i.backend == run.backend;
    });
    if (it == impls.end()) {
      impls.push_back(NewImplementation(run, source));
      reason_indices.emplace_back();
      it = impls.end() - 1;
    }
    for (const OutcomeFile& file : run.outcomes)
      AddOutcomes(file, *it, reason_indices[it - impls.begin()], unknown);
    it->damage.insert(it->damage.end(), run.damage.begin(), run.damage.end());
    it->runs.push_back({.dir = run.dir,
                        .started_unix = run.started_unix,
                        .timeline = std::move(run.timeline)});
  });
  // "OUT: 2 runs have <what>: not in the report", where there are any.
  const auto runs_left_out = [&](int64_t runs, absl::string_view what) {
    if (runs == 0) return;
    notes.push_back(absl::StrCat(source.out_dir, ": ", runs,
                                 runs == 1 ? " run has " : " runs have ", what,
                                 ": not in the report"));
  };
  if (runs_unrecorded > 0) {
    notes.push_back(absl::StrCat(
        source.out_dir, ": ", runs_unrecorded,
        runs_unrecorded == 1 ? " run stopped before its first record"
                             : " runs stopped before their first record",
        " (stopped at once, or a full disk): not in the report"));
  }
  runs_left_out(runs_without,
                "no outcome records (runs of an older ptxdiff, or stopped "
                "before their first write)");
  runs_left_out(runs_damaged,
                "no outcome record that can be read (damaged records, each "
                "said)");
  if (unknown > 0) {
    notes.push_back(absl::StrCat(
        source.out_dir, ": ", unknown,
        " outcome lines name variants this ptxdiff does not have (written by "
        "another version): left out"));
  }
  return impls;
}

// When an entry was first filed, in unix seconds; nullopt if its meta.txt
// does not say.
std::optional<int64_t> FirstSeenUnix(const EntryInfo& e) {
  const auto it = e.meta.find("first_seen");
  absl::Time t;
  std::string error;
  if (it == e.meta.end() ||
      !absl::ParseTime("%Y-%m-%dT%H:%M:%SZ", it->second, &t, &error))
    return std::nullopt;
  return absl::ToUnixSeconds(t);
}

// Of the implementations that ran programs on an entry's backend (program
// campaigns, and tuple campaigns with a program lane: `fuzz --programs`),
// the one whose latest run started by the time the entry was first filed:
// the run that filed it (the twentieth fault run: a `programs` run was
// given the entries of the `fuzz --programs` runs before it). Without a
// time, a program campaign before a lane.
Implementation* ProgramFiler(std::vector<Implementation*> ran_programs,
                             std::optional<int64_t> first_seen) {
  if (ran_programs.empty()) return nullptr;
  Implementation* filer = nullptr;
  int64_t latest_start = 0;
  for (Implementation* impl : ran_programs) {
    for (const Implementation::Run& run : impl->runs) {
      if (first_seen.has_value() && run.started_unix <= *first_seen &&
          (filer == nullptr || run.started_unix >= latest_start)) {
        filer = impl;
        latest_start = run.started_unix;
      }
    }
  }
  if (filer != nullptr) return filer;
  for (Implementation* impl : ran_programs)
    if (impl->kind == RunKind::kPrograms) return impl;
  return ran_programs.front();
}

// Gives each entry to the implementation of its backend and kind; the rest
// to `others`. A tuple entry no tuple campaign of its backend made was filed
// by a program campaign (a program minimized to one instruction is filed as
// its tuple: program/one_step_finding.h), and is listed with its programs.
// A program's entry goes to the campaign that filed it (ProgramFiler).
void RouteEntries(std::vector<EntryInfo> entries,
                  std::vector<Implementation>& impls,
                  std::vector<EntryInfo>& others) {
  for (EntryInfo& e : entries) {
    const auto backend = e.meta.find("backend");
    const auto made_by = [&](RunKind kind) {
      return std::find_if(impls.begin(), impls.end(), [&](const auto& i) {
        return i.kind == kind && backend != e.meta.end() &&
               backend->second == i.backend;
      });
    };
    const auto tuples = made_by(RunKind::kTuples);
    const auto programs = made_by(RunKind::kPrograms);
    std::vector<EntryInfo>* to = &others;
    if (NamesAProgram(e.signature)) {
      std::vector<Implementation*> ran_programs;
      for (Implementation& i : impls) {
        const bool lane =
            i.kind == RunKind::kTuples && !i.program_counts.empty();
        if (backend != e.meta.end() && backend->second == i.backend &&
            (i.kind == RunKind::kPrograms || lane))
          ran_programs.push_back(&i);
      }
      if (Implementation* filer = ProgramFiler(ran_programs, FirstSeenUnix(e)))
        to = &filer->entries;
    } else if (tuples != impls.end()) {
      to = &tuples->entries;
    } else if (programs != impls.end()) {
      to = &programs->entries;
    }
    to->push_back(std::move(e));
  }
}

// --- JSON ------------------------------------------------------------------

}  // namespace

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

// Counts with their trailing zeros left out: most variants have one or two
// outcomes, and 80,000 of them must stay a few MB.
std::string CountsJson(const OutcomeCounts& c) {
  int last = kNumOutcomes;
  while (last > 0 && c[last - 1] == 0) --last;
  return absl::StrCat("[", absl::StrJoin(c.begin(), c.begin() + last, ","),
                      "]");
}

std::string VariantJson(const Implementation& impl, size_t v) {
  if (!impl.supported[v]) return "0";
  std::string json =
      absl::StrCat("[", CountsJson(impl.counts[v * kNumTupleForms]), ",",
                   CountsJson(impl.counts[v * kNumTupleForms + 1]));
  if (impl.reason_of[v] >= 0) absl::StrAppend(&json, ",", impl.reason_of[v]);
  return json + "]";
}

// A long text cut to kMaxCaseBytes, saying where the rest is.
std::string Cut(std::string text, absl::string_view file) {
  if (text.size() <= kMaxCaseBytes) return text;
  text.resize(kMaxCaseBytes);
  return absl::StrCat(text, "\n... (the rest is in ", file, ")");
}

// What a crash's or hang's tool printed last: its entry's output file, or
// for an entry filed before there was one, what its case's detail quotes.
std::string FaultOutputOf(const std::string& dir, absl::string_view case_text) {
  // As a record: a FIFO there would block the report for ever.
  absl::StatusOr<std::string> kept = ReadRecordFile(
      absl::StrCat(dir, "/", kFaultOutputFile), kMaxEntryFileBytes);
  if (kept.ok()) return Cut(*std::move(kept), kFaultOutputFile);
  if (!absl::IsNotFound(kept.status())) {
    return absl::StrCat("(", kept.status().message(), ")");
  }
  for (absl::string_view line : absl::StrSplit(case_text, '\n')) {
    if (absl::ConsumePrefix(&line, "detail: "))
      return FaultOutput(absl::StrReplaceAll(line, {{" | ", "\n"}}));
  }
  return "";
}

std::string EntryJson(const std::string& triage_dir, const EntryInfo& e) {
  const auto meta = [&](const std::string& key) {
    auto it = e.meta.find(key);
    return JsonString(it == e.meta.end() ? "" : it->second);
  };
  const std::string dir = absl::StrCat(triage_dir, "/", e.name);
  absl::StatusOr<std::string> read =
      ReadRecordFile(dir + "/case.txt", kMaxEntryFileBytes);
  const std::string case_text =
      read.ok() ? Cut(*std::move(read), "case.txt")
                : absl::IsNotFound(read.status())
                      ? ""
                      : absl::StrCat("(", read.status().message(), ")");
  const bool fault = e.signature.kind != FindingKind::kValueMismatch;
  return absl::StrCat(
      "{\"name\":", JsonString(e.name),
      ",\"kind\":", JsonString(FindingKindName(e.signature.kind)),
      ",\"variant\":", JsonString(e.signature.spelling),
      ",\"class\":", JsonString(e.signature.disagreement_class),
      ",\"count\":", JsonString(e.CountText()),
      ",\"first_seen\":", meta("first_seen"),
      ",\"last_seen\":", meta("last_seen"), ",\"cause\":", meta("cause"),
      ",\"obtained\":", meta("obtained"), ",\"explained\":", meta("explained"),
      ",\"how\":", meta("how"),
      ",\"output\":", JsonString(fault ? FaultOutputOf(dir, case_text) : ""),
      ",\"damage\":", JsonString(absl::StrJoin(e.damage, "; ")),
      ",\"case\":", JsonString(case_text),
      ",\"repro\":", JsonString(absl::StrCat("ptxdiff repro '", dir, "'")),
      "}");
}

std::string FindingsJson(const std::string& triage_dir,
                         const std::vector<EntryInfo>& entries) {
  std::vector<std::string> causes;
  for (const RootCause& cause : GroupByRootCause(entries)) {
    std::vector<std::string> listed;
    for (const EntryInfo* e : cause.entries)
      listed.push_back(EntryJson(triage_dir, *e));
    causes.push_back(absl::StrCat(
        "{\"kind\":", JsonString(FindingKindName(cause.kind)),
        ",\"spelling\":", JsonString(cause.spelling),
        ",\"words\":", JsonString(CauseInWords(cause)),
        ",\"count\":", cause.count,
        ",\"explained\":", cause.explained() ? "true" : "false",
        ",\"entries\":[", absl::StrJoin(listed, ","), "]}"));
  }
  return absl::StrCat("[", absl::StrJoin(causes, ","), "]");
}

// A run's smoothed rate (SmoothedRate) as [[seconds, per second], ...].
std::string RateJson(const std::vector<std::pair<double, int64_t>>& totals) {
  std::vector<std::string> rows;
  for (const RatePoint& r : SmoothedRate(totals)) {
    rows.push_back(absl::StrFormat("[%.1f,%.1f]", r.seconds, r.per_second));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ","), "]");
}

// The cases checked so far at each point: what the rate is of.
std::vector<std::pair<double, int64_t>> Checked(
    const std::vector<TimelinePoint>& points) {
  std::vector<std::pair<double, int64_t>> out;
  for (const TimelinePoint& p : points) out.emplace_back(p.seconds, p.checked);
  return out;
}

std::string TimelineJson(RunKind kind,
                         const std::vector<TimelinePoint>& points) {
  std::vector<std::string> rows;
  for (const TimelinePoint& p : points) {
    rows.push_back(absl::StrCat("[", absl::StrFormat("%.1f", p.seconds), ",",
                                absl::StrJoin(TimelineCounts(kind, p), ","),
                                "]"));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ","), "]");
}

// The programs that held each variant, by VariantIndex: {"index": [with
// immediate inputs, with runtime inputs]}; "" when no program lane ran.
std::string ProgramVariantsJson(const Implementation& impl) {
  if (impl.program_counts.empty()) return "";
  std::vector<std::string> rows;
  for (const auto& [index, counts] : impl.program_counts) {
    rows.push_back(absl::StrCat("\"", index, "\":[", CountsJson(counts[0]), ",",
                                CountsJson(counts[1]), "]"));
  }
  return absl::StrCat(",\"program_variants\":{", absl::StrJoin(rows, ","), "}");
}

// A program implementation has no tuples' outcomes: their fields are left
// out.
std::string ImplementationJson(const Implementation& impl) {
  std::vector<std::string> runs, reasons, variants, damage;
  for (const Implementation::Run& r : impl.runs) {
    runs.push_back(absl::StrCat(
        "{\"dir\":", JsonString(r.dir), ",\"started_unix\":", r.started_unix,
        ",\"timeline\":", TimelineJson(impl.kind, r.timeline),
        ",\"rate\":", RateJson(Checked(r.timeline)), "}"));
  }
  for (const std::string& r : impl.reasons) reasons.push_back(JsonString(r));
  for (size_t v = 0; v < impl.supported.size(); ++v)
    variants.push_back(VariantJson(impl, v));
  for (const std::string& d : impl.damage) damage.push_back(JsonString(d));
  const std::string outcomes =
      impl.kind == RunKind::kPrograms
          ? ProgramVariantsJson(impl)
          : absl::StrCat(",\"reasons\":[", absl::StrJoin(reasons, ","),
                         "],\"variants\":[", absl::StrJoin(variants, ","), "]",
                         ProgramVariantsJson(impl));
  return absl::StrCat(
      "{\"backend\":", JsonString(impl.backend),
      ",\"out_dir\":", JsonString(impl.out_dir),
      ",\"triage_dir\":", JsonString(impl.triage_dir), ",\"runs\":[",
      absl::StrJoin(runs, ","), "]", outcomes,
      ",\"findings\":", FindingsJson(impl.triage_dir, impl.entries),
      ",\"damage\":[", absl::StrJoin(damage, ","), "]}");
}

std::string TableJson() {
  std::vector<std::string> families, variants;
  size_t first = 0;
  for (int f = 0; f < kNumFamilies; ++f) {
    const size_t n = VariantsOf(static_cast<Family>(f)).size();
    families.push_back(absl::StrCat(
        "{\"name\":", JsonString(OpcodeOf(static_cast<Family>(f))),
        ",\"first\":", first, ",\"count\":", n, "}"));
    first += n;
  }
  const IsaTables& tables = TheIsaTables();
  for (size_t v = 0; v < tables.variants.size(); ++v)
    variants.push_back(JsonString(tables.SpellingAt(v)));
  std::vector<std::string> outcomes, forms;
  for (absl::string_view o : kOutcomeNames) outcomes.push_back(JsonString(o));
  for (absl::string_view f : kOutcomeFormNames) forms.push_back(JsonString(f));
  return absl::StrCat("\"outcomes\":[", absl::StrJoin(outcomes, ","),
                      "],\"forms\":[", absl::StrJoin(forms, ","),
                      "],\"families\":[", absl::StrJoin(families, ","),
                      "],\"variants\":[", absl::StrJoin(variants, ","), "]");
}

}  // namespace

std::vector<RatePoint> SmoothedRate(
    const std::vector<std::pair<double, int64_t>>& totals) {
  // The start, then the points that move forward in time.
  std::vector<std::pair<double, int64_t>> points = {{0, 0}};
  for (const auto& p : totals) {
    if (p.first > points.back().first) points.push_back(p);
  }
  std::vector<double> gaps;
  for (size_t i = 1; i < points.size(); ++i)
    gaps.push_back(points[i].first - points[i - 1].first);
  if (gaps.empty()) return {};
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  const double window = std::max(
      kRateWindowSeconds, kRateWindowIntervals * gaps[gaps.size() / 2]);
  std::vector<RatePoint> out;
  size_t from = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    while (points[i].first - points[from].first > window && from + 1 < i)
      ++from;
    const auto& [t0, n0] = points[from];
    const auto& [t1, n1] = points[i];
    out.push_back({t1, static_cast<double>(n1 - n0) / (t1 - t0)});
  }
  return out;
}

absl::StatusOr<ReportData> ReadReport(const std::vector<ReportSource>& sources) {
  ReportData data;
  for (const ReportSource& source : sources) {
    if (FilesIn(source.out_dir).empty()) {
      return absl::NotFoundError(absl::StrCat(
          source.out_dir, " is not a campaign's --out directory (it is "
                          "missing, empty or unreadable)"));
    }
    std::vector<Implementation> impls =
        ImplementationsOf(source, data.notes, data.damage);
    const std::string stats = source.out_dir + "/stats";
    struct stat st;
    if (impls.empty() && stat(stats.c_str(), &st) == 0 &&
        !S_ISDIR(st.st_mode)) {
      // Said as what it is (the fifteenth fault run: "no run with records").
      data.damage.push_back(
          absl::StrCat(stats, " is not a directory: no run's records read"));
    } else if (impls.empty()) {
      data.notes.push_back(absl::StrCat(
          source.out_dir, ": no run with records (run `ptxdiff fuzz --out ",
          source.out_dir, "` or `ptxdiff programs --out ", source.out_dir,
          "` first)"));
    }
    std::vector<EntryInfo> entries;
    if (absl::StatusOr<TriageStore> store =
            TriageStore::Open(source.triage_dir, /*create=*/false,
                              CheckProgramText);
        store.ok()) {
      absl::StatusOr<std::vector<EntryInfo>> listed = store->List();
      if (!listed.ok()) return listed.status();
      entries = *std::move(listed);
    } else {
      data.notes.push_back(absl::StrCat(source.triage_dir,
                                        ": no triage directory there, so no "
                                        "findings are shown for ",
                                        source.out_dir));
    }
    if (!source.also_recorded.empty()) {
      data.notes.push_back(absl::StrCat(
          source.out_dir,
          ": older runs filed in other triage directories "
          "too, not shown here: ",
          absl::StrJoin(source.also_recorded, ", "), " (`ptxdiff report ",
          source.out_dir, " --dir DIR` shows one)"));
    }
    ReportData::OtherEntries others{.triage_dir = source.triage_dir};
    RouteEntries(std::move(entries), impls, others.entries);
    if (!others.entries.empty()) data.other_entries.push_back(std::move(others));
    for (ToolRefusals& t : ReadToolRefusals(source.out_dir, data.damage))
      data.refusals.push_back(std::move(t));
    for (Implementation& i : impls)
      data.implementations.push_back(std::move(i));
  }
  return data;
}

std::string ReportJson(const ReportData& data) {
  std::vector<std::string> impls, program_impls, others, notes;
  for (const Implementation& i : data.implementations) {
    (i.kind == RunKind::kTuples ? impls : program_impls)
        .push_back(ImplementationJson(i));
  }
  for (const ReportData::OtherEntries& o : data.other_entries) {
    others.push_back(absl::StrCat("{\"triage_dir\":", JsonString(o.triage_dir),
                                  ",\"findings\":",
                                  FindingsJson(o.triage_dir, o.entries), "}"));
  }
  for (const std::string& n : data.notes) notes.push_back(JsonString(n));
  std::vector<std::string> damage;
  for (const std::string& d : data.damage) damage.push_back(JsonString(d));
  return absl::StrCat(
      "{\"version\":1,\"generated_unix\":", absl::ToUnixSeconds(absl::Now()),
      ",", TableJson(), ",\"implementations\":[", absl::StrJoin(impls, ","),
      "],\"program_implementations\":[", absl::StrJoin(program_impls, ","),
      "],\"other_findings\":[", absl::StrJoin(others, ","),
      "],\"refusals\":", ToolRefusalsJson(data.refusals), ",\"notes\":[",
      absl::StrJoin(notes, ","), "],\"damage\":[", absl::StrJoin(damage, ","),
      "]}\n");
}

}  // namespace ptxdiff
