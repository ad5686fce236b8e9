// Round trips through the worker protocol: the `oracle` backend in a
// ptxdiff-worker process versus the same oracle in process, at batch sizes
// 1, 100, 10,000 and 1,000,000.
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bench/protocol_benchmark
//
// Prints, per batch size: round-trip latency, tuples/s through the worker,
// tuples/s in process, and their ratio.

#include <cstdio>
#include <random>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/worker_client.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

std::vector<Tuple> MakeTuples(size_t n) {
  const Variant v = *ParseVariant("add.s32");
  std::vector<Operands> ops(n);
  std::mt19937_64 rng(1);
  FillEdgeTuples(v, rng, ops);
  std::vector<Tuple> tuples;
  tuples.reserve(n);
  for (const Operands& o : ops) tuples.push_back({v, o});
  return tuples;
}

// Seconds per call of `fn`, over enough calls to take ~`budget`.
template <typename F>
double SecondsPerCall(F fn, absl::Duration budget) {
  fn();  // warm up
  int calls = 0;
  const absl::Time start = absl::Now();
  absl::Duration elapsed;
  do {
    fn();
    ++calls;
    elapsed = absl::Now() - start;
  } while (elapsed < budget);
  return absl::ToDoubleSeconds(elapsed) / calls;
}

int Main() {
  auto command = CommandForBackend("oracle", PTXDIFF_WORKER_PATH);
  auto client = WorkerClient::Start(*command);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(client.status().message()).c_str());
    return 1;
  }
  std::printf("%10s %14s %16s %16s %8s\n", "batch", "round trip",
              "worker tuples/s", "in-proc tuples/s", "ratio");
  for (size_t n : {size_t{1}, size_t{100}, size_t{10000}, size_t{1000000}}) {
    const std::vector<Tuple> tuples = MakeTuples(n);
    std::vector<Operands> ops;
    for (const Tuple& t : tuples) ops.push_back(t.operands);
    std::vector<Result> results(n);
    const double worker = SecondsPerCall(
        [&] {
          if ((*client)->Run(tuples).fault) std::abort();
        },
        absl::Seconds(2));
    const double local =
        SecondsPerCall([&] { EvaluateBatch(tuples[0].variant, ops, results); },
                       absl::Seconds(1));
    std::printf("%10zu %11.1f us %16.3g %16.3g %7.0fx\n", n, worker * 1e6,
                n / worker, n / local, worker / local);
  }
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main() { return ptxdiff::Main(); }
