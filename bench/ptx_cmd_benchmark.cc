// The ptx-cmd path against a tool that behaves like a real simulator: the
// campaign's tuples per second beside the tool's own rate on one large
// launch, measured in the same run (issue: one tool run per batch).
//
//   cmake --preset release && cmake --build --preset release
//   build/release/bench/ptx_cmd_benchmark [--seconds=60] [--startup-ms=60]
//       [--per-tuple-us=6] [--tuples=65536] [--dense-faults] [--realistic]
//
// The tool is the test fixture ptx_kernel_interpreter, made to spend
// --startup-ms of CPU per run and --per-tuple-us per tuple, on top of its
// own interpreting (the defaults stand for the functional simulator of
// docs/performance.md's ptx-cmd section).
//
//   one launch   one run of the tool on one module of --tuples tuples (256
//                variants spread over the PTX families, a segment each, as
//                a batch module is built): the most the tool can do; timed
//                before the campaign and after it.
//   With --dense-faults the campaign's tool has a real simulator's fault
//   density (the interpreter's --dense-faults: crashes, hangs, refusals
//   over many families); one launch stays the clean tool's, the rate the
//   campaign is held to (issue 41). With --realistic it refuses as a real
//   parser does (the interpreter's --realistic: whole feature classes, one
//   error line a run, a simulator's start-up more a run; issue 62); the
//   two combine.
//
//   campaign     the campaign engine through `ptx-cmd:` for --seconds, fed
//                by its systematic source and a stand-in for the fuzz loop:
//                tuples judged per second over the whole run (start-up and
//                calibration included) and over its last two thirds, and
//                that steady rate's ratio to the two launches' mean.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "backends/cuda/kernel_gen.h"
#include "bench/fuzz_loop_stand_in.h"
#include "campaign/campaign.h"
#include "campaign/systematic_source.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

struct Settings {
  double seconds = 60;
  int startup_ms = 60;
  double per_tuple_us = 6;
  int tuples = 65536;
  bool dense_faults = false;
  bool realistic = false;
};

std::string ToolCommand(const Settings& s) {
  return absl::StrCat(PTXDIFF_INTERPRETER_PATH, " --startup-ms=", s.startup_ms,
                      " --per-tuple-us=", s.per_tuple_us,
                      s.dense_faults ? " --dense-faults" : "",
                      s.realistic ? " --realistic" : "",
                      " {ptx} {in} {out}");
}

// PTX variants as the campaign would send them to an sm_90 tool.
std::vector<Variant> PtxVariants() {
  std::vector<Variant> out;
  for (const Variant& v : AllVariants()) {
    if (!WhyUnsupported(v, 90, 90).has_value()) out.push_back(v);
  }
  return out;
}

// The tool's rate on one module of `s.tuples` tuples: 256 variants spread
// over the PTX families (every k-th), each a segment of edge tuples, in one
// run: a large launch of the kind a batch module is.
double OneLaunch(const Settings& s) {
  const std::vector<Variant> all = PtxVariants();
  constexpr size_t kVariants = 256;
  const size_t per_variant = std::max<size_t>(1, s.tuples / kVariants);
  std::mt19937_64 rng(1);
  std::vector<BatchSegment> segments;
  std::string in;
  std::vector<Operands> ops(per_variant);
  for (size_t k = 0; k < kVariants; ++k) {
    const Variant& v = all[k * all.size() / kVariants];
    FillEdgeTuples(v, rng, ops);
    // As the ptx-cmd backend builds a batch module's loop.
    segments.push_back({.variant = v,
                        .first = static_cast<uint32_t>(in.size() / kTupleBytes),
                        .count = static_cast<uint32_t>(ops.size()),
                        .dispatch_values = DispatchValuesOf(v, ops)});
    for (const Operands& o : ops)
      in.append(reinterpret_cast<const char*>(o.v), kTupleBytes);
  }
  auto dir = TempDir::Create("ptx_cmd_benchmark");
  if (!dir.ok()) return 0;
  const std::string ptx = (*dir)->File("kernel.ptx"),
                    in_path = (*dir)->File("in.bin");
  if (!WriteFile(ptx, BatchModule(segments, *TargetForDevice(90))).ok() ||
      !WriteFile(in_path, in).ok()) {
    return 0;
  }
  const absl::Time start = absl::Now();
  auto outcome = RunProcess(
      {PTXDIFF_INTERPRETER_PATH, absl::StrCat("--startup-ms=", s.startup_ms),
       absl::StrCat("--per-tuple-us=", s.per_tuple_us), ptx, in_path,
       (*dir)->File("out.bin")},
      {.output_path = (*dir)->File("log"), .timeout = absl::Minutes(10)});
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!outcome.ok() || !outcome->ok()) {
    std::printf("one launch failed: %s\n",
                ReadFileTail((*dir)->File("log"), 500).c_str());
    return 0;
  }
  std::printf("one launch: %zu tuples of %zu variants in %.2f s\n",
              in.size() / kTupleBytes, segments.size(), seconds);
  return in.size() / kTupleBytes / seconds;
}

// The campaign's tuples judged per second over the last two thirds of the
// run (nullopt if it could not start).
std::optional<double> MeasureCampaign(const Settings& s) {
  auto command =
      CommandForBackend("ptx-cmd:" + ToolCommand(s), PTXDIFF_WORKER_PATH);
  if (!command.ok()) return std::nullopt;
  auto triage = TempDir::Create("ptx_cmd_benchmark_triage");
  if (!triage.ok()) return std::nullopt;
  CampaignOptions options;
  options.worker = *command;
  options.triage_dir = (*triage)->File("triage");
  const absl::Time start = absl::Now();
  auto campaign = Campaign::Start(options);
  if (!campaign.ok()) {
    std::printf("campaign cannot start: %s\n",
                std::string(campaign.status().message()).c_str());
    return std::nullopt;
  }
  std::atomic<bool> stop{false};
  std::thread fuzz([&] { FuzzLoopStandIn(**campaign, stop); });
  absl::SleepFor(start + absl::Seconds(s.seconds / 3) - absl::Now());
  const CampaignStats early = (*campaign)->Snapshot();
  const absl::Time early_at = absl::Now();
  absl::SleepFor(start + absl::Seconds(s.seconds) - absl::Now());
  const CampaignStats end = (*campaign)->Snapshot();
  const absl::Time end_at = absl::Now();
  stop = true;
  fuzz.join();
  (*campaign)->Stop();
  const double stopped = absl::ToDoubleSeconds(absl::Now() - start);
  const double overall =
      end.counts.tuples / absl::ToDoubleSeconds(end_at - start);
  const double steady = (end.counts.tuples - early.counts.tuples) /
                        absl::ToDoubleSeconds(end_at - early_at);
  std::printf(
      "campaign: %lld tuples in %.1f s (stopped at %.1f s), calibration %lld "
      "ms\n"
      "  overall %.0f tuples/s; last two thirds %.0f tuples/s\n"
      "  variants reached %lld of %lld supported; tool runs' faults %lld, "
      "mismatches %lld\n"
      "  declined %lld; sent again %lld (a batch left them unrun), withheld "
      "%lld (they faulted the tool)\n"
      "  mismatches run in registers to tell their cause %lld, in %lld runs\n",
      static_cast<long long>(end.counts.tuples),
      absl::ToDoubleSeconds(end_at - start), stopped,
      static_cast<long long>(end.calibration_ms), overall, steady,
      static_cast<long long>(end.variants_reached),
      static_cast<long long>(end.supported_variants),
      static_cast<long long>(end.counts.faulted),
      static_cast<long long>(end.counts.mismatched),
      static_cast<long long>(end.counts.declined),
      static_cast<long long>(end.sent_again),
      static_cast<long long>(end.withheld_faulting),
      static_cast<long long>(end.contrasted),
      static_cast<long long>(end.contrast_runs));
  std::printf("  most common decline (%lld tuples): %s\n",
              static_cast<long long>(end.top_decline_count),
              end.top_decline.substr(0, end.top_decline.find('\n'))
                  .substr(0, 200)
                  .c_str());
  return steady;
}

int Main(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--seconds=") &&
        absl::SimpleAtod(arg, &s.seconds))
      continue;
    if (absl::ConsumePrefix(&arg, "--startup-ms=") &&
        absl::SimpleAtoi(arg, &s.startup_ms)) {
      continue;
    }
    if (absl::ConsumePrefix(&arg, "--per-tuple-us=") &&
        absl::SimpleAtod(arg, &s.per_tuple_us)) {
      continue;
    }
    if (absl::ConsumePrefix(&arg, "--tuples=") &&
        absl::SimpleAtoi(arg, &s.tuples))
      continue;
    if (arg == "--dense-faults") {
      s.dense_faults = true;
      continue;
    }
    if (arg == "--realistic") {
      s.realistic = true;
      continue;
    }
    std::fprintf(stderr,
                 "usage: ptx_cmd_benchmark [--seconds=S] [--startup-ms=MS] "
                 "[--per-tuple-us=US] [--tuples=N] [--dense-faults] "
                 "[--realistic]\n");
    return 2;
  }
  std::printf("tool: %s\n%u cores\n", ToolCommand(s).c_str(),
              std::thread::hardware_concurrency());
  // Timed before and after the campaign, and the campaign held to their
  // mean: this host's speed drifts by a third within minutes.
  const double before = OneLaunch(s);
  const std::optional<double> steady = MeasureCampaign(s);
  const double after = OneLaunch(s);
  std::printf("one launch: %.0f tuples/s before the campaign, %.0f after\n",
              before, after);
  if (steady && before > 0 && after > 0) {
    std::printf("the campaign's last two thirds: %.2f of one launch\n",
                *steady / ((before + after) / 2));
  }
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) { return ptxdiff::Main(argc, argv); }
