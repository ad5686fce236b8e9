// Finding power (issue #9, "Measure it"): time to find each planted bug of
// the faulty test worker (`--fault=planted=NAME`, see
// worker/testing/faulty_worker.cc), for plain uniform random testing and,
// given --ptxdiff=PATH, for the campaign (`ptxdiff fuzz`):
//
//   build/release/bench/finding_power_benchmark [--budget=60] [--seed=1]
//   [--repeat=1]
//       [--only=NAME] [--ptxdiff=build/fuzz/cli/ptxdiff] [--no-uniform]
//
// Uniform: batches of 4096 tuples, each a uniformly random variant of
// AllVariants() with uniformly random operand bits, through WorkerClient,
// until a backend value differs from a defined oracle result, timed from
// starting its worker. Campaign: `ptxdiff fuzz --backend exec:WRAPPER
// --max-time BUDGET` in a temp dir, timed from its start until it judged its
// first mismatch (its stats files' `first_mismatch_unix_ms`; start-up
// included, as the uniform search's worker start is), and until the first
// entry appears in its triage directory (minimization and filing included
// too). Both are capped at --budget. Beside the seconds, the tuples each
// checked up to its first mismatch (the campaign's from its stats files'
// `first_mismatch_after`): the search's power without the start-up.

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "harness/judge.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

// A planted bug, a tuple that triggers it and a neighbour that must not.
struct Bug {
  const char* name;
  const char* spelling;
  Operands hit, miss;
};
const Bug kBugs[] = {
    {"video-selector",
     "vadd.s32.u32.s32.sat d.b1, a.h1, b.b2, c",
     {{1, 2, 3}},
     {{1, 2, 3}}},
    {"sat-bound", "add.sat.s32", {{0x7fffffff, 1}}, {{0x7fffffff, 2}}},
    {"field-width", "bfe.u32", {{0xdeadbeef, 4, 28}}, {{0xdeadbeef, 4, 27}}},
    {"min-times-minus-one",
     "mul.lo.s64",
     {{~0ull, 1ull << 63}},
     {{~0ull, (1ull << 63) + 1}}},
    {"defined-corner",
     "fns.b32",
     {{0x80000001, 31, 0xffffffff}},
     {{0x80000001, 30, 0xffffffff}}},
    // Issue 32's three kinds, and one operand value of one video variant.
    {"destination-max", "cvt.sat.u16.s32", {{0xffff}}, {{0xfffe}}},
    {"lane-sum-past-max",
     "vavrg4.s32.s32.s32",
     {{0x7f00, 0x0100, 0, 0x76543210}},
     {{0x7e00, 0x0100, 0, 0x76543210}}},
    {"equal-plus-one",
     "setp.le.s64",
     {{(1ull << 63) + 1, 1ull << 63}},
     {{(1ull << 63) + 2, 1ull << 63}}},
    {"video-operand-min",
     "vsub.s32.s32.s32.sat",
     {{5, 0x80000000}},
     {{5, 0x80000001}}},
    // Issue 43's: values inside the ranges, which no extreme reaches.
    {"part-clamp",
     "vmax.u32.u32.u32.sat d.b0, a.h0, b.h0, c",
     {{0x100, 0, 0}},
     {{0xff, 0, 0}}},
    {"mask-one-bit-short",
     "vadd.u32.u32.u32.sat d.b2, a.b0, b.b1, c",
     {{0x80, 0, 0}},
     {{0x7f, 0, 0}}},
    {"lane-carry",
     "vadd4.u32.u32.u32.sat",
     {{0xff, 0x01, 0, 0x76543210}},
     {{0xfe, 0x01, 0, 0x76543210}}},
    {"hi-sat-bound",
     "mad.hi.sat.s32",
     {{0x10000, 0x10000, 0x7fffffff}},
     {{0x10000, 0x10000, 0x7ffffffe}}},
};

struct Flags {
  double budget = 60;
  uint64_t seed = 1;
  int repeat = 1;  // runs of each search; the table shows medians
  std::string only, ptxdiff;
  bool uniform =
      true;  // --no-uniform: the campaign alone (comparing two builds)
};

struct Outcome {
  std::optional<double> seconds;  // time to find; empty if not found
  std::string what;               // the mismatching tuple or the triage entry
  int64_t tuples =
      0;  // checked until the first mismatch, it included; 0 unknown
  std::optional<double> filed;  // the campaign's: time until it filed it
};

absl::StatusOr<std::unique_ptr<WorkerClient>> StartFaulty(
    const std::string& bug) {
  WorkerCommand command;
  command.argv = {PTXDIFF_FAULTY_WORKER_PATH, "--fault=planted=" + bug};
  return WorkerClient::Start(command);
}

// The one judge's verdict (harness/judge.h: the carry of a `.cc` variant
// counts, a value the hardware reading explains does not), as the campaign
// judges.
bool Mismatch(const Tuple& t, const TupleResult& r) {
  return JudgeTuple(t, r).verdict == Verdict::kMismatch;
}

// The known tuple triggers the bug; its neighbour and the video variant with
// another selector (for video-selector) do not.
bool SelfCheck(const Bug& bug) {
  auto v = ParseVariant(bug.spelling);
  auto client = StartFaulty(bug.name);
  if (!v.ok() || !client.ok()) return false;
  std::vector<Tuple> tuples = {{*v, bug.hit}, {*v, bug.miss}};
  if (absl::string_view(bug.name) == "video-selector")
    tuples[1].variant.asel = Sel::kH0;
  if (!IsLegal(tuples[1].variant)) return false;
  const BatchOutcome out = (*client)->Run(tuples);
  return !out.fault && Mismatch(tuples[0], out.results[0]) &&
         !Mismatch(tuples[1], out.results[1]) &&
         Evaluate(tuples[0].variant, bug.hit).defined();
}

Outcome UniformSearch(const Bug& bug, const Flags& flags, uint64_t seed) {
  const absl::Span<const Variant> all = AllVariants();
  // Timed from starting its worker, as the campaign is from starting
  // `ptxdiff fuzz`: both pay for their processes.
  const absl::Time start = absl::Now();
  auto client = StartFaulty(bug.name);
  if (!client.ok())
    return {std::nullopt, std::string(client.status().message())};
  std::mt19937_64 rng(seed);
  std::vector<Tuple> batch(4096);
  for (uint64_t checked = 0;; checked += batch.size()) {
    const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
    if (elapsed >= flags.budget)
      return {std::nullopt, absl::StrCat(checked, " tuples checked")};
    for (Tuple& t : batch) {
      t = {all[rng() % all.size()], {}};
      for (int i = 0; i < NumSources(t.variant); ++i) {
        const int w = SourceWidth(t.variant, i);
        t.operands.v[i] = rng() & (w == 64 ? ~0ull : (1ull << w) - 1);
      }
    }
    const BatchOutcome out = (*client)->Run(batch);
    if (out.fault) return {std::nullopt, "backend fault: " + out.fault->detail};
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!Mismatch(batch[i], out.results[i])) continue;
      const Tuple& t = batch[i];
      const int64_t tuples = checked + i + 1;
      return {absl::ToDoubleSeconds(absl::Now() - start),
              absl::StrFormat("%s, backend 0x%x, after %d tuples",
                              ReplayLine(t.variant, t.operands,
                                         Evaluate(t.variant, t.operands)),
                              out.results[i].bits, tuples),
              tuples};
    }
  }
}

// The first entry of a triage directory (any subdirectory but temporaries),
// also looking in `entries/` should the layout grow one.
std::string FirstEntry(const std::string& triage) {
  namespace fs = std::filesystem;
  for (const std::string& dir : {triage, triage + "/entries"}) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename();
      if (e.is_directory(ec) && name[0] != '.' && name != "entries")
        return name;
    }
  }
  return "";
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  absl::StatusOr<pid_t> pid = StartProcess(argv, {.output_path = log}, "");
  return pid.ok() ? *pid : -1;
}

// The campaign's first mismatch, the earliest over the stats files under
// `out` of `key` (`first_mismatch_after`: tuples checked up to it, it
// included; `first_mismatch_unix_ms`: when); 0 if none says.
int64_t EarliestStat(const std::string& out, absl::string_view key) {
  namespace fs = std::filesystem;
  int64_t first = 0;
  std::error_code ec;
  for (const fs::directory_entry& e :
       fs::recursive_directory_iterator(out + "/stats", ec)) {
    if (e.path().extension() != ".stats") continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      int64_t n = 0;
      absl::string_view value = line;
      if (absl::ConsumePrefix(&value, key) &&
          absl::ConsumePrefix(&value, "=") && absl::SimpleAtoi(value, &n) &&
          n > 0 && (first == 0 || n < first)) {
        first = n;
      }
    }
  }
  return first;
}

// SIGINT, up to 30 s to stop (the campaign forwards it to libFuzzer), then
// SIGKILL.
void Stop(pid_t pid) {
  kill(pid, SIGINT);
  for (int i = 0; i < 300; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) != 0) return;
    usleep(100000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

Outcome CampaignSearch(const Bug& bug, const Flags& flags,
                       std::string& command) {
  char tmpl[] = "/tmp/finding_power.XXXXXX";
  if (mkdtemp(tmpl) == nullptr)
    return {std::nullopt, "cannot create a temp dir"};
  const std::string dir = tmpl, wrapper = dir + "/worker.sh";
  std::ofstream(wrapper) << "#!/bin/sh\nexec " << PTXDIFF_FAULTY_WORKER_PATH
                         << " --fault=planted=" << bug.name << " \"$@\"\n";
  chmod(wrapper.c_str(), 0755);
  const int max_time = static_cast<int>(flags.budget + 0.999);
  const std::vector<std::string> argv = {flags.ptxdiff, "fuzz",
                                         "--backend",   "exec:" + wrapper,
                                         "--out",       dir + "/out",
                                         "--dir",       dir + "/triage",
                                         "--max-time",  absl::StrCat(max_time)};
  command = absl::StrJoin(argv, " ") + " > " + dir + "/campaign.log 2>&1";
  const absl::Time start = absl::Now();
  const int64_t start_unix_ms = absl::ToUnixMillis(start);
  const pid_t pid = Spawn(argv, dir + "/campaign.log");
  if (pid < 0) return {std::nullopt, "cannot start " + flags.ptxdiff};
  Outcome outcome{std::nullopt, "see " + dir + "/campaign.log"};
  while (absl::ToDoubleSeconds(absl::Now() - start) < flags.budget) {
    if (std::string entry = FirstEntry(dir + "/triage"); !entry.empty()) {
      const double filed = absl::ToDoubleSeconds(absl::Now() - start);
      outcome = {filed, entry, 0, filed};
      break;
    }
    if (waitpid(pid, nullptr, WNOHANG) != 0) return outcome;  // ended early
    usleep(100000);
  }
  // The stats file is rewritten about once a second, and a stop skips the
  // last write (libFuzzer exits at once on SIGINT): wait for the figure.
  int64_t found_unix_ms = 0;
  for (int i = 0; outcome.seconds && i < 30 && found_unix_ms == 0; ++i) {
    outcome.tuples = EarliestStat(dir + "/out", "first_mismatch_after");
    found_unix_ms = EarliestStat(dir + "/out", "first_mismatch_unix_ms");
    if (found_unix_ms == 0) usleep(100000);
  }
  if (found_unix_ms > 0)
    outcome.seconds = (found_unix_ms - start_unix_ms) / 1000.0;
  Stop(pid);
  // A run that found its bug leaves nothing to look at; one that did not
  // keeps its directory, whose campaign.log the table's line points to.
  if (outcome.seconds) RemoveTree(dir);
  return outcome;
}

std::string Seconds(const std::optional<double>& s, double budget) {
  if (!s) return absl::StrFormat("not found in %.0f s", budget);
  return absl::StrFormat("%.2f", *s);
}

std::string SecondsOrDash(const std::optional<double>& s) {
  return s ? absl::StrFormat("%.2f", *s) : "-";
}

// The median run: by time, a run that did not find the bug counting as
// slowest (so "not found" when most did not), and the median of the tuples
// counted the same way.
Outcome Median(std::vector<Outcome> runs) {
  const auto slower = [](const Outcome& a, const Outcome& b) {
    return a.seconds.has_value() &&
           (!b.seconds.has_value() || *a.seconds < *b.seconds);
  };
  std::sort(runs.begin(), runs.end(), slower);
  Outcome median = runs[(runs.size() - 1) / 2];
  std::vector<int64_t> tuples;
  for (const Outcome& r : runs) {
    tuples.push_back(r.seconds && r.tuples > 0 ? r.tuples : INT64_MAX);
  }
  std::sort(tuples.begin(), tuples.end());
  const int64_t mid = tuples[(tuples.size() - 1) / 2];
  median.tuples = mid == INT64_MAX ? 0 : mid;
  return median;
}

// Every run's time to find, in run order ("-" where not found): the table's
// medians hide the slowest.
std::string EachRun(const std::vector<Outcome>& runs) {
  std::vector<std::string> out;
  for (const Outcome& r : runs) out.push_back(SecondsOrDash(r.seconds));
  return out.empty() ? "-" : absl::StrJoin(out, "/");
}

std::string Tuples(const Outcome& o) {
  return o.seconds && o.tuples > 0 ? absl::StrCat(o.tuples) : "-";
}

std::string Ratio(const Outcome& campaign, const Outcome& uniform,
                  double budget) {
  if (!campaign.seconds) return "-";
  if (!uniform.seconds)
    return absl::StrFormat("> %.0fx", budget / *campaign.seconds);
  return absl::StrFormat("%.1fx", *uniform.seconds / *campaign.seconds);
}

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    bool ok = true;
    if (absl::ConsumePrefix(&arg, "--budget="))
      ok = absl::SimpleAtod(arg, &flags.budget);
    else if (absl::ConsumePrefix(&arg, "--seed="))
      ok = absl::SimpleAtoi(arg, &flags.seed);
    else if (absl::ConsumePrefix(&arg, "--only="))
      flags.only = std::string(arg);
    else if (absl::ConsumePrefix(&arg, "--ptxdiff="))
      flags.ptxdiff = std::string(arg);
    else if (absl::ConsumePrefix(&arg, "--repeat="))
      ok = absl::SimpleAtoi(arg, &flags.repeat);
    else if (arg == "--no-uniform")
      flags.uniform = false;
    else
      ok = false;
    if (!ok || flags.budget <= 0 || flags.repeat < 1) {
      std::fprintf(
          stderr,
          "usage: finding_power_benchmark [--budget=S] [--seed=N] "
          "[--repeat=N] [--only=NAME] [--ptxdiff=PATH] [--no-uniform]\n");
      return false;
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  std::printf(
      "uniform: seeds %llu..%llu, batches of 4096 random tuples of %zu "
      "variants; "
      "budget %.0f s; medians of %d run(s) each\n",
      static_cast<unsigned long long>(flags.seed),
      static_cast<unsigned long long>(flags.seed + flags.repeat - 1),
      AllVariants().size(), flags.budget, flags.repeat);
  std::vector<std::string> commands, notes;
  std::printf("%-22s %12s %9s %12s %7s %16s %16s\n", "planted bug",
              "campaign s", "filed s", "uniform s", "ratio", "campaign tuples",
              "uniform tuples");
  for (const Bug& bug : kBugs) {
    if (!flags.only.empty() && flags.only != bug.name) continue;
    if (!SelfCheck(bug)) {
      std::printf(
          "%-22s self-check failed: the known tuple does not show the bug\n",
          bug.name);
      return 1;
    }
    std::vector<Outcome> campaigns, uniforms;
    for (int run = 0; run < flags.repeat; ++run) {
      if (!flags.ptxdiff.empty()) {
        std::string command;
        campaigns.push_back(CampaignSearch(bug, flags, command));
        if (run == 0) commands.push_back(command);
      }
      if (flags.uniform)
        uniforms.push_back(UniformSearch(bug, flags, flags.seed + run));
    }
    const Outcome campaign = campaigns.empty()
                                 ? Outcome{std::nullopt, "no --ptxdiff"}
                                 : Median(campaigns);
    const Outcome uniform = uniforms.empty()
                                ? Outcome{std::nullopt, "no uniform runs"}
                                : Median(uniforms);
    std::printf("%-22s %12s %9s %12s %7s %16s %16s\n", bug.name,
                flags.ptxdiff.empty()
                    ? "-"
                    : Seconds(campaign.seconds, flags.budget).c_str(),
                SecondsOrDash(campaign.filed).c_str(),
                Seconds(uniform.seconds, flags.budget).c_str(),
                Ratio(campaign, uniform, flags.budget).c_str(),
                Tuples(campaign).c_str(), Tuples(uniform).c_str());
    std::fflush(stdout);
    notes.push_back(absl::StrCat(bug.name, ": campaign runs ",
                                 EachRun(campaigns), " s: ", campaign.what,
                                 "; uniform: ", uniform.what));
  }
  for (const std::string& n : notes) std::printf("  %s\n", n.c_str());
  for (const std::string& c : commands) std::printf("  %s\n", c.c_str());
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) { return ptxdiff::Main(argc, argv); }
