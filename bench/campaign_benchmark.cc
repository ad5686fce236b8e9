// Campaign throughput beside the backend's own batch throughput, measured in
// the same run, on the `oracle` backend and (where the CUDA toolkit is) on
// `ptxas`.
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bench/campaign_benchmark [--seconds=20] [--backend=NAME]...
//       [--option=KEY=VALUE]...   (HELLO options for the workers, e.g.
//                                  compiler=ptxas for the ptxas executable)
//
// For each backend:
//   backend alone   batches of BatchSizeFor(backend) systematic tuples
//                   sent back to back through as many workers as the
//                   campaign runs (what the backend can check per second
//                   when it is never idle);
//   campaign        the campaign engine (campaign/campaign.h) for the same
//                   time, fed by its systematic source and by a thread that
//                   offers random edge tuples as fast as it can (standing in
//                   for the libFuzzer loop, which never waits): tuples judged
//                   per second, variants reached, and the ratio to the above;
//   <name>/imm      for ptxas, which runs operand forms: the campaign again
//                   without the runtime tier (CampaignOptions::runtime_forms).
//
// With --outcomes-cost=PAIRS, only the campaign (no backend-alone run),
// without and with its outcome records (counted, and written every 10 s as
// a fuzz process does), alternated PAIRS times in ABBA order after a
// warm-up campaign: the ratio of the rates.

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "bench/fuzz_loop_stand_in.h"
#include "campaign/campaign.h"
#include "campaign/systematic_source.h"
#include "client/worker_client.h"
#include "client/worker_locator.h"
#include "common/files.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

std::string TempDir() {
  char dir[] = "/tmp/campaign_benchmark.XXXXXX";
  return mkdtemp(dir) ? dir : "/tmp";
}

// Tuples judged per second by as many workers as the campaign runs (one per
// batch in flight), each fed back to back from one systematic source.
double BackendAlone(const WorkerCommand& command, double seconds) {
  const int workers = CampaignOptions{}.in_flight;
  std::vector<std::unique_ptr<WorkerClient>> clients;
  for (int i = 0; i < workers; ++i) {
    auto client = WorkerClient::Start(command);
    if (!client.ok()) return 0;
    clients.push_back(*std::move(client));
  }
  const size_t batch = BatchSizeFor(clients[0]->identity().name);
  std::vector<Variant> supported;
  for (const Variant& v : AllVariants()) {
    if (clients[0]->identity().Supports(v)) supported.push_back(v);
  }
  SystematicSource source(supported);
  std::mutex mu;  // guards source
  std::atomic<int64_t> judged{0};
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (auto& client : clients) {
    threads.emplace_back([&, c = client.get()] {
      while (absl::Now() - start < absl::Seconds(seconds)) {
        std::vector<Tuple> tuples;
        {
          std::lock_guard<std::mutex> lock(mu);
          while (tuples.size() < batch) tuples.push_back(*source.Next());
        }
        const BatchOutcome out = c->Run(tuples);
        if (!out.fault) judged += tuples.size();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return judged / absl::ToDoubleSeconds(absl::Now() - start);
}

// What the outcome records (campaign/outcome_table.h) cost where a fuzz
// process keeps them: the counting in the senders, and the file written
// every 10 s from a copy of the table (DifferentialTarget::WriteOutcomes).
struct OutcomeRecords {
  bool on = true;
  std::string path;  // where they are written
  bool measuring_cost = false;  // --outcomes-cost: no backend-alone run
};

// One write of the records, as a fuzz process makes it; prints what it
// took when `say` is set.
void WriteOutcomes(Campaign& campaign, const std::string& path, bool say) {
  const absl::Time start = absl::Now();
  const std::string text = campaign.OutcomesSnapshot().Format(
      campaign.identity().Describe(), campaign.SupportedVariants());
  if (!WriteFileAtomic(path, text).ok())
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
  if (say) {
    std::printf("  one write of the outcome records: %.1f ms, %.2f MB\n",
                absl::ToDoubleMilliseconds(absl::Now() - start),
                text.size() / 1e6);
  }
}

void WriteOutcomesEvery10s(Campaign& campaign, const std::string& path,
                           std::atomic<bool>& stop) {
  absl::Time next = absl::Now() + absl::Seconds(10);
  while (!stop) {
    absl::SleepFor(absl::Milliseconds(50));
    if (absl::Now() < next) continue;
    next += absl::Seconds(10);
    WriteOutcomes(campaign, path, /*say=*/false);
  }
}

// Tuples judged per second by the campaign.
double Measure(const std::string& backend, const KeyValues& hello_options,
               double seconds, bool runtime_forms,
               const OutcomeRecords& outcomes = {}) {
  auto command = CommandForBackend(backend, PTXDIFF_WORKER_PATH);
  if (!command.ok()) {
    std::printf("%-8s %s\n", backend.c_str(),
                std::string(command.status().message()).c_str());
    return 0;
  }
  command->hello_options.insert(command->hello_options.end(),
                                hello_options.begin(), hello_options.end());
  // The backend alone is the other rows' baseline; the records' cost is a
  // ratio of campaigns, so --outcomes-cost does not spend time on it.
  const double alone = outcomes.measuring_cost ? 0 : BackendAlone(*command, seconds);
  CampaignOptions options;
  options.worker = *command;
  options.triage_dir = TempDir() + "/triage";
  options.runtime_forms = runtime_forms;
  options.record_outcomes = outcomes.on;
  auto campaign = Campaign::Start(options);
  if (!campaign.ok()) {
    std::printf("%-8s cannot start: %s\n", backend.c_str(),
                std::string(campaign.status().message()).c_str());
    return 0;
  }
  std::atomic<bool> stop{false};
  const absl::Time start = absl::Now();
  std::thread fuzz([&] { FuzzLoopStandIn(**campaign, stop); });
  std::thread writer([&] {
    if (outcomes.on && !outcomes.path.empty())
      WriteOutcomesEvery10s(**campaign, outcomes.path, stop);
  });
  absl::SleepFor(absl::Seconds(seconds));
  const CampaignStats s = (*campaign)->Snapshot();
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
  stop = true;
  fuzz.join();
  writer.join();
  if (outcomes.on && !outcomes.path.empty())
    WriteOutcomes(**campaign, outcomes.path, /*say=*/true);
  (*campaign)->Stop();
  const double rate = s.counts.tuples / elapsed;
  // Checked tuples the backend answered with a value (not declined): a
  // backend declines some classes cheaply (ptxas: SIMD video with other
  // selectors), so checked/s alone can rise by sending what it cannot check.
  const double valued = (s.counts.judged() - s.counts.declined) / elapsed;
  std::string name = runtime_forms ? backend : backend + "/imm";
  if (!outcomes.on) name += "/no-outcomes";
  std::printf("%-10s %12.0f %12.0f %6.2f %9.0f %9d %9lld/%-6lld %10lld %9lld\n",
              name.c_str(), alone, rate, alone > 0 ? rate / alone : 0.0, valued,
              static_cast<int>((*campaign)->batch_size()),
              static_cast<long long>(s.variants_reached),
              static_cast<long long>(s.supported_variants),
              static_cast<long long>(s.offered),
              static_cast<long long>(s.counts.mismatched));
  return rate;
}

// The campaign with and without outcome records, alternated `pairs` times
// in ABBA order (the host drifts over minutes): the ratio of their summed
// rates.
void MeasureOutcomesCost(const std::string& backend,
                         const KeyValues& hello_options, double seconds,
                         int pairs) {
  const std::string dir = TempDir();
  double with = 0, without = 0;
  const auto run = [&](bool on) {
    return Measure(backend, hello_options, seconds, true,
                   {.on = on, .path = dir + "/1.outcomes", .measuring_cost = true});
  };
  // The process's first campaign runs at about half the rate of the next
  // ones (first use of its tables and pages): a warm-up, not counted.
  run(false);
  // ABBA: without-with, then with-without, so that the host's drift over
  // the run (its rate rises or falls by minutes) weighs on both alike.
  for (int i = 0; i < pairs; ++i) {
    if (i % 2 == 0) {
      without += run(false);
      with += run(true);
    } else {
      with += run(true);
      without += run(false);
    }
  }
  std::printf("%s: outcome records kept / not kept = %.3f (%d pairs of %.0f s)\n",
              backend.c_str(), without > 0 ? with / without : 0.0, pairs,
              seconds);
}

int Main(int argc, char** argv) {
  double seconds = 20;
  int outcome_pairs = 0;  // --outcomes-cost=N: only that measurement
  std::vector<std::string> backends;
  KeyValues hello_options;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--seconds=") &&
        absl::SimpleAtod(arg, &seconds))
      continue;
    if (absl::ConsumePrefix(&arg, "--outcomes-cost=") &&
        absl::SimpleAtoi(arg, &outcome_pairs))
      continue;
    if (absl::ConsumePrefix(&arg, "--backend=")) {
      backends.emplace_back(arg);
      continue;
    }
    if (absl::ConsumePrefix(&arg, "--option=") && absl::StrContains(arg, '=')) {
      const size_t eq = arg.find('=');
      hello_options.emplace_back(std::string(arg.substr(0, eq)),
                                 std::string(arg.substr(eq + 1)));
      continue;
    }
    std::fprintf(stderr,
                 "usage: campaign_benchmark [--seconds=S] [--backend=NAME]... "
                 "[--option=KEY=VALUE]... [--outcomes-cost=PAIRS]\n");
    return 2;
  }
  if (backends.empty()) {
    backends = {"oracle"};
    if (ChooseDefaultBackend().name == "ptxas") backends.push_back("ptxas");
  }
  std::printf("%.0f s per measurement, %u cores\n", seconds,
              std::thread::hardware_concurrency());
  std::printf("%-10s %12s %12s %6s %9s %9s %16s %10s %9s\n", "backend",
              "alone/s", "campaign/s", "ratio", "valued/s", "batch",
              "reached/supp.", "offered", "mismatch");
  for (const std::string& b : backends) {
    if (outcome_pairs > 0) {
      MeasureOutcomesCost(b, hello_options, seconds, outcome_pairs);
      continue;
    }
    Measure(b, hello_options, seconds, /*runtime_forms=*/true);
    // A backend that runs operand forms, measured again on immediates only
    // (`<name>/imm`): what the runtime tier costs its campaign.
    if (b == "ptxas")
      Measure(b, hello_options, seconds, /*runtime_forms=*/false);
  }
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) { return ptxdiff::Main(argc, argv); }
