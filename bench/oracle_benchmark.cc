// Throughput of the batch oracle, per family, beside a baseline measured in
// the same run: copying the same bytes (the operand and result arrays).
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bench/oracle_benchmark
//
// After Google Benchmark's own table it prints, per variant, tuples/s and the
// ratio to the copy baseline (1.0 = as fast as memcpy of the same bytes).

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

constexpr size_t kBatch = 4096;  // 4096 tuples: 192 KiB, inside L2

// One representative variant per family (two for the video families: plain,
// and with selectors, saturation and a merge or secondary operation; the SIMD
// video families' selectors are operands, half of them the default).
constexpr const char* kVariants[] = {
    "add.s32",
    "sub.s32",
    "mul.lo.s32",
    "mul.wide.u32",
    "mad.lo.s32",
    "mul24.lo.s32",
    "mad24.hi.sat.s32",
    "sad.s32",
    "div.s32",
    "rem.s32",
    "div.u64",
    "abs.s32",
    "neg.s32",
    "min.s32",
    "max.relu.s16x2",
    "popc.b32",
    "clz.b64",
    "bfind.shiftamt.s32",
    "fns.b32",
    "brev.b32",
    "bfe.s32",
    "bfi.b32",
    "bmsk.clamp.b32",
    "szext.clamp.s32",
    "dp4a.s32.s32",
    "dp2a.lo.s32.u32",
    "shf.l.clamp.b32",
    "and.b32",
    "or.b64",
    "xor.b16",
    "not.b32",
    "cnot.b32",
    "lop3.b32",
    "shl.b32",
    "shr.s64",
    "shr.u16",
    "prmt.b32",
    "prmt.b32.b4e",
    "setp.lt.s32",
    "setp.hi.u64",
    "setp.lt.and.s32",
    "setp.ne.xor.b64",
    "selp.b32",
    "slct.u64.s32",
    "cvt.s32.s16",
    "cvt.sat.u8.s32",
    "addc.cc.u32",
    "subc.cc.u64",
    "madc.hi.cc.s32",
    "vadd.u32.u32.u32",
    "vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c",
    "vsub.s32.s32.s32.sat.min",
    "vabsdiff.u32.s32.u32",
    "vmin.s32.s32.s32.sat.add",
    "vmax.u32.u32.s32",
    "vshl.u32.u32.u32.clamp",
    "vshr.s32.s32.u32.sat.wrap d.h1, a.b3, b, c",
    "vmad.u32.u32.u32",
    "vmad.s32.s32.u32.sat.shr15 d, -a.b1, b.h0, c",
    "vset.s32.u32.lt",
    "vset.u32.u32.ge.add d, a.h1, b.b0, c",
    "vadd2.u32.u32.u32",
    "vsub2.s32.s32.s32.sat d.h0, a, b, c",
    "vavrg2.s32.u32.s32",
    "vabsdiff2.u32.u32.u32.add",
    "vmin2.s32.s32.s32.sat",
    "vmax2.u32.s32.u32",
    "vset2.s32.u32.lt.add",
    "vadd4.u32.u32.u32.sat",
    "vsub4.s32.s32.s32 d.b310, a, b, c",
    "vavrg4.u32.u32.u32",
    "vabsdiff4.u32.u32.u32.add",
    "vmin4.s32.s32.s32",
    "vmax4.s32.u32.s32.sat",
    "vset4.u32.u32.ne",
    "visa.shl.sat.d.d.ud",
    "visa.shl.uq.q.ub",
};

struct Buffers {
  std::vector<Operands> operands;
  std::vector<Result> results;
};

Buffers MakeBuffers(const Variant& v) {
  Buffers b{std::vector<Operands>(kBatch), std::vector<Result>(kBatch)};
  std::mt19937_64 rng(1);
  FillEdgeTuples(v, rng, b.operands);
  return b;
}

void BM_Oracle(benchmark::State& state, Variant v) {
  Buffers b = MakeBuffers(v);
  for (auto _ : state) {
    EvaluateBatch(v, b.operands, b.results);
    benchmark::DoNotOptimize(b.results.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// Reads the operand array and writes the result array, as the oracle does.
void BM_CopyBaseline(benchmark::State& state) {
  Buffers b = MakeBuffers(*ParseVariant("add.s32"));
  std::vector<Operands> operands_copy(kBatch);
  std::vector<Result> results_source(kBatch);
  for (auto _ : state) {
    std::memcpy(operands_copy.data(), b.operands.data(),
                kBatch * sizeof(Operands));
    std::memcpy(b.results.data(), results_source.data(),
                kBatch * sizeof(Result));
    benchmark::DoNotOptimize(operands_copy.data());
    benchmark::DoNotOptimize(b.results.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// Console output plus a record of every run's tuples/s.
class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) rates_[run.benchmark_name()] = it->second;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& rates() const { return rates_; }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  using namespace ptxdiff;
  benchmark::RegisterBenchmark("copy_baseline", BM_CopyBaseline);
  for (const char* spelling : kVariants) {
    benchmark::RegisterBenchmark((std::string("oracle/") + spelling).c_str(),
                                 BM_Oracle, *ParseVariant(spelling));
  }
  benchmark::Initialize(&argc, argv);
  RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  const auto& rates = reporter.rates();
  auto baseline = rates.find("copy_baseline");
  if (baseline == rates.end()) return 0;  // filtered out: no ratios
  std::printf("\n%-50s %14s %10s\n", "variant", "Mtuples/s", "copy/this");
  std::printf("%-50s %14.1f %10.2f\n", "copy_baseline", baseline->second / 1e6,
              1.0);
  for (const char* spelling : kVariants) {
    auto it = rates.find(std::string("oracle/") + spelling);
    if (it == rates.end()) continue;
    std::printf("%-50s %14.1f %10.2f\n", spelling, it->second / 1e6,
                baseline->second / it->second);
  }
  benchmark::Shutdown();
  return 0;
}
