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
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

constexpr int kExitDisagree = 1;

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

// What a compiler computed ahead of the inputs: "folds to %r = 0x0"
// (immediates) or "claims %r = 0x0 for every input" (runtime).
std::string ConstantsText(const Program& p, ProgramInputs form,
                          const std::vector<uint64_t>& constants) {
  return form == ProgramInputs::kImmediate
             ? absl::StrCat("folds to ", ClaimedText(p, constants))
             : absl::StrCat("claims ", ClaimedText(p, constants),
                            " for every input");
}

// A mismatch in words: a fold or claim refuted, code run on the CPU whose
// values the oracle refutes (where it departs from its -O0 code), or what
// the backend says it gave.
std::string MismatchText(const ProgramBackend& backend, const Program& p,
                         const ProgramCheck& c) {
  const ProgramMismatch& m = *c.mismatch;
  if (m.executed) {
    return absl::StrCat(
        "its code, run on the CPU", WhereRun(p, m.form, m.inputs), ", stores ",
        ClaimedText(p, m.claimed), ", where the oracle gives ",
        OutputsText(p, m.oracle),
        " (its -O0 code runs to the oracle's values): mismatch",
        m.departure.empty() ? "" : absl::StrCat("\n  the code ", m.departure));
  }
  if (c.constants && m.form == ProgramInputs::kRuntime) {
    return absl::StrCat(ConstantsText(p, m.form, *c.constants),
                        ": refuted at ", InputsText(p, m.inputs),
                        ", where the oracle gives ", OutputsText(p, m.oracle));
  }
  if (c.constants) {
    return absl::StrCat(ConstantsText(p, m.form, *c.constants), ": mismatch");
  }
  return absl::StrCat(backend.Describe(p, m), ": mismatch");
}

// An agreement in words: on what it rests and where it was seen.
std::string AgreementText(const Program& p, ProgramInputs form,
                          const ProgramCheck& c) {
  if (c.constants) {
    return form == ProgramInputs::kImmediate
               ? "agree"
               : absl::StrCat("the oracle agrees on every input vector tried (",
                              c.vectors, ")");
  }
  const std::string where =
      form == ProgramInputs::kRuntime && !p.inputs.empty()
          ? absl::StrCat(" at the witness and at ",
                         c.vectors > 1 ? absl::StrCat(c.vectors - 1, " ") : "",
                         "more input vectors")
      : c.executed && HasThreadInputs(p)
          ? (HasExit(p) ? " on every lane that does not exit" : " on every lane")
          : "";
  return absl::StrCat(c.executed ? "its code, run on the CPU, agrees" : "agrees",
                      " with the oracle", where);
}

// One form of the program on the backend, as a line after `label`: what it
// gave against the oracle, and how that counts.
absl::StatusOr<Judged> CheckForm(ProgramBackend& backend,
                                 absl::string_view label, absl::Time deadline,
                                 const Program& p, ProgramInputs form,
                                 Reading reading, std::ostream& out) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::vector<ProgramCheck> checks,
                           backend.Check({&p, 1}, form, reading, deadline));
  const ProgramCheck& c = checks[0];
  out << label << ", inputs " << FormName(form) << ": ";
  if (c.fault) {
    const bool crash = c.fault->kind == CaseFault::kCrash;
    out << (crash ? "crashed: " : "hung: ") << c.fault->what << "\n";
    return crash ? Judged::kCrash : Judged::kHang;
  }
  if (c.mismatch) {
    out << MismatchText(backend, p, c) << "\n";
    return Judged::kMismatch;
  }
  if (c.constants) out << ConstantsText(p, form, *c.constants) << ": ";
  if (c.cut) return CutShort(out);
  if (!c.judged || c.nothing_defined) {
    out << "not judged (" << c.why_not << ")\n";
    return Judged::kNotJudged;
  }
  out << AgreementText(p, form, c) << "\n";
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

absl::StatusOr<ProgramBackendOptions> ProgramBackendFlags(
    const ParsedArgs& args, absl::Time run_deadline) {
  const std::string backend = args.Get("backend", "ptxas");
  PTXDIFF_ASSIGN_OR_RETURN(const std::string driver_library,
                           CudaDriverFlag(args, backend));
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t timeout,
                           IntFlag(args, "timeout", 10, 1, 3600));
  return ProgramBackendOptions{
      .backend = backend,
      .arch = args.Get("arch", ""),
      .timeout = absl::Seconds(timeout),
      .ptxas_query_timeout =
          args.Has("timeout") ? absl::Seconds(timeout) : kPtxasTimeout,
      .driver_library = driver_library,
      .start_deadline = run_deadline};
}

absl::StatusOr<ProgramWorker> ChooseProgramBackend(const ParsedArgs& args,
                                                   absl::Time run_deadline) {
  PTXDIFF_ASSIGN_OR_RETURN(const ProgramBackendOptions options,
                           ProgramBackendFlags(args, run_deadline));
  return StartProgramWorker(options);
}

int RunProgram(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  return RunProgramAs("program", args, out, err);
}

// The tool runs a form's check of one program may take (the module, and a
// refusal's instructions alone) before its deadline.
constexpr int kToolRunsAForm = 4;

int RunProgramAs(std::string_view command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err,
                 const std::optional<std::string>& case_text) {
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
  absl::StatusOr<ProgramWorker> choice;
  if (parsed->Has("backend")) {
    choice = ChooseProgramBackend(*parsed);
    if (!choice.ok() && Interrupted()) {
      out << "verdict: interrupted\n";
      return kExitInterrupted;
    }
    if (!choice.ok()) return Fail(err, command, choice.status());
  }
  const std::string& path = parsed->positional[0];
  auto text = case_text ? absl::StatusOr<std::string>(*case_text)
                        : ReadFileAtMost(path, kMaxCaseFileBytes);
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
  const std::vector<ProgramValue> oracle =
      EvaluateAtWitness(*program, *reading);
  // A stop cuts the evaluation short: its values are none, not "undefined".
  if (Interrupted()) {
    out << "oracle:  interrupted\nverdict: interrupted\n";
    return kExitInterrupted;
  }
  out << "oracle:  " << OutputsText(*program, oracle)
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
    // `program` shows the oracle's values; `repro` was to replay a finding,
    // and judged nothing.
    return command == "repro" ? kExitNotJudged : kExitOk;
  }
  const std::string label =
      choice->is_ptxas ? absl::StrCat("ptxas ", choice->arch)
                       : choice->backend->Name();
  std::vector<std::pair<ProgramInputs, Judged>> results;
  // Without inputs the two kernels are one.
  std::vector<ProgramInputs> forms = {ProgramInputs::kImmediate};
  if (!program->inputs.empty()) forms.push_back(ProgramInputs::kRuntime);
  for (ProgramInputs form : forms) {
    // --timeout bounds each form's check on ptxas: its runs, the oracle's
    // evaluations and the runs of its code on the CPU. A tool's runs are
    // bounded each, a run past it a hang, which the check's deadline must
    // not cut first: it allows a few of them (a refusal's runs alone). Its
    // reply is waited for until then, not the worker's minutes (a worker
    // that stops answering: the thirteenth fault run's 241 s at 5 s).
    const absl::Duration timeout = absl::Seconds(*timeout_seconds);
    const absl::Time deadline =
        absl::Now() + (choice->is_ptxas ? timeout : kToolRunsAForm * timeout);
    absl::StatusOr<Judged> j = CheckForm(*choice->backend, label, deadline,
                                         *program, form, *reading, out);
    if (!j.ok()) return Fail(err, command, j.status());
    results.emplace_back(form, *j);
    if (*j == Judged::kInterrupted) break;
  }
  out << VerdictLine(label, results);
  Judged verdict = Judged::kNotJudged;
  for (const auto& [form, j] : results) verdict = std::max(verdict, j);
  return verdict == Judged::kInterrupted ? kExitInterrupted
         : verdict == Judged::kNotJudged  ? kExitNotJudged
         : verdict == Judged::kAgree      ? kExitOk
                                          : kExitDisagree;
}

}  // namespace ptxdiff
