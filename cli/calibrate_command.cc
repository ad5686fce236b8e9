#include "cli/calibrate_command.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cli/backend_commands.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "common/interrupt.h"
#include "isa/family_table.h"
#include "program/program_calibration.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_calibration.h"

namespace ptxdiff {
namespace {

constexpr absl::Duration kProgressEvery = absl::Seconds(10);

void PrintProgress(const CalibrationReport& r, int64_t variants,
                   int64_t of, absl::Time start, std::ostream& out) {
  out << absl::StrFormat(
             "  [%4.0f s] %d of %d variants, %d tuples: %.1f%% of kernels "
             "run to the end, %d disagreements",
             absl::ToDoubleSeconds(absl::Now() - start), variants, of,
             r.tuples, Percent(r.kernels_run, r.kernels),
             r.disagreements.size())
      << std::endl;
}

// What was not run or judged, by reason, the most common first, an example
// each (cut to `example_width`).
void PrintCensus(absl::string_view title,
                 const std::map<std::string, int64_t>& counts,
                 const std::map<std::string, std::string>& examples,
                 size_t example_width, std::ostream& out) {
  if (counts.empty()) return;
  std::vector<std::pair<int64_t, std::string>> by_count;
  for (const auto& [key, n] : counts) by_count.emplace_back(n, key);
  std::sort(by_count.rbegin(), by_count.rend());
  out << title << "\n";
  for (const auto& [n, key] : by_count) {
    out << absl::StrFormat("  %8d  %s\n            %s\n", n, key,
                           examples.at(key).substr(0, example_width));
  }
}

void PrintReport(const CalibrationReport& r, int64_t show,
                 std::ostream& out) {
  out << absl::StrFormat(
      "  kernels         %d, %d run to the end for every tuple (%.1f%%)\n"
      "  tuples          %d: %d executed (%.1f%%), %d rejected by ptxas\n",
      r.kernels, r.kernels_run, Percent(r.kernels_run, r.kernels), r.tuples,
      r.executed, Percent(r.executed, r.tuples), r.rejected);
  // What ptxas said of one (the fifteenth fault run: no word of why).
  if (!r.rejected_example.empty()) {
    out << "                  e.g. " << r.rejected_example.substr(0, 160)
        << "\n";
  }
  out << absl::StrFormat(
      "  agree           %d (%d of them left open by the spec)\n"
      "  disagreements   %d  (defects of the evaluator until told apart)\n",
      r.agreed, r.undefined, r.disagreements.size());
  int64_t scalar_video = 0;
  for (const auto& [finding, n] : r.known) {
    out << absl::StrFormat(
        "  known findings  %d tuples: %s (docs/sass-evaluator.md), e.g.\n"
        "                    %s\n",
        n, finding, r.known_example.at(finding));
    if (absl::StartsWith(finding, "scalar video")) scalar_video += n;
  }
  // Issue 67: how much the scalar video rule still explains; it applies
  // only to the variants and operands its evidence covers.
  out << absl::StrFormat(
      "  scalar video    %d tuples explained by its known findings, each "
      "only on the variants and operands its evidence covers\n",
      scalar_video);
  if (!r.disagreements.empty()) {
    out << "disagreements (the oracle's value, then the evaluator's):\n";
    for (size_t i = 0; i < std::min<size_t>(r.disagreements.size(), show);
         ++i) {
      out << "  " << r.disagreements[i] << "\n";
    }
    if (r.disagreements.size() > static_cast<size_t>(show)) {
      out << "  (" << r.disagreements.size() - show << " more)\n";
    }
    out << "the first one's run on the evaluator:\n" << r.first_trace;
  }
  PrintCensus("not run, by what stopped the evaluator (tuples, an example):",
              r.not_run, r.not_run_example, std::string::npos, out);
}

void PrintProgramReport(const ProgramCalibrationReport& r, int64_t show,
                        std::ostream& out) {
  out << absl::StrFormat(
      "  programs        %d, %d checks (a program in one input form)\n"
      "  run to the end  %d checks (%.1f%%); %d more judged on constants "
      "ptxas stored\n"
      "  agree           %d\n"
      "  disagreements   %d  (defects of the evaluator or the composed "
      "oracle until told apart)\n",
      r.programs, r.checks, r.executed, Percent(r.executed, r.checks),
      r.constant, r.agreed, r.disagreements.size());
  for (const auto& [finding, n] : r.known) {
    out << absl::StrFormat("  known findings  %d checks: %s\n", n, finding);
  }
  for (size_t i = 0; i < std::min<size_t>(r.disagreements.size(), show);
       ++i) {
    out << "  " << r.disagreements[i] << "\n";
  }
  PrintCensus("not judged, by why (checks, an example):", r.not_run,
              r.not_run_example, 200, out);
}

// `calibrate --programs N`: random programs instead of tuples.
int InterruptedAtTheStart(std::ostream& out) {
  out << "calibrate: interrupted before the first compile\n";
  return kExitInterrupted;
}

int CalibratePrograms(const ProgramCompiler& compiler, const std::string& arch,
                      int64_t programs, int opt, uint64_t seed, int threads,
                      absl::Time run_start, int64_t max_time,
                      absl::Duration timeout, int64_t show, std::ostream& out,
                      std::ostream& err) {
  ProgramCalibrationOptions o;
  o.timeout = timeout;
  o.compiler = compiler;
  o.arch = arch;
  o.programs = programs;
  o.opt_level = opt;
  o.seed = seed;
  o.threads = threads;
  const absl::Time start = absl::Now();
  if (max_time > 0) o.deadline = run_start + absl::Seconds(max_time);
  absl::Time last_progress = start;
  o.progress = [&](const ProgramCalibrationReport& r) {
    if (absl::Now() - last_progress < kProgressEvery) return;
    last_progress = absl::Now();
    out << absl::StrFormat(
               "  [%4.0f s] %d of %d programs: %.1f%% of checks run to the "
               "end, %d disagreements",
               absl::ToDoubleSeconds(absl::Now() - start), r.programs,
               programs, Percent(r.executed, r.checks), r.disagreements.size())
        << std::endl;
  };
  out << absl::StrFormat(
             "calibrate: %s at -O%d for %s: %d random programs, both input "
             "forms, %d threads%s",
             compiler.Description(), opt, arch, programs, threads,
             max_time > 0 ? absl::StrCat(", at most ", max_time, " s") : "")
      << std::endl;
  absl::StatusOr<ProgramCalibrationReport> report = ptxdiff::CalibratePrograms(o);
  if (!report.ok()) {
    err << "ptxdiff calibrate: " << report.status().message() << "\n";
    return 1;
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  out << absl::StrFormat("calibrate: %d programs in %.1f s (%.1f programs/s)%s\n",
                         report->programs, seconds, report->programs / seconds,
                         Interrupted() ? ", interrupted" : "");
  PrintProgramReport(*report, show, out);
  if (Interrupted()) return kExitInterrupted;  // as every command's Ctrl-C
  if (report->executed == 0) {
    err << "ptxdiff calibrate: nothing was executed: no program's code ran "
           "to the end on the evaluator\n";
    return 1;
  }
  return report->disagreements.empty() ? 0 : 1;
}

}  // namespace

int RunCalibrate(const std::vector<std::string>& args, std::ostream& out,
                 std::ostream& err) {
  auto parsed = ParseArgs(args, {},
                          {"family", "tuples", "opt", "arch", "seed", "threads",
                           "max-time", "show", "programs", "timeout"});
  if (!parsed.ok()) return Fail(err, "calibrate", parsed.status());
  if (!parsed->positional.empty()) {
    return Fail(err, "calibrate",
                absl::InvalidArgumentError(absl::StrCat(
                    "unexpected argument '", parsed->positional[0], "'")));
  }
  const int default_threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto tuples = IntFlag(*parsed, "tuples", 12, 1, 1 << 16);
  auto opt = IntFlag(*parsed, "opt", 0, 0, 3);
  auto seed = IntFlag(*parsed, "seed", 1, 1, INT64_MAX);
  auto threads = IntFlag(*parsed, "threads", default_threads, 1, 256);
  auto max_time = MaxTimeFlag(*parsed, 0);  // 0: not given, no limit
  // Each compile's (the fourteenth fault run: a hung ptxas cost a fixed
  // minute a module).
  auto timeout =
      TimeoutSecondsFlag(*parsed, absl::ToDoubleSeconds(kPtxasTimeout));
  auto show = IntFlag(*parsed, "show", 20, 0, 1 << 20);
  // Past 10^12 (centuries of programs) the batch count overflowed: "0
  // programs", "nothing was executed".
  auto programs = IntFlag(*parsed, "programs", 0, 1, 1'000'000'000'000);
  auto selected = SelectVariants(*parsed);
  for (const absl::Status& s :
       {tuples.status(), opt.status(), seed.status(), threads.status(),
        max_time.status(), show.status(), programs.status(), selected.status(),
        timeout.status()}) {
    if (!s.ok()) return Fail(err, "calibrate", s);
  }
  const std::string arch = parsed->Get("arch", "sm_90");
  if (!FindSassArchInfo(arch).ok()) {
    return Fail(err, "calibrate",
                absl::InvalidArgumentError(absl::StrCat(
                    "--arch ", arch,
                    ": the SASS evaluator decodes sm_90 and sm_90a only")));
  }
  // --max-time counts from here: ptxas's version queries are the run's
  // time too, and a ptxas slow to answer them costs no more than it.
  const absl::Time run_start = absl::Now();
  // Ctrl-C: the report of what was done; before the first compile (ptxas's
  // queries, loading nvJitLink), said as that (the thirteenth fault run:
  // exit 130 and nothing printed).
  const ScopedInterruptHandler interrupt;
  KeyValues queries;
  if (*max_time > 0) {
    queries.emplace_back(kPtxasQueryTimeoutOption,
                         absl::StrCat(*max_time * 1000));
  }
  const absl::Duration compile_timeout = absl::Seconds(*timeout);
  absl::StatusOr<std::string> ptxas = FindPtxas({});
  if (!ptxas.ok() && Interrupted()) return InterruptedAtTheStart(out);
  if (!ptxas.ok()) return Fail(err, "calibrate", ptxas.status());
  if (parsed->Has("programs")) {
    if (parsed->Has("family") || parsed->Has("tuples")) {
      return Fail(err, "calibrate",
                  absl::InvalidArgumentError(
                      "--programs checks random programs: --family and "
                      "--tuples are for tuples"));
    }
    // The backend's compiler (nvJitLink where it loads), as for tuples.
    absl::StatusOr<ProgramCompiler> compiler = PtxasProgramCompiler(queries);
    if (!compiler.ok() && Interrupted()) return InterruptedAtTheStart(out);
    if (!compiler.ok()) return Fail(err, "calibrate", compiler.status());
    return CalibratePrograms(*compiler, arch, *programs, static_cast<int>(*opt),
                             static_cast<uint64_t>(*seed),
                             static_cast<int>(*threads), run_start, *max_time,
                             compile_timeout, *show, out, err);
  }

  CalibrationCampaignOptions o;
  o.ptxas = *ptxas;
  o.arch = arch;
  for (const Variant& v : *selected) {
    if (InfoOf(v.family).isa == TargetIsa::kPtx) o.variants.push_back(v);
  }
  if (o.variants.empty()) {
    return Fail(err, "calibrate",
                absl::InvalidArgumentError(
                    "no PTX variant selected (vISA families have no SASS)"));
  }
  o.tuples_per_variant = static_cast<int>(*tuples);
  o.opt_level = static_cast<int>(*opt);
  o.seed = static_cast<uint64_t>(*seed);
  o.threads = static_cast<int>(*threads);
  const absl::Time start = absl::Now();
  if (*max_time > 0) o.deadline = run_start + absl::Seconds(*max_time);
  // The assembler the ptxas backend uses (nvJitLink where it loads): a gap
  // between its code and the executable's shows here, not in a campaign.
  // Each compile ends by --max-time: one that hangs must not outlast it.
  absl::StatusOr<PtxasAssembler> assembler =
      MakePtxasAssembler(queries, arch, o.deadline, compile_timeout);
  if (!assembler.ok() && Interrupted()) return InterruptedAtTheStart(out);
  if (!assembler.ok()) return Fail(err, "calibrate", assembler.status());
  o.assemble = assembler->assemble;
  absl::Time last_progress = start;
  const int64_t of = static_cast<int64_t>(o.variants.size());
  o.progress = [&](const CalibrationReport& r, int64_t done) {
    if (absl::Now() - last_progress < kProgressEvery) return;
    last_progress = absl::Now();
    PrintProgress(r, done, of, start, out);
  };
  out << absl::StrFormat(
             "calibrate: %s at -O%d for %s: %d variants x %d tuples, every "
             "runtime-capable source a parameter, %d threads%s",
             assembler->description, o.opt_level, arch, of,
             o.tuples_per_variant, o.threads,
             *max_time > 0 ? absl::StrCat(", at most ", *max_time, " s") : "")
      << std::endl;

  absl::StatusOr<CalibrationReport> report = RunCalibrationCampaign(o);
  if (!report.ok()) {
    err << "ptxdiff calibrate: " << report.status().message() << "\n";
    return 1;
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  out << absl::StrFormat("calibrate: %d tuples in %.1f s (%.0f tuples/s)%s\n",
                         report->tuples, seconds, report->tuples / seconds,
                         Interrupted() ? ", interrupted" : "");
  PrintReport(*report, *show, out);
  if (Interrupted()) return kExitInterrupted;  // as every command's Ctrl-C
  if (report->executed == 0) {
    err << "ptxdiff calibrate: nothing was executed: no kernel ran to the "
           "end on the evaluator\n";
    return 1;
  }
  return report->disagreements.empty() ? 0 : 1;
}

}  // namespace ptxdiff
