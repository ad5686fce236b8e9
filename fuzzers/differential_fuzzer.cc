// libFuzzer target: the oracle against a backend (differential_target.h says
// how it is configured). Everything but these entry points is testable
// without libFuzzer.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/interrupt.h"
#include "common/run_id.h"
#include "fuzzers/differential_target.h"
#include "fuzzers/mutator.h"
#include "harness/semantic_classes.h"
#include "isa/axes.h"

namespace {

std::unique_ptr<ptxdiff::DifferentialTarget> target;

// Semantic coverage: one counter per (family, operand class).
__attribute__((used, section("__libfuzzer_extra_counters")))
uint8_t semantic_counters[ptxdiff::kNumFamilies * ptxdiff::kNumSemanticClasses];

// Rewrites -max_total_time in libFuzzer's arguments (it parses them after
// this initializer, which may change them) so that the run ends at the
// configured deadline although start-up took its share (MaxTotalTimeBy).
void EndAtTheDeadline(int argc, char** argv, int64_t deadline_unix_seconds) {
  constexpr absl::string_view kFlag = "-max_total_time=";
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    int64_t given = 0;
    if (!absl::ConsumePrefix(&arg, kFlag) || !absl::SimpleAtoi(arg, &given))
      continue;
    const int64_t seconds =
        ptxdiff::MaxTotalTimeBy(deadline_unix_seconds, given, absl::Now());
    argv[i] = strdup(
        absl::StrCat(kFlag, seconds).c_str());  // lives as long as libFuzzer
  }
}

// Set by SIGINT and SIGTERM in a campaign: the fuzz loop stops the campaign
// at its next input.
volatile sig_atomic_t stop_requested = 0;
// While the campaign starts (its workers' handshakes, its calibration): a
// stop asked then is recorded for the waits too (common/interrupt.h), which
// end at once, or the start ran on to its end, up to --max-time (the
// sixteenth fault run: 16 to 48 s after a Ctrl-C on a tool that hangs).
volatile sig_atomic_t starting = 0;
// How a stop by an interrupt ends the process (InterruptExitCode).
int interrupt_exit_code = 72;

// True unless this is libFuzzer's -fork, -jobs or -merge parent, which runs
// the inputs in child processes (each with its own campaign) and never
// calls LLVMFuzzerTestOneInput: a stop asked of it would never be acted on.
bool RunsInputsItself(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    for (absl::string_view flag :
         {"-fork=", "-jobs=", "-workers=", "-merge="}) {
      absl::string_view arg = argv[i];
      int64_t n = 0;
      if (absl::ConsumePrefix(&arg, flag) && absl::SimpleAtoi(arg, &n) && n > 0)
        return false;
    }
  }
  return true;
}

// True in the child that libFuzzer's merge runs (-merge_inner=1): the
// seed corpus's merge that a -fork parent runs before its jobs.
bool MergesInner(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (absl::string_view(argv[i]) == "-merge_inner=1") return true;
  }
  return false;
}

// A merge's child keeps on to its end through an interrupt: its parent
// takes any other end of it for a crash and runs it again from where it
// stopped, an input a run (the eighteenth fault run's Ctrl-C of `fuzz
// --jobs 2` spent its minute there). The jobs after it stop on the ask
// that `ptxdiff fuzz` repeats (FuzzerProcess::AskAgainIfDue). A handler of
// ours, not SIG_IGN, keeps libFuzzer's own (which ends the process) out.
void MergeOnThroughAnInterrupt() {
  struct sigaction keep_on = {};
  keep_on.sa_handler = [](int) {};
  sigemptyset(&keep_on.sa_mask);
  sigaction(SIGINT, &keep_on, nullptr);
}

// libFuzzer's own SIGINT and SIGTERM handler ends the process at once
// (_Exit), so the repeat counts the campaign had not yet written to the
// triage directory, and its last stats, were lost. It leaves a handler
// installed before its own in place: this one only asks for the stop, which
// the fuzz loop carries out (StopAsAtTheEnd).
void AskForAStopOnInterrupt() {
  struct sigaction ask = {};
  ask.sa_handler = [](int) {
    stop_requested = 1;
    if (starting) ptxdiff::Interrupt();
  };
  sigemptyset(&ask.sa_mask);
  sigaction(SIGINT, &ask, nullptr);
  sigaction(SIGTERM, &ask, nullptr);
}

// Set by whoever stops the campaign first: the atexit below, or the -fork
// parent's watcher; the other waits for the process to end.
std::atomic<bool> stopping{false};

// The campaign stops as at the end of -max_total_time (the atexit below):
// the batches in flight judged, repeat counts written to their entries,
// findings filed or kept in the pending journal, the last stats written.
// Then the process ends as libFuzzer's interrupt ends it, with _Exit (an
// exit() inside an input is taken for the target's crash) and `status`.
[[noreturn]] void StopAsAtTheEnd(const char* why, int status) {
  if (stopping.exchange(true)) {
    for (;;) pause();  // the other stop ends the process
  }
  std::fprintf(stderr, "ptxdiff: %s%s\n", why, ptxdiff::kStoppingInOrderSaid);
  target->Stop();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(status);
}
[[noreturn]] void StopForTheInterrupt() {
  StopAsAtTheEnd("interrupted", interrupt_exit_code);
}

// The -fork (or -merge) parent runs no input, and ignores SIGINT while a
// job runs (system()): its jobs stop on the interrupt, and it would start
// the next, or run its seed merge again an input at a time (the nineteenth
// fault run: a minute after a Ctrl-C). It stops on SIGTERM, which system()
// leaves alone (`ptxdiff fuzz` sends it to the parent with its SIGINT), or
// on a SIGINT that comes between jobs: its campaign stops in order, then
// the process ends with the interrupt status; its jobs end with it.
void StopTheParentOnRequest() {
  struct sigaction ask = {};
  ask.sa_handler = [](int) { stop_requested = 1; };
  sigemptyset(&ask.sa_mask);
  sigaction(SIGINT, &ask, nullptr);
  sigaction(SIGTERM, &ask, nullptr);
  std::thread([] {
    while (!stop_requested) absl::SleepFor(absl::Milliseconds(50));
    StopForTheInterrupt();
  }).detach();
}

// The harness's own temporary files failed (a full TMPDIR): the campaign
// stops in order, as at its end, and the process says so by its status.
[[noreturn]] void StopForTheEnvironment(const std::string& said) {
  std::fprintf(stderr, "ptxdiff: %s%s\n", said.c_str(),
               ptxdiff::kStoppingInOrderSaid);
  target->Stop();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(ptxdiff::kFuzzerExitEnvironment);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Its forks (-fork=N) and their workers are one run (common/run_id.h).
  ptxdiff::NameThisRun();
  interrupt_exit_code = ptxdiff::InterruptExitCode(*argc, *argv);
  auto config = ptxdiff::FuzzConfigFromEnvironment();
  if (!config.ok()) {
    std::fprintf(stderr, "ptxdiff: %s\n",
                 std::string(config.status().message()).c_str());
    std::exit(2);
  }
  if (config->mode == ptxdiff::FuzzConfig::Mode::kCampaign &&
      MergesInner(*argc, *argv)) {
    MergeOnThroughAnInterrupt();
  } else if (config->mode == ptxdiff::FuzzConfig::Mode::kCampaign &&
             RunsInputsItself(*argc, *argv)) {
    AskForAStopOnInterrupt();  // before the workers start: a Ctrl-C while they
                               // do counts too
  }
  starting = 1;
  auto created = ptxdiff::DifferentialTarget::Create(*config);
  starting = 0;
  if (!created.ok() && stop_requested) {
    // A worker's handshake cut by the stop: no error of the backend's.
    std::fprintf(stderr, "ptxdiff: interrupted while the campaign started\n");
    std::exit(interrupt_exit_code);
  }
  if (!created.ok()) {
    std::fprintf(stderr, "ptxdiff: %s\n",
                 std::string(created.status().message()).c_str());
    std::exit(2);
  }
  target = *std::move(created);
  target->SetSemanticCounters(semantic_counters);
  // The -fork parent's campaign judges the systematic tuples though it runs
  // no input, the only other place its stats are written: kept written, so
  // that `ptxdiff fuzz` counts them while it runs and after a kill.
  if (config->mode == ptxdiff::FuzzConfig::Mode::kCampaign &&
      !RunsInputsItself(*argc, *argv)) {
    target->KeepStatsWritten();
    StopTheParentOnRequest();
  }
  // At libFuzzer's exit (-max_total_time, -runs): finish the batches in flight
  // and the filing, and write the final stats. (A kill leaves the pending
  // journal for the next campaign.)
  std::atexit([] {
    if (stopping.exchange(true)) {
      for (;;) pause();  // the parent's watcher ends the process
    }
    std::fprintf(stderr, "ptxdiff: libFuzzer is exiting%s\n",
                 ptxdiff::kStoppingInOrderSaid);
    std::fflush(stderr);
    target->Stop();
    // Met in the run's last moments: said as the fuzz loop would have.
    const std::string failed = target->environment_failure();
    if (!failed.empty()) {
      std::fprintf(stderr, "ptxdiff: %s\n", failed.c_str());
      std::fflush(stderr);
      std::_Exit(ptxdiff::kFuzzerExitEnvironment);
    }
  });
  EndAtTheDeadline(*argc, *argv, target->config().deadline_unix_seconds);
  if (stop_requested) StopForTheInterrupt();
  std::fprintf(stderr, "ptxdiff: fuzzing against %s, triage directory %s\n",
               target->backend().Describe().c_str(),
               target->config().triage_dir.c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (stop_requested) StopForTheInterrupt();
  if (std::string failed = target->environment_failure(); !failed.empty())
    StopForTheEnvironment(failed);
  // A start-up that took the run's time (a calibration on a tool that
  // hangs) leaves libFuzzer its minimum of a second or two: the run ends at
  // its deadline instead (issue 42, item 4).
  const int64_t deadline = target->config().deadline_unix_seconds;
  if (deadline > 0 && absl::ToUnixSeconds(absl::Now()) >= deadline)
    StopAsAtTheEnd("the run's deadline has come", 0);
  return target->RunInput(data, size);
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  return ptxdiff::MutateFuzzInput(data, size, max_size, seed,
                                  target->config().filter, target->steer());
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size,
                                            const uint8_t* b, size_t b_size,
                                            uint8_t* out, size_t max_out,
                                            unsigned int seed) {
  return ptxdiff::CrossOverFuzzInputs(a, a_size, b, b_size, out, max_out, seed,
                                      target->config().filter, target->steer());
}
