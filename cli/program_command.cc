#include "cli/program_command.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/triage_commands.h"
#include "triage/triage_store.h"
#include "common/files.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_campaign.h"
#include "program/program_ptxas.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

constexpr int kExitDisagree = 1;

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
  const int steps = CountSteps(*program);
  out << "program: " << path << ": " << steps << (steps == 1 ? " step" : " steps")
      << (program->steps.size() > static_cast<size_t>(steps) ? ", with loops" : "") << "\n";
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

namespace {

absl::StatusOr<ProgramCampaignOptions> CampaignOptions(const ParsedArgs& args) {
  ProgramCampaignOptions o;
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t seconds, IntFlag(args, "max-time", 60, 1, 7 * 24 * 3600));
  o.max_time = absl::Seconds(seconds);
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t threads,
                           IntFlag(args, "threads", std::max(1u, std::thread::hardware_concurrency()),
                                   1, 64));
  o.threads = static_cast<int>(threads);
  PTXDIFF_ASSIGN_OR_RETURN(const int64_t seed, IntFlag(args, "seed", 1, 0, INT64_MAX));
  o.seed = static_cast<uint64_t>(seed);
  PTXDIFF_ASSIGN_OR_RETURN(o.reading, ReadingFlag(args));
  o.arch = args.Get("arch", "sm_90");
  o.triage_dir = args.Get("dir", DefaultTriageDir());
  for (const std::string& list : args.All("suppress")) {
    for (absl::string_view spelling : absl::StrSplit(list, ',', absl::SkipEmpty())) {
      if (!ParseVariant(spelling).ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--suppress ", spelling, ": not an instruction variant"));
      }
      o.shape.suppressed.emplace_back(spelling);
    }
  }
  PTXDIFF_ASSIGN_OR_RETURN(o.ptxas, FindPtxas({}));
  return o;
}

double Percent(int64_t part, int64_t whole) { return whole == 0 ? 0 : 100.0 * part / whole; }

// The summary: what was checked, and one line per entry filed.
void PrintSummary(const ProgramCampaignOptions& o, const ProgramCampaignReport& r,
                  std::ostream& out) {
  out << absl::StrFormat(
      "programs: ptxas %s, %d %s, %.0f s: %d programs checked (%.1f/s); ptxas folded %.0f%% "
      "with the inputs as immediates and claimed constants for %.0f%% with runtime inputs\n",
      o.arch, o.threads, o.threads == 1 ? "thread" : "threads", r.seconds, r.programs, r.seconds > 0 ? r.programs / r.seconds : 0,
      Percent(r.folded, r.programs), Percent(r.claimed, r.programs));
  // Entries in the order first filed, grouped by shape (one root cause).
  std::vector<std::string> entries, shapes;
  for (const FiledProgram& f : r.filed) {
    if (std::find(entries.begin(), entries.end(), f.entry) != entries.end()) continue;
    entries.push_back(f.entry);
    if (std::find(shapes.begin(), shapes.end(), f.shape) == shapes.end()) shapes.push_back(f.shape);
  }
  out << "programs: " << r.disagreements << " disagreements, filed as "
      << EntriesAndCauses(entries.size(), shapes.size()) << " in " << o.triage_dir << "\n";
  for (const std::string& shape : shapes) {
    out << "  " << shape << "\n";
    for (const std::string& entry : entries) {
      const FiledProgram* last = nullptr;
      int seen = 0;
      for (const FiledProgram& f : r.filed) {
        if (f.entry != entry || f.shape != shape) continue;
        last = &f;
        ++seen;
      }
      if (last == nullptr) continue;
      out << "    " << entry << (seen > 1 ? absl::StrCat(" (", seen, " times)") : "") << "\n      "
          << last->what << "\n";
    }
  }
  if (!r.suppressed.empty()) {
    out << "programs: not generated (--suppress, or found as one instruction): "
        << absl::StrJoin(r.suppressed, ", ") << "\n";
  }
  for (const std::string& e : r.errors) out << "programs: error: " << e << "\n";
  if (!entries.empty()) out << "programs: see: ptxdiff triage list --dir " << o.triage_dir << "\n";
}

}  // namespace

int RunPrograms(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto parsed = ParseArgs(args, {}, {"max-time", "dir", "arch", "seed", "threads", "reading",
                                     "suppress"});
  if (!parsed.ok()) return Fail(err, "programs", parsed.status());
  if (!parsed->positional.empty()) {
    return Fail(err, "programs", absl::InvalidArgumentError("takes no FILE, only flags"));
  }
  auto options = CampaignOptions(*parsed);
  if (!options.ok()) return Fail(err, "programs", options.status());
  auto report = RunProgramCampaign(*options, [&out](const std::string& line) {
    out << "programs: " << line << std::endl;
  });
  if (!report.ok()) return Fail(err, "programs", report.status());
  PrintSummary(*options, *report, out);
  const bool unfiled = std::any_of(report->errors.begin(), report->errors.end(),
                                   [](const std::string& e) { return absl::StartsWith(e, "could not file"); });
  return unfiled || report->programs == 0 ? kExitDisagree : kExitOk;
}

}  // namespace ptxdiff
