// The differential fuzz target's logic, callable without libFuzzer: decode an
// input into tuples and evaluate them on the oracle (the coverage signal
// comes from the oracle alone), then
//   - campaign mode: offer them to the campaign engine (campaign/campaign.h),
//     which ships big batches to the backend asynchronously, judges them,
//     and minimizes and files mismatches off the fuzz loop's path: an input
//     never waits for the backend;
//   - crash mode (OSS-Fuzz, ClusterFuzz): run them on the backend at once
//     and abort with a one-line signature on a mismatch or fault, so that
//     the crash is attributed to the input that produced it, through stack
//     frames that name its cause (cause_frames.h), which ClusterFuzz files
//     one issue per.
//
// Its configuration (the PTXDIFF_* variables, or a PTXDIFF_CONFIG file) is
// in fuzzers/fuzz_config.h; its counters and stats file in
// fuzzers/fuzz_stats.h.

#ifndef PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_
#define PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "campaign/campaign.h"
#include "client/worker_client.h"
#include "fuzzers/fuzz_config.h"
#include "fuzzers/fuzz_stats.h"
#include "fuzzers/mutator.h"
#include "harness/judge.h"
#include "triage/finding.h"

namespace ptxdiff {

// How the fuzzer's line ends when its campaign stops in order ("ptxdiff:
// the run's deadline has come: stopping the campaign in order"): what
// `ptxdiff fuzz` reads to tell a fuzzer finishing from one deaf to its end.
inline constexpr char kStoppingInOrderSaid[] =
    ": stopping the campaign in order";

class DifferentialTarget {
 public:
  static absl::StatusOr<std::unique_ptr<DifferentialTarget>> Create(
      FuzzConfig config);
  ~DifferentialTarget();

  // Runs one input. Returns -1 for an input that does not decode (libFuzzer
  // then does not keep it), 0 otherwise. In crash mode a mismatch or fault
  // prints "ptxdiff: <kind> <backend> <spelling> <class>; cause: <kind> in
  // <family>" and aborts (cause_frames.h).
  int RunInput(const uint8_t* data, size_t size);

  // libFuzzer's extra counters, (family x semantic class); may be null.
  void SetSemanticCounters(uint8_t* counters) { counters_ = counters; }

  // Where the campaign wants the mutator's inputs (its exploration budget);
  // null in crash mode, where an input's variant is the mutator's to choose.
  FuzzSteer* steer() { return campaign_ ? &steer_ : nullptr; }

  // The counters now (in campaign mode, a snapshot of the engine's).
  FuzzStats stats() const;
  const FuzzConfig& config() const { return config_; }
  const WorkerIdentity& backend() const;

  // Campaign mode: waits until everything offered so far is judged and
  // filed (for tests and a clean stop); crash mode: true at once.
  bool Flush(absl::Duration timeout = absl::Seconds(60));
  // Stops the campaign engine (batches in flight finish, filing for a few
  // seconds) and writes the stats file.
  void Stop();

  // What a worker said when the harness's own temporary files failed
  // (FaultKind::kEnvironment: TMPDIR full or read-only); "" while they
  // work. Nothing is filed for it: the run is to stop.
  std::string environment_failure() const;

  // Writes this process's stats file now (also done every few seconds).
  void WriteStats();

  // For a process that runs no inputs (libFuzzer's -fork parent), whose
  // campaign judges the systematic tuples all the same: writes the stats
  // file every second from a thread of its own until Stop, as RunInput
  // does for a process that runs inputs. Without it that process's counts
  // reached the stats only at its end, none of them if it was killed.
  void KeepStatsWritten();

 private:
  DifferentialTarget(FuzzConfig config, std::unique_ptr<WorkerClient> client,
                     std::unique_ptr<Campaign> campaign);
  void RunSynchronously(const std::vector<Tuple>& tuples);
  // Ends KeepStatsWritten's thread, if there is one.
  void StopStatsWriter();
  // Crash mode: counts a decline in stats_ by its code.
  void CountDecline(DeclineCode code);
  // Crash mode's end: records the crash's origin, prints the abort line and
  // aborts.
  [[noreturn]] void Crash(const Finding& f);

  // The campaign's exploration budget, as the mutator asks it.
  class CampaignSteer : public FuzzSteer {
   public:
    explicit CampaignSteer(Campaign* campaign) : campaign_(campaign) {}
    bool HadItsShare(const Variant& v) override {
      return campaign_->HadItsShare(v);
    }
    std::optional<Variant> NextToExplore() override {
      return campaign_->NextToExplore();
    }

   private:
    Campaign* campaign_;
  };

  FuzzConfig config_;
  std::unique_ptr<WorkerClient> client_;  // crash mode
  std::unique_ptr<Campaign> campaign_;    // campaign mode
  CampaignSteer steer_{nullptr};          // over campaign_
  FuzzStats stats_;                       // crash mode's counts, and inputs
  uint8_t* counters_ = nullptr;
  std::vector<bool> reached_;       // crash mode, by VariantIndex
  DeclineReasons decline_reasons_;  // crash mode
  std::string environment_failure_;  // crash mode
  std::vector<Result> oracle_;      // scratch for one input's tuples
  absl::string_view input_;         // the input being run (crash mode's record)
  absl::Time last_stats_write_ = absl::InfinitePast();
  bool stats_write_failed_ = false;  // and said so
  // The outcome records (<pid>.outcomes beside the stats file): a few MB,
  // so written less often than the stats, and once more at Stop.
  static constexpr absl::Duration kOutcomesWriteInterval = absl::Seconds(10);
  absl::Time last_outcomes_write_ = absl::InfinitePast();
  bool outcomes_write_failed_ = false;
  // KeepStatsWritten's thread, told to end by `writer_stop_`.
  std::thread writer_;
  std::mutex writer_mu_;
  std::condition_variable writer_wake_;
  bool writer_stop_ = false;
  // Replaces `path` with `text`; the first failure (`failed` unset) is said
  // on stderr, for `ptxdiff fuzz` (fuzzer_output.h), the later ones not.
  static void WriteSayingTheFirstFailure(const std::string& path,
                                         absl::string_view text, bool& failed);
};

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_
