#include "cli/program_command.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "client/worker_client.h"
#include "client/worker_locator.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_backends.h"
#include "program/program_cuda.h"
#include "program/program_encoding.h"
#include "program/program_ptxas.h"
#include "program/program_tool.h"
#include "protocol/backend_names.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_constants.h"

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

// A form whose check a stop or the deadline (--timeout) ended first.
Judged CutShort(std::ostream& out) {
  if (Interrupted()) {
    out << "interrupted\n";
    return Judged::kInterrupted;
  }
  out << "not judged (its check ran past --timeout)\n";
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
                     absl::Duration timeout, absl::Time deadline,
                     const Program& p, ProgramInputs form, Reading reading,
                     absl::string_view why_not_folded, std::ostream& out) {
  // Its runs of ptxas are bounded by --timeout too.
  const absl::StatusOr<std::vector<ProgramCheck>> checks =
      CheckPrograms(ptxas, arch, {&p, 1}, form, reading, timeout, deadline);
  const absl::StatusOr<ProgramCheck> check =
      checks.ok() ? absl::StatusOr<ProgramCheck>((*checks)[0])
                  : absl::StatusOr<ProgramCheck>(checks.status());
  if (check.ok() && check->cut) return CutShort(out);
  if (check.ok() && check->nothing_defined) {
    out << "its code, run on the CPU, is not judged (" << check->why_not
        << ")\n";
    return Judged::kNotJudged;
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
                                       absl::Duration timeout,
                                       absl::Time deadline, const Program& p,
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
    return CheckExecuted(ptxas, arch, timeout, deadline, p,
                         ProgramInputs::kImmediate, reading,
                         Reason(compiled->why_not), out);
  }
  const std::vector<ProgramValue> oracle =
      *EvaluateProgram(p, WitnessInputs(p), reading, nullptr, deadline);
  out << "folds to " << ClaimedText(p, *compiled->claimed) << ": ";
  if (EvaluationStopped(deadline)) return CutShort(out);
  if (DefinesNoOutput(oracle)) {
    out << "not judged (" << NoOutputDefinedWhy(ThreadExits(oracle)) << ")\n";
    return Judged::kNotJudged;
  }
  const bool differs = Disagrees(oracle, *compiled->claimed);
  out << (differs ? "mismatch" : "agree") << "\n";
  return differs ? Judged::kMismatch : Judged::kAgree;
}

// What ptxas claims with runtime inputs, refuted by the first input vector
// where the oracle differs.
absl::StatusOr<Judged> CheckRuntime(const std::string& ptxas,
                                    const std::string& arch,
                                    absl::Duration timeout,
                                    absl::Time deadline, const Program& p,
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
    return CheckExecuted(ptxas, arch, timeout, deadline, p,
                         ProgramInputs::kRuntime, reading,
                         Reason(compiled->why_not), out);
  }
  out << "claims " << ClaimedText(p, *compiled->claimed) << " for every input";
  const ClaimCheck claim =
      CheckClaim(p, *compiled->claimed, reading, 256, deadline);
  if (claim.cut) {
    out << ": ";
    return CutShort(out);
  }
  if (!claim.judged) {
    out << ": not judged (" << NoOutputDefinedWhy(false) << ")\n";
    return Judged::kNotJudged;
  }
  if (!claim.refuted) {
    out << ": the oracle agrees on every input vector tried\n";
    return Judged::kAgree;
  }
  out << ": refuted at " << InputsText(p, claim.refuted->inputs)
      << ", where the oracle gives " << OutputsText(p, claim.refuted->oracle)
      << "\n";
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

// One form of the program on a tool: what it gave, against the oracle.
absl::StatusOr<Judged> CheckOnTool(ProgramBackend& tool, absl::Time deadline,
                                   const Program& p, ProgramInputs form,
                                   Reading reading, std::ostream& out) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::vector<ProgramCheck> checks,
                           tool.Check({&p, 1}, form, reading, deadline));
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
  if (c.cut) return CutShort(out);
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

absl::StatusOr<ChosenProgramBackend> ChooseProgramBackend(
    const ParsedArgs& args) {
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
  // Ctrl-C stops a long evaluation, compilation or run, whose files go
  // with it; and the start of the backend's worker.
  const ScopedInterruptHandler on_interrupt;
  absl::StatusOr<ChosenProgramBackend> choice;
  if (parsed->Has("backend")) {
    choice = ChooseProgramBackend(*parsed);
    if (!choice.ok() && Interrupted()) {
      out << "verdict: interrupted\n";
      return kExitInterrupted;
    }
    if (!choice.ok()) return Fail(err, command, choice.status());
  }
  const std::string& path = parsed->positional[0];
  auto text = ReadFileAtMost(path, kMaxCaseFileBytes);
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
  if (Interrupted()) {
    out << "verdict: interrupted\n";
    return kExitInterrupted;
  }
  if (!parsed->Has("backend")) {
    out << "verdict: not judged (no --backend: the oracle's values alone; "
           "--backend ptxas, cuda or ptx-cmd:COMMAND judges a backend)\n";
    return kExitOk;
  }
  const std::string ptxas = choice->is_ptxas ? *FindPtxas({}) : "";
  const std::string arch = parsed->Get("arch", "sm_90");
  const absl::Duration timeout = absl::Seconds(*timeout_seconds);
  std::vector<std::pair<ProgramInputs, Judged>> results;
  // Without inputs the two kernels are one.
  std::vector<ProgramInputs> forms = {ProgramInputs::kImmediate};
  if (!program->inputs.empty()) forms.push_back(ProgramInputs::kRuntime);
  for (ProgramInputs form : forms) {
    // --timeout bounds each form's check on ptxas: its runs, the oracle's
    // evaluations and the runs of its code on the CPU. A tool's runs are
    // bounded each, a run past it a hang: a deadline would cut it first.
    const absl::Time deadline = absl::Now() + timeout;
    absl::StatusOr<Judged> j =
        !choice->is_ptxas
            ? CheckOnTool(*choice->backend, absl::InfiniteFuture(), *program,
                          form, *reading, out)
        : form == ProgramInputs::kImmediate
            ? CheckImmediates(ptxas, arch, timeout, deadline, *program,
                              *reading, out)
            : CheckRuntime(ptxas, arch, timeout, deadline, *program, *reading,
                           out);
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

}  // namespace ptxdiff
