#include "cli/program_command.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/report_command.h"
#include "cli/triage_commands.h"
#include "client/worker_client.h"
#include "client/worker_locator.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_backends.h"
#include "program/program_campaign.h"
#include "program/program_cuda.h"
#include "program/program_encoding.h"
#include "program/program_ptxas.h"
#include "program/program_tool.h"
#include "protocol/backend_names.h"
#include "report/run_records.h"
#include "triage/triage_store.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"
#include "worker/backends/ptxas/sass_constants.h"

namespace ptxdiff {
namespace {

constexpr int kExitDisagree = 1;
// A backend was named and no form of the program could be judged on it:
// not 0, which says that what was judged agrees.
constexpr int kExitNotJudged = 3;
// A stop (Ctrl-C) before the verdict: 128 + SIGINT, as a shell reports it.
constexpr int kExitInterrupted = 130;

// What one form of the program gave, from least to most telling: a verdict
// names the most telling of its forms.
enum class Judged : uint8_t {
  kNotJudged,
  kAgree,
  kMismatch,
  kHang,
  kCrash,
  kInterrupted
};

absl::string_view JudgedName(Judged j) {
  switch (j) {
    case Judged::kNotJudged:
      return "not judged";
    case Judged::kAgree:
      return "agree";
    case Judged::kMismatch:
      return "mismatch";
    case Judged::kHang:
      return "hang";
    case Judged::kCrash:
      return "crash";
    case Judged::kInterrupted:
      return "interrupted";
  }
  return "?";
}

absl::string_view FormName(ProgramInputs form) {
  return form == ProgramInputs::kRuntime ? "runtime" : "immediate";
}

// The decoder's reason without its "not folded: " prefix.
absl::string_view Reason(absl::string_view why_not) {
  absl::ConsumePrefix(&why_not, "not folded: ");
  return why_not;
}

// A compilation that gave no constants: a crash of ptxas, a run cut by a
// stop, or code (or a rejection, or a timeout) that is not judged.
Judged Unjudged(const ProgramCompilation& c, absl::string_view not_judged,
                std::ostream& out) {
  if (c.fault) {
    out << "crashed: " << c.fault->what << "\n";
    return Judged::kCrash;
  }
  if (c.cut) {
    out << "interrupted\n";
    return Judged::kInterrupted;
  }
  out << not_judged << " (" << Reason(c.why_not) << ")\n";
  return Judged::kNotJudged;
}

// Where the code ran to its values: at an input vector (runtime inputs),
// or, with immediates, on a lane of a program with thread inputs (which
// need not be the witness's: every lane is judged).
std::string WhereRun(const Program& p, ProgramInputs form,
                     const std::vector<uint64_t>& inputs) {
  if (form == ProgramInputs::kRuntime) {
    return absl::StrCat(" at ", InputsText(p, inputs));
  }
  if (HasThreadInputs(p)) return absl::StrCat(" on lane ", LaneOf(p, inputs));
  return "";
}

// Where ptxas kept code: the code run on the CPU by the SASS evaluator
// (docs/sass-evaluator.md), judged where it runs.
Judged CheckExecuted(const std::string& ptxas, const std::string& arch,
                     absl::Duration timeout, const Program& p,
                     ProgramInputs form, Reading reading,
                     absl::string_view why_not_folded, std::ostream& out) {
  // Its runs of ptxas are bounded by --timeout too.
  const absl::StatusOr<std::vector<ProgramCheck>> checks =
      CheckPrograms(ptxas, arch, {&p, 1}, form, reading, timeout);
  const absl::StatusOr<ProgramCheck> check =
      checks.ok() ? absl::StatusOr<ProgramCheck>((*checks)[0])
                  : absl::StatusOr<ProgramCheck>(checks.status());
  if (check.ok() && check->cut) {
    out << "interrupted\n";
    return Judged::kInterrupted;
  }
  if (!check.ok() || !check->judged) {
    out << "not folded, and not judged without a GPU ("
        << (check.ok() ? check->why_not : std::string(why_not_folded)) << ")\n";
    return Judged::kNotJudged;
  }
  if (!check->mismatch) {
    out << "its code, run on the CPU, agrees with the oracle"
        << (form == ProgramInputs::kRuntime && !p.inputs.empty()
                ? " at the witness and at more input vectors"
            : HasThreadInputs(p)
                ? (HasExit(p) ? " on every lane that does not exit"
                              : " on every lane")
                : "")
        << "\n";
    return Judged::kAgree;
  }
  const ProgramMismatch& m = *check->mismatch;
  out << "its code, run on the CPU" << WhereRun(p, form, m.inputs)
      << ", stores " << ClaimedText(p, m.claimed) << ", where the oracle gives "
      << OutputsText(p, m.oracle)
      << " (its -O0 code runs to the oracle's values): mismatch\n";
  if (!m.departure.empty()) out << "  the code " << m.departure << "\n";
  return Judged::kMismatch;
}

// The folded outputs with immediate inputs, judged at the witness.
absl::StatusOr<Judged> CheckImmediates(const std::string& ptxas,
                                       const std::string& arch,
                                       absl::Duration timeout, const Program& p,
                                       Reading reading, std::ostream& out) {
  auto compiled = CompileProgram(ptxas, arch, p, ProgramInputs::kImmediate,
                                 kPtxasDefaultOptLevel, timeout);
  if (!compiled.ok()) return compiled.status();
  out << "ptxas " << arch << ", inputs immediate: ";
  if (!compiled->claimed) {
    if (compiled->fault || compiled->cut || compiled->code.empty()) {
      return Unjudged(*compiled, "not folded, so not judged without a GPU",
                      out);
    }
    return CheckExecuted(ptxas, arch, timeout, p, ProgramInputs::kImmediate,
                         reading, Reason(compiled->why_not), out);
  }
  const bool differs =
      Disagrees(EvaluateAtWitness(p, reading), *compiled->claimed);
  out << "folds to " << ClaimedText(p, *compiled->claimed) << ": "
      << (differs ? "mismatch" : "agree") << "\n";
  return differs ? Judged::kMismatch : Judged::kAgree;
}

// What ptxas claims with runtime inputs, refuted by the first input vector
// where the oracle differs.
absl::StatusOr<Judged> CheckRuntime(const std::string& ptxas,
                                    const std::string& arch,
                                    absl::Duration timeout, const Program& p,
                                    Reading reading, std::ostream& out) {
  auto compiled = CompileProgram(ptxas, arch, p, ProgramInputs::kRuntime,
                                 kPtxasDefaultOptLevel, timeout);
  if (!compiled.ok()) return compiled.status();
  out << "ptxas " << arch << ", inputs runtime: ";
  if (!compiled->claimed) {
    if (compiled->fault || compiled->cut || compiled->code.empty()) {
      return Unjudged(*compiled,
                      "the code reads its inputs, so not judged without a GPU",
                      out);
    }
    return CheckExecuted(ptxas, arch, timeout, p, ProgramInputs::kRuntime,
                         reading, Reason(compiled->why_not), out);
  }
  out << "claims " << ClaimedText(p, *compiled->claimed) << " for every input";
  const std::optional<CounterExample> refuted =
      RefuteClaim(p, *compiled->claimed, reading);
  if (!refuted) {
    out << ": the oracle agrees on every input vector tried\n";
    return Judged::kAgree;
  }
  out << ": refuted at " << InputsText(p, refuted->inputs)
      << ", where the oracle gives " << OutputsText(p, refuted->oracle) << "\n";
  return Judged::kMismatch;
}

// The SM of a device the cuda backend describes as "NAME (sm_90, ...)".
std::optional<int> DeviceSm(absl::string_view device) {
  const size_t at = device.rfind("(sm_");
  int sm = 0;
  if (at == absl::string_view::npos) return std::nullopt;
  const absl::string_view digits = device.substr(at + 4);
  if (!absl::SimpleAtoi(digits.substr(0, digits.find_first_of(",)")), &sm)) {
    return std::nullopt;
  }
  return sm;
}

// The GPU: a worker started once to see that it runs here, and which device
// and driver it finds; then one worker process per module
// (program_cuda.h). Without a GPU, one line saying why.
absl::StatusOr<ChosenProgramBackend> ChooseCuda(const ParsedArgs& args) {
  absl::StatusOr<std::unique_ptr<WorkerClient>> client = StartBackend(args);
  if (!client.ok()) {
    return absl::FailedPreconditionError(absl::StrReplaceAll(
        absl::StripTrailingAsciiWhitespace(client.status().message()),
        {{"\n", "; "}}));
  }
  const WorkerIdentity identity = (*client)->identity();
  client->reset();  // the handshake is all it was for
  const std::optional<int> sm = DeviceSm(identity.device);
  ChosenProgramBackend choice{.is_ptxas = false};
  choice.arch = args.Get("arch", sm ? absl::StrCat("sm_", *sm) : "sm_90");
  PTXDIFF_ASSIGN_OR_RETURN(const PtxTarget target, TargetOfArch(choice.arch));
  PTXDIFF_ASSIGN_OR_RETURN(const std::string worker, FindWorkerBinary());
  PTXDIFF_ASSIGN_OR_RETURN(const std::string driver_library,
                           CudaDriverFlag(args, kCudaBackend));
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t timeout,
                           IntFlag(args, "timeout", 10, 1, 3600));
  PTXDIFF_ASSIGN_OR_RETURN(choice.files, TempDir::Create("ptxdiff-programs"));
  choice.backend =
      MakeCudaProgramBackend({.worker = worker,
                              .driver_library = driver_library,
                              .target = target,
                              .device_name = identity.device,
                              .driver = identity.driver,
                              .files_root = choice.files->path(),
                              .kernel_timeout = absl::Seconds(timeout)});
  return choice;
}

// What --backend names for programs: ptxas (the default) or a tool that
// runs PTX (program_backends.h), or a GPU.
absl::StatusOr<ChosenProgramBackend> ChooseBackend(const ParsedArgs& args) {
  const std::string backend = args.Get("backend", "ptxas");
  if (backend != kCudaBackend && args.Has("cuda-driver")) {
    return CudaDriverFlag(args, backend).status();
  }
  if (backend == kCudaBackend) return ChooseCuda(args);
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t timeout,
                           IntFlag(args, "timeout", 10, 1, 3600));
  return MakeProgramBackend({.backend = backend,
                             .arch = args.Get("arch", "sm_90"),
                             .timeout = absl::Seconds(timeout)});
}

// One form of the program on a tool: what it gave, against the oracle.
absl::StatusOr<Judged> CheckOnTool(ProgramBackend& tool, const Program& p,
                                   ProgramInputs form, Reading reading,
                                   std::ostream& out) {
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::vector<ProgramCheck> checks,
      tool.Check({&p, 1}, form, reading, absl::InfiniteFuture()));
  const ProgramCheck& c = checks[0];
  out << tool.Name() << ", inputs " << FormName(form) << ": ";
  if (c.fault) {
    const bool crash = c.fault->kind == ProgramFault::kCrash;
    out << (crash ? "crashed: " : "hung: ") << c.fault->what << "\n";
    return crash ? Judged::kCrash : Judged::kHang;
  }
  if (c.mismatch) {
    out << tool.Describe(p, *c.mismatch) << ": mismatch\n";
    return Judged::kMismatch;
  }
  if (c.cut) {
    out << "interrupted\n";
    return Judged::kInterrupted;
  }
  if (!c.judged) {
    out << "not judged (" << c.why_not << ")\n";
    return Judged::kNotJudged;
  }
  out << "agrees with the oracle"
      << (form == ProgramInputs::kRuntime && !p.inputs.empty()
              ? " at the witness and at more input vectors"
              : "")
      << "\n";
  return Judged::kAgree;
}

// "verdict: mismatch (ptxas sm_90, inputs runtime; inputs immediate:
// agree)": the most telling of the forms' results, on what it was seen, and
// what the other forms gave, so that "agree" never stands for a form that
// was not judged.
std::string VerdictLine(
    const std::string& backend,
    const std::vector<std::pair<ProgramInputs, Judged>>& results) {
  Judged verdict = Judged::kNotJudged;
  for (const auto& [form, j] : results) verdict = std::max(verdict, j);
  std::vector<std::string> forms, others;
  for (const auto& [form, j] : results) {
    if (j == verdict) {
      forms.emplace_back(FormName(form));
    } else {
      others.push_back(
          absl::StrCat("inputs ", FormName(form), ": ", JudgedName(j)));
    }
  }
  return absl::StrCat("verdict: ", JudgedName(verdict), " (", backend,
                      ", inputs ", absl::StrJoin(forms, " and "),
                      others.empty() ? "" : "; ", absl::StrJoin(others, "; "),
                      ")\n");
}

}  // namespace

int RunProgram(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  return RunProgramAs("program", args, out, err);
}

int RunProgramAs(std::string_view command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err) {
  auto parsed = ParseArgs(
      args, {}, {"backend", "arch", "reading", "timeout", "cuda-driver"});
  if (!parsed.ok()) return Fail(err, command, parsed.status());
  if (parsed->positional.size() != 1) {
    return Fail(
        err, command,
        absl::InvalidArgumentError("expects one FILE (a program case)"));
  }
  auto reading = ReadingFlag(*parsed);
  if (!reading.ok()) return Fail(err, command, reading.status());
  // Checked with or without --backend: a flag given is never ignored.
  const absl::StatusOr<int64_t> timeout_seconds =
      IntFlag(*parsed, "timeout", 10, 1, 3600);
  if (!timeout_seconds.ok())
    return Fail(err, command, timeout_seconds.status());
  if (parsed->Has("arch")) {
    if (absl::Status s = TargetOfArch(parsed->Get("arch")).status(); !s.ok())
      return Fail(err, command, s);
  }
  absl::StatusOr<ChosenProgramBackend> choice;
  if (parsed->Has("backend")) {
    choice = ChooseBackend(*parsed);
    if (!choice.ok()) return Fail(err, command, choice.status());
  }
  const std::string& path = parsed->positional[0];
  auto text = ReadFile(path);
  if (!text.ok()) return Fail(err, command, text.status());
  auto program = ParseProgramCase(*text);
  if (!program.ok()) {
    return Fail(err, command,
                absl::InvalidArgumentError(
                    absl::StrCat(path, ": ", program.status().message())));
  }
  const int steps = CountSteps(*program);
  out << "program: " << path << ": " << steps
      << (steps == 1 ? " step" : " steps")
      << (BlockKinds(*program).empty()
              ? ""
              : absl::StrCat(", with ", BlockKinds(*program)))
      << "\n";
  // A fuzzer's input: the program as text, to keep as a case.
  if (LooksLikeProgramInput(*text)) out << FormatProgram(*program);
  out << "oracle:  "
      << OutputsText(*program, EvaluateAtWitness(*program, *reading))
      << (program->inputs.empty()
              ? " (no inputs"
              : absl::StrCat(" at the witness ",
                             InputsText(*program, WitnessInputs(*program)),
                             " ("))
      << (program->inputs.empty() ? "; " : "") << ReadingName(*reading)
      << " reading)\n";
  if (!parsed->Has("backend")) {
    out << "verdict: not judged (no --backend: the oracle's values alone; "
           "--backend ptxas, cuda or ptx-cmd:COMMAND judges a backend)\n";
    return kExitOk;
  }
  const std::string ptxas = choice->is_ptxas ? *FindPtxas({}) : "";
  const std::string arch = parsed->Get("arch", "sm_90");
  const absl::Duration timeout = absl::Seconds(*timeout_seconds);
  // Ctrl-C stops a long compilation or run, whose files go with it.
  const ScopedInterruptHandler on_interrupt;
  std::vector<std::pair<ProgramInputs, Judged>> results;
  // Without inputs the two kernels are one.
  std::vector<ProgramInputs> forms = {ProgramInputs::kImmediate};
  if (!program->inputs.empty()) forms.push_back(ProgramInputs::kRuntime);
  for (ProgramInputs form : forms) {
    absl::StatusOr<Judged> j =
        !choice->is_ptxas
            ? CheckOnTool(*choice->backend, *program, form, *reading, out)
        : form == ProgramInputs::kImmediate
            ? CheckImmediates(ptxas, arch, timeout, *program, *reading, out)
            : CheckRuntime(ptxas, arch, timeout, *program, *reading, out);
    if (!j.ok()) return Fail(err, command, j.status());
    results.emplace_back(form, *j);
    if (*j == Judged::kInterrupted) break;
  }
  out << VerdictLine(
      choice->is_ptxas ? absl::StrCat("ptxas ", arch) : choice->backend->Name(),
      results);
  Judged verdict = Judged::kNotJudged;
  for (const auto& [form, j] : results) verdict = std::max(verdict, j);
  return verdict == Judged::kInterrupted ? kExitInterrupted
         : verdict == Judged::kNotJudged  ? kExitNotJudged
         : verdict == Judged::kAgree      ? kExitOk
                                          : kExitDisagree;
}

namespace {

absl::StatusOr<ProgramCampaignOptions> CampaignOptions(const ParsedArgs& args) {
  ProgramCampaignOptions o;
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t seconds,
                           IntFlag(args, "max-time", 60, 1, 7 * 24 * 3600));
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
  if (r.pending > r.other_backend) {
    const int64_t n = r.pending - r.other_backend;
    absl::StrAppend(&out, "programs: ", n,
                    n == 1 ? " finding was" : " findings were",
                    " not filed before the run ended; ", o.triage_dir,
                    "/.pending/ keeps ", n == 1 ? "it" : "them",
                    ", and the next run on this directory files ",
                    n == 1 ? "it" : "them", "\n");
  }
  if (r.other_backend > 0) {
    absl::StrAppend(&out, "programs: ", r.other_backend,
                    r.other_backend == 1 ? " finding" : " findings",
                    " found on another backend stay in ", o.triage_dir,
                    "/.pending/ for a run on it\n");
  }
  if (r.unjournaled > 0) {
    absl::StrAppend(&out, "programs: ", r.unjournaled,
                    " of them could not be kept there either (their journal "
                    "lines are on stderr)\n");
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

// The summary: what was checked, and what was found and filed.
void PrintSummary(const ProgramCampaignOptions& o,
                  const ChosenProgramBackend& b, const ProgramCampaignReport& r,
                  std::ostream& out) {
  if (r.interrupted) {
    out << absl::StrFormat("programs: interrupted after %.0f s; stopped\n",
                           r.seconds);
  }
  out << absl::StrFormat(
      "programs: %s %s, %d %s, %.0f s: %d programs checked (%.1f/s); %s %.0f%% "
      "with the inputs as immediates and %.0f%% with runtime inputs%s%s%s\n",
      b.backend->Name(), b.arch, o.threads,
      o.threads == 1 ? "thread" : "threads", r.seconds, r.programs,
      r.seconds > 0 ? r.programs / r.seconds : 0,
      b.is_ptxas                    ? "judged"
      : b.backend->Name() == "cuda" ? "the GPU ran"
                                    : "the tool ran",
      Percent(r.folded, r.programs), Percent(r.claimed, r.programs),
      b.is_ptxas ? absl::StrFormat(" (%.0f%% of the programs on their code "
                                   "run on the CPU, the rest on constants "
                                   "ptxas folded or claimed)",
                                   Percent(r.executed, r.programs))
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
  out << PendingLines(o, r);
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

ProgramTimelinePoint PointOf(const ProgramCampaignReport& r,
                             absl::Duration elapsed) {
  return {.seconds = absl::ToDoubleSeconds(elapsed),
          .programs = r.programs,
          .judged_immediate = r.folded,
          .judged_runtime = r.claimed,
          .disagreements = r.disagreements,
          .faults = r.crashes + r.hangs,
          .new_entries =
              std::count_if(r.filed.begin(), r.filed.end(),
                            [](const FiledProgram& f) { return f.is_new; })};
}

// The run's progress for a report (report/run_records.h), in its own
// directory under --out/stats, made with the first point (a run refused
// for bad input leaves none).
TimelineWriter ProgramTimeline(const std::string& out_dir,
                               absl::string_view backend) {
  return TimelineWriter("programs",
                        absl::StrCat(out_dir, "/stats/", kProgramRunPrefix,
                                     absl::ToUnixSeconds(absl::Now()), "-",
                                     getpid(), "/", kProgramTimelineFile),
                        ProgramTimelineHeader(backend));
}

// Why a run checked or judged nothing ("" if it did): a CI gate must not
// pass on a run that tested nothing (as `ptxdiff fuzz`).
std::string NothingChecked(const ChosenProgramBackend& b,
                           const ProgramCampaignReport& r) {
  // A crash or a hang (isolated or not) is the backend tested, and failing;
  // findings an earlier run left, filed, are work done too.
  if (r.crashes + r.hangs > 0 || !r.filed.empty()) return "";
  if (r.programs == 0) {
    return r.not_run.programs == 0
               ? "nothing was checked: no program was generated"
               : absl::StrCat("nothing was checked: the run ended before ",
                              b.backend->Name(), " finished any of the ",
                              r.not_run.programs, " programs sent",
                              MostOften(r.not_run));
  }
  if (r.folded + r.claimed + r.disagreements > 0) return "";
  return absl::StrCat("nothing was judged: ", b.backend->Name(),
                      " judged none of the ", r.programs, " programs checked",
                      MostOften(r.not_judged));
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
  auto choice = ChooseBackend(*parsed);
  if (!choice.ok()) return Fail(err, "programs", choice.status());
  options->backend = choice->backend;
  const std::string out_dir = parsed->Get("out", "out");
  TimelineWriter timeline =
      ProgramTimeline(out_dir, choice->backend->Identity());
  options->on_tick = [&](const ProgramCampaignReport& r,
                         absl::Duration elapsed) {
    timeline.Append(FormatProgramTimelinePoint(PointOf(r, elapsed)), err);
  };
  // Ctrl-C stops the run as --max-time does: the summary, and the findings
  // not yet filed kept in the journal.
  const ScopedInterruptHandler on_interrupt;
  auto report = RunProgramCampaign(*options, [&out](const std::string& line) {
    out << "programs: " << line << std::endl;
  });
  if (!report.ok()) return Fail(err, "programs", report.status());
  timeline.Append(FormatProgramTimelinePoint(
                      PointOf(*report, absl::Seconds(report->seconds))),
                  err);
  PrintSummary(*options, *choice, *report, out);
  if (parsed->Has("report"))
    WriteReportAtTheEnd("programs", out_dir, options->triage_dir, out);
  const bool unfiled = std::any_of(
      report->errors.begin(), report->errors.end(), [](const std::string& e) {
        return absl::StartsWith(e, "could not file");
      });
  const std::string nothing = NothingChecked(*choice, *report);
  if (!nothing.empty()) err << "ptxdiff programs: " << nothing << "\n";
  return unfiled || !nothing.empty() ? kExitDisagree : kExitOk;
}

int MinimizeProgramCase(const std::string& path, const ParsedArgs& args,
                        std::ostream& out, std::ostream& err) {
  auto text = ReadFile(path);
  if (!text.ok()) return Fail(err, "minimize", text.status());
  auto program = ParseProgramCase(*text);
  if (!program.ok()) {
    return Fail(err, "minimize",
                absl::InvalidArgumentError(
                    absl::StrCat(path, ": ", program.status().message())));
  }
  auto reading = ReadingFlag(args);
  if (!reading.ok()) return Fail(err, "minimize", reading.status());
  auto choice = ChooseBackend(args);
  if (!choice.ok()) return Fail(err, "minimize", choice.status());
  // The case as a campaign of one program, on one thread.
  bool given = false;
  ProgramCampaignOptions o{
      .backend = choice->backend,
      .max_time = absl::Seconds(300),
      .threads = 1,
      .reading = *reading,
      .triage_dir = args.Get("dir", DefaultTriageDir()),
      .next = [&](std::mt19937_64&) -> std::optional<Program> {
        if (given) return std::nullopt;
        given = true;
        return *program;
      },
      .adopt_pending = false,
      .file_unfinished = true};
  const ScopedInterruptHandler on_interrupt;
  auto report = RunProgramCampaign(o, nullptr);
  if (!report.ok()) return Fail(err, "minimize", report.status());
  for (const std::string& e : report->errors)
    err << "ptxdiff minimize: " << e << "\n";
  if (report->filed.empty()) {
    out << "minimize: no disagreement in " << path << " on "
        << choice->backend->Identity() << "\n";
    return kExitDisagree;
  }
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
