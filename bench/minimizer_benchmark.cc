// Minimization cost per finding, on findings made by a deliberately faulty
// backend (the faulty test worker: the oracle with bit 0 of some results
// flipped):
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bench/minimizer_benchmark
//
// For each configuration it minimizes 200 findings (random variants of every
// family, random edge operands) and prints the median and 90th-percentile
// time and backend round trips per finding. Targets (issue #6): under 1 s and
// under 50 round trips per finding.

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "client/worker_client.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"
#include "triage/minimizer.h"

namespace ptxdiff {
namespace {

template <typename T>
T Percentile(std::vector<T> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

void RunConfiguration(const char* title, std::vector<std::string> flags) {
  WorkerCommand command;
  command.argv = {PTXDIFF_FAULTY_WORKER_PATH};
  command.argv.insert(command.argv.end(), flags.begin(), flags.end());
  auto client = WorkerClient::Start(command);
  if (!client.ok()) {
    std::printf("%s: %s\n", title,
                std::string(client.status().message()).c_str());
    return;
  }
  std::mt19937_64 rng(11);
  const absl::Span<const Variant> all = AllVariants();
  std::vector<double> seconds;
  std::vector<int64_t> calls;
  int flaky = 0, attempts = 0;
  while (seconds.size() < 200 && attempts < 20000) {
    ++attempts;
    const Variant& v = all[rng() % all.size()];
    std::vector<Operands> ops(1);
    FillEdgeTuples(v, rng, ops);
    auto f = MinimizeMismatch(**client, {v, ops[0]});
    if (!f.ok())
      continue;  // no disagreement on this tuple (oracle undefined, ...)
    seconds.push_back(f->minimize_seconds);
    calls.push_back(f->minimize_backend_calls);
    flaky += f->flaky;
  }
  std::printf("%-44s %5zu %10.1f %10.1f %8lld %8lld %6d\n", title,
              seconds.size(), 1e3 * Percentile(seconds, 0.5),
              1e3 * Percentile(seconds, 0.9),
              static_cast<long long>(Percentile(calls, 0.5)),
              static_cast<long long>(Percentile(calls, 0.9)), flaky);
}

}  // namespace
}  // namespace ptxdiff

int main() {
  std::printf("%-44s %5s %10s %10s %8s %8s %6s\n", "faulty backend", "cases",
              "median ms", "p90 ms", "med rt", "p90 rt", "flaky");
  ptxdiff::RunConfiguration("every result wrong in bit 0",
                            {"--fault=wrong-on="});
  ptxdiff::RunConfiguration("wrong only when operand b >= 32",
                            {"--fault=wrong-on=", "--when-operand=1:32"});
  ptxdiff::RunConfiguration(
      "wrong only when operand a >= 0x80000000",
      {"--fault=wrong-on=", "--when-operand=0:2147483648"});
  return 0;
}
