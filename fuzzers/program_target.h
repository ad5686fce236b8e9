// The program fuzz target's logic, callable without libFuzzer. An input is
// a program in the byte form (program/program_encoding.h). It is evaluated
// with the composed oracle, whose steps' (family, operand class) pairs are
// the coverage signal (the oracle is mostly branch-free), and queued for a
// program campaign on the campaign engine (program/program_lane.h: its
// senders' workers check the queued programs in batches, in both input
// forms, and what disagrees is minimized and filed in the triage
// directory). The fuzz loop waits only when the queue is full: the backend
// sets the pace, and every program the fuzzer runs is checked.
//
// In crash mode (OSS-Fuzz, ClusterFuzz) there is no campaign: each input
// is checked at once, in both forms, and a finding aborts through stack
// frames that name its cause (program_crash_cause.h), which ClusterFuzz
// files one issue per.
//
// Configuration comes from the environment (libFuzzer owns the command
// line), or from KEY=VALUE pairs:
//
//   PTXDIFF_MODE        campaign (default) | crash
//   PTXDIFF_BACKEND     ptxas (default) | ptx-cmd:'tool {ptx} {in} {out}'
//   PTXDIFF_ARCH        sm_90 (default)
//   PTXDIFF_TRIAGE_DIR  default out/triage
//   PTXDIFF_READING     spec (default) | hardware
//   PTXDIFF_TIMEOUT     seconds per tool run (default 10)
//   PTXDIFF_THREADS     workers checking programs (default 2: the fuzz loop
//                       mostly waits for them)

#ifndef PTXDIFF_FUZZERS_PROGRAM_TARGET_H_
#define PTXDIFF_FUZZERS_PROGRAM_TARGET_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fuzzers/program_crash_cause.h"
#include "harness/semantic_classes.h"
#include "isa/axes.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backends.h"
#include "program/program_campaign.h"
#include "program/program_generator.h"
#include "program/program_lane.h"

namespace ptxdiff {

struct ProgramFuzzConfig {
  enum class Mode { kCampaign, kCrash };
  Mode mode = Mode::kCampaign;
  ProgramBackendOptions backend;
  std::string triage_dir = "out/triage";
  Reading reading = Reading::kSpec;
  int threads = 2;
  // When the campaign ends, minimizing and what is queued included
  // (program_fuzzer: libFuzzer's -max_total_time and a grace for the last
  // batches); later inputs are not checked.
  absl::Duration max_time = absl::InfiniteDuration();
  // Programs queued before the fuzz loop waits: two ptxas runs' worth.
  size_t queue = 2 * kProgramsPerPtxasRun;
};

// A bad value is InvalidArgument naming the variable.
absl::StatusOr<ProgramFuzzConfig> ProgramFuzzConfigFromPairs(
    const std::vector<std::pair<std::string, std::string>>& pairs);
absl::StatusOr<ProgramFuzzConfig> ProgramFuzzConfigFromEnvironment();

// libFuzzer's extra counters: one per (family, semantic class) a step
// reaches, then one per program feature (ProgramFeature).
enum ProgramFeature {
  kHasLoop,
  kHasGuard,
  kUndefinedOutput,  // an output the oracle leaves open at the witness
  kFiveOrMoreSteps,
  kWideInput,  // an input of 64 bits
  kThreadInput,  // %tid.x or %laneid
  kHasBranchOrLabel,  // a forward branch or a bare label
  kHasExit,
  kNotAProgram,
  kNumProgramFeatures,
};
inline constexpr size_t kProgramSignalCounters =
    kNumFamilies * kNumSemanticClasses + kNumProgramFeatures;

class ProgramFuzzTarget {
 public:
  // Chooses the backend and starts the campaign (or, in crash mode, the
  // worker that checks each input).
  static absl::StatusOr<std::unique_ptr<ProgramFuzzTarget>> Create(
      ProgramFuzzConfig config);
  ~ProgramFuzzTarget();

  // Runs one input, and returns 0. One that is no program is not queued:
  // it has a feature of its own, so that libFuzzer keeps one (its first
  // input, "\n", without a corpus), for the mutator to make a program of.
  // In crash mode a finding prints "ptxdiff: <kind> <backend> <class>
  // program (<steps>); key: <key>; cause: <cause>" ("no cause key: <why>"
  // in place of the key where it has none) and aborts
  // (program_crash_cause.h).
  int RunInput(const uint8_t* data, size_t size);

  // kProgramSignalCounters counters; may be null.
  void SetSignalCounters(uint8_t* counters) { counters_ = counters; }

  // Checks what is queued, finishes the campaign and returns its report;
  // later calls return the same report, and RunInput then queues nothing.
  const ProgramCampaignReport& Stop();

  // The shape of the programs the mutator makes (program_mutator.h): with
  // thread inputs where the backend judges them, and the variants the
  // campaign no longer generates (their cause filed) or generates seldom
  // (their cause keeps coming back), as it last said (LearnShape).
  ProgramShape Shape() const;

  // Why the campaign ended early because the harness's own files failed (a
  // full TMPDIR), once it has; "" otherwise.
  std::string EnvironmentFailure() const;

  // "ptxas (...), triage directory out/triage": for the start-up line.
  std::string Describe() const;
  // The report's figures in one paragraph.
  static std::string Summary(const ProgramCampaignReport& report);

 private:
  explicit ProgramFuzzTarget(ProgramFuzzConfig config);
  // Starts the campaign on `workers` in a thread of its own, and waits until
  // its workers said what they are (presenter_ set) or it failed to start.
  absl::Status StartCampaign(ProgramWorkers workers);
  // The campaign's thread: runs it, then tells the fuzz loop it ended.
  void RunCampaign(const ProgramWorkers& workers);
  // The campaign's next program: the queue's first, waiting for one;
  // nullopt once stopped and empty.
  std::optional<Program> Next();
  void Signal(const Program& program);
  // Crash mode: checks `program` in each form at once; aborts at a finding.
  void CheckOrAbort(const Program& program);
  [[noreturn]] void Abort(const Program& program, const std::string& form,
                          const ProgramCrashCause& cause);
  // Keeps the campaign's suppressed and discouraged variants for Shape().
  void LearnShape(const ProgramShape& campaign_shape);
  // The same from its report: what its last filings taught it after its
  // last batch asked for a shape (the engine's senders draw no more once
  // the queue has ended).
  void LearnFinalShape(const ProgramCampaignReport& report);
  uint8_t* Features() { return counters_ + kNumFamilies * kNumSemanticClasses; }

  ProgramFuzzConfig config_;
  // Names and presents the cases: the campaign's lane's, or in crash mode
  // the checking worker's. Set before Create returns.
  std::shared_ptr<const ProgramBackend> presenter_;
  ProgramWorker crash_worker_;  // crash mode: checks each input
  uint8_t* counters_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Program> queue_;
  bool stopping_ = false;
  bool campaign_ended_ = false;

  // The campaign's suppressed and discouraged variants; the mutator asks
  // from libFuzzer's thread.
  mutable std::mutex shape_mu_;
  std::vector<std::string> suppressed_, discouraged_;

  std::thread campaign_;  // campaign mode
  // Crash mode counts into it as it checks; the campaign's, its report.
  absl::StatusOr<ProgramCampaignReport> report_ = ProgramCampaignReport{};
  bool stopped_ = false;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_PROGRAM_TARGET_H_
