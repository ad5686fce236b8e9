// What every ptxdiff process pays before its first tuple: the variant tables
// on first use, and the start of a worker. First use happens once per
// process, so each sample is a fresh process: the benchmark runs itself
// (`--sample`) --runs times and prints the medians.
//
//   build/release/bench/startup_benchmark [--runs=9]
//
// The tables, in the order a worker or the campaign first needs them:
// AllVariants (every family's variants), VariantIndex (the dense index over
// them), the spelling table (Spell), the spelling index (parsing a canonical
// spelling), the stable ids (StableId); the campaign's systematic source
// over every variant and its breadth pass (a tuple of each variant, most of
// a campaign's start-up); then starting the oracle worker and
// its first batch (one tuple). Since the tables are computed at build time
// (isa/isa_tables.h), their steps measure reading them: copying the
// variants, building VariantIndex, and the first pages touched.

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "campaign/systematic_source.h"
#include "client/worker_client.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

constexpr const char* kSteps[] = {
    "AllVariants",    "VariantIndex", "spelling table",
    "spelling index", "stable ids",   "systematic source",
    "breadth pass",   "worker start", "first batch"};
constexpr int kNumSteps = sizeof(kSteps) / sizeof(kSteps[0]);

double MillisSince(absl::Time& t) {
  const absl::Time now = absl::Now();
  const double ms = absl::ToDoubleMilliseconds(now - t);
  t = now;
  return ms;
}

// One fresh process's figures, one line of kNumSteps milliseconds.
int Sample() {
  std::vector<double> ms;
  absl::Time t = absl::Now();
  const absl::Span<const Variant> all = AllVariants();
  ms.push_back(MillisSince(t));
  (void)VariantIndex(all[all.size() / 2]);
  ms.push_back(MillisSince(t));
  const std::string spelling = Spell(all[all.size() / 2]);
  ms.push_back(MillisSince(t));
  (void)ParseVariant(spelling);
  ms.push_back(MillisSince(t));
  (void)StableId(all[all.size() / 2]);
  ms.push_back(MillisSince(t));
  SystematicSource source(all);
  ms.push_back(MillisSince(t));
  std::vector<Tuple> run;
  while (!source.breadth_done() && source.NextRun(run)) run.clear();
  ms.push_back(MillisSince(t));
  WorkerCommand command;
  command.argv = {PTXDIFF_WORKER_PATH, "--backend=oracle"};
  auto client = WorkerClient::Start(command);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(client.status().message()).c_str());
    return 1;
  }
  ms.push_back(MillisSince(t));
  const std::vector<Tuple> batch = {{all[0], {{1, 2}}}};
  const BatchOutcome out = (*client)->Run(batch);
  ms.push_back(MillisSince(t));
  if (out.fault) return 1;
  for (double m : ms) std::printf("%.2f ", m);
  std::printf("\n");
  return 0;
}

// Runs `self --sample` and reads its line.
bool RunSample(const char* self, std::vector<double>& ms) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl(self, self, "--sample", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  ms.clear();
  for (absl::string_view field : absl::StrSplit(
           absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty())) {
    double m = 0;
    if (!absl::SimpleAtod(field, &m)) return false;
    ms.push_back(m);
  }
  return ms.size() == kNumSteps;
}

int Main(int argc, char** argv) {
  int runs = 9;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--sample") return Sample();
    if (!absl::ConsumePrefix(&arg, "--runs=") ||
        !absl::SimpleAtoi(arg, &runs) || runs < 1) {
      std::fprintf(stderr, "usage: startup_benchmark [--runs=N]\n");
      return 2;
    }
  }
  std::vector<std::vector<double>> by_step(kNumSteps);
  for (int r = 0; r < runs; ++r) {
    std::vector<double> ms;
    if (!RunSample(argv[0], ms)) {
      std::fprintf(stderr, "startup_benchmark: a sample process failed\n");
      return 1;
    }
    for (int s = 0; s < kNumSteps; ++s) by_step[s].push_back(ms[s]);
  }
  std::printf(
      "first use in a fresh process, median of %d processes (%zu variants)\n",
      runs, AllVariants().size());
  std::printf("%-18s %8s %8s %8s\n", "step", "min ms", "median", "max ms");
  for (int s = 0; s < kNumSteps; ++s) {
    std::vector<double>& v = by_step[s];
    std::sort(v.begin(), v.end());
    std::printf("%-18s %8.2f %8.2f %8.2f\n", kSteps[s], v.front(),
                v[v.size() / 2], v.back());
  }
  return 0;
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) { return ptxdiff::Main(argc, argv); }
