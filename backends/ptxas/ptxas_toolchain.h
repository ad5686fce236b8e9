// The ptxas toolchain: finding ptxas, running it (with a deadline, its
// output to a file, no shell), asking it its release and newest PTX ISA,
// and reading its error lines.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_TOOLCHAIN_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_TOOLCHAIN_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// The ptxas the backend runs: the `ptxas` option, else $PTXAS, else
// $CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas, else the first ptxas
// on $PATH. FailedPrecondition naming where it looked if none is executable.
absl::StatusOr<std::string> FindPtxas(const KeyValues& options);

// What one ptxas run left behind.
struct PtxasOutput {
  bool ok = false;    // exited with status 0
  std::string log;    // its stdout and stderr, or how it died
  std::string cubin;  // the output file, if ok
  // How it ended: a crash (a signal), past its timeout, or cut by a stop of
  // this process (common/interrupt.h) are not rejections of the PTX.
  ProcessOutcome how;
  // Not run, or stopped, at its caller's deadline (a batch's time budget),
  // before its own timeout: no verdict on the PTX.
  bool out_of_budget = false;
  // The timeout it ran under (RunPtxas's).
  absl::Duration timeout;
};

// ptxas's default optimization level (-O3).
inline constexpr int kPtxasDefaultOptLevel = 3;
// Longer than any module of kernels_per_module kernels takes (about a
// second): a ptxas that hangs is killed, and its tuples are declined.
inline constexpr absl::Duration kPtxasTimeout = absl::Seconds(60);
// The most of a cubin that is read: a module of 4,096 kernels is a few MB.
inline constexpr size_t kMaxCubinBytes = size_t{256} << 20;

// Compiles `ptx` for `arch` (ptxas -arch=<arch>, and -O<opt_level> unless
// it is the default) in a private temporary directory that is removed
// before returning, killing ptxas after `timeout`. A non-OK status means
// ptxas could not be run at all, or left as its output no regular file of
// at most kMaxCubinBytes; a failed compilation is `ok == false`.
absl::StatusOr<PtxasOutput> RunPtxas(const std::string& ptxas,
                                     absl::string_view arch,
                                     absl::string_view ptx,
                                     int opt_level = kPtxasDefaultOptLevel,
                                     absl::Duration timeout = kPtxasTimeout);

// The option (HELLO's, and the program commands') that bounds `ptxas
// --version` and `--list-version`, in milliseconds: the CLI gives its
// --timeout where one is given, so that a ptxas that hangs on them costs
// that, not kPtxasTimeout.
inline constexpr char kPtxasQueryTimeoutOption[] = "query_timeout_ms";
// Its value in `options`, else kPtxasTimeout; InvalidArgument if it is no
// whole number of milliseconds from 1 to a day.
absl::StatusOr<absl::Duration> PtxasQueryTimeout(const KeyValues& options);

// "Cuda compilation tools, release 13.0, V13.0.88" from `ptxas --version`,
// killed after `timeout`.
absl::StatusOr<std::string> ToolchainOf(const std::string& ptxas,
                                        absl::Duration timeout = kPtxasTimeout);

// The newest PTX ISA version ptxas accepts (the last line of
// `ptxas --list-version`, "9.0"), as 90; killed after `timeout`.
absl::StatusOr<int> NewestPtxVersion(const std::string& ptxas,
                                     absl::Duration timeout = kPtxasTimeout);

// "ptxas /tmp/.../m.ptx, line 42; error   : Argument 2 of ..." -> 42 and
// "ptxas: error : Argument 2 of ...". nullopt for lines without a line number.
std::optional<std::pair<int, std::string>> ParseErrorLine(
    absl::string_view line);

// The first three lines of a log, for a decline message: each cut at 400
// bytes, "..." where cut, and with bytes that are no printable text as \xNN.
std::string LogSummary(absl::string_view log);

// $name, or "" where it is not set.
std::string GetEnv(const char* name);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_TOOLCHAIN_H_
