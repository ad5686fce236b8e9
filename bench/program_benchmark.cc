// Random program cases (program/program_generator.h) through ptxas, as a
// campaign over programs would check them: each compiled with its inputs as
// immediates (the folded outputs, judged at the witness) and as kernel
// parameters (a constant claimed for every input, refuted by the composed
// oracle). Prints programs checked per second, the share ptxas folds or
// claims constant, and the disagreements, the first few in full.
//
//   cmake --build build/campaign --target program_benchmark
//   build/campaign/bench/program_benchmark [--seconds=60] [--arch=sm_90] [--seed=1]
//       [--suppress=slct.s32.s32 ...]
//
// Each program costs two ptxas runs; both cores run programs.

#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_generator.h"
#include "program/program_ptxas.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

struct Settings {
  double seconds = 60;
  std::string arch = "sm_90";
  uint64_t seed = 1;
  ProgramShape shape;
};

struct Counts {
  std::atomic<int64_t> programs{0}, folded{0}, folded_wrong{0}, claimed{0}, refuted{0};
};

class Run {
 public:
  Run(const Settings& s, std::string ptxas) : s_(s), ptxas_(std::move(ptxas)) {}

  void Worker(uint64_t seed, absl::Time end) {
    std::mt19937_64 rng(seed);
    while (absl::Now() < end) {
      const Program p = RandomProgram(rng, s_.shape);
      auto immediate = CompileProgram(ptxas_, s_.arch, p, ProgramInputs::kImmediate);
      auto runtime = CompileProgram(ptxas_, s_.arch, p, ProgramInputs::kRuntime);
      if (!immediate.ok() || !runtime.ok()) {
        Report("error", p, (!immediate.ok() ? immediate : runtime).status().ToString());
        continue;
      }
      ++counts_.programs;
      if (immediate->claimed) {
        ++counts_.folded;
        if (Disagrees(EvaluateAtWitness(p), *immediate->claimed)) {
          ++counts_.folded_wrong;
          Report("folds wrong with immediates", p, "");
        }
      }
      if (runtime->claimed) {
        ++counts_.claimed;
        if (RefuteClaim(p, *runtime->claimed, Reading::kSpec)) {
          ++counts_.refuted;
          Report("claims a constant the oracle refutes", p, "");
        }
      }
    }
  }

  const Counts& counts() const { return counts_; }

 private:
  void Report(const char* what, const Program& p, const std::string& detail) {
    std::lock_guard<std::mutex> lock(mu_);
    if (++reported_ > 3) return;
    std::printf("--- %s %s\n%s", what, detail.c_str(), FormatProgram(p).c_str());
  }

  const Settings& s_;
  std::string ptxas_;
  Counts counts_;
  std::mutex mu_;
  int reported_ = 0;
};

double Percent(int64_t part, int64_t whole) { return whole == 0 ? 0 : 100.0 * part / whole; }

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
      std::fprintf(stderr,
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
  Run run(s, *ptxas);
  const absl::Time start = absl::Now(), end = start + absl::Seconds(s.seconds);
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&run, &s, t, end] { run.Worker(s.seed + t, end); });
  for (std::thread& t : pool) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const Counts& c = run.counts();
  std::printf("ptxas %s, %d threads, %.1f s\n", s.arch.c_str(), threads, seconds);
  std::printf("programs checked: %lld (%.1f/s)\n", static_cast<long long>(c.programs.load()),
              c.programs.load() / seconds);
  std::printf("inputs immediate: folded %lld (%.1f%%), wrong at the witness %lld\n",
              static_cast<long long>(c.folded.load()), Percent(c.folded, c.programs),
              static_cast<long long>(c.folded_wrong.load()));
  std::printf("inputs runtime: constant claimed %lld (%.1f%%), refuted %lld\n",
              static_cast<long long>(c.claimed.load()), Percent(c.claimed, c.programs),
              static_cast<long long>(c.refuted.load()));
  return 0;
}
