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
//    cross-check compiled), and the share the backend flags as reused.
// 3. evaluator: the same tuples' kernels compiled here in one module (64
//    tuples a kernel, as the backend packs them), each kernel run with every
//    slot filled: the evaluator's own tuples/s, without the backend.
// 4. oracle: the same tuples through the oracle (hardware reading, as the
//    backend's cross-check uses).
// Prints each rate and the cached path's ratio to the slower of 3 and 4.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/batch_heap.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/errata.h"
#include "backends/ptxas/compiled_code.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"

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

// The evaluator alone: `tuples` compiled in one module of 64-tuple kernels,
// each kernel run with its slots filled; tuples/s, or -1 if it cannot.
double EvaluatorRate(const std::string& ptxas, const std::string& arch,
                     const std::vector<Tuple>& tuples, int repeats) {
  auto info = FindSassArchInfo(arch);
  auto assembler = NvJitLink::Load(ptxas);
  auto ptx_version = NewestPtxVersion(ptxas);
  if (!info.ok() || !assembler.ok() || !ptx_version.ok()) return -1;
  const PtxModule module = BuildPtxModule(
      tuples, {.target = arch, .ptx_version = *ptx_version});
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

  // 2. Many inputs for each, on the kept code.
  std::vector<Tuple> inputs;
  int64_t values = 0, reused = 0, refuted = 0;
  double cached_s = 0, warm_s = 0;
  // Batch 0 warms up: where the oracle refutes a tuple, the backend compiles
  // its key at -O0 (the cross-check) once; the rate is the later batches'.
  for (int b = 0; b <= batches; ++b) {
    inputs.clear();
    for (int i = 0; i < tuples; ++i) {
      const Tuple& w = witnesses[rng() % witnesses.size()];
      Tuple t = RegisterShapeTuple(w.variant, rng);
      for (int s = 0; s < NumSources(t.variant); ++s) {
        if (!t.IsRuntime(s)) t.operands.v[s] = w.operands.v[s];
      }
      inputs.push_back(t);
    }
    const RunRequest request = RequestOf(inputs);
    reply = RunReply{};
    start = std::chrono::steady_clock::now();
    if (!(*backend)->Run(request, reply).ok()) return 1;
    (b == 0 ? warm_s : cached_s) += Seconds(start);
    if (b == 0) continue;
    for (size_t i = 0; i < reply.results.size(); ++i) {
      const TupleResult& r = reply.results[i];
      values += r.kind == ResultKind::kValue;
      reused += r.kind == ResultKind::kValue && r.reused;
      const Result want = EvaluateWithReading(
          Reading::kHardware, inputs[i].variant, inputs[i].operands);
      // Values and declines the oracle's value refutes: each is compiled
      // again at -O0 (the backend's cross-check of the evaluator).
      refuted += want.defined() && (r.kind != ResultKind::kValue ||
                                    r.bits != want.bits);
    }
  }
  const double cached_rate = static_cast<double>(tuples) * batches / cached_s;

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
  std::printf("warm-up batch of %d: %.2f s (the -O0 compiles of the keys "
              "the oracle refutes)\n",
              tuples, warm_s);
  std::printf("cached code:  %10.0f tuples/s  (%d batches of %d; %.1f%% "
              "values, %.1f%% of them on reused code; %lld not the "
              "oracle's value)\n",
              cached_rate, batches, tuples,
              100.0 * values / (static_cast<double>(tuples) * batches),
              100.0 * reused / std::max<int64_t>(1, values),
              static_cast<long long>(refuted));
  std::printf("evaluator:    %10.0f tuples/s  (the same kernels, every slot "
              "filled, no backend)\n",
              evaluator_rate);
  std::printf("oracle:       %10.0f tuples/s  (sink %llu)\n", oracle_rate,
              static_cast<unsigned long long>(sink & 1));
  const double slower = std::min(evaluator_rate, oracle_rate);
  std::printf("cached / slower of evaluator and oracle: %.2f\n",
              cached_rate / slower);
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  ptxdiff::KeepBatchMemoryInTheHeap();  // as the worker does
  return ptxdiff::Main(argc, argv);
}
