// A fuzz campaign's configuration (FuzzConfig), as the differential target
// reads it, and the record of which backend each crash of crash mode was
// found on.
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
//                            default 2
//   PTXDIFF_BATCH            campaign: tuples per batch (default: by backend)
//   PTXDIFF_SYSTEMATIC       campaign: 1 (default) runs the systematic
//                            source, 0 not
//   PTXDIFF_READING          spec (default) | hardware: the oracle reading
//                            judged against
//   PTXDIFF_DEADLINE         unix seconds at which the run is to end
//                            (ptxdiff fuzz --max-time); 0 (default):
//                            -max_total_time alone
//   PTXDIFF_FINDINGS         crash: the directory of the crash files
//                            (libFuzzer's -artifact_prefix), where each
//                            crash's backend is recorded for `ptxdiff repro`
//                            (kCrashOriginsFile)
//   PTXDIFF_REFUSALS_DIR     ptx-cmd: where the tool's refusals are
//                            remembered across runs
//   PTXDIFF_PROGRAMS         campaign: the share of the backend's time, in
//                            [0, 1], its workers spend on random programs
//                            (program/program_lane.h; default 0: tuples
//                            only)
//
// Without PTXDIFF_CONFIG, a file <executable>.conf beside the target is read
// if there is one: OSS-Fuzz and ClusterFuzzLite set no variable of ours, so
// their build (.clusterfuzzlite/build.sh) writes the settings there. The
// environment overrides either file.

#ifndef PTXDIFF_FUZZERS_FUZZ_CONFIG_H_
#define PTXDIFF_FUZZERS_FUZZ_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fuzzers/mutator.h"
#include "oracle/errata.h"

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
  // Campaign mode: the share of the backend's time for programs (a lane of
  // the engine, campaign/case_lane.h), on a worker that runs them.
  double programs_share = 0;
};

// A crash file is the input's bytes alone (libFuzzer writes it), so it does
// not say which backend it was found on, and `ptxdiff repro` without
// --backend replayed it on the default one. Crash mode appends a line per
// crash to <findings_dir>/crash-backends.txt:
//   <FNV-1a 64 of the input, 16 hex digits> TAB <the abort line's
//   "kind backend variant class"> TAB <the backend, as --backend takes it>
inline constexpr absl::string_view kCrashOriginsFile = "crash-backends.txt";

// A fuzzer's exit status (either target's) when the harness's own temporary
// files failed (a full TMPDIR): the run stopped in order, nothing filed for
// it, and `ptxdiff fuzz` exits 2 (a bad environment).
inline constexpr int kFuzzerExitEnvironment = 3;

// The exit status of a fuzzer (either target) that an interrupt stopped in
// order: libFuzzer's -interrupt_exit_code among `argv` (72 unless given).
// Not 0: a -fork parent ignores SIGINT while system() runs a job, starts the
// next job after one that exits 0, and stops them all on this status (the
// eighteenth fault run: a Ctrl-C of `fuzz --jobs 2` fuzzed on for a minute).
int InterruptExitCode(int argc, char** argv);
struct CrashOrigin {
  std::string signature;  // "value-mismatch faulty vadd.u32.u32.u32 in-range"
  std::string backend;    // "exec:/path/to/worker"
};
std::string CrashOriginLine(absl::string_view input, const CrashOrigin& origin);
// The origin recorded in `dir` for a crash file's bytes (the last, if
// several), or nullopt. A crash-backends.txt past this bound, or no regular
// file (a FIFO would block the read for ever), is not read: why is put in
// `not_read` when given. A record after damage on its line (a write cut
// short, then the next appended) is found.
inline constexpr size_t kMaxCrashOriginsBytes = size_t{16} << 20;
std::optional<CrashOrigin> FindCrashOrigin(const std::string& dir,
                                           absl::string_view input,
                                           std::string* not_read = nullptr);

// What an OSS-Fuzz build bundles beside the target, whose run-time image
// holds only $OUT: ptxas here, its libnvJitLink at ../lib64/ from it (where
// the ptxas backend looks for it). Where it is, the ptxas backend is the
// default (unless a GPU is here) and runs it.
inline constexpr absl::string_view kBundledPtxas = "cuda/bin/ptxas";
// The bundled ptxas beside this executable, or "" if there is none.
std::string BundledPtxas();

// Reads the configuration from PTXDIFF_CONFIG (if set; else from
// <executable>.conf, if there is one) and then the environment; a bad value is InvalidArgument naming the variable.
absl::StatusOr<FuzzConfig> FuzzConfigFromEnvironment();

// The KEY=VALUE pairs of PTXDIFF_CONFIG's file (an error if it cannot be
// read), else of <executable>.conf if there is one: what a target reads
// before the environment (the program target's too).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>>
ConfigFilePairs();
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

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_FUZZ_CONFIG_H_
