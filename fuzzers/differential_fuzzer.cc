// libFuzzer target: the oracle against a backend (differential_target.h says
// how it is configured). Everything but these entry points is testable
// without libFuzzer.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "fuzzers/differential_target.h"
#include "fuzzers/mutator.h"
#include "harness/semantic_classes.h"
#include "isa/axes.h"

namespace {

std::unique_ptr<ptxdiff::DifferentialTarget> target;

// Semantic coverage: one counter per (family, operand class).
__attribute__((used, section("__libfuzzer_extra_counters"))) uint8_t
    semantic_counters[ptxdiff::kNumFamilies * ptxdiff::kNumSemanticClasses];

// Rewrites -max_total_time in libFuzzer's arguments (it parses them after
// this initializer, which may change them) so that the run ends at the
// configured deadline although start-up took its share (MaxTotalTimeBy).
void EndAtTheDeadline(int argc, char** argv, int64_t deadline_unix_seconds) {
  constexpr absl::string_view kFlag = "-max_total_time=";
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    int64_t given = 0;
    if (!absl::ConsumePrefix(&arg, kFlag) || !absl::SimpleAtoi(arg, &given)) continue;
    const int64_t seconds = ptxdiff::MaxTotalTimeBy(deadline_unix_seconds, given, absl::Now());
    argv[i] = strdup(absl::StrCat(kFlag, seconds).c_str());  // lives as long as libFuzzer
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  auto config = ptxdiff::FuzzConfigFromEnvironment();
  if (!config.ok()) {
    std::fprintf(stderr, "ptxdiff: %s\n", std::string(config.status().message()).c_str());
    std::exit(2);
  }
  auto created = ptxdiff::DifferentialTarget::Create(*config);
  if (!created.ok()) {
    std::fprintf(stderr, "ptxdiff: %s\n", std::string(created.status().message()).c_str());
    std::exit(2);
  }
  target = *std::move(created);
  target->SetSemanticCounters(semantic_counters);
  // At libFuzzer's exit (-max_total_time, -runs): finish the batches in flight
  // and the filing, and write the final stats. (A kill leaves the pending
  // journal for the next campaign.)
  std::atexit([] { target->Stop(); });
  EndAtTheDeadline(*argc, *argv, target->config().deadline_unix_seconds);
  std::fprintf(stderr, "ptxdiff: fuzzing against %s, triage directory %s\n",
               target->backend().Describe().c_str(), target->config().triage_dir.c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return target->RunInput(data, size);
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return ptxdiff::MutateFuzzInput(data, size, max_size, seed, target->config().filter);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size,
                                            const uint8_t* b, size_t b_size, uint8_t* out,
                                            size_t max_out, unsigned int seed) {
  return ptxdiff::CrossOverFuzzInputs(a, a_size, b, b_size, out, max_out, seed,
                                      target->config().filter);
}
