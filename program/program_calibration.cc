#include "program/program_calibration.h"

#include <optional>
#include <random>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "common/parallel_jobs.h"
#include "common/status_macros.h"
#include "program/program_generator.h"
#include "program/program_ptxas.h"
#include "backends/ptxas/sass_calibration.h"

namespace ptxdiff {
namespace {

// Programs to a ptxas run, as the program campaign compiles them.
constexpr int64_t kProgramsPerBatch = 32;

// The census key of a check not judged: what stopped the evaluator, or the
// first words of why not (ptxas's error, a constant the decoder refused).
// `why` is WhyNotJudged's.
std::string NotJudgedKey(const ProgramCheck& check, const std::string& why) {
  if (!check.blocker.empty()) return check.blocker;
  return why.substr(0, why.find(':'));
}

// Why a check was not judged: a crash or hang of ptxas is its fault, with
// no why_not (the nineteenth fault run: a census row with no reason).
std::string WhyNotJudged(const ProgramCheck& check) {
  if (!check.why_not.empty() || !check.fault) return check.why_not;
  return absl::StrCat(check.fault->kind == CaseFault::kHang ? "ptxas hung: "
                                                            : "ptxas crashed: ",
                      absl::StrReplaceAll(check.fault->what, {{"\n", " | "}}));
}

// A known finding of ptxas's code among the program's steps, if any.
std::optional<std::string> KnownFindingIn(const Program& p, int opt_level) {
  for (const ProgramStep& step : p.steps) {
    if (step.kind != ProgramStep::kInstruction) continue;
    if (auto known = KnownCalibrationFinding(step.variant, opt_level)) {
      return known;
    }
  }
  return std::nullopt;
}

std::string Hex(std::span<const uint64_t> values) {
  return absl::StrJoin(values, " ", [](std::string* out, uint64_t v) {
    absl::StrAppendFormat(out, "0x%x", v);
  });
}

// One refuted check in words: the program on one line, where, both values.
std::string DisagreementText(const Program& p, const ProgramMismatch& m) {
  std::vector<uint64_t> oracle;
  for (const ProgramValue& v : m.oracle) oracle.push_back(v.bits);
  return absl::StrCat(
      absl::StrReplaceAll(FormatProgram(p), {{"\n", "; "}}), " | ",
      m.form == ProgramInputs::kRuntime ? "runtime" : "immediate",
      " inputs ", Hex(m.inputs), ": ",
      m.executed ? "the evaluator's run stores " : "ptxas's constants are ",
      Hex(m.claimed), ", the oracle gives ", Hex(oracle));
}

void Count(const Program& p, const ProgramCheck& check, int opt_level,
           ProgramCalibrationReport& r) {
  ++r.checks;
  if (!check.judged) {
    const std::string why = WhyNotJudged(check);
    const std::string key = NotJudgedKey(check, why);
    ++r.not_run[key];
    r.not_run_example.emplace(key, why);
    return;
  }
  ++(check.executed ? r.executed : r.constant);
  if (!check.mismatch) {
    ++r.agreed;
    return;
  }
  if (auto known = KnownFindingIn(p, opt_level)) {
    ++r.known[*known];
    return;
  }
  r.disagreements.push_back(DisagreementText(p, *check.mismatch));
}

// One batch in both forms (the runtime form where there are inputs).
absl::StatusOr<ProgramCalibrationReport> CalibrateBatch(
    const ProgramCalibrationOptions& o, std::span<const Program> batch) {
  ProgramCalibrationReport r;
  r.programs = static_cast<int64_t>(batch.size());
  std::vector<Program> with_inputs;
  for (const Program& p : batch) {
    if (!p.inputs.empty()) with_inputs.push_back(p);
  }
  for (ProgramInputs form :
       {ProgramInputs::kImmediate, ProgramInputs::kRuntime}) {
    const std::span<const Program> programs =
        form == ProgramInputs::kImmediate ? batch
                                          : std::span<const Program>(with_inputs);
    PTXDIFF_ASSIGN_OR_RETURN(
        const std::vector<ProgramCheck> checks,
        CheckPrograms(o.compiler, o.arch, programs, form, Reading::kHardware,
                      o.timeout, o.deadline, /*execute=*/true, o.opt_level));
    for (size_t k = 0; k < checks.size(); ++k) {
      if (checks[k].cut) continue;  // past the deadline: not counted
      Count(programs[k], checks[k], o.opt_level, r);
    }
  }
  return r;
}

}  // namespace

void ProgramCalibrationReport::Merge(const ProgramCalibrationReport& o) {
  programs += o.programs;
  checks += o.checks;
  executed += o.executed;
  constant += o.constant;
  agreed += o.agreed;
  for (const auto& [k, n] : o.known) known[k] += n;
  disagreements.insert(disagreements.end(), o.disagreements.begin(),
                       o.disagreements.end());
  for (const auto& [k, n] : o.not_run) not_run[k] += n;
  not_run_example.insert(o.not_run_example.begin(), o.not_run_example.end());
}

absl::StatusOr<ProgramCalibrationReport> CalibratePrograms(
    const ProgramCalibrationOptions& o) {
  const int64_t batches =
      (o.programs + kProgramsPerBatch - 1) / kProgramsPerBatch;
  auto batch = [&](int64_t b) {
    // Each batch's programs from its own seed: the same programs whatever
    // the threads.
    std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(b));
    std::vector<Program> programs;
    const int64_t n = std::min<int64_t>(kProgramsPerBatch,
                                        o.programs - b * kProgramsPerBatch);
    for (int64_t k = 0; k < n; ++k) programs.push_back(RandomProgram(rng));
    return CalibrateBatch(o, programs);
  };
  ProgramCalibrationReport report;
  PTXDIFF_RETURN_IF_ERROR(RunParallelJobs(
      batches, o.threads, o.deadline, batch,
      [&](int64_t, const ProgramCalibrationReport& part) {
        report.Merge(part);
        if (o.progress) o.progress(report);
      }));
  return report;
}

}  // namespace ptxdiff
