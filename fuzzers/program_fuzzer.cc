// libFuzzer target: programs (program/program_encoding.h) against a program
// backend, judged by the composed oracle (program_target.h says how it is
// configured). Everything but these entry points is testable without
// libFuzzer.

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/interrupt.h"
#include "common/run_id.h"
#include "fuzzers/fuzz_config.h"
#include "fuzzers/program_mutator.h"
#include "fuzzers/program_target.h"

namespace {

std::unique_ptr<ptxdiff::ProgramFuzzTarget> target;

__attribute__((used, section("__libfuzzer_extra_counters")))
uint8_t signal_counters[ptxdiff::kProgramSignalCounters];

// Set by SIGINT and SIGTERM: the fuzz loop stops the campaign at its next
// input. The stop is the campaign's too (Interrupt, common/interrupt.h):
// it ends as a Ctrl-C'd `ptxdiff programs` does, what it found and did not
// file yet kept in the pending journal, not minimized first (the
// thirteenth fault run: still working 100 s after a Ctrl-C).
volatile sig_atomic_t stop_requested = 0;

// Stops the campaign and prints what it did. A campaign the harness's own
// files stopped (a full TMPDIR) says why, and the process says so by its
// status (the sixteenth fault run's pattern: 0 programs checked, exit 0).
void StopAndReport() {
  const ptxdiff::ProgramCampaignReport& report = target->Stop();
  std::fprintf(stderr, "ptxdiff: %s\n",
               ptxdiff::ProgramFuzzTarget::Summary(report).c_str());
  if (!report.environment_failure.empty()) {
    std::fprintf(stderr, "ptxdiff: %s\n", report.environment_failure.c_str());
    std::fflush(stderr);
    std::_Exit(ptxdiff::kFuzzerExitEnvironment);
  }
}

// libFuzzer's -max_total_time, if given: the campaign ends then, and a
// grace later, so that stopping (checking what is queued, minimizing) is
// bounded too.
std::optional<int64_t> MaxTotalTime(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    int64_t seconds = 0;
    if (absl::ConsumePrefix(&arg, "-max_total_time=") &&
        absl::SimpleAtoi(arg, &seconds) && seconds > 0) {
      return seconds;
    }
  }
  return std::nullopt;
}
constexpr absl::Duration kStopGrace = absl::Seconds(15);
// How a stop by an interrupt ends the process (InterruptExitCode).
int interrupt_exit_code = 72;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  ptxdiff::NameThisRun();  // its forks and workers: one run (run_id.h)
  interrupt_exit_code = ptxdiff::InterruptExitCode(*argc, *argv);
  auto config = ptxdiff::ProgramFuzzConfigFromEnvironment();
  if (!config.ok()) {
    std::fprintf(stderr, "ptxdiff: %s\n",
                 std::string(config.status().message()).c_str());
    std::exit(2);
  }
  if (const std::optional<int64_t> seconds = MaxTotalTime(*argc, *argv)) {
    config->max_time = absl::Seconds(*seconds) + kStopGrace;
  }
  auto created = ptxdiff::ProgramFuzzTarget::Create(*config);
  if (!created.ok()) {
    std::fprintf(stderr, "ptxdiff: %s\n",
                 std::string(created.status().message()).c_str());
    std::exit(2);
  }
  target = *std::move(created);
  target->SetSignalCounters(signal_counters);
  struct sigaction ask = {};
  ask.sa_handler = [](int) {
    stop_requested = 1;
    ptxdiff::Interrupt();
  };
  sigemptyset(&ask.sa_mask);
  sigaction(SIGINT, &ask, nullptr);
  sigaction(SIGTERM, &ask, nullptr);
  // At libFuzzer's exit (-max_total_time, -runs): check what is queued.
  std::atexit(StopAndReport);
  std::fprintf(stderr, "ptxdiff: fuzzing programs against %s\n",
               target->Describe().c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!target->EnvironmentFailure().empty()) StopAndReport();  // ends it
  if (stop_requested) {
    std::fprintf(stderr,
                 "ptxdiff: interrupted: stopping (what was found and not "
                 "filed yet is kept in the triage directory's .pending/)\n");
    StopAndReport();
    std::fflush(stderr);
    std::_Exit(interrupt_exit_code);
  }
  return target->RunInput(data, size);
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  return ptxdiff::MutateProgramInput(data, size, max_size, seed,
                                     target->Shape());
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size,
                                            const uint8_t* b, size_t b_size,
                                            uint8_t* out, size_t max_out,
                                            unsigned int seed) {
  return ptxdiff::CrossOverProgramInputs(a, a_size, b, b_size, out, max_out,
                                         seed, target->Shape());
}
