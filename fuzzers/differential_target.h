// The differential fuzz target's logic, callable without libFuzzer: decode an
// input into tuples and evaluate them on the oracle (the coverage signal
// comes from the oracle alone), then
//   - campaign mode: offer them to the campaign engine (campaign/campaign.h),
//     which ships big batches to the backend asynchronously, judges them,
//     and minimizes and files mismatches off the fuzz loop's path: an input
//     never waits for the backend;
//   - crash mode (OSS-Fuzz, ClusterFuzz): run them on the backend at once
//     and abort with a one-line signature on a mismatch or fault, so that
//     the crash is attributed to the input that produced it.
//
// Configuration comes from the environment (libFuzzer owns the command line)
// or from a file named by PTXDIFF_CONFIG with the same KEY=VALUE names:
//
//   PTXDIFF_BACKEND          oracle | ptxas | cuda | exec:/path |
//                            ptx-cmd:'tool {ptx} {in} {out}' (default: best
//                            here)
//   PTXDIFF_ARCH             e.g. sm_90, passed to the backend
//   PTXDIFF_CUDA_DRIVER      cuda backend: the driver library to load instead
//                            of libcuda.so.1 (HELLO's driver_library)
//   PTXDIFF_TRIAGE_DIR       default out/triage
//   PTXDIFF_MODE             campaign (default) | crash
//   PTXDIFF_FAMILIES         comma-separated opcodes to fuzz (default all)
//   PTXDIFF_EXCLUDE_FAMILIES comma-separated opcodes not to fuzz
//   PTXDIFF_TIMEOUT          seconds per worker reply (default 60)
//   PTXDIFF_STATS            a directory; each process writes its progress
//                            counters to <dir>/<pid>.stats (ptxdiff fuzz reads
//                            them)
//   PTXDIFF_WORKER           the ptxdiff-worker executable
//   PTXDIFF_IN_FLIGHT        campaign: batches in flight (worker processes),
//   default 2 PTXDIFF_BATCH            campaign: tuples per batch (default: by
//   backend) PTXDIFF_SYSTEMATIC       campaign: 1 (default) runs the systematic
//   source, 0 not PTXDIFF_READING          spec (default) | hardware: the
//   oracle reading judged against PTXDIFF_DEADLINE         unix seconds at
//   which the run is to end (ptxdiff fuzz
//                            --max-time); 0 (default): -max_total_time alone
//   PTXDIFF_FINDINGS         crash: the directory of the crash files
//   (libFuzzer's
//                            -artifact_prefix), where each crash's backend is
//                            recorded for `ptxdiff repro` (kCrashOriginsFile)

#ifndef PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_
#define PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "campaign/campaign.h"
#include "client/worker_client.h"
#include "fuzzers/mutator.h"
#include "harness/judge.h"
#include "triage/finding.h"

namespace ptxdiff {

struct FuzzConfig {
  enum class Mode { kCampaign, kCrash };
  std::string backend;  // empty: ChooseDefaultBackend()
  std::string arch;
  std::string cuda_driver;  // empty: libcuda.so.1
  std::string triage_dir = "out/triage";
  Mode mode = Mode::kCampaign;
  VariantFilter filter;
  double timeout_seconds = 60;
  std::string stats_dir;
  std::string worker;  // empty: FindWorkerBinary()
  int in_flight = 2;
  int64_t batch_size = 0;  // 0: by backend
  bool systematic = true;
  Reading reading = Reading::kSpec;
  int64_t deadline_unix_seconds = 0;  // 0: none (MaxTotalTimeBy)
  // Crash mode: where libFuzzer writes crash files (its -artifact_prefix),
  // and so where each crash's backend is recorded (kCrashOriginsFile);
  // empty: not recorded.
  std::string findings_dir;
  // Where a ptx-cmd tool's refusals are remembered across runs
  // (backends/ptx_cmd/refusal_memory.h); empty: not remembered.
  std::string refusals_dir;
};

// A crash file is the input's bytes alone (libFuzzer writes it), so it does
// not say which backend it was found on, and `ptxdiff repro` without
// --backend replayed it on the default one. Crash mode appends a line per
// crash to <findings_dir>/crash-backends.txt:
//   <FNV-1a 64 of the input, 16 hex digits> TAB <the abort line's
//   "kind backend variant class"> TAB <the backend, as --backend takes it>
inline constexpr absl::string_view kCrashOriginsFile = "crash-backends.txt";
struct CrashOrigin {
  std::string signature;  // "value-mismatch faulty vadd.u32.u32.u32 in-range"
  std::string backend;    // "exec:/path/to/worker"
};
std::string CrashOriginLine(absl::string_view input, const CrashOrigin& origin);
// The origin recorded in `dir` for a crash file's bytes (the last, if
// several), or nullopt.
std::optional<CrashOrigin> FindCrashOrigin(const std::string& dir,
                                           absl::string_view input);

// Reads the configuration from PTXDIFF_CONFIG (if set) and then the
// environment; a bad value is InvalidArgument naming the variable.
absl::StatusOr<FuzzConfig> FuzzConfigFromEnvironment();
// The same from KEY=VALUE pairs (used by the above and by tests).
absl::StatusOr<FuzzConfig> FuzzConfigFromPairs(
    const std::vector<std::pair<std::string, std::string>>& pairs);
// Every setting of `config`, as the pairs FuzzConfigFromPairs reads back:
// how `ptxdiff fuzz` hands its flags to the fuzz processes (through their
// environment).
std::vector<std::pair<std::string, std::string>> FuzzConfigToPairs(
    const FuzzConfig& config);

// libFuzzer counts -max_total_time from after LLVMFuzzerInitialize, which
// starts the workers and times the backend (calibration: seconds on ptxas),
// so a 60-second `ptxdiff fuzz` ran for 75. The -max_total_time that ends
// the run at the deadline instead: `given` if there is no deadline or it is
// sooner, else the whole seconds left less one (libFuzzer stops a second
// after max_total_time), at least 1.
int64_t MaxTotalTimeBy(int64_t deadline_unix_seconds, int64_t given,
                       absl::Time now);

// Counters a campaign reports (ptxdiff fuzz reads them from the stats file).
struct FuzzStats {
  int64_t inputs = 0;
  JudgeCounts counts;
  int64_t new_findings = 0, known_findings = 0, explained_findings = 0;
  int64_t worker_restarts = 0;
  int64_t variants_reached = 0, supported_variants = 0;
  // The campaign's queue: offered by the fuzz loop, queued, duplicates,
  // dropped under backpressure, produced by the systematic source.
  int64_t offered = 0, queued = 0, duplicates = 0, dropped = 0, systematic = 0;
  int64_t skipped_undefined = 0, skipped_unsupported = 0, skipped_declining = 0;
  // Tuples not sent again because they faulted the backend, and tuples sent
  // again because a batch left them unrun (CampaignStats).
  int64_t withheld_faulting = 0, sent_again = 0;
  // Values computed by code compiled before for another tuple
  // (CampaignStats::on_reused_code).
  int64_t on_reused_code = 0;
  // Writes to the triage directory that failed, and the last one's reason.
  int64_t filing_errors = 0;
  std::string filing_error;
  // Mismatches judged and not filed (at the end: kept in the pending journal
  // for the next campaign), and of those, lines the journal could not take.
  int64_t unfiled = 0, unjournaled = 0;
  // The backend's most common decline reason and its tuples (of the process
  // that saw it most): why, if nothing was tested.
  std::string top_decline;
  int64_t top_decline_count = 0;
  // Tuples this process had checked when it judged its first mismatch, that
  // one included; 0 before any. A campaign's figure is the earliest.
  int64_t first_mismatch_after = 0;
  // When (campaign.h): ms since the epoch, 0 before any; the earliest.
  int64_t first_mismatch_unix_ms = 0;
  // The campaign's calibration at start (campaign.h): how long it took and
  // how many families it timed; the largest of the processes.
  int64_t calibration_ms = 0, families_timed = 0;
  // Variants whose planned tiers the systematic source produced
  // (CampaignStats::planned_variants); the largest of the processes, each of
  // which plans every variant.
  int64_t planned_variants = 0;
  // Declines by code: unsupported variant, not evaluable, operand form,
  // other; and the tuples a backend left unrun (a time budget ran out).
  int64_t declined_unsupported = 0, declined_not_evaluable = 0,
          declined_operand_form = 0, declined_other = 0, declined_not_run = 0;
  std::map<std::string, int64_t> other_reading_by_erratum;
};

// What one fuzz process writes to <stats_dir>/<pid>.stats and `ptxdiff
// fuzz` sums over its processes: key=value lines, each counter named once,
// in FormatStatsFile's table; the texts (filing_error, top_decline) on one
// line each.
struct StatsFile {
  FuzzStats stats;
  std::string backend;                // WorkerIdentity::Describe()
  std::vector<bool> reached;          // by VariantIndex: got a non-decline
  std::vector<bool> reached_runtime;  // the same in a runtime form
  // Variants by fuzz-input tuples (CampaignStats::explored); summed over
  // processes, so with -fork a variant counts once in each.
  std::vector<int64_t> explored;
};
std::string FormatStatsFile(const StatsFile& file);
// Adds one stats file's text to `sum`: counters summed (supported_variants,
// the same for every process of a campaign, as the largest;
// first_mismatch_after and first_mismatch_unix_ms as the earliest), reached
// bitmaps OR-ed, explored histograms added, the backend's description kept;
// calibration_ms and families_timed as the largest; the last filing error
// kept, and the top decline reason with the most tuples. Unknown lines are
// skipped.
void AddStatsFile(absl::string_view text, StatsFile& sum);

class DifferentialTarget {
 public:
  static absl::StatusOr<std::unique_ptr<DifferentialTarget>> Create(
      FuzzConfig config);

  // Runs one input. Returns -1 for an input that does not decode (libFuzzer
  // then does not keep it), 0 otherwise. In crash mode a mismatch or fault
  // prints "ptxdiff: <kind> <backend> <spelling> <class>" and aborts.
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

  // Writes this process's stats file now (also done every few seconds).
  void WriteStats();

 private:
  DifferentialTarget(FuzzConfig config, std::unique_ptr<WorkerClient> client,
                     std::unique_ptr<Campaign> campaign);
  void RunSynchronously(const std::vector<Tuple>& tuples);
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
  std::vector<Result> oracle_;      // scratch for one input's tuples
  absl::string_view input_;         // the input being run (crash mode's record)
  absl::Time last_stats_write_ = absl::InfinitePast();
  bool stats_write_failed_ = false;  // and said so
  // The outcome records (<pid>.outcomes beside the stats file): a few MB,
  // so written less often than the stats, and once more at Stop.
  static constexpr absl::Duration kOutcomesWriteInterval = absl::Seconds(10);
  absl::Time last_outcomes_write_ = absl::InfinitePast();
  bool outcomes_write_failed_ = false;
  // Replaces `path` with `text`; the first failure (`failed` unset) is said
  // on stderr, for `ptxdiff fuzz` (fuzzer_output.h), the later ones not.
  static void WriteSayingTheFirstFailure(const std::string& path,
                                         absl::string_view text, bool& failed);
};

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_
