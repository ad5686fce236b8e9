// How many tuples per second the ptxas backend folds, by packing.
//
//   ptxas_backend_benchmark [--tuples=N] [--arch=sm_90] [--jobs=2]
//   [--only=64x64] [--compiler=ptxas|nvjitlink]
//
// For each combination of tuples per kernel and kernels per module, with
// `jobs` ptxas processes (both cores busy by default), runs a warm-up batch
// of N tuples (the backend learns which variants fold, as it would over a
// fuzzing campaign) and then a measured batch of N others, and prints a
// table of folded tuples per second (values returned / wall time of Run,
// the best of three runs), and the same per CPU-second of the backend and
// its ptxas processes: on a shared machine, twice that is what two idle
// cores would give.
// Each setting is measured with both assemblers (the backend's `compiler`
// option): the ptxas executable, a process per module, and the same
// assembler in-process (libnvJitLink, nvjitlink.h), with the ratio of the
// second to the first; --compiler=NAME measures one.
// Two workloads: "folding" draws random operands for variants ptxas always
// folds (the backend's own overhead and ptxas's compile speed), "edge" draws
// edge operands for every variant the backend supports, as a fuzzer would
// (some do not fold, and each of those costs a kernel of its own).
// Then runtime operands (edge tuples of the variants the backend supports
// without the evaluator, a random non-empty set of the sources that may be
// runtime values kernel parameters) at the default packing, without the
// SASS evaluator (claims alone: what ptxas still stores as a constant) and
// with it (the code ptxas keeps, run on the CPU): tuples/s and the tuples
// given a value, side by side, with the ratio of the two rates.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "backends/ptxas/ptxas_backend.h"

namespace ptxdiff {
namespace {

// Variants whose every tuple ptxas folds, on every arch (research §2).
constexpr const char* kAlwaysFold[] = {
    "add.s32",    "sub.u32",    "add.sat.s32",  "mul.lo.s32",
    "mul.hi.u32", "mad.lo.s32", "mul24.lo.u32", "mad24.hi.s32",
    "abs.s32",    "neg.s32",    "min.s32",      "max.u32",
    "popc.b32",   "clz.b32",    "bfind.u32",    "brev.b32",
    "bfe.u32",    "bfi.b32",    "fns.b32",      "shf.l.wrap.b32",
    "add.s64",    "mul.lo.u64", "mul.wide.u32", "mad.wide.s32",
    "brev.b64",
};

RunRequest FoldingWorkload(int n, std::mt19937_64& rng) {
  RunRequest request;
  for (const char* s : kAlwaysFold) request.spellings.push_back(s);
  for (int i = 0; i < n; ++i) {
    const uint32_t index = rng() % request.spellings.size();
    const Variant v = ParseVariant(request.spellings[index]).value();
    Operands o;
    for (int s = 0; s < NumSources(v); ++s) {
      const int width = SourceWidth(v, s);
      o.v[s] = width == 64 ? rng() : rng() & ((uint64_t{1} << width) - 1);
    }
    request.tuples.push_back({index, o});
  }
  return request;
}

RunRequest EdgeWorkload(int n, const WorkerIdentity& id, std::mt19937_64& rng) {
  RunRequest request;
  for (const Variant& v : AllVariants()) {
    if (id.Supports(v)) request.spellings.push_back(Spell(v));
  }
  for (int i = 0; i < n; ++i) {
    const uint32_t index = rng() % request.spellings.size();
    Operands o;
    FillEdgeTuples(ParseVariant(request.spellings[index]).value(), rng,
                   {&o, 1});
    request.tuples.push_back({index, o});
  }
  return request;
}

// `request` with a random non-empty set of the sources that may be runtime
// values made them (tuples without such a source stay immediates), as the
// runtime tier and the mutator's toggles give them.
RunRequest WithRuntimeSources(RunRequest request, std::mt19937_64& rng) {
  for (WireTuple& t : request.tuples) {
    const uint8_t capable = RuntimeCapableSources(
        ParseVariant(request.spellings[t.variant_index]).value());
    if (capable == 0) continue;
    do {
      t.runtime = capable & rng();
    } while (t.runtime == 0);
  }
  return request;
}

struct Measurement {
  double seconds = 0;      // wall time
  double cpu_seconds = 0;  // this process and its ptxas children
  int values = 0;
};

// CPU time used so far by this process and its waited-for children.
double CpuSeconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u;
    getrusage(who, &u);
    total += u.ru_utime.tv_sec + u.ru_stime.tv_sec +
             (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

absl::StatusOr<Measurement> Measure(const KeyValues& options,
                                    const RunRequest& warm_up,
                                    const RunRequest& request) {
  auto backend = MakePtxasBackend(options);
  if (!backend.ok()) return backend.status();
  RunReply reply;
  absl::Status warm = (*backend)->Run(warm_up, reply);
  if (!warm.ok()) return warm;
  // The best of three: the machine may be shared.
  Measurement best;
  for (int i = 0; i < 3; ++i) {
    reply = {};
    const double cpu_start = CpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    absl::Status run = (*backend)->Run(request, reply);
    const auto end = std::chrono::steady_clock::now();
    if (!run.ok()) return run;
    const double seconds = std::chrono::duration<double>(end - start).count();
    if (i == 0 || seconds < best.seconds) {
      best.seconds = seconds;
      best.cpu_seconds = CpuSeconds() - cpu_start;
    }
  }
  for (const TupleResult& r : reply.results)
    best.values += r.kind == ResultKind::kValue;
  return best;
}

int Main(int argc, char** argv) {
  int tuples = 20000;
  std::string arch = "sm_90", jobs = "2", only;
  std::vector<std::string> compilers = {"ptxas", "nvjitlink"};
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--tuples=") &&
        absl::SimpleAtoi(arg, &tuples))
      continue;
    if (absl::ConsumePrefix(&arg, "--arch=")) {
      arch = std::string(arg);
      continue;
    }
    if (absl::ConsumePrefix(&arg, "--compiler=")) {
      compilers = {std::string(arg)};
      continue;
    }
    if (absl::ConsumePrefix(&arg, "--jobs=")) {
      jobs = std::string(arg);
      continue;
    }
    if (absl::ConsumePrefix(&arg,
                            "--only=")) {  // one setting: t/kernel x k/module
      only = std::string(arg);
      continue;
    }
    std::fprintf(
        stderr,
        "usage: %s [--tuples=N] [--arch=sm_90] [--jobs=2] [--only=64x64] "
        "[--compiler=ptxas|nvjitlink]\n",
        argv[0]);
    return 2;
  }
  auto probe = MakePtxasBackend({{"arch", arch}});
  if (!probe.ok()) {
    std::fprintf(stderr, "%s\n", std::string(probe.status().message()).c_str());
    return 1;
  }
  const WorkerIdentity id = (*probe)->Identity();
  std::printf("%s, %s, %d tuples per run, jobs=%s\n\n", id.toolchain.c_str(),
              arch.c_str(), tuples, jobs.c_str());
  std::mt19937_64 rng(1);
  const RunRequest folding[2] = {FoldingWorkload(tuples, rng),
                                 FoldingWorkload(tuples, rng)};
  const RunRequest edge[2] = {EdgeWorkload(tuples, id, rng),
                              EdgeWorkload(tuples, id, rng)};
  std::printf("%-8s %8s %8s %-9s %9s %8s %10s %10s %6s\n", "workload",
              "t/kernel", "k/module", "compiler", "folded", "seconds",
              "folded/s", "per cpu-s", "ratio");
  struct Setting {
    int per_kernel, per_module;
  };
  for (const Setting& s : std::vector<Setting>{{1, 256},
                                               {16, 64},
                                               {64, 16},
                                               {64, 64},
                                               {64, 256},
                                               {256, 16},
                                               {256, 64}}) {
    if (!only.empty() && only != absl::StrCat(s.per_kernel, "x", s.per_module))
      continue;
    for (const auto& [name, requests] :
         {std::pair{"folding", folding}, std::pair{"edge", edge}}) {
      double baseline = 0;  // the first compiler's folded/s
      for (const std::string& compiler : compilers) {
        const KeyValues options = {
            {"arch", arch},
            {"jobs", jobs},
            {"compiler", compiler},
            {"tuples_per_kernel", absl::StrCat(s.per_kernel)},
            {"kernels_per_module", absl::StrCat(s.per_module)}};
        auto m = Measure(options, requests[0], requests[1]);
        if (!m.ok()) {
          std::fprintf(stderr, "%s\n",
                       std::string(m.status().message()).c_str());
          return 1;
        }
        const double rate = m->values / m->seconds;
        if (baseline == 0) baseline = rate;
        std::printf("%-8s %8d %8d %-9s %9d %8.2f %10.0f %10.0f %6.2f\n", name,
                    s.per_kernel, s.per_module, compiler.c_str(), m->values,
                    m->seconds, rate, m->values / m->cpu_seconds,
                    rate / baseline);
        std::fflush(stdout);
      }
    }
  }
  // Runtime operands, without the evaluator and with it, over the variants
  // the backend supports without it (with it, every variant).
  auto claims_only = MakePtxasBackend({{"arch", arch}, {"execute", "0"}});
  if (!claims_only.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(claims_only.status().message()).c_str());
    return 1;
  }
  const WorkerIdentity claims_id = (*claims_only)->Identity();
  const RunRequest runtime[2] = {
      WithRuntimeSources(EdgeWorkload(tuples, claims_id, rng), rng),
      WithRuntimeSources(EdgeWorkload(tuples, claims_id, rng), rng)};
  std::printf("\nruntime operands (edge tuples of the variants ptxas may fold, "
              "some sources kernel parameters), default packing, "
              "nvjitlink:\n");
  double without = 0;
  for (const char* execute : {"0", "1"}) {
    auto m = Measure({{"arch", arch},
                      {"jobs", jobs},
                      {"compiler", "nvjitlink"},
                      {"execute", execute}},
                     runtime[0], runtime[1]);
    if (!m.ok()) {
      std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
      return 1;
    }
    const double rate = runtime[1].tuples.size() / m->seconds;
    if (without == 0) without = rate;
    std::printf(
        "  %-32s %8.2f s %8.0f tuples/s  given a value: %6d (%5.1f%%)%s\n",
        execute[0] == '1' ? "with the SASS evaluator:" : "claims alone:",
        m->seconds, rate, m->values,
        100.0 * m->values / runtime[1].tuples.size(),
        execute[0] == '1'
            ? absl::StrFormat("  %.2fx the rate without", rate / without)
                  .c_str()
            : "");
  }
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) { return ptxdiff::Main(argc, argv); }
