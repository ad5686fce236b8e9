// `ptxdiff programs` (a campaign of random programs) and `ptxdiff minimize`
// of a program case: program_command.h.

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "campaign/outcome_table.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/program_command.h"
#include "cli/report_command.h"
#include "cli/triage_commands.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/program_backends.h"
#include "program/program_campaign.h"
#include "program/program_encoding.h"
#include "program/program_lane.h"
#include "report/run_records.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

// A finding could not be filed, or nothing was checked: as `fuzz`.
constexpr int kExitDisagree = 1;

absl::StatusOr<ProgramCampaignOptions> CampaignOptions(const ParsedArgs& args) {
  ProgramCampaignOptions o;
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t seconds, MaxTimeFlag(args, 60));
  o.max_time = absl::Seconds(seconds);
  PTXDIFF_ASSIGN_OR_RETURN(
      const int64_t threads,
      IntFlag(args, "threads",
              std::max(1u, std::thread::hardware_concurrency()), 1, 64));
  o.threads = static_cast<int>(threads);
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t seed,
                           IntFlag(args, "seed", 1, 0, INT64_MAX));
  o.seed = static_cast<uint64_t>(seed);
  PTXDIFF_ASSIGN_OR_RETURN(o.reading, ReadingFlag(args));
  o.triage_dir = args.Get("dir", DefaultTriageDir());
  for (const std::string& list : args.All("suppress")) {
    for (absl::string_view spelling :
         absl::StrSplit(list, ',', absl::SkipEmpty())) {
      if (!ParseVariant(spelling).ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--suppress ", spelling, ": not an instruction variant"));
      }
      o.shape.suppressed.emplace_back(spelling);
    }
  }
  return o;
}

// What the pending journal gave the run and keeps for the next.
std::string PendingLines(const ProgramCampaignOptions& o,
                         const ProgramCampaignReport& r) {
  std::string out;
  if (r.adopted > 0) {
    absl::StrAppend(&out, "programs: ", r.adopted,
                    r.adopted == 1 ? " finding" : " findings",
                    " an earlier run left in ", o.triage_dir,
                    "/.pending/ taken up first\n");
  }
  // Of this backend's findings not filed, those the journal holds (a full
  // disk may have kept it from writing some: said below).
  const int64_t kept =
      std::max<int64_t>(0, r.pending - r.other_backend - r.unjournaled);
  if (r.pending > r.other_backend) {
    const int64_t n = r.pending - r.other_backend;
    absl::StrAppend(&out, "programs: ", n,
                    n == 1 ? " finding was" : " findings were",
                    " not filed before the run ended");
    if (kept > 0) {
      absl::StrAppend(
          &out, "; ", o.triage_dir, "/.pending/ keeps ",
          kept == n ? (n == 1 ? "it" : "them") : absl::StrCat(kept, " of them"),
          ", and the next run on this directory files ",
          kept == 1 ? "it" : "them");
    }
    absl::StrAppend(&out, "\n");
  }
  if (r.other_backend > 0) {
    absl::StrAppend(&out, "programs: ", r.other_backend,
                    r.other_backend == 1 ? " finding" : " findings",
                    " found on another backend stay in ", o.triage_dir,
                    "/.pending/ for a run on it\n");
  }
  if (r.unjournaled > 0) {
    absl::StrAppend(&out, "programs: ", r.unjournaled,
                    " of them could not be kept in ", o.triage_dir,
                    "/.pending/ (their journal lines are on stderr)\n");
  }
  return out;
}

// One entry filed in a run: how often, and whether this run made it.
struct EntryFiled {
  std::string entry, cause;
  int times = 0;
  bool is_new = false;
};

// "new  value-mismatch~ptxas~...~program-1f2e3d4c (3 times)".
std::string EntryLine(const EntryFiled& e) {
  return absl::StrCat(
      e.is_new ? "new    " : "again  ", e.entry,
      e.times > 1 ? absl::StrCat(" (", e.times, " times)") : "");
}

// "; 310 known repeats (of 3 causes filed before, most of `SEL R, R,
// 0xffff8000, !P`: 250), counted in their entries, not minimized", or "".
std::string KnownRepeatsText(const ProgramCampaignReport& r) {
  if (r.known_repeats == 0) return "";
  const auto top = std::max_element(
      r.repeats.begin(), r.repeats.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  return absl::StrCat("; ", r.known_repeats,
                      r.known_repeats == 1 ? " known repeat" : " known repeats",
                      " (of ", r.repeats.size(),
                      r.repeats.size() == 1 ? " cause" : " causes",
                      " filed before, most of ", top->first, ": ", top->second,
                      "), counted in their entries, not minimized");
}

// What was found and where it was filed: a line per entry (what each is,
// the progress lines said as it was filed), under a line per root cause of
// several entries; the first kMaxEntryLines of them.
std::string FindingsLines(const ProgramCampaignOptions& o,
                          const ProgramCampaignReport& r) {
  constexpr size_t kMaxEntryLines = 20;
  std::vector<EntryFiled> entries;  // in the order first filed
  std::vector<std::string> causes;
  for (const FiledProgram& f : r.filed) {
    auto it =
        std::find_if(entries.begin(), entries.end(),
                     [&](const EntryFiled& e) { return e.entry == f.entry; });
    if (it == entries.end()) {
      entries.push_back({f.entry, f.cause});
      it = entries.end() - 1;
    }
    ++it->times;
    it->is_new |= f.is_new;
    if (std::find(causes.begin(), causes.end(), f.cause) == causes.end())
      causes.push_back(f.cause);
  }
  const int64_t fresh =
      std::count_if(entries.begin(), entries.end(),
                    [](const EntryFiled& e) { return e.is_new; });
  std::string out = absl::StrCat(
      "programs: found ", r.disagreements,
      r.disagreements == 1 ? " disagreement, " : " disagreements, ", r.crashes,
      r.crashes == 1 ? " crash, " : " crashes, ", r.hangs,
      r.hangs == 1 ? " hang" : " hangs",
      r.known > 0 ? absl::StrCat(" (", r.known,
                                 " in programs with a variant not generated "
                                 "any more, not filed again)")
                  : "",
      KnownRepeatsText(r),
      "; filed in ", EntriesAndCauses(entries.size(), causes.size()), " (",
      fresh, " new) in ", o.triage_dir, "\n");
  std::vector<std::string> lines;
  for (const std::string& cause : causes) {
    std::vector<const EntryFiled*> of;
    for (const EntryFiled& e : entries)
      if (e.cause == cause) of.push_back(&e);
    if (of.size() == 1) {
      lines.push_back(absl::StrCat("  ", EntryLine(*of[0]), ": ", cause));
      continue;
    }
    lines.push_back(
        absl::StrCat("  one root cause in ", of.size(), " entries: ", cause));
    for (const EntryFiled* e : of) lines.push_back("    " + EntryLine(*e));
  }
  for (size_t k = 0; k < lines.size() && k < kMaxEntryLines; ++k)
    absl::StrAppend(&out, lines[k], "\n");
  if (lines.size() > kMaxEntryLines) {
    absl::StrAppend(&out, "  ... and ", lines.size() - kMaxEntryLines,
                    " more lines (ptxdiff triage list --dir ", o.triage_dir,
                    ")\n");
  }
  return out;
}

// What the tool refuses of the generated instructions, each with what it
// said: a few lines, however many programs it refused.
std::string RefusedLines(const ProgramCampaignReport& r) {
  // What the memory held and the tool runs now (refusal_recheck.h).
  const std::string forgotten =
      r.forgotten.empty() ? ""
                          : absl::StrCat(
                                "programs: the tool runs now what earlier runs "
                                "remembered it refusing; forgotten, generated "
                                "again: ",
                                absl::StrJoin(r.forgotten, "; "), "\n");
  if (r.refused.empty()) return forgotten;
  const int64_t learned =
      std::count_if(r.refused.begin(), r.refused.end(),
                    [](const RefusedStep& s) { return !s.remembered; });
  std::vector<std::string> how;
  if (learned > 0) {
    how.push_back(absl::StrCat(learned, " learned from ", r.refused_programs,
                               " refused programs in ", r.refusal_checks,
                               " checks of their instructions alone"));
  }
  if (!r.refusals_file.empty())
    how.push_back(absl::StrCat("remembered in ", r.refusals_file));
  std::string out = absl::StrCat(
      forgotten, "programs: the tool refuses ", r.refused.size(),
      " of the generated instructions, not generated",
      how.empty() ? "" : absl::StrCat(" (", absl::StrJoin(how, "; "), ")"),
      ":\n");
  for (const RefusedStep& s : r.refused) {
    absl::StrAppend(&out, "  ", s.spelling, s.remembered ? " (remembered)" : "",
                    ": ", s.why, "\n");
  }
  return out;
}

// The summary: what was checked, and what was found and filed.
void PrintSummary(const ProgramCampaignOptions& o, const ProgramsRunBackend& b,
                  bool is_ptxas, const ProgramCampaignReport& r,
                  std::ostream& out) {
  if (r.interrupted) {
    out << absl::StrFormat("programs: interrupted after %.0f s; stopped\n",
                           r.seconds);
  }
  out << absl::StrFormat(
      "programs: %s %s, %d %s, %.0f s: %d programs checked (%.1f/s); %s %.0f%% "
      "with the inputs as immediates and %.0f%% with runtime inputs%s%s%s\n",
      b.name, b.arch, o.threads, o.threads == 1 ? "thread" : "threads",
      r.seconds, r.programs, r.seconds > 0 ? r.programs / r.seconds : 0,
      is_ptxas           ? "judged"
      : b.name == "cuda" ? "the GPU ran"
                         : "the tool ran",
      Percent(r.folded, r.programs), Percent(r.claimed, r.programs),
      is_ptxas ? absl::StrFormat(
                     " (%.0f%% of the programs on their code run on "
                     "the CPU, the rest on constants ptxas folded or "
                     "claimed; with runtime inputs, %.0f input vectors "
                     "a program on average)",
                     Percent(r.executed, r.programs),
                     r.claimed > 0
                         ? static_cast<double>(r.runtime_vectors) / r.claimed
                         : 0.0)
               : "",
      r.with_thread_inputs > 0
          ? absl::StrFormat("; %d of them with a thread input (%%tid.x or "
                            "%%laneid)",
                            r.with_thread_inputs)
          : "",
      r.with_loaded_inputs > 0
          ? absl::StrFormat("; %d with an input loaded from memory "
                            "(in[%%tid.x])",
                            r.with_loaded_inputs)
          : "");
  out << FindingsLines(o, r);
  if (!r.suppressed.empty()) {
    out << "programs: not generated (--suppress, or filed as one instruction): "
        << absl::StrJoin(r.suppressed, ", ") << "\n";
  }
  out << RefusedLines(r);
  if (r.nothing_left_to_draw) {
    out << "programs: ended early: every instruction the generator draws is "
           "filed as one instruction or refused by the tool\n";
  }
  out << PendingLines(o, r);
  if (r.worker_restarts > 0) {
    out << "programs: ptxdiff-worker fell over and was started again "
        << r.worker_restarts << (r.worker_restarts == 1 ? " time" : " times")
        << " (it crashed, hung or answered garbage)\n";
  }
  for (const std::string& e : r.errors) out << "programs: error: " << e << "\n";
  if (!r.filed.empty())
    out << "programs: see: ptxdiff triage list --dir " << o.triage_dir << "\n";
}

// " (most often, 32 programs: exit status 1)": the most common reason.
std::string MostOften(const ProgramCampaignReport::Reasons& r) {
  if (r.top_count == 0) return "";
  return absl::StrCat(" (most often, ", r.top_count,
                      r.top_count == 1 ? " program: " : " programs: ", r.top,
                      ")");
}

// The run's timeline line at `elapsed` (report/run_records.h).
std::string TimelineLineOf(const ProgramCampaignReport& r,
                           absl::Duration elapsed) {
  return FormatTimelinePoint(
      RunKind::kPrograms,
      {.seconds = absl::ToDoubleSeconds(elapsed),
       .checked = r.programs,
       .judged_immediate = r.folded,
       .judged_runtime = r.claimed,
       .disagreements = r.disagreements,
       .faults = r.crashes + r.hangs,
       .new_entries =
           std::count_if(r.filed.begin(), r.filed.end(),
                         [](const FiledProgram& f) { return f.is_new; })});
}

// The run's own directory under --out/stats, for its progress
// (report/run_records.h): a run directory as `fuzz` makes.
std::string ProgramRunDir(const std::string& out_dir) {
  return absl::StrCat(out_dir, "/stats/run-", absl::ToUnixSeconds(absl::Now()),
                      "-", getpid());
}

// The outputs made before the run, as by `fuzz`: a --out or a triage
// directory it cannot write to is refused at once (exit 2), not found after
// the run has spent its time.
absl::Status PrepareOutputs(const std::string& run_dir,
                            const std::string& triage_dir) {
  PTXDIFF_RETURN_IF_ERROR(TriageStore::Open(triage_dir, true).status());
  PTXDIFF_RETURN_IF_ERROR(MakeDirs(run_dir));
  return RecordTriageDir(run_dir, triage_dir);
}

// Why a run checked or judged nothing ("" if it did): a CI gate must not
// pass on a run that tested nothing (as `ptxdiff fuzz`).
std::string NothingChecked(const ProgramsRunBackend& b,
                           const ProgramCampaignReport& r) {
  // A crash or a hang (isolated or not) is the backend tested, and failing;
  // findings an earlier run left, filed, are work done too.
  if (r.crashes + r.hangs > 0 || !r.filed.empty()) return "";
  if (r.programs == 0) {
    return r.not_run.programs == 0
               ? (r.interrupted
                      ? "nothing was checked: interrupted before the first "
                        "program was"
                      : "nothing was checked: no program was generated")
               : absl::StrCat("nothing was checked: the run ended before ",
                              b.name, " finished any of the ",
                              r.not_run.programs, " programs sent",
                              MostOften(r.not_run));
  }
  if (r.folded + r.claimed + r.disagreements > 0) return "";
  return absl::StrCat("nothing was judged: ", b.name, " judged none of the ",
                      r.programs, " programs checked", MostOften(r.not_judged));
}

}  // namespace

int RunPrograms(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  auto parsed =
      ParseArgs(args, {"report"},
                {"max-time", "dir", "arch", "seed", "threads", "reading",
                 "suppress", "backend", "timeout", "cuda-driver", "out"});
  if (!parsed.ok()) return Fail(err, "programs", parsed.status());
  if (!parsed->positional.empty()) {
    return Fail(err, "programs",
                absl::InvalidArgumentError("takes no FILE, only flags"));
  }
  auto options = CampaignOptions(*parsed);
  if (!options.ok()) return Fail(err, "programs", options.status());
  // The run's time starts here: a worker that does not start, or a ptxas
  // slow to say its version, is no longer.
  const absl::Time run_start = absl::Now();
  auto backend = ProgramBackendFlags(*parsed, run_start + options->max_time);
  if (!backend.ok()) return Fail(err, "programs", backend.status());
  backend->ptxas_query_timeout =
      std::min(backend->ptxas_query_timeout, options->max_time);
  auto workers = ProgramWorkersFor(*backend);
  if (!workers.ok()) return Fail(err, "programs", workers.status());
  const std::string out_dir = parsed->Get("out", "out");
  // A tool's refusals: the same file `fuzz --out` keeps for it.
  if (!workers->tool_command.empty()) {
    options->refusal_memory.emplace(
        absl::StrCat(out_dir, "/refusals"), workers->tool_command,
        backend->arch.empty() ? "sm_90" : backend->arch);
  }
  const std::string run_dir = ProgramRunDir(out_dir);
  if (absl::Status s = PrepareOutputs(run_dir, options->triage_dir); !s.ok())
    return Fail(err, "programs", s);
  // As `fuzz`: no file where a tool's refusals are to be remembered.
  if (options->refusal_memory) {
    if (absl::Status s = MakeRefusalsDir(absl::StrCat(out_dir, "/refusals"));
        !s.ok())
      return Fail(err, "programs", s);
  }
  // Its header names the backend, known once a worker has said what it is.
  ProgramsRunBackend ran_on;
  TimelineWriter timeline("programs", absl::StrCat(run_dir, "/", kTimelineFile),
                          "");
  const auto timeline_header = [&] {
    return TimelineHeader(RunKind::kPrograms, ran_on.identity);
  };
  bool header_written = false;
  const auto append = [&](const ProgramCampaignReport& r,
                          absl::Duration elapsed) {
    const std::string line = TimelineLineOf(r, elapsed);
    timeline.Append(header_written ? line : timeline_header() + line, err);
    header_written = header_written || !timeline.failed();
  };
  options->on_tick = append;
  // Ctrl-C stops the run as --max-time does: the summary, and the findings
  // not yet filed kept in the journal.
  const ScopedInterruptHandler on_interrupt;
  options->max_time = std::max(absl::ZeroDuration(),
                               run_start + options->max_time - absl::Now());
  OutcomeTable outcomes;
  auto report = RunProgramsOnEngine(
      *options, *backend, *workers,
      [&out](const std::string& line) {
        out << "programs: " << line << std::endl;
      },
      [&ran_on](const ProgramsRunBackend& on) { ran_on = on; }, &outcomes);
  if (!report.ok()) {
    RemoveTree(run_dir);  // no point in it: not a run a report shows
    // A Ctrl-C while the engine's workers start cuts their handshake: the
    // stop, not a worker at fault.
    if (Interrupted()) {
      out << "programs: interrupted while the backend's workers started: "
             "nothing was checked\n";
      return kExitInterrupted;
    }
    return Fail(err, "programs", report.status());
  }
  report->seconds = absl::ToDoubleSeconds(absl::Now() - run_start);
  append(*report, absl::Seconds(report->seconds));
  // The programs by the variants they held, for the report (the end's
  // counts: a run killed before it keeps its timeline only).
  const absl::Status outcomes_kept =
      WriteFileAtomic(absl::StrCat(run_dir, "/", getpid(), ".outcomes"),
                      outcomes.Format(ran_on.identity, {}));
  PrintSummary(*options, ran_on, workers->is_ptxas, *report, out);
  const bool unreported =
      parsed->Has("report") &&
      !WriteReportAtTheEnd("programs", out_dir, options->triage_dir, out, err);
  if (!report->environment_failure.empty())  // no verdict: nothing to add
    return Fail(err, "programs",
                absl::UnavailableError(report->environment_failure));
  const bool unfiled = report->LostFindings();
  const std::string nothing = NothingChecked(ran_on, *report);
  if (!nothing.empty()) err << "ptxdiff programs: " << nothing << "\n";
  if (timeline.failed()) {
    err << "ptxdiff programs: the run's progress could not all be kept in "
        << run_dir << " (the error above)\n";
  }
  if (!outcomes_kept.ok()) {
    err << "ptxdiff programs: the run's outcome records could not be kept: "
        << outcomes_kept.message() << "\n";
  }
  if (unreported) err << "ptxdiff programs: the report was not written\n";
  return unfiled || !nothing.empty() || timeline.failed() ||
                 !outcomes_kept.ok() || unreported
             ? kExitDisagree
             : kExitOk;
}

namespace {

// "a disagreement" (or crash, or hang): what a run of one case found.
std::string WhatWasFound(const ProgramCampaignReport& r) {
  return r.disagreements > 0 ? "a disagreement"
         : r.crashes > 0     ? "a crash of the backend"
                             : "a hang of the backend";
}

// `minimize` found nothing to file: "no disagreement" only where the case
// was judged in every input form it has; a form not judged (ptxas past
// --timeout, code nothing runs) is no agreement, and it says which reason
// (exit 3, as `ptxdiff program`'s "not judged").
int SayNothingFiled(const std::string& path, const std::string& backend,
                    const std::string& dir, const ProgramCampaignReport& r,
                    std::ostream& out) {
  if (r.programs == 0) {
    out << "minimize: " << path << " was not checked on " << backend << ": "
        << (r.not_run.top.empty() ? "the run ended first" : r.not_run.top)
        << "\n";
    return kExitNotJudged;
  }
  const int64_t found = r.disagreements + r.crashes + r.hangs;
  if (found > 0) {
    // Seen, and not filed: kept in the journal for a run to file (out of
    // time, or the tool could not check it again: the eighteenth fault run
    // read "the run ended first" where no --max-time was given), or counted
    // as a cause already filed.
    out << "minimize: " << path << " on " << backend << ": " << WhatWasFound(r)
        << ", not filed: "
        << (r.pending > 0
                ? absl::StrCat(r.unchecked > 0
                                   ? "it could not be checked again "
                                     "(stderr says why)"
                                   : "the run ended first",
                               "; kept in ", dir,
                               "/.pending/, which the next `ptxdiff programs "
                               "--dir ",
                               dir, "` files")
            : r.known + r.known_repeats > 0
                ? "taken for a cause already filed"
                : "it did not show again (stderr says more)")
        << "\n";
    return kExitDisagree;
  }
  if (r.forms_not_judged.programs == 0) {
    out << "minimize: no disagreement in " << path << " on " << backend
        << "\n";
    return kExitDisagree;
  }
  const bool timed_out = absl::StrContains(r.forms_not_judged.top, "timed out");
  out << "minimize: " << path << " was not judged "
      << (r.folded + r.claimed > 0 ? "in every input form " : "") << "on "
      << backend << ": " << r.forms_not_judged.top
      << (timed_out ? " (the run timed out: a longer --timeout may judge it)"
                    : "")
      << (r.folded + r.claimed > 0 ? "; no disagreement where it was judged"
                                   : "")
      << "\n";
  return kExitNotJudged;
}

// Not "not judged" (exit 3): the user stopped it, as `program` says. What
// it found by then is in the pending journal (`kept`), where the next run
// files it (the fourteenth fault run: it said "nothing filed" only, and a
// rerun of `minimize` then counted it twice).
int SayInterrupted(const std::string& path, std::ostream& out,
                   const std::string& dir = "", int64_t kept = 0) {
  out << "minimize: interrupted: nothing filed of " << path;
  if (kept > 0) {
    out << "; what it found is kept in " << dir
        << "/.pending/, which the next `ptxdiff programs --dir " << dir
        << "` files";
  }
  out << "\n";
  return kExitInterrupted;
}

}  // namespace

int MinimizeProgramCase(const std::string& path, const std::string& text,
                        const ParsedArgs& args, std::ostream& out,
                        std::ostream& err) {
  auto program = ParseProgramCase(text);
  if (!program.ok()) {
    return Fail(err, "minimize",
                absl::InvalidArgumentError(
                    absl::StrCat(path, ": ", program.status().message())));
  }
  auto reading = ReadingFlag(args);
  if (!reading.ok()) return Fail(err, "minimize", reading.status());
  // What it has by then is filed (a worker that stops answering hangs
  // sooner: it tells its progress, and silence is a hang).
  auto max_time = MaxTimeFlag(args, 300);
  if (!max_time.ok()) return Fail(err, "minimize", max_time.status());
  // Ctrl-C stops the backend's start too (its worker, ptxas), as in
  // `program`: a stop is never taken for a case that was not judged.
  const ScopedInterruptHandler on_interrupt;
  auto backend = ProgramBackendFlags(args);
  if (!backend.ok()) return Fail(err, "minimize", backend.status());
  auto workers = ProgramWorkersFor(*backend);
  if (!workers.ok() && Interrupted()) return SayInterrupted(path, out);
  if (!workers.ok()) return Fail(err, "minimize", workers.status());
  // The case as a campaign of one program, on one sender.
  bool given = false;
  ProgramCampaignOptions o{
      .max_time = absl::Seconds(*max_time),
      .threads = 1,
      .reading = *reading,
      .triage_dir = args.Get("dir", DefaultTriageDir()),
      .next = [&](std::mt19937_64&) -> std::optional<Program> {
        if (given) return std::nullopt;
        given = true;
        return *program;
      },
      .adopt_pending = false,
      .file_unfinished = true,
      .skip_known_causes = false};
  ProgramsRunBackend ran_on;
  auto report = RunProgramsOnEngine(
      o, *backend, *workers, nullptr,
      [&ran_on](const ProgramsRunBackend& on) { ran_on = on; });
  if (!report.ok() && Interrupted()) return SayInterrupted(path, out);
  if (!report.ok()) return Fail(err, "minimize", report.status());
  for (const std::string& e : report->errors)
    err << "ptxdiff minimize: " << e << "\n";
  // The harness's own files failed (a full TMPDIR): no verdict on the case
  // (the sixteenth fault run: "the run ended first", exit 3), as `programs`.
  if (!report->environment_failure.empty()) {
    return Fail(err, "minimize",
                absl::UnavailableError(report->environment_failure));
  }
  if (report->filed.empty() && report->interrupted)
    return SayInterrupted(path, out, o.triage_dir,
                          report->pending - report->unjournaled);
  if (report->filed.empty() && report->triage_write_errors > 0) {
    // Found, and not "no disagreement": its filing failed (a full disk).
    out << "minimize: what was found in " << path << " on " << ran_on.identity
        << " could not be filed (stderr says why, with its case)\n";
    return kExitDisagree;
  }
  if (report->filed.empty())
    return SayNothingFiled(path, ran_on.identity, o.triage_dir, *report, out);
  const FiledProgram& filed = report->filed.front();
  const std::string entry = absl::StrCat(o.triage_dir, "/", filed.entry);
  if (auto minimized = ReadFile(entry + "/case.txt"); minimized.ok())
    out << *minimized;
  out << "minimize: " << filed.what << "\n"
      << "minimize: "
      << (filed.is_new ? "filed new entry " : "counted existing entry ")
      << entry << "\n";
  return kExitOk;
}

}  // namespace ptxdiff
