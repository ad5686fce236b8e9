// Random program cases (program/program_generator.h) through ptxas, as a
// campaign over programs would check them: each compiled with its inputs as
// immediates (the folded outputs, judged at the witness) and as kernel
// parameters (a constant claimed for every input, refuted by the composed
// oracle). Prints programs checked per second, the share ptxas folds or
// claims constant, and the disagreements, the first few in full.
//
//   cmake --build build/campaign --target program_benchmark
//   build/campaign/bench/program_benchmark [--seconds=60] [--arch=sm_90]
//   [--seed=1]
//       [--suppress=slct.s32.s32 ...]
//
// Programs are checked as the campaign checks them, 32 to a ptxas run in
// each form; a first slice of the run checks one per run, the baseline the
// batches are measured against. The batches run half the time without the
// SASS evaluator (folds and claims alone) and half with it (the code ptxas
// keeps run on the CPU), the rates side by side. Both cores run programs.

#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_campaign.h"
#include "program/program_generator.h"
#include "program/program_ptxas.h"
#include "backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

struct Settings {
  double seconds = 60;
  std::string arch = "sm_90";
  uint64_t seed = 1;
  ProgramShape shape;
};

struct Counts {
  std::atomic<int64_t> programs{0}, folded{0}, folded_wrong{0}, claimed{0},
      refuted{0}, executed_immediate{0}, executed_runtime{0};
};

class Run {
 public:
  Run(const Settings& s, std::string ptxas, bool execute)
      : s_(s), ptxas_(std::move(ptxas)), execute_(execute) {}

  // Programs checked `per_run` to a ptxas run, both forms each, until `end`.
  void Worker(uint64_t seed, absl::Time end, int per_run) {
    std::mt19937_64 rng(seed);
    while (absl::Now() < end) {
      std::vector<Program> batch;
      for (int k = 0; k < per_run; ++k)
        batch.push_back(RandomProgram(rng, s_.shape));
      auto immediate =
          CheckPrograms(ptxas_, s_.arch, batch, ProgramInputs::kImmediate,
                        Reading::kSpec, kPtxasTimeout, absl::InfiniteFuture(),
                        execute_);
      auto runtime = CheckPrograms(ptxas_, s_.arch, batch,
                                   ProgramInputs::kRuntime, Reading::kSpec,
                                   kPtxasTimeout, absl::InfiniteFuture(),
                                   execute_);
      if (!immediate.ok() || !runtime.ok()) {
        Report("error", batch[0],
               (!immediate.ok() ? immediate : runtime).status().ToString());
        continue;
      }
      for (size_t k = 0; k < batch.size(); ++k)
        Tally(batch[k], (*immediate)[k], (*runtime)[k]);
    }
  }

  const Counts& counts() const { return counts_; }

 private:
  void Tally(const Program& p, const ProgramCheck& immediate,
             const ProgramCheck& runtime) {
    ++counts_.programs;
    counts_.folded += immediate.judged && !immediate.executed;
    counts_.claimed += runtime.judged && !runtime.executed && !p.inputs.empty();
    counts_.executed_immediate += immediate.executed;
    counts_.executed_runtime += runtime.executed && !p.inputs.empty();
    if (immediate.mismatch) {
      ++counts_.folded_wrong;
      Report(immediate.executed ? "its code (immediates) runs to a value the "
                                  "oracle refutes"
                                : "folds wrong with immediates",
             p, "");
    }
    if (runtime.mismatch && !p.inputs.empty()) {
      ++counts_.refuted;
      Report(runtime.executed ? "its code runs to a value the oracle refutes"
                              : "claims a constant the oracle refutes",
             p, "");
    }
  }

  void Report(const char* what, const Program& p, const std::string& detail) {
    std::lock_guard<std::mutex> lock(mu_);
    if (++reported_ > 3) return;
    std::printf("--- %s %s\n%s", what, detail.c_str(),
                FormatProgram(p).c_str());
  }

  const Settings& s_;
  std::string ptxas_;
  bool execute_;
  Counts counts_;
  std::mutex mu_;
  int reported_ = 0;
};

double Percent(int64_t part, int64_t whole) {
  return whole == 0 ? 0 : 100.0 * part / whole;
}

// Runs `run` on every thread for `seconds`; its programs per second.
double RunFor(Run& run, const Settings& s, int threads, double seconds,
              int per_run) {
  const absl::Time start = absl::Now(), end = start + absl::Seconds(seconds);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back(
        [&run, &s, t, end, per_run] { run.Worker(s.seed + t, end, per_run); });
  }
  for (std::thread& t : pool) t.join();
  return run.counts().programs.load() /
         absl::ToDoubleSeconds(absl::Now() - start);
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  using namespace ptxdiff;
  Settings s;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--seconds=")) {
      if (!absl::SimpleAtod(arg, &s.seconds)) return 2;
    } else if (absl::ConsumePrefix(&arg, "--arch=")) {
      s.arch = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--seed=")) {
      if (!absl::SimpleAtoi(arg, &s.seed)) return 2;
    } else if (absl::ConsumePrefix(&arg, "--suppress=")) {
      s.shape.suppressed.emplace_back(arg);
    } else {
      std::fprintf(
          stderr,
          "usage: program_benchmark [--seconds=60] [--arch=sm_90] [--seed=1] "
          "[--suppress=SPELLING ...]\n");
      return 2;
    }
  }
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) {
    std::printf("skipped: %s\n", std::string(ptxas.status().message()).c_str());
    return 0;
  }
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  // The baseline, one program to a ptxas run; then the campaign's batches,
  // without the evaluator and with it.
  const double baseline_seconds = std::min(10.0, s.seconds / 5);
  Run baseline(s, *ptxas, true), folds(s, *ptxas, false), run(s, *ptxas, true);
  const double baseline_rate =
      RunFor(baseline, s, threads, baseline_seconds, 1);
  const double seconds = (s.seconds - baseline_seconds) / 2;
  const double folds_rate =
      RunFor(folds, s, threads, seconds, kProgramsPerPtxasRun);
  const double rate = RunFor(run, s, threads, seconds, kProgramsPerPtxasRun);
  std::printf("ptxas %s, %d threads\n", s.arch.c_str(), threads);
  std::printf("one program per ptxas run: %.1f programs/s (%.0f s)\n",
              baseline_rate, baseline_seconds);
  for (const auto& [name, r, rr] :
       {std::tuple<const char*, const Run*, double>{"folds and claims alone",
                                                    &folds, folds_rate},
        {"with the SASS evaluator", &run, rate}}) {
    const Counts& c = r->counts();
    std::printf(
        "%d programs per ptxas run, %s: %.1f programs/s (%.0f s), %.1fx the "
        "baseline\n",
        kProgramsPerPtxasRun, name, rr, seconds,
        baseline_rate > 0 ? rr / baseline_rate : 0);
    std::printf(
        "  checked %lld; inputs immediate: folded %lld (%.1f%%), executed "
        "%lld (%.1f%%), wrong %lld; inputs runtime: claimed %lld (%.1f%%), "
        "executed %lld (%.1f%%), refuted %lld\n",
        static_cast<long long>(c.programs.load()),
        static_cast<long long>(c.folded.load()), Percent(c.folded, c.programs),
        static_cast<long long>(c.executed_immediate.load()),
        Percent(c.executed_immediate, c.programs),
        static_cast<long long>(c.folded_wrong.load()),
        static_cast<long long>(c.claimed.load()),
        Percent(c.claimed, c.programs),
        static_cast<long long>(c.executed_runtime.load()),
        Percent(c.executed_runtime, c.programs),
        static_cast<long long>(c.refuted.load()));
  }
  std::printf("with the evaluator / without: %.2f\n",
              folds_rate > 0 ? rate / folds_rate : 0);
  return 0;
}
