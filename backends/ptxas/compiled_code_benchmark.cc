// Compile once, run every input: runtime tuples per second on the ptxas
// backend's cached code, beside the SASS evaluator's own rate on the same
// kernels and the oracle's on the same tuples, in one run.
//
//   compiled_code_benchmark [--variants=N] [--tuples=N] [--batches=N]
//                           [--arch=sm_90] [--seed=S]
//
// 1. compile: one batch holding one register-shape tuple (every source that
//    may be a runtime value one) of each of N variants spread over the ISA
//    (those the backend supports): the backend compiles and keeps each.
// 2. cached: batches of --tuples tuples of those variants at random and edge
//    values (the sources that cannot be runtime values as compiled): every
//    tuple is run on the kept code. Tuples/s over Backend::Run after a
//    warm-up batch (in which the keys the oracle refutes get their -O0
//    cross-check compiled), and the share the backend flags as reused. Fed
//    two ways, each measured: a tuple of each variant in turn, as the
//    campaign's compiled lane feeds the backend (campaign/compiled_source.h),
//    and each tuple's variant drawn at random (a kernel then runs as many
//    rounds as its busiest variant has tuples, its other slots' code run
//    unfilled).
// 3. evaluator: the same tuples' kernels compiled here in one module
//    (kRuntimeTuplesPerKernel tuples a kernel, as the backend packs runtime
//    forms), each kernel run with every slot filled: the evaluator's own
//    tuples/s, without the backend.
// 4. oracle: the same tuples through the oracle (hardware reading, as the
//    backend's cross-check uses).
// Prints each rate and each feed's ratio to the slower of 3 and 4.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "backends/ptxas/chunk_plan.h"
#include "backends/ptxas/compiled_code.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "common/batch_heap.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/errata.h"

namespace ptxdiff {
namespace {

// A tuple of `v` at edge and random values (FillEdgeTuples), every source
// that may be a runtime value one.
Tuple RegisterShapeTuple(const Variant& v, std::mt19937_64& rng) {
  Operands ops;
  FillEdgeTuples(v, rng, std::span<Operands>(&ops, 1));
  return {v, ops, RuntimeCapableSources(v)};
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       since)
      .count();
}

// `n` supported variants with a runtime-capable source, evenly over the
// table.
std::vector<Variant> SpreadVariants(const WorkerIdentity& id, size_t n) {
  const std::vector<bool> supported = SupportedVariants(id);
  std::vector<Variant> all;
  for (size_t i = 0; i < AllVariants().size(); ++i) {
    const Variant& v = AllVariants()[i];
    if (supported[i] && RuntimeCapableSources(v) != 0) all.push_back(v);
  }
  std::vector<Variant> out;
  for (size_t i = 0; i < n && i < all.size(); ++i)
    out.push_back(all[i * all.size() / std::min(n, all.size())]);
  return out;
}

RunRequest RequestOf(const std::vector<Tuple>& tuples) {
  RunRequest request;
  absl::flat_hash_map<Variant, uint32_t> index;
  for (const Tuple& t : tuples) {
    auto [it, added] = index.try_emplace(t.variant, request.spellings.size());
    if (added) request.spellings.push_back(Spell(t.variant));
    request.tuples.push_back({it->second, t.operands, t.runtime});
  }
  return request;
}

// The evaluator alone: `tuples` compiled in one module of kernels of
// kRuntimeTuplesPerKernel,
// each kernel run with its slots filled; tuples/s, or -1 if it cannot.
double EvaluatorRate(const std::string& ptxas, const std::string& arch,
                     const std::vector<Tuple>& tuples, int repeats) {
  auto info = FindSassArchInfo(arch);
  auto assembler = NvJitLink::Load(ptxas);
  auto ptx_version = NewestPtxVersion(ptxas);
  if (!info.ok() || !assembler.ok() || !ptx_version.ok()) return -1;
  const PtxModule module =
      BuildPtxModule(tuples, {.target = arch,
                              .ptx_version = *ptx_version,
                              .tuples_per_kernel = kRuntimeTuplesPerKernel});
  auto out = (*assembler)->Compile(arch, module.text);
  if (!out.ok() || !out->ok) return -1;
  auto elf = ParseElf(out->cubin);
  if (!elf.ok()) return -1;
  auto texts = KernelTexts(*elf);
  if (!texts.ok()) return -1;
  std::vector<CompiledKernel> kernels;
  for (size_t k = 0; k < module.kernels.size(); ++k) {
    auto code = DecodeSassKernel(*info, (*texts)[module.kernels[k]]);
    if (!code.ok()) continue;
    const std::span<const Tuple> own(
        tuples.data() + module.kernel_begin[k],
        module.kernel_begin[k + 1] - module.kernel_begin[k]);
    kernels.push_back(
        KernelOf(module, static_cast<int>(k), own, *std::move(code)));
  }
  int64_t answered = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    for (const CompiledKernel& kernel : kernels) {
      std::string why;
      if (RunCompiled(*info, kernel, {}, {}, why).has_value())
        answered += kernel.compiled_for.size();
    }
  }
  return answered / Seconds(start);
}

// How the cached batches' tuples pick their variants.
enum class Feed { kInTurn, kAtRandom };

struct CachedRun {
  double rate = 0;  // tuples/s after the warm-up batch
  double warm_s = 0;
  int64_t values = 0, reused = 0, refuted = 0;
  std::vector<Tuple> last_batch;
};

// A warm-up batch, then `batches` of `tuples` tuples of the witnesses'
// variants at edge and random values (the sources that cannot be runtime
// values as compiled), each run by `backend` on its kept code.
absl::StatusOr<CachedRun> RunCached(Backend& backend,
                                    const std::vector<Tuple>& witnesses,
                                    Feed feed, int tuples, int batches,
                                    std::mt19937_64& rng) {
  CachedRun run;
  double cached_s = 0;
  size_t turn = 0;
  std::vector<Tuple>& inputs = run.last_batch;
  // Batch 0 warms up: where the oracle refutes a tuple, the backend compiles
  // its key at -O0 (the cross-check) once; the rate is the later batches'.
  for (int b = 0; b <= batches; ++b) {
    inputs.clear();
    for (int i = 0; i < tuples; ++i) {
      const Tuple& w =
          witnesses[feed == Feed::kInTurn ? turn++ % witnesses.size()
                                          : rng() % witnesses.size()];
      Tuple t = RegisterShapeTuple(w.variant, rng);
      for (int s = 0; s < NumSources(t.variant); ++s) {
        if (!t.IsRuntime(s)) t.operands.v[s] = w.operands.v[s];
      }
      inputs.push_back(t);
    }
    const RunRequest request = RequestOf(inputs);
    RunReply reply;
    const auto start = std::chrono::steady_clock::now();
    PTXDIFF_RETURN_IF_ERROR(backend.Run(request, reply));
    (b == 0 ? run.warm_s : cached_s) += Seconds(start);
    if (b == 0) continue;
    for (size_t i = 0; i < reply.results.size(); ++i) {
      const TupleResult& r = reply.results[i];
      run.values += r.kind == ResultKind::kValue;
      run.reused += r.kind == ResultKind::kValue && r.reused;
      const Result want = EvaluateWithReading(
          Reading::kHardware, inputs[i].variant, inputs[i].operands);
      // Values and declines the oracle's value refutes: each is compiled
      // again at -O0 (the backend's cross-check of the evaluator).
      run.refuted += want.defined() &&
                     (r.kind != ResultKind::kValue || r.bits != want.bits);
    }
  }
  run.rate = static_cast<double>(tuples) * batches / cached_s;
  return run;
}

void PrintCached(const char* feed, const CachedRun& run, int tuples,
                 int batches) {
  std::printf(
      "cached code:  %10.0f tuples/s  variants %s (%d batches of "
      "%d; %.1f%% values, %.1f%% of them on reused code; %lld not "
      "the oracle's value)\n",
      run.rate, feed, batches, tuples,
      100.0 * run.values / (static_cast<double>(tuples) * batches),
      100.0 * run.reused / std::max<int64_t>(1, run.values),
      static_cast<long long>(run.refuted));
}

int Main(int argc, char** argv) {
  int variants = 2048, tuples = 65536, batches = 4;
  uint64_t seed = 1;
  std::string arch = "sm_90";
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--variants=")) {
      (void)absl::SimpleAtoi(arg, &variants);
    } else if (absl::ConsumePrefix(&arg, "--tuples=")) {
      (void)absl::SimpleAtoi(arg, &tuples);
    } else if (absl::ConsumePrefix(&arg, "--batches=")) {
      (void)absl::SimpleAtoi(arg, &batches);
    } else if (absl::ConsumePrefix(&arg, "--seed=")) {
      (void)absl::SimpleAtoi(arg, &seed);
    } else if (absl::ConsumePrefix(&arg, "--arch=")) {
      arch = std::string(arg);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  auto backend = MakePtxasBackend({{"arch", arch}});
  auto ptxas = FindPtxas({});
  if (!backend.ok() || !ptxas.ok()) {
    std::fprintf(stderr, "no ptxas backend: %s\n",
                 std::string(backend.status().message()).c_str());
    return 1;
  }
  const std::vector<Variant> chosen =
      SpreadVariants((*backend)->Identity(), variants);

  // 1. One register-shape tuple of each variant: its compile.
  std::mt19937_64 rng(seed);
  std::vector<Tuple> witnesses;
  for (const Variant& v : chosen) witnesses.push_back(RegisterShapeTuple(v, rng));
  auto start = std::chrono::steady_clock::now();
  RunReply reply;
  if (!(*backend)->Run(RequestOf(witnesses), reply).ok()) return 1;
  const double compile_s = Seconds(start);
  size_t compiled = 0;
  for (const TupleResult& r : reply.results)
    compiled += r.kind == ResultKind::kValue;

  // 2. Many inputs for each, on the kept code, fed both ways.
  const absl::StatusOr<CachedRun> in_turn =
      RunCached(**backend, witnesses, Feed::kInTurn, tuples, batches, rng);
  const absl::StatusOr<CachedRun> at_random =
      RunCached(**backend, witnesses, Feed::kAtRandom, tuples, batches, rng);
  if (!in_turn.ok() || !at_random.ok()) return 1;
  const std::vector<Tuple>& inputs = at_random->last_batch;

  // 3. The evaluator alone on the same kernels; 4. the oracle.
  const double evaluator_rate = EvaluatorRate(*ptxas, arch, witnesses, 64);
  start = std::chrono::steady_clock::now();
  uint64_t sink = 0;
  for (int r = 0; r < 4; ++r) {
    for (const Tuple& t : inputs) {
      sink += EvaluateWithReading(Reading::kHardware, t.variant, t.operands)
                  .bits;
    }
  }
  const double oracle_rate = 4.0 * inputs.size() / Seconds(start);

  std::printf("variants %zu (%zu compiled to a value) on %s; compile batch "
              "%.2f s (%.0f keys/s)\n",
              chosen.size(), compiled, arch.c_str(), compile_s,
              chosen.size() / compile_s);
  std::printf(
      "warm-up batch of %d: %.2f s (the -O0 compiles of the keys "
      "the oracle refutes)\n",
      tuples, in_turn->warm_s);
  PrintCached("in turn", *in_turn, tuples, batches);
  PrintCached("at random", *at_random, tuples, batches);
  std::printf("evaluator:    %10.0f tuples/s  (the same kernels, every slot "
              "filled, no backend)\n",
              evaluator_rate);
  std::printf("oracle:       %10.0f tuples/s  (sink %llu)\n", oracle_rate,
              static_cast<unsigned long long>(sink & 1));
  const double slower = std::min(evaluator_rate, oracle_rate);
  std::printf(
      "cached / slower of evaluator and oracle: %.2f in turn "
      "(the campaign's feed), %.2f at random\n",
      in_turn->rate / slower, at_random->rate / slower);
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  ptxdiff::KeepBatchMemoryInTheHeap();  // as the worker does
  return ptxdiff::Main(argc, argv);
}
