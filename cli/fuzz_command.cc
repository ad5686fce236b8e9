#include "cli/fuzz_command.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/refusal_recheck.h"
#include "campaign/campaign.h"
#include "campaign/exploration_budget.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/fuzz_summary_lines.h"
#include "cli/fuzzer_output.h"
#include "cli/fuzzer_process.h"
#include "cli/report_command.h"
#include "cli/triage_commands.h"
#include "client/worker_client.h"
#include "client/worker_locator.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "fuzzers/differential_target.h"
#include "fuzzers/seed_corpus.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backends.h"
#include "protocol/backend_names.h"
#include "report/run_records.h"
#include "triage/pending_journal.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

volatile sig_atomic_t interrupted = 0;

absl::StatusOr<std::string> FindFuzzer() {
  if (const char* env = std::getenv("PTXDIFF_FUZZER"); env && *env)
    return std::string(env);
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  const std::string self = n > 0 ? std::string(buf, n) : "";
  for (const std::string& c :
       FuzzerSearchPath(self.substr(0, self.rfind('/')))) {
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return absl::NotFoundError(
      "differential_fuzzer not found: build it with `cmake --preset campaign "
      "&& cmake "
      "--build --preset campaign` (what scripts/campaign.sh does), or set "
      "PTXDIFF_FUZZER");
}

// The sum of every process's stats file (the reached-variant bitmaps
// OR-ed together).
struct Progress {
  StatsFile sum;
  int64_t variants_reached = 0;
  int64_t variants_reached_runtime = 0;  // with a tuple in a runtime form
  int64_t processes = 0;  // that wrote a stats file: 0 while starting
};

Progress ReadProgress(const std::string& stats_dir) {
  Progress p;
  for (const std::string& file : FilesIn(stats_dir, ".stats")) {
    if (absl::StatusOr<std::string> text = ReadFile(file); text.ok()) {
      AddStatsFile(*text, p.sum);
      ++p.processes;
    }
  }
  p.variants_reached =
      std::count(p.sum.reached.begin(), p.sum.reached.end(), true);
  p.variants_reached_runtime = std::count(p.sum.reached_runtime.begin(),
                                          p.sum.reached_runtime.end(), true);
  return p;
}

// ", N repeats of findings not filed ...": repeats counted in no entry
// (CampaignStats::pending_repeats), which "already filed" would belie.
std::string PendingRepeats(int64_t n) {
  if (n == 0) return "";
  return absl::StrCat(", ", n, n == 1 ? " repeat" : " repeats",
                      " of findings not filed (kept with them)");
}

// One line per erratum that explained disagreements.
std::string ErrataLines(const Progress& p) {
  std::string out;
  for (const auto& [id, n] : p.sum.stats.other_reading_by_erratum) {
    absl::StrAppend(&out, "fuzz:     ", n, "x ", id, "\n");
  }
  return out;
}

// Before its first input the fuzzer starts the workers, judges again the
// `pending` findings earlier runs left in the triage directory (a large
// journal: minutes) and, on a slow backend, times each family on it
// (ptxas: seconds); it checks nothing new yet.
std::string StartingLine(double seconds, int64_t pending) {
  return absl::StrFormat(
      "fuzz: %4.0fs  starting: the backend's workers start%s and each family "
      "is timed on it (calibration)",
      seconds,
      pending == 0
          ? ""
          : absl::StrCat(", the ", pending,
                         pending == 1 ? " finding" : " findings",
                         " earlier runs left pending are judged again"));
}

// "variants reached X of Y" (of those the backend supports; crash mode does
// not count those) and "repeats" (findings of a cause already found, this
// run or before, filed or kept pending with their finding: at the end the
// campaign moves the repeats of what it did not file from the one count to
// the other, and the last line must not fall): a newcomer read "X/Y
// supported" as the support and "known" as explained.
std::string ProgressLine(const Progress& p, double seconds) {
  const FuzzStats& s = p.sum.stats;
  return absl::StrFormat(
      "fuzz: %4.0fs  checked %d tuples (%.0f/s)  fuzz inputs %d  variants "
      "reached %d%s  "
      "findings %d new, %d repeats  faults %d  restarts %d",
      seconds, s.counts.tuples, seconds > 0 ? s.counts.tuples / seconds : 0.0,
      s.inputs, p.variants_reached,
      s.supported_variants > 0 ? absl::StrCat(" of ", s.supported_variants)
                               : "",
      s.new_findings,
      s.known_findings + s.explained_findings + s.pending_repeats,
      s.counts.faulty_batches + s.counts.faulted, s.worker_restarts);
}

}  // namespace

std::vector<std::string> FuzzerSearchPath(const std::string& cli_dir) {
  const std::string kFuzzer = "/fuzzers/differential_fuzzer";
  return {cli_dir + "/differential_fuzzer",
          cli_dir + "/.." + kFuzzer,
          cli_dir + "/../../campaign" + kFuzzer,
          cli_dir + "/../../fuzz" + kFuzzer,
          "build/campaign" + kFuzzer,
          "build/fuzz" + kFuzzer};
}

int RunSeedCorpus(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err) {
  auto parsed = ParseArgs(args, {}, {});
  if (!parsed.ok()) return Fail(err, "seed-corpus", parsed.status());
  if (parsed->positional.size() != 1) {
    return Fail(err, "seed-corpus",
                absl::InvalidArgumentError("expects one DIR"));
  }
  const std::string dir = parsed->positional[0];
  if (auto s = WriteSeedCorpus(dir + "/differential"); !s.ok()) {
    return Fail(err, "seed-corpus", s);
  }
  // Replaced, as the seeds are: a link there is not written through (the
  // fifteenth fault run: a file elsewhere became the dictionary).
  if (auto s = WriteFileAtomic(dir + "/differential.dict", FuzzDictionary());
      !s.ok()) {
    return Fail(err, "seed-corpus", s);
  }
  out << "wrote " << SeedCorpus().size() << " seeds to " << dir
      << "/differential and " << dir << "/differential.dict\n";
  return 0;
}

namespace {

// The flags that override a setting of `config` (mode, timeout, reading,
// families); InvalidArgument naming the flag for a bad value.
absl::Status ApplyFlags(const ParsedArgs& parsed, FuzzConfig& config) {
  if (parsed.Has("arch")) {
    // Checked here, exit 2 before any directory is made: the worker would
    // only refuse it after --out, the corpus and the triage directory exist.
    config.arch = parsed.Get("arch");
    if (absl::Status s = TargetOfArch(config.arch).status(); !s.ok()) return s;
  }
  if (parsed.Has("mode")) {
    const std::string mode = parsed.Get("mode");
    if (mode != "campaign" && mode != "crash") {
      return absl::InvalidArgumentError(
          absl::StrCat("--mode is campaign or crash, not '", mode, "'"));
    }
    config.mode = mode == "crash" ? FuzzConfig::Mode::kCrash
                                  : FuzzConfig::Mode::kCampaign;
  }
  PTXDIFF_ASSIGN_OR_RETURN(config.timeout_seconds,
                           TimeoutSecondsFlag(parsed, config.timeout_seconds));
  if (parsed.Has("programs")) {
    const std::string share = parsed.Get("programs");
    if (!absl::SimpleAtod(share, &config.programs_share) ||
        !(config.programs_share >= 0) || config.programs_share > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--programs is a share of the backend's time in [0, 1], not '",
          share, "'"));
    }
  }
  if (parsed.Has("reading")) {
    const std::optional<Reading> reading = ParseReading(parsed.Get("reading"));
    if (!reading) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--reading is spec or hardware, not '", parsed.Get("reading"), "'"));
    }
    config.reading = *reading;
  }
  for (const auto& [flag, families] :
       {std::pair{"family", &config.filter.include},
        std::pair{"exclude", &config.filter.exclude}}) {
    if (!parsed.Has(flag)) continue;
    families->clear();
    for (const std::string& name : parsed.All(flag)) {
      const std::optional<Family> family = FamilyByOpcode(name);
      if (!family) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown family '", name, "'"));
      }
      families->push_back(*family);
    }
  }
  return absl::OkStatus();
}

// The output directories, and the seed corpus unless `corpus` already holds
// one (a resumed campaign); the dictionary in `dict`.
absl::Status PrepareOutputs(const std::string& out_dir,
                            const std::string& corpus, const std::string& stats,
                            const std::string& triage_dir,
                            const std::string& dict, bool& resumed) {
  for (const std::string& d : {corpus, stats, out_dir + "/findings"}) {
    PTXDIFF_RETURN_IF_ERROR(MakeDirs(d));
  }
  PTXDIFF_RETURN_IF_ERROR(TriageStore::Open(triage_dir, true).status());
  PTXDIFF_RETURN_IF_ERROR(RecordTriageDir(stats, triage_dir));
  resumed = !FilesIn(corpus).empty();
  if (!resumed) PTXDIFF_RETURN_IF_ERROR(WriteSeedCorpus(corpus));
  return WriteFileAtomic(dict, FuzzDictionary());  // as seed-corpus does
}

// The run's progress for a report (report/run_records.h): a point each
// progress line.
struct Timeline {
  TimelineWriter writer;
  void Add(const Progress& p, double seconds, std::ostream& err) {
    const FuzzStats& s = p.sum.stats;
    writer.Append(FormatTimelinePoint(
                      RunKind::kTuples,
                      {.seconds = seconds,
                       .checked = s.counts.tuples,
                       .variants_reached = p.variants_reached,
                       .variants_reached_runtime = p.variants_reached_runtime,
                       .disagreements = s.counts.mismatched,
                       .faults = s.counts.faulted,
                       .new_entries = s.new_findings}),
                  err);
  }
};

// From here to WaitWithProgress's end a Ctrl-C or SIGTERM is counted in
// `interrupted`; set before the fuzzer starts, which a Ctrl-C at once
// reached first (ptxdiff was killed by the signal). An earlier run's
// Ctrl-C in this process is no stop of this one.
void CountInterrupts() {
  interrupted = 0;
  struct sigaction on_interrupt = {};
  on_interrupt.sa_handler = [](int) { interrupted = interrupted + 1; };
  sigaction(SIGINT, &on_interrupt, nullptr);
  sigaction(SIGTERM, &on_interrupt, nullptr);
}

// A Ctrl-C ends this process again.
void StopCountingInterrupts() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}

// Waits for the fuzzer, moving its output to the log and printing a
// progress line every `every` seconds. It is asked to stop (the campaign
// then stops as at --max-time: differential_fuzzer.cc) on a Ctrl-C, on a
// write under --out that fails (what was judged is filed or journaled, and
// going on would only lose more) and kPastDeadline after `deadline`; it is
// killed its stop grace later, or at a second Ctrl-C. Returns its wait
// status.
int WaitWithProgress(FuzzerProcess& fuzzer, const std::string& stats,
                     int64_t every, absl::Time start, absl::Time deadline,
                     OutWrites& writes, std::ostream& out, Timeline& timeline,
                     int64_t pending_at_start, std::ostream& err) {
  constexpr absl::Duration kPastDeadline = absl::Seconds(5);
  absl::Time next_progress = start + absl::Seconds(every);
  while (!fuzzer.Ended()) {
    writes.log.Pump(absl::Milliseconds(100));
    if (interrupted > 1 && !fuzzer.killed()) {
      fuzzer.Kill();
      out << "fuzz: interrupted again; killing the fuzzer (findings it had "
             "not filed are kept in the triage directory's .pending/ for the "
             "next run)\n";
    } else if (interrupted > 0 && fuzzer.AskToStop()) {
      out << "fuzz: interrupted; stopping (the corpus and findings are kept; "
             "Ctrl-C again to kill it at once)\n";
    }
    // A campaign stopping in order (it said so) is asked again, unsaid:
    // only one deaf to its deadline (a -fork job) needs the word.
    if (absl::Now() >= deadline + kPastDeadline && fuzzer.AskToStop() &&
        !writes.log.campaign_stopping()) {
      out << "fuzz: the fuzzer is still running "
          << absl::FormatDuration(kPastDeadline)
          << " past --max-time; stopping it\n";
    }
    fuzzer.AskAgainIfDue();
    if (fuzzer.KillIfOverdue()) {
      out << "fuzz: the fuzzer did not stop within "
          << absl::FormatDuration(fuzzer.stop_grace())
          << " of being asked; killed it (findings it had not filed are kept "
             "in the triage directory's .pending/ for the next run)\n";
    }
    std::optional<absl::Duration> corpus_min_age;
    if (absl::Now() >= next_progress) {
      const Progress p = ReadProgress(stats);
      const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (p.processes > 0) timeline.Add(p, seconds, err);
      out << (p.processes == 0 ? StartingLine(seconds, pending_at_start)
                               : ProgressLine(p, seconds))
          << "\n";
      out.flush();
      next_progress += absl::Seconds(every);
      corpus_min_age =
          absl::Seconds(2);  // older than any write libFuzzer is making
    }
    if (writes.TakeNew(corpus_min_age, err) && fuzzer.AskToStop()) {
      out << "fuzz: stopping: a write under --out failed (the findings judged "
             "so far are "
             "filed, or kept in the triage directory's .pending/)\n";
    }
  }
  const int status = fuzzer.Reap();
  // What the fuzzer wrote last, and corpus files it left empty.
  writes.log.Pump(absl::ZeroDuration());
  writes.TakeNew(absl::ZeroDuration(), err);
  StopCountingInterrupts();
  return status;
}

// The summary: what was checked, what the readings explain, what was not
// sent, and the triage directory's entries (some of its lines in
// fuzz_summary_lines.h).

// The classes of variants a ptx-cmd tool refused (refusal_classes.h), by
// what it said: a few lines where its refusals are tens of thousands. First
// what its workers forgot at the run's start (`seconds` ago), the tool
// running it now (refusal_recheck.h).
std::string RefusedClassLines(const FuzzConfig& config, double seconds) {
  constexpr size_t kNamedPerMessage = 6;
  constexpr size_t kMessagesShown = 12;
  absl::string_view command = config.backend;
  if (!absl::ConsumePrefix(&command, kPtxCmdPrefix)) return "";
  const std::string forgotten = ForgottenLine(
      config.refusals_dir, command,
      absl::ToUnixSeconds(absl::Now()) - static_cast<int64_t>(seconds) - 2,
      "fuzz:   ");
  const std::vector<RefusalClass> classes =
      RememberedClasses(config.refusals_dir, command);
  if (classes.empty()) return forgotten;
  absl::flat_hash_set<int> variants;
  std::map<std::string, std::vector<std::string>> by_message;
  for (const RefusalClass& c : classes) {
    for (const Variant& v : VariantsOf(c.family)) {
      if (HasFeature(v, c.feature)) variants.insert(VariantIndex(v));
    }
    by_message[c.message].push_back(absl::StrCat(
        c.Describe(), " (", c.sampled, " sampled)"));
  }
  std::string lines = absl::StrCat(
      forgotten, "fuzz:   the tool refuses ", classes.size(), " classes (",
      variants.size(),
      " variants), each learned from a refusal and variants of it run alone "
      "(remembered in ",
      config.refusals_dir, "/):\n");
  // A few messages: a memory of thousands (the sixteenth fault run: 12,000
  // summary lines) is the file's to list.
  size_t shown = 0;
  for (auto& [message, named] : by_message) {
    if (++shown > kMessagesShown) break;
    const size_t more = named.size() > kNamedPerMessage
                            ? named.size() - kNamedPerMessage
                            : 0;
    named.resize(named.size() - more);
    absl::StrAppend(&lines, "fuzz:     \"", ShortMessage(message),
                    "\": ", absl::StrJoin(named, "; "),
                    more > 0 ? absl::StrCat(" and ", more, " more") : "", "\n");
  }
  if (by_message.size() > kMessagesShown) {
    absl::StrAppend(&lines, "fuzz:     and ",
                    by_message.size() - kMessagesShown, " more messages (in ",
                    config.refusals_dir, "/)\n");
  }
  return lines;
}

// How far the fuzz stage reached the variants least explored by it
// (campaign/exploration_budget.h).
std::string LeastExploredLine(const std::vector<int64_t>& explored) {
  const std::string text = LeastExploredText(explored);
  return text.empty() ? "" : absl::StrCat("fuzz:   ", text, "\n");
}

// `pending_now`: the findings the triage directory's journals hold at the
// run's end.
void PrintSummary(const Progress& p, double seconds, const FuzzConfig& config,
                  const PendingFindings& pending_now, std::ostream& out) {
  const FuzzStats& sum = p.sum.stats;
  out << "fuzz: summary: " << absl::StrFormat("%.0f", seconds) << " s against "
      << (p.sum.backend.empty() ? config.backend : p.sum.backend) << "\n"
      << "fuzz:   checked " << sum.counts.tuples << " tuples, reaching "
      << p.variants_reached << " of the " << sum.supported_variants
      << " variants the backend supports (" << sum.counts.agreed << " agreed, "
      << sum.counts.mismatched << " mismatched, " << sum.counts.declined
      << " declined, " << sum.counts.unspecified << " left open by the spec"
      << (sum.counts.faulted > 0
              ? absl::StrCat(", ", sum.counts.faulted,
                             " crashed or hung the implementation")
              : "")
      << ")\n"
      << (p.variants_reached_runtime > 0
              ? absl::StrCat("fuzz:   ", p.variants_reached_runtime,
                             " of them with a verdict in a runtime form "
                             "(a source the compiler cannot know)\n")
              : "")
      << ReusedCodeLine(sum) << "fuzz:   judged against the "
      << ReadingName(config.reading) << " reading; " << sum.counts.other_reading
      << " disagreements are exactly the "
      << (config.reading == Reading::kSpec ? "hardware" : "spec")
      << " reading's value (known spec-versus-hardware differences, "
         "oracle/errata.h): "
         "counted, not filed\n"
      << ErrataLines(p) << "fuzz:   declines: " << sum.declined_not_evaluable
      << " not evaluable (e.g. not "
      << "folded), " << sum.declined_unsupported << " unsupported variant, "
      << sum.declined_operand_form << " operand form, " << sum.declined_not_run
      << " not run (a batch's time budget or fault cap left them unrun, each "
         "sent again "
      << kMaxSendsAgain << " times), " << sum.declined_other << " other\n"
      << TopDeclineLine(sum) << RefusedClassLines(config, seconds)
      << FaultCostLine(sum) << "fuzz:   generated " << sum.offered
      << " tuples in " << sum.inputs << " fuzz inputs and " << sum.systematic
      << " systematically; " << sum.duplicates << " duplicates, "
      << sum.skipped_declining
      << " of operand classes the backend declines and " << sum.dropped
      << " dropped under backpressure were not sent\n"
      << PlannedLine(sum) << LeastExploredLine(p.sum.explored)
      << CalibrationLine(sum)
      << ProgramsLine(sum, config, pending_now.programs);
  auto store = TriageStore::Open(config.triage_dir, false, CheckProgramText);
  auto entries = store.ok()
                     ? store->List()
                     : absl::StatusOr<std::vector<EntryInfo>>(store.status());
  if (!entries.ok()) return;
  int64_t explained = 0;
  for (const EntryInfo& e : *entries) explained += e.explained();
  const std::vector<RootCause> causes = GroupByRootCause(*entries);
  out << "fuzz:   findings this run: " << FindingsThisRun(sum)
      << PendingRepeats(sum.pending_repeats) << "; the triage directory "
      << config.triage_dir << " holds "
      << EntriesAndCauses(entries->size(), causes.size()) << " (" << explained
      << " entries explained)\n";
  if (sum.filing_errors == 0)  // else an error (RunErrors)
    out << NotFiledYetLine(sum, pending_now.tuples, config.triage_dir);
  for (const RootCause& c : causes) {
    if (!c.explained()) out << "fuzz:     " << RootCauseLine(c) << "\n";
  }
  for (const EntryInfo& e : *entries) {
    for (const std::string& d : e.damage) {
      out << "fuzz:   warning: entry " << e.name << " is damaged: " << d
          << " (its next filing repairs it, keeping the damaged file)\n";
    }
  }
  if (!entries->empty()) {
    out << "fuzz:   see: ptxdiff triage list --dir " << config.triage_dir
        << "\n";
  }
}

// What made a run that ended by itself fail: findings it could not file,
// and a backend that tested nothing. Each is a line for the terminal.
std::vector<std::string> RunErrors(const Progress& p, const FuzzConfig& config,
                                   const std::string& log,
                                   int64_t kept_unrecorded) {
  const FuzzStats& sum = p.sum.stats;
  std::vector<std::string> errors;
  if (sum.filing_errors > 0) {
    std::string e = absl::StrCat(
        "could not write to the triage directory ", config.triage_dir, " (",
        sum.filing_errors, " failed writes; the last: ", sum.filing_error, ")");
    e += UnfiledOnAFailingDisk(sum, config.triage_dir, log);
    errors.push_back(std::move(e));
  }
  if (sum.program_write_errors > 0 || sum.programs_unjournaled > 0) {
    errors.push_back(absl::StrCat(
        "the program lane could not write to the triage directory ",
        config.triage_dir, " (", sum.program_write_errors, " failed writes)",
        sum.programs_unjournaled > 0
            ? absl::StrCat("; ", sum.programs_unjournaled,
                           " program findings could not be kept in its "
                           ".pending/ either (their journal lines are in ",
                           log, ")")
            : ""));
  }
  std::string nothing =
      NothingTestedError(sum.counts, sum.top_decline, sum.top_decline_count);
  // A Ctrl-C while it started: said as that, not as a backend that sent
  // nothing back.
  // Or it stopped before its counts were written, what it found kept in
  // the journal: no error, said in the summary (the nineteenth fault run:
  // "nothing was tested" beside 4 disagreements kept pending).
  if (!nothing.empty() && interrupted > 0 && sum.counts.tuples == 0) {
    nothing = kept_unrecorded > 0
                  ? ""
                  : "nothing was tested: interrupted before a batch came back";
  }
  if (!nothing.empty() && sum.counts.declined > 0) {
    std::string families;
    for (Family f : config.filter.include) {
      absl::StrAppend(&families, " --family ", InfoOf(f).opcode);
    }
    absl::StrAppend(&nothing, "; `ptxdiff sweep --backend '", config.backend,
                    "'", families, " --tuples 1` lists the declines by reason");
  }
  if (!nothing.empty()) errors.push_back(std::move(nothing));
  return errors;
}

// The error for failed writes under --out (`errors`, said as they came).
std::string OutWritesError(const std::vector<std::string>& errors,
                           const std::string& out_dir) {
  return absl::StrCat(
      "could not write under --out ", out_dir, " (", errors.size(),
      errors.size() == 1 ? " failed write: " : " failed writes; the first: ",
      errors[0],
      "); the run stopped there: what it judged is filed in the triage "
      "directory or kept in its .pending/, and the counts above may fall "
      "short");
}

}  // namespace

int RunFuzz(const std::vector<std::string>& args, std::ostream& out,
            std::ostream& err) {
  auto parsed =
      ParseArgs(args, {"report"},
                {"backend", "arch", "max-time", "jobs", "family", "exclude",
                 "dir", "corpus", "mode", "out", "progress-seconds", "timeout",
                 "reading", "cuda-driver", "programs"});
  if (!parsed.ok()) return Fail(err, "fuzz", parsed.status());
  const absl::StatusOr<int64_t> max_time = MaxTimeFlag(*parsed, 60);
  const absl::StatusOr<int64_t> jobs = IntFlag(*parsed, "jobs", 1, 1, 64);
  const absl::StatusOr<int64_t> every =
      IntFlag(*parsed, "progress-seconds", 5, 1, INT64_MAX);
  for (const absl::Status& s :
       {max_time.status(), jobs.status(), every.status()}) {
    if (!s.ok()) return Fail(err, "fuzz", s);
  }
  // The target's configuration travels in the environment: the settings
  // already there (PTXDIFF_CONFIG, PTXDIFF_*), overridden by the flags.
  absl::StatusOr<FuzzConfig> config = FuzzConfigFromEnvironment();
  if (!config.ok()) return Fail(err, "fuzz", config.status());
  if (auto s = ApplyFlags(*parsed, *config); !s.ok())
    return Fail(err, "fuzz", s);
  auto fuzzer = FindFuzzer();
  if (!fuzzer.ok()) return Fail(err, "fuzz", fuzzer.status());
  auto worker = FindWorkerBinary();
  if (!worker.ok()) return Fail(err, "fuzz", worker.status());
  config->worker = *worker;
  // --backend, else the target's own variable (the fifteenth fault run: it
  // was ignored, the run went to the default), else the best one here.
  const std::string from_environment = config->backend;
  config->backend = parsed->Get("backend", from_environment);
  if (config->backend.empty()) {
    const DefaultBackend d = ChooseDefaultBackend();
    config->backend = d.name;
    out << "fuzz: backend " << d.name << ": " << d.reason << "\n";
  } else if (!parsed->Has("backend")) {
    out << "fuzz: backend " << config->backend
        << ": from PTXDIFF_BACKEND (the environment or $PTXDIFF_CONFIG)\n";
  }
  const auto cuda_driver = CudaDriverFlag(*parsed, config->backend);
  if (!cuda_driver.ok()) return Fail(err, "fuzz", cuda_driver.status());
  if (!cuda_driver->empty()) config->cuda_driver = *cuda_driver;
  // A backend the fuzzer could not start is exit 2 before any directory is
  // made, as in `eval` and `sweep`.
  if (auto command = CommandForBackend(config->backend, *worker);
      !command.ok()) {
    return Fail(err, "fuzz", command.status());
  }

  const std::string out_dir = parsed->Get("out", "out");
  const std::string corpus =
      parsed->Get("corpus", out_dir + "/corpus/differential");
  const std::string dict = out_dir + "/differential.dict";
  const std::string log = out_dir + "/fuzz.log";
  config->triage_dir = parsed->Get("dir", DefaultTriageDir());
  config->findings_dir = out_dir + "/findings";  // libFuzzer's -artifact_prefix
  config->refusals_dir = out_dir + "/refusals";
  config->stats_dir = absl::StrCat(
      out_dir, "/stats/run-", absl::ToUnixSeconds(absl::Now()), "-", getpid());
  bool resumed = false;
  if (auto s = PrepareOutputs(out_dir, corpus, config->stats_dir,
                              config->triage_dir, dict, resumed);
      !s.ok()) {
    return Fail(err, "fuzz", s);
  }
  // A tool's refusals are remembered there: a file in its place would have
  // every one "remembered" and none kept.
  if (absl::StartsWith(config->backend, kPtxCmdPrefix)) {
    if (auto s = MakeRefusalsDir(config->refusals_dir); !s.ok())
      return Fail(err, "fuzz", s);
  }
  // The run ends max_time from now, start-up (workers, calibration) included.
  config->deadline_unix_seconds = absl::ToUnixSeconds(absl::Now()) + *max_time;
  for (const auto& [key, value] : FuzzConfigToPairs(*config)) {
    setenv(key.c_str(), value.c_str(), 1);
  }

  // -print_funcs=0: libFuzzer's NEW_FUNC lines start llvm-symbolizer,
  // which takes a core from the campaign while it runs.
  std::vector<std::string> argv = {*fuzzer,
                                   corpus,
                                   "-dict=" + dict,
                                   absl::StrCat("-max_total_time=", *max_time),
                                   "-artifact_prefix=" + out_dir + "/findings/",
                                   "-print_final_stats=1",
                                   "-print_funcs=0"};
  if (*jobs > 1) argv.push_back(absl::StrCat("-fork=", *jobs));
  out << "fuzz: "
      << (resumed ? "resuming from " : "starting with the seed corpus in ")
      << corpus << "; triage directory " << config->triage_dir
      << "; libFuzzer log " << log << "\n";
  if (absl::string_view command = config->backend;
      absl::ConsumePrefix(&command, kPtxCmdPrefix)) {
    const std::vector<std::string> targets =
        TargetsWithRefusals(config->refusals_dir, command);
    if (!targets.empty()) {
      out << "fuzz: what this tool refused in earlier runs (PTX for "
          << absl::StrJoin(targets, ", ")
          << ") is not sent again (remembered in " << config->refusals_dir
          << "/; delete it after changing the tool)\n";
    }
  }
  out.flush();
  const absl::StatusOr<std::unique_ptr<FuzzerLog>> fuzzer_log =
      FuzzerLog::Open(log);
  if (!fuzzer_log.ok()) return Fail(err, "fuzz", fuzzer_log.status());
  std::set<std::string> empty_before = EmptyCorpusFiles(corpus);
  // Counted before the fuzzer claims them: what its start-up re-judges.
  const PendingFindings pending = CountPendingFindings(config->triage_dir);
  CountInterrupts();  // before the fuzzer starts: it may be stopped at once
  const absl::StatusOr<std::unique_ptr<FuzzerProcess>> fuzzer_process =
      FuzzerProcess::Start(argv, **fuzzer_log,
                           *jobs > 1 ? FuzzerProcess::kForkJobsRoom : 0);
  if (!fuzzer_process.ok()) {
    StopCountingInterrupts();
    return Fail(err, "fuzz", fuzzer_process.status());
  }
  const absl::Time start = absl::Now();
  OutWrites writes{.log = **fuzzer_log,
                   .corpus = corpus,
                   .empty_before = std::move(empty_before)};
  Timeline timeline{.writer = TimelineWriter(
                        "fuzz",
                        absl::StrCat(config->stats_dir, "/", kTimelineFile),
                        TimelineHeader(RunKind::kTuples))};
  const int status = WaitWithProgress(
      **fuzzer_process, config->stats_dir, *every, start,
      absl::FromUnixSeconds(config->deadline_unix_seconds), writes, out,
      timeline, pending.tuples + pending.programs, err);
  const bool forwarded = (*fuzzer_process)->asked_to_stop();
  const bool killed = (*fuzzer_process)->killed();  // said when it was
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const Progress p = ReadProgress(config->stats_dir);
  if (p.processes > 0) timeline.Add(p, seconds, err);
  // What the journals hold now: the summary's and the kept line's.
  const PendingFindings pending_at_end =
      CountPendingFindings(config->triage_dir);
  // Stopped in order for its temporary files: exit 2, a bad environment.
  const bool environment_failed =
      WIFEXITED(status) && WEXITSTATUS(status) == kFuzzerExitEnvironment;
  const bool libfuzzer_crashed = WIFEXITED(status) &&
                                 WEXITSTATUS(status) != 0 && !forwarded &&
                                 !environment_failed;
  const bool never_started = libfuzzer_crashed && p.sum.stats.inputs == 0;
  bool unreported = false;
  if (!never_started) {  // a summary of nothing would bury the error below
    out << ProgressLine(p, seconds) << "\n";
    PrintSummary(p, seconds, *config, pending_at_end, out);
    // Said by the fuzzer, whose output only the log keeps.
    for (const std::string& w : (*fuzzer_log)->journal_warnings())
      out << "fuzz:   warning: " << w << "\n";
    if (!writes.errors.empty()) {
      out << "fuzz:   stopped early: " << writes.errors.size()
          << " write(s) under " << out_dir << " failed (the error below)\n";
    }
    unreported =
        parsed->Has("report") &&
        !WriteReportAtTheEnd("fuzz", out_dir, config->triage_dir, out, err);
  }
  if ((libfuzzer_crashed || WIFSIGNALED(status)) && !killed) {
    // The target's own errors ("ptxdiff: ...": a backend that cannot start,
    // families it does not run) say more than the exit status: first.
    std::vector<absl::string_view> said;
    for (absl::string_view line : absl::StrSplit((*fuzzer_log)->tail(), '\n')) {
      if (absl::StartsWith(line, "ptxdiff: ") &&
          !absl::StartsWith(line, "ptxdiff: fuzzing against"))
        said.push_back(line.substr(9));
    }
    const std::string how =
        WIFSIGNALED(status) ? absl::StrCat("signal ", WTERMSIG(status))
                            : absl::StrCat("exit status ", WEXITSTATUS(status));
    if (!said.empty() && never_started) {
      // The target said why it could not start (a backend that cannot run
      // here): an error, exit 2, as every other command says it (the
      // twenty-first fault run: on stdout, exit 1).
      for (absl::string_view line : said)
        err << "ptxdiff fuzz: " << line << "\n";
      err << "ptxdiff fuzz: nothing was checked (the fuzzer's " << how
          << "); its log: " << log << "\n";
      if (!writes.errors.empty()) {
        err << "ptxdiff fuzz: " << OutWritesError(writes.errors, out_dir)
            << "\n";
      }
      return kExitBadInput;
    }
    for (absl::string_view line : said) out << "fuzz: " << line << "\n";
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT && interrupted > 0) {
      // Its handlers are set once it has started: a Ctrl-C before ends it.
      out << "fuzz: interrupted while the fuzzer started, before its "
             "campaign could stop in order (it ended by the signal); see "
          << log << "\n";
    } else {
      out << "fuzz: the fuzzer exited abnormally (" << how << "); see " << log
          << " and " << out_dir << "/findings/\n";
    }
  }
  // Findings met and journaled, where the counts were not written yet (a
  // Ctrl-C in the first second): kept for the next run, and said.
  const int64_t kept_unrecorded = p.sum.stats.counts.tuples == 0
                                      ? pending_at_end.total() - pending.total()
                                      : 0;
  out << KeptBeforeTheCountsLine(kept_unrecorded, config->triage_dir);
  // A run that could not file what it found, or tested nothing, fails: a CI
  // gate must not pass on it. The reasons go to stderr, after the summary
  // (a fuzzer that never started has said why above).
  std::vector<std::string> errors =
      never_started ? std::vector<std::string>()
                    : RunErrors(p, *config, log, kept_unrecorded);
  if (!writes.errors.empty())
    errors.push_back(OutWritesError(writes.errors, out_dir));
  if (unreported) errors.push_back("the report was not written (--report)");
  if (killed) {
    errors.push_back(
        absl::StrCat("the fuzzer was killed before it finished; "
                     "findings it had not filed are kept in ",
                     config->triage_dir, "/.pending/"));
  }
  if (environment_failed)  // first: what the rest comes of
    errors.insert(errors.begin(), (*fuzzer_log)->environment_failure());
  for (const std::string& e : errors) err << "ptxdiff fuzz: " << e << "\n";
  if (environment_failed) return kExitBadInput;
  return libfuzzer_crashed || WIFSIGNALED(status) || !errors.empty() ? 1 : 0;
}

}  // namespace ptxdiff
