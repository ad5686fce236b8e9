#include "cli/triage_commands.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/backend_commands.h"
#include "cli/case_origin.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/program_command.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/printable.h"
#include "common/status_macros.h"
#include "fuzzers/differential_target.h"
#include "harness/differential.h"
#include "isa/fuzz_input.h"
#include "isa/operand_form.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/program_encoding.h"
#include "triage/minimizer.h"
#include "triage/pending_journal.h"
#include "triage/text_case.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

// A case file's bytes, read once: a pipe (`repro <(...)`) has them once.
absl::StatusOr<std::string> ReadCaseFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     " is a directory, not a case (a triage entry's is its "
                     "case.txt)"));
  }
  PTXDIFF_ASSIGN_OR_RETURN(std::string data,
                           ReadFileAtMost(path, kMaxCaseFileBytes));
  if (data.empty())
    return absl::InvalidArgumentError(absl::StrCat(path, " is empty"));
  return data;
}

// Whether `data` has a program case's `input %x` or `output %x` line: a
// program's text whose header line was lost (the twelfth fault run: it was
// said as a crash file naming no known variant).
bool LooksLikeAProgramWithoutItsHeader(absl::string_view data) {
  for (absl::string_view line : absl::StrSplit(data.substr(0, 1 << 16), '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (absl::StartsWith(line, "input %") || absl::StartsWith(line, "output %"))
      return true;
  }
  return false;
}

// The tuples of `data`, `path`'s: a text case or a libFuzzer crash file.
absl::StatusOr<std::vector<Tuple>> CaseTuples(const std::string& path,
                                              const std::string& data) {
  if (LooksLikeTextCase(data)) {
    // Every tuple: a case of a batch (an unisolated fault) replays whole.
    auto tuples = ParseTextCaseTuples(data);
    if (!tuples.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", tuples.status().message()));
    }
    return tuples;
  }
  auto tuples = DecodeFuzzInput(data);
  if (!tuples.ok() && LooksLikeAProgramWithoutItsHeader(data)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": a program case (it has `input`/`output` lines) without its "
        "first line `",
        kProgramHeader, "`"));
  }
  if (!tuples.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": not a text case, and as a crash file: ", tuples.status().message()));
  }
  return tuples;
}

// "add.s32", or "3 variants (add.cc.s32, ...)": what a replay's tuples are of.
std::string VariantsOf(const std::vector<Tuple>& tuples) {
  size_t variants = 0;
  for (size_t i = 0; i < tuples.size(); ++i) {
    variants += std::none_of(
        tuples.begin(), tuples.begin() + i,
        [&](const Tuple& t) { return t.variant == tuples[i].variant; });
  }
  const std::string first = Spell(tuples[0].variant);
  return variants == 1 ? first
                       : absl::StrCat(variants, " variants (", first, ", ...)");
}

// The file `repro` replays for `arg`: a file as it is; a triage entry's
// case.txt, for the entry's directory or its name (as `triage list` prints
// it) in `triage_dir`. (An entry's directory was read as a crash file of 0
// bytes.)
absl::StatusOr<std::string> CaseFileFor(const std::string& arg,
                                        const std::string& triage_dir) {
  if (IsDirectory(arg)) {
    const std::string entry_case = arg + "/case.txt";
    if (access(entry_case.c_str(), F_OK) == 0) {
      PTXDIFF_RETURN_IF_ERROR(RefuseEntryFifo(entry_case));
      return entry_case;
    }
    return absl::NotFoundError(
        absl::StrCat(arg,
                     " is a directory without a case.txt: not a triage entry, "
                     "or a damaged one "
                     "(`ptxdiff triage list` says)"));
  }
  if (access(arg.c_str(), F_OK) != 0 && arg.find('/') == std::string::npos &&
      ParseEntryName(arg).ok()) {
    const std::string entry = absl::StrCat(triage_dir, "/", arg);
    if (!IsDirectory(entry)) {
      return absl::NotFoundError(
          absl::StrCat("no entry ", arg, " in ", triage_dir,
                       " (`ptxdiff triage list --dir DIR` lists them)"));
    }
    return CaseFileFor(entry, triage_dir);
  }
  return arg;  // ReadCaseFile says what is wrong with it, if anything
}

// The words of a shell command line: spaces split them, and '...' quotes
// (with '\'' for a quote, as ShellQuote writes it).
std::vector<std::string> ShellWords(absl::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '\'') {
        quoted = false;
      } else {
        word += c;
      }
    } else if (c == '\'') {
      quoted = in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

// Whether the entry at `entry_dir` is a hang of a whole module or batch
// that its run did not isolate (its trigger class says so).
bool IsUnisolatedHang(const std::string& entry_dir) {
  const absl::StatusOr<Signature> signature =
      ParseEntryName(entry_dir.substr(entry_dir.rfind('/') + 1));
  return signature.ok() && signature->kind == FindingKind::kHang &&
         signature->disagreement_class == "unisolated-hang";
}

// The flags a program case's "# Replay: ptxdiff program case.txt FLAGS"
// line gives (a filed entry's case has one); empty if it has none.
std::vector<std::string> ReplayFlagsOf(absl::string_view case_text) {
  for (absl::string_view line : absl::StrSplit(case_text, '\n')) {
    if (absl::ConsumePrefix(&line, "# Replay: ptxdiff program case.txt ")) {
      return ShellWords(line);
    }
  }
  return {};
}

// What a triage verb takes, for its error; every verb's, for any other word.
std::string TriageVerbUsage(absl::string_view verb) {
  if (verb == "show") return "show ENTRY";
  if (verb == "merge") return "merge DIR...";
  if (verb == "mark") return "mark ENTRY --explained WHY";
  return "list, show ENTRY, merge DIR... or mark ENTRY --explained WHY";
}

bool IsTriageVerb(absl::string_view verb) {
  return verb == "list" || verb == "show" || verb == "merge" || verb == "mark";
}

absl::StatusOr<ParsedArgs> OneFile(const std::vector<std::string>& args,
                                   const std::set<std::string>& valued) {
  auto parsed = ParseArgs(args, {}, valued);
  if (!parsed.ok()) return parsed.status();
  if (parsed->positional.size() != 1) {
    return absl::InvalidArgumentError(
        "expects one FILE (a text case or a crash file)");
  }
  return parsed;
}

}  // namespace

std::string DefaultTriageDir() {
  const char* env = std::getenv("PTXDIFF_TRIAGE_DIR");
  return env && *env ? env : "out/triage";
}

// A crash file that gives no forms runs in the default form of the worker
// replaying it, as the fuzz loop ran it (isa/fuzz_input.h).
void UseDefaultFormOfCrashFile(const std::string& raw,
                               const WorkerIdentity& worker,
                               std::vector<Tuple>& tuples) {
  if (LooksLikeTextCase(raw) || FuzzInputHasForms(raw)) return;
  const bool runtime = worker.forms && worker.runtime_by_default;
  for (Tuple& t : tuples) t.runtime = DefaultForm(t.variant, runtime);
}

int RunRepro(const std::vector<std::string>& args, std::ostream& out,
             std::ostream& err) {
  auto parsed = OneFile(
      args, {"backend", "arch", "timeout", "reading", "cuda-driver", "dir"});
  if (!parsed.ok()) return Fail(err, "repro", parsed.status());
  auto reading = ReadingFlag(*parsed);
  if (!reading.ok()) return Fail(err, "repro", reading.status());
  auto path = CaseFileFor(parsed->positional[0],
                          parsed->Get("dir", DefaultTriageDir()));
  if (!path.ok()) return Fail(err, "repro", path.status());
  const std::optional<std::string> entry = EntryDirOf(*path);
  const absl::StatusOr<std::string> raw = ReadCaseFile(*path);
  if (!raw.ok()) return Fail(err, "repro", raw.status());
  if (LooksLikeProgramCase(*raw)) {
    // A program case: what `ptxdiff program` shows of it; an entry's on the
    // backend it was found on, as its case's Replay line says.
    std::vector<std::string> program_args = {*path};
    for (const char* flag :
         {"backend", "arch", "reading", "timeout", "cuda-driver"}) {
      if (parsed->Has(flag))
        program_args.insert(program_args.end(),
                            {absl::StrCat("--", flag), parsed->Get(flag)});
    }
    // An entry's case says how to replay it; where that line was lost, its
    // meta.txt still names the backend.
    std::vector<std::string> replay = ReplayFlagsOf(*raw);
    if (replay.empty() && entry && !parsed->Has("backend")) {
      absl::StatusOr<std::vector<std::string>> flags =
          EntryBackendFlags(*entry);
      if (!flags.ok()) return Fail(err, "repro", flags.status());
      replay = *std::move(flags);
    }
    if (!parsed->Has("backend") && !replay.empty()) {
      out << "repro: replaying on the backend it was found on: "
          << absl::StrJoin(replay, " ") << "\n";
      program_args.insert(program_args.end(), replay.begin(), replay.end());
    }
    const bool unisolated = entry && IsUnisolatedHang(*entry);
    if (unisolated) {
      out << "repro: " << *entry
          << " is the hang of a module of programs the run could not "
             "isolate to one: its case is the module's first program, "
             "which alone need not hang (repro.ptx holds the whole module, "
             "input.bin its input)\n";
    }
    const int code = RunProgramAs("repro", program_args, out, err, *raw);
    if (unisolated && code == kExitOk) {
      out << "repro: not shown: the first program alone does not hang; the "
             "module's hang is not replayed by repro\n";
      return kExitNotJudged;
    }
    return code;
  }
  auto tuples = CaseTuples(*path, *raw);
  if (!tuples.ok()) return Fail(err, "repro", tuples.status());
  auto found = WhereTupleCaseWasFound("repro", *parsed, *path, *raw, out);
  if (!found.ok()) return Fail(err, "repro", found.status());
  auto client = StartBackend(found->args);
  if (!client.ok()) return Fail(err, "repro", client.status());
  if (found->crash_file) {
    out << CrashOriginNote("repro", found->origin, found->origins_not_read,
                           *parsed, **client, found->dir);
  }
  UseDefaultFormOfCrashFile(*raw, (*client)->identity(), *tuples);
  if (tuples->size() == 1) {
    const Tuple& t = (*tuples)[0];
    // With runtime sources, the instruction as the compiler saw it.
    out << "case:    "
        << (t.runtime != 0 ? FormattedInstruction(t) : Spell(t.variant))
        << "\noperands: "
        << absl::StrJoin(HexOperands(t.variant, t.operands), " ") << "\n";
    const BatchOutcome outcome = (*client)->Run(*tuples);
    if (EnvironmentFailed(outcome))  // not the backend's: no verdict
      return Fail(err, "repro", absl::UnavailableError(outcome.fault->detail));
    return PrintBackendEval(t, *reading, **client, outcome, out);
  }
  DiffSummary s;
  // One batch, as it was sent: a batch's fault may need all of it.
  RunDifferential(**client, *tuples, tuples->size(), s, *reading);
  if (!s.environment_failure.empty())
    return Fail(err, "repro", absl::UnavailableError(s.environment_failure));
  out << absl::StrFormat(
      "repro: %d tuples of %s on %s: %d agree, %d mismatch, %d declined, %d "
      "unspecified, %d other reading, %d faulted, %d faulty batches\n",
      s.counts.tuples, VariantsOf(*tuples), (*client)->identity().Describe(),
      s.counts.agreed, s.counts.mismatched, s.counts.declined,
      s.counts.unspecified, s.counts.other_reading, s.counts.faulted,
      s.counts.faulty_batches);
  for (const std::string& m : s.mismatches) out << "mismatch: " << m << "\n";
  for (const std::string& f : s.faults) out << "fault: " << f << "\n";
  if (s.counts.mismatched > 0 || s.counts.faulty_batches > 0 ||
      s.counts.faulted > 0)
    return 1;
  // Every tuple declined or left open by the spec: nothing agreed.
  return s.counts.agreed + s.counts.other_reading > 0 ? kExitOk
                                                      : kExitNotJudged;
}

int RunMinimize(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  auto parsed = OneFile(args, {"backend", "arch", "timeout", "dir", "reading",
                               "cuda-driver", "max-time"});
  if (!parsed.ok()) return Fail(err, "minimize", parsed.status());
  auto reading = ReadingFlag(*parsed);
  if (!reading.ok()) return Fail(err, "minimize", reading.status());
  const std::string path = parsed->positional[0];
  const absl::StatusOr<std::string> raw = ReadCaseFile(path);
  if (!raw.ok()) return Fail(err, "minimize", raw.status());
  if (LooksLikeProgramCase(*raw))
    return MinimizeProgramCase(path, *raw, *parsed, out, err);
  auto tuples = CaseTuples(path, *raw);
  if (!tuples.ok()) return Fail(err, "minimize", tuples.status());
  if (parsed->Has("max-time")) {  // a flag given is never ignored
    return Fail(err, "minimize",
                absl::InvalidArgumentError(
                    "--max-time bounds the minimizing of a program case; a "
                    "tuple case's is bounded by its rounds"));
  }
  // Ctrl-C ends it, nothing filed, said as a program case's is (the twelfth
  // fault run: exit 130 and nothing printed).
  const ScopedInterruptHandler on_interrupt;
  const auto interrupted = [&] {
    out << "minimize: interrupted: nothing filed of " << path << "\n";
    return kExitInterrupted;
  };
  // Open the triage directory first: a bad one fails before any work.
  auto store = TriageStore::Open(parsed->Get("dir", DefaultTriageDir()),
                                 /*create=*/true);
  if (!store.ok()) return Fail(err, "minimize", store.status());
  // Where it was found, as `repro` runs it (the eighteenth fault run: a
  // crash file minimized on the default backend said "no disagreement").
  auto found = WhereTupleCaseWasFound("minimize", *parsed, path, *raw, out);
  if (!found.ok()) return Fail(err, "minimize", found.status());
  auto client = StartBackend(found->args);
  if (!client.ok() && Interrupted()) return interrupted();
  if (!client.ok()) return Fail(err, "minimize", client.status());
  if (found->crash_file) {
    out << CrashOriginNote("minimize", found->origin, found->origins_not_read,
                           *parsed, **client, found->dir);
  }
  UseDefaultFormOfCrashFile(*raw, (*client)->identity(), *tuples);

  const BatchOutcome outcome = (*client)->Run(*tuples);
  if (Interrupted()) return interrupted();
  if (EnvironmentFailed(outcome))  // not the backend's: nothing to minimize
    return Fail(err, "minimize", absl::UnavailableError(outcome.fault->detail));
  absl::StatusOr<Finding> finding = absl::FailedPreconditionError(absl::StrCat(
      "no disagreement in ", path, " on ", (*client)->identity().Describe()));
  // Why no tuple was judged, where none was: no agreement (the
  // seventeenth fault run: a tool that refuses the variant said "no
  // disagreement", as for a case that agrees).
  std::string none_judged;
  if (outcome.fault) {
    finding = IsolateFault(**client, *tuples);
  } else {
    bool judged = false;
    for (size_t i = 0; i < tuples->size(); ++i) {
      const Tuple& t = (*tuples)[i];
      const Verdict verdict =
          JudgeTuple(t, outcome.results[i], *reading).verdict;
      if (verdict == Verdict::kMismatch || verdict == Verdict::kFault) {
        finding = MinimizeMismatch(**client, t, *reading);
        break;
      }
      judged |= verdict != Verdict::kDeclined;
      if (verdict == Verdict::kDeclined && none_judged.empty()) {
        // A decline's message is its reason (the eighteenth fault run: "no
        // reason given" for a tool that said which instruction it refused).
        const uint32_t m = outcome.results[i].message;
        none_judged =
            m < outcome.messages.size() && !outcome.messages[m].empty()
                ? outcome.messages[m]
                : "no reason given";
      }
    }
    if (judged) none_judged.clear();
  }
  if (!finding.ok() && !none_judged.empty()) {
    out << "minimize: " << path << " was not judged on "
        << (*client)->identity().Describe() << ": declined: " << none_judged
        << "\n";
    return kExitNotJudged;
  }
  if (Interrupted()) return interrupted();
  if (!finding.ok() && IsEnvironmentFailure(finding.status()))
    return Fail(err, "minimize", finding.status());
  if (!finding.ok()) {
    out << "minimize: " << finding.status().message() << "\n";
    return absl::IsFailedPrecondition(finding.status()) ? 1 : kExitBadInput;
  }
  if (!LooksLikeTextCase(*raw)) finding->raw_input = *raw;
  auto filed = store->File(*finding);
  if (!filed.ok()) return Fail(err, "minimize", filed.status());
  out << FormatTextCase(*finding)
      << absl::StrFormat(
             "minimize: %d backend calls, %.2f s%s\n",
             finding->minimize_backend_calls, finding->minimize_seconds,
             finding->flaky ? ", FLAKY: the minimized case did not repeat" : "")
      << "minimize: "
      << (filed->is_new ? "filed new entry " : "counted existing entry ")
      << store->dir() << "/" << filed->entry << "\n";
  if (!filed->repaired.empty()) {
    err << "ptxdiff minimize: repaired the damaged entry: " << filed->repaired
        << "\n";
  }
  if (!filed->index_error.empty()) {
    // As fuzz and programs: what the user asked for is not all kept.
    err << "ptxdiff minimize: the entry is filed, but " << filed->index_error
        << "\n";
    return 1;
  }
  return 0;
}

namespace {

// What `triage_dir`'s pending journals hold, in a line of its own ("" when
// nothing): findings a campaign met and has not filed, which no entry shows.
std::string PendingLine(const std::string& triage_dir,
                        absl::string_view aside = "") {
  const PendingFindings pending = CountPendingFindings(triage_dir);
  if (pending.total() == 0) return "";
  return absl::StrCat(
      pending.total(), pending.total() == 1 ? " finding" : " findings",
      " not yet filed in ", triage_dir, "/.pending/", aside,
      ": the next campaign (fuzz or programs) on ", triage_dir, " files ",
      pending.total() == 1 ? "it" : "them", " first\n");
}

// `triage show D/ENTRY` (an entry's path, as `repro` takes): the entry
// `ENTRY` of the directory `D`, where --dir is not given or names `D` too
// (the thirteenth fault run: "triage directory out/triage does not exist").
void TakeEntryPath(const ParsedArgs& args, std::string& dir,
                   std::string& entry) {
  // An entry's case, as `repro` takes it, names the entry too (the
  // eighteenth fault run: "… is not an entry name").
  if (absl::EndsWith(entry, "/case.txt") && EntryDirOf(entry))
    entry = *EntryDirOf(entry);
  if (entry.find('/') == std::string::npos || !IsDirectory(entry)) return;
  // Where it really is: a link to an entry, "D//E", "D/x/../E" (the
  // seventeenth fault run: refused, where `repro` took them).
  char resolved[PATH_MAX];
  if (realpath(entry.c_str(), resolved) == nullptr) return;
  const absl::string_view path = resolved;
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return;
  const std::string parent(slash == 0 ? "/" : path.substr(0, slash));
  struct stat given, holding;
  if (args.Has("dir") &&
      !(stat(dir.c_str(), &given) == 0 && stat(parent.c_str(), &holding) == 0 &&
        given.st_dev == holding.st_dev && given.st_ino == holding.st_ino))
    return;
  dir = parent;
  entry = std::string(path.substr(slash + 1));
}

}  // namespace

int RunTriage(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err) {
  auto parsed = ParseArgs(args, {}, {"dir", "explained"});
  if (!parsed.ok()) return Fail(err, "triage", parsed.status());
  std::vector<std::string> pos = parsed->positional;
  if (pos.empty()) {
    return Fail(err, "triage",
                absl::InvalidArgumentError(
                    absl::StrCat("expects ", TriageVerbUsage(""))));
  }
  const std::string& verb = pos[0];
  // Before the directory is opened: a misspelt verb is no missing directory.
  if (!IsTriageVerb(verb)) {
    return Fail(err, "triage",
                absl::InvalidArgumentError(absl::StrCat(
                    "unknown triage subcommand '", verb, "'; expects ",
                    TriageVerbUsage(""), " (ptxdiff triage --help)")));
  }
  // list and show only read: a read-only directory is theirs to read.
  std::string dir = parsed->Get("dir", DefaultTriageDir());
  if ((verb == "show" || verb == "mark") && pos.size() == 2)
    TakeEntryPath(*parsed, dir, pos[1]);
  const bool reads_only = verb == "list" || verb == "show";
  // A change waits for the directory's lock, and a merge stops between
  // entries: a Ctrl-C ends either, said (the twenty-second fault run: a
  // merge waiting for the lock was killed by the signal, nothing said).
  std::optional<ScopedInterruptHandler> on_interrupt;
  if (!reads_only) on_interrupt.emplace();
  auto store = reads_only
                   ? TriageStore::OpenToRead(dir, CheckProgramText)
                   : TriageStore::Open(dir, verb == "merge", CheckProgramText);
  if (!store.ok() && Interrupted()) {
    err << "ptxdiff triage: " << store.status().message() << "\n";
    return kExitInterrupted;
  }
  if (!store.ok()) return Fail(err, "triage", store.status());
  if (verb == "list" && pos.size() == 1) {
    auto entries = store->List();
    if (!entries.ok()) return Fail(err, "triage", entries.status());
    // By root cause (entries that differ only in their trigger class), each
    // cause's entries under it when it has more than one.
    const std::vector<RootCause> causes = GroupByRootCause(*entries);
    for (const RootCause& c : causes) {
      // One line per cause, in words, its entries beneath.
      out << absl::StrFormat("cause: %s (%s on %s: %s, %d %s)\n",
                             CauseInWords(c), FindingKindName(c.kind),
                             c.backend,
                             c.entries.size() == 1
                                 ? "1 entry"
                                 : absl::StrCat(c.entries.size(), " entries"),
                             c.count, c.count == 1 ? "time" : "times");
      for (const EntryInfo* e : c.entries) {
        const auto batch = e->meta.find("batch");  // an unisolated fault's
        // The entry's name: what show, mark and repro take.
        out << absl::StrFormat(
            "%6s  %s%s%s%s%s\n", e->CountText(), e->name, e->Gist(),
            batch == e->meta.end()
                ? ""
                : absl::StrCat(" (a batch of ", batch->second, ")"),
            e->explained() ? "  (explained)" : "",
            e->damage.empty() ? "" : "  (DAMAGED: see below)");
        // A program's name is a hash: say what it is.
        if (const auto what = e->meta.find("what"); what != e->meta.end()) {
          out << "        " << what->second << "\n";
        }
      }
    }
    int damaged = 0;
    for (const EntryInfo& e : *entries) {
      damaged += !e.damage.empty();
      for (const std::string& d : e.damage) {
        err << "ptxdiff triage: warning: entry " << e.name << ": " << d << "\n";
      }
    }
    out << EntriesAndCauses(entries->size(), causes.size())
        << (damaged > 0 ? absl::StrCat(", ", damaged,
                                       " damaged (the next filing of each "
                                       "repairs it, keeping the damaged files)")
                        : "")
        << ", in " << store->dir() << "\n";
    out << PendingLine(store->dir());
    if (!entries->empty()) {
      out << "(ptxdiff triage show ENTRY shows one; ptxdiff repro ENTRY "
             "--backend NAME "
             "replays it)\n";
    }
    return 0;
  }
  if (verb == "show" && pos.size() == 2) {
    auto text = store->Show(pos[1]);
    if (!text.ok()) return Fail(err, "triage", text.status());
    out << *text;
    return 0;
  }
  if (verb == "merge" && pos.size() >= 2) {
    // A directory named twice (`merge t t ./t/`) is merged once: the
    // fifteenth fault run saw its counts added three times, without a word.
    std::set<std::pair<dev_t, ino_t>> merged;
    for (size_t i = 1; i < pos.size(); ++i) {
      if (struct stat st; stat(pos[i].c_str(), &st) == 0 &&
                          !merged.insert({st.st_dev, st.st_ino}).second) {
        err << "ptxdiff triage: " << pos[i]
            << " was named before in this merge: merged once\n";
        continue;
      }
      std::vector<std::string> skipped, damaged;
      auto added = store->MergeFrom(pos[i], &skipped, &damaged);
      if (!added.ok() && Interrupted()) {
        err << "ptxdiff triage: " << added.status().message() << "\n";
        return kExitInterrupted;
      }
      if (!added.ok()) return Fail(err, "triage", added.status());
      // Not without a word: a directory renamed by hand is no entry here.
      // Its name on one line, whatever bytes it holds.
      for (const std::string& name : skipped) {
        err << "ptxdiff triage: skipped " << pos[i] << "/"
            << absl::StrReplaceAll(PrintableBytes(name),
                                   {{"\n", "\\x0a"}, {"\t", "\\x09"}})
            << ": not an entry name\n";
      }
      for (const std::string& line : damaged)
        err << "ptxdiff triage: warning: " << pos[i] << "/"
            << PrintableBytes(line) << "\n";
      out << "merged " << pos[i] << ": " << *added << " new entries\n"
          << PendingLine(pos[i], " (not merged)");
    }
    return 0;
  }
  if (verb == "mark" && pos.size() == 2 && parsed->Has("explained")) {
    const absl::StatusOr<std::string> repaired =
        store->MarkExplained(pos[1], parsed->Get("explained"));
    if (!repaired.ok()) return Fail(err, "triage", repaired.status());
    // A damaged meta.txt is rebuilt, and what it held (the backend that
    // found it, the count) is no longer there but in its kept copy; an
    // index not rewritten: said (the fourteenth and fifteenth fault runs).
    if (!repaired->empty()) {
      err << "ptxdiff triage: marking " << pos[1] << ": " << *repaired << "\n";
    }
    out << "marked " << pos[1] << " as explained\n";
    return 0;
  }
  return Fail(err, "triage",
              absl::InvalidArgumentError(
                  absl::StrCat("'", verb, "' takes: ", TriageVerbUsage(verb),
                               " (ptxdiff triage --help)")));
}

}  // namespace ptxdiff
