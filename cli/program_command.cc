#include "cli/program_command.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "common/files.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_ptxas.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

constexpr int kExitDisagree = 1;

std::string Hex(uint64_t bits, int width) {
  return absl::StrFormat("0x%0*x", width == 1 ? 1 : width / 4, bits);
}

// "%lo = 0x00000000, %hi = 0x00000001" (undefined outputs say so).
std::string OutputsText(const Program& p, const std::vector<ProgramValue>& values) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    const int width = RegisterWidth(p, p.outputs[k]);
    parts.push_back(absl::StrCat("%", p.outputs[k], " = ", Hex(values[k].bits, width),
                                 values[k].defined ? "" : " (undefined: not judged)"));
  }
  return absl::StrJoin(parts, ", ");
}

std::string ClaimedText(const Program& p, const std::vector<uint64_t>& claimed) {
  std::vector<ProgramValue> values;
  for (uint64_t bits : claimed) values.push_back({.bits = bits});
  return OutputsText(p, values);
}

std::string InputsText(const Program& p, const std::vector<uint64_t>& inputs) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    parts.push_back(absl::StrCat("%", p.inputs[k].name, " = ", Hex(inputs[k], p.inputs[k].width)));
  }
  return parts.empty() ? "no inputs" : absl::StrJoin(parts, ", ");
}

// What one compilation of the program gave.
enum class Judged : uint8_t { kNotJudged, kAgree, kMismatch };

// The decoder's reason without its "not folded: " prefix.
absl::string_view Reason(absl::string_view why_not) {
  absl::ConsumePrefix(&why_not, "not folded: ");
  return why_not;
}

// The folded outputs with immediate inputs, judged at the witness.
absl::StatusOr<Judged> CheckImmediates(const std::string& ptxas, const std::string& arch,
                                       const Program& p, Reading reading, std::ostream& out) {
  auto compiled = CompileProgram(ptxas, arch, p, ProgramInputs::kImmediate);
  if (!compiled.ok()) return compiled.status();
  out << "ptxas " << arch << ", inputs immediate: ";
  if (!compiled->claimed) {
    out << "not folded, so not judged without a GPU (" << Reason(compiled->why_not) << ")\n";
    return Judged::kNotJudged;
  }
  const bool differs = Disagrees(EvaluateAtWitness(p, reading), *compiled->claimed);
  out << "folds to " << ClaimedText(p, *compiled->claimed) << ": "
      << (differs ? "mismatch" : "agree") << "\n";
  return differs ? Judged::kMismatch : Judged::kAgree;
}

// What ptxas claims with runtime inputs, refuted by the first input vector
// where the oracle differs.
absl::StatusOr<Judged> CheckRuntime(const std::string& ptxas, const std::string& arch,
                                    const Program& p, Reading reading, std::ostream& out) {
  auto compiled = CompileProgram(ptxas, arch, p, ProgramInputs::kRuntime);
  if (!compiled.ok()) return compiled.status();
  out << "ptxas " << arch << ", inputs runtime: ";
  if (!compiled->claimed) {
    out << "the code reads its inputs, so not judged without a GPU ("
        << Reason(compiled->why_not) << ")\n";
    return Judged::kNotJudged;
  }
  out << "claims " << ClaimedText(p, *compiled->claimed) << " for every input";
  const std::optional<CounterExample> refuted = RefuteClaim(p, *compiled->claimed, reading);
  if (!refuted) {
    out << ": the oracle agrees on every input vector tried\n";
    return Judged::kAgree;
  }
  out << ": refuted at " << InputsText(p, refuted->inputs) << ", where the oracle gives "
      << OutputsText(p, refuted->oracle) << "\n";
  return Judged::kMismatch;
}

}  // namespace

int RunProgram(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = ParseArgs(args, {}, {"backend", "arch", "reading"});
  if (!parsed.ok()) return Fail(err, "program", parsed.status());
  if (parsed->positional.size() != 1) {
    return Fail(err, "program", absl::InvalidArgumentError("expects one FILE (a program case)"));
  }
  auto reading = ReadingFlag(*parsed);
  if (!reading.ok()) return Fail(err, "program", reading.status());
  const std::string backend = parsed->Get("backend");
  if (!backend.empty() && backend != "ptxas") {
    return Fail(err, "program",
                absl::InvalidArgumentError(absl::StrCat(
                    "--backend ", backend, ": programs run on ptxas only so far")));
  }
  const std::string& path = parsed->positional[0];
  auto text = ReadFile(path);
  if (!text.ok()) return Fail(err, "program", text.status());
  auto program = ParseProgram(*text);
  if (!program.ok()) {
    return Fail(err, "program", absl::InvalidArgumentError(
                                    absl::StrCat(path, ": ", program.status().message())));
  }
  out << "program: " << path << ": " << program->steps.size()
      << (program->steps.size() == 1 ? " step" : " steps") << "\n";
  out << "oracle:  " << OutputsText(*program, EvaluateAtWitness(*program, *reading))
      << (program->inputs.empty()
              ? " (no inputs"
              : absl::StrCat(" at the witness ", InputsText(*program, WitnessInputs(*program)), " ("))
      << (program->inputs.empty() ? "; " : "") << ReadingName(*reading) << " reading)\n";
  if (backend.empty()) return kExitOk;
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) return Fail(err, "program", ptxas.status());
  const std::string arch = parsed->Get("arch", "sm_90");
  bool disagree = false, judged = false;
  // Without inputs the two kernels are one.
  std::vector<decltype(&CheckImmediates)> checks = {CheckImmediates};
  if (!program->inputs.empty()) checks.push_back(CheckRuntime);
  for (auto check : checks) {
    absl::StatusOr<Judged> j = check(*ptxas, arch, *program, *reading, out);
    if (!j.ok()) return Fail(err, "program", j.status());
    disagree |= *j == Judged::kMismatch;
    judged |= *j != Judged::kNotJudged;
  }
  out << "verdict: " << (disagree ? "mismatch" : judged ? "agree" : "not judged") << "\n";
  return disagree ? kExitDisagree : kExitOk;
}

}  // namespace ptxdiff
