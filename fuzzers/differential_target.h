// The differential fuzz target's logic, callable without libFuzzer: decode an
// input into tuples, run them on the oracle and on the configured backend
// (through the worker client), judge every tuple, and either file a mismatch
// (campaign mode: minimized, deduplicated in the triage directory, fuzzing
// goes on) or abort with a one-line signature (crash mode, for OSS-Fuzz and
// ClusterFuzz, which group crashes by that line).
//
// Configuration comes from the environment (libFuzzer owns the command line)
// or from a file named by PTXDIFF_CONFIG with the same KEY=VALUE names:
//
//   PTXDIFF_BACKEND          oracle | ptxas | cuda | exec:/path (default: best here)
//   PTXDIFF_ARCH             e.g. sm_90, passed to the backend
//   PTXDIFF_TRIAGE_DIR       default out/triage
//   PTXDIFF_MODE             campaign (default) | crash
//   PTXDIFF_FAMILIES         comma-separated opcodes to fuzz (default all)
//   PTXDIFF_EXCLUDE_FAMILIES comma-separated opcodes not to fuzz
//   PTXDIFF_TIMEOUT          seconds per worker reply (default 60)
//   PTXDIFF_STATS            a directory; each process writes its progress
//                            counters to <dir>/<pid>.stats (ptxdiff fuzz reads them)
//   PTXDIFF_WORKER           the ptxdiff-worker executable

#ifndef PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_
#define PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fuzzers/mutator.h"
#include "gpu_runner/worker_client.h"
#include "triage/finding.h"
#include "triage/triage_store.h"

namespace ptxdiff {

struct FuzzConfig {
  enum class Mode { kCampaign, kCrash };
  std::string backend;  // empty: ChooseDefaultBackend()
  std::string arch;
  std::string triage_dir = "out/triage";
  Mode mode = Mode::kCampaign;
  VariantFilter filter;
  double timeout_seconds = 60;
  std::string stats_dir;
  std::string worker;  // empty: FindWorkerBinary()
};

// Reads the configuration from PTXDIFF_CONFIG (if set) and then the
// environment; a bad value is InvalidArgument naming the variable.
absl::StatusOr<FuzzConfig> FuzzConfigFromEnvironment();
// The same from KEY=VALUE pairs (used by the above and by tests).
absl::StatusOr<FuzzConfig> FuzzConfigFromPairs(
    const std::vector<std::pair<std::string, std::string>>& pairs);

// Counters a campaign reports (ptxdiff fuzz reads them from the stats file).
struct FuzzStats {
  int64_t inputs = 0, tuples = 0, agreed = 0, declined = 0, unspecified = 0;
  int64_t new_findings = 0, known_findings = 0, explained_findings = 0;
  int64_t faulty_batches = 0, worker_restarts = 0;
  int64_t variants_reached = 0;
};

class DifferentialTarget {
 public:
  static absl::StatusOr<std::unique_ptr<DifferentialTarget>> Create(FuzzConfig config);

  // Runs one input. Returns -1 for an input that does not decode (libFuzzer
  // then does not keep it), 0 otherwise. In crash mode a mismatch or fault
  // prints "ptxdiff: <kind> <backend> <spelling> <class>" and aborts.
  int RunInput(const uint8_t* data, size_t size);

  // libFuzzer's extra counters, (family x semantic class); may be null.
  void SetSemanticCounters(uint8_t* counters) { counters_ = counters; }

  const FuzzStats& stats() const { return stats_; }
  const FuzzConfig& config() const { return config_; }
  const WorkerIdentity& backend() const { return client_->identity(); }

  // Writes this process's stats file now (also done every few seconds).
  void WriteStats();

 private:
  DifferentialTarget(FuzzConfig config, std::unique_ptr<WorkerClient> client,
                     TriageStore store);
  void Record(const Finding& finding);
  void OnMismatch(const Tuple& tuple, uint64_t backend_bits,
                  const std::string& raw_input);
  void OnFault(const BackendFault& fault, const std::vector<Tuple>& tuples,
               const std::string& raw_input);

  FuzzConfig config_;
  std::unique_ptr<WorkerClient> client_;
  TriageStore store_;
  FuzzStats stats_;
  uint8_t* counters_ = nullptr;
  std::vector<bool> reached_;  // by index in AllVariants()
  // Minimized findings of this process, by (spelling, class) of the tuple
  // that found them: a repeat is counted without minimizing again.
  std::map<std::pair<std::string, std::string>, Finding> seen_;
  absl::Time last_stats_write_ = absl::InfinitePast();
};

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_DIFFERENTIAL_TARGET_H_
