#include "backends/ptxas/ptxas_toolchain.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "common/files.h"
#include "common/printable.h"
#include "common/status_macros.h"
#include "common/subprocess.h"

namespace ptxdiff {
namespace {

// ---------------------------------------------------------------------------
// Processes.

struct ProcessResult {
  bool ok = false;     // exited with status 0
  std::string output;  // stdout and stderr, then how it ended if not 0
  ProcessOutcome how;
};

// What is kept of its output: ptxas's error lines for a module of 4,096
// kernels are well under it. A --ptxas that prints without end (`yes`)
// filled TMPDIR in its 60 s and was then read whole into memory.
constexpr size_t kKeptLogBytes = size_t{4} << 20;

// Runs argv[0] (a path) with its stdout and stderr into `log_path` and
// waits for it, at most `timeout`. Not system(): no shell ever sees the
// paths.
absl::StatusOr<ProcessResult> RunTool(const std::vector<std::string>& argv,
                                      const std::string& log_path,
                                      absl::Duration timeout = kPtxasTimeout) {
  PTXDIFF_ASSIGN_OR_RETURN(
      const ProcessOutcome outcome,
      RunProcess(argv, {.output_path = log_path,
                        .timeout = timeout,
                        .keep_output_bytes = kKeptLogBytes}));
  // Its end only: past the bound, the head is a hole punched in the file.
  ProcessResult result{.ok = outcome.ok(),
                       .output = ReadFileTail(log_path, 2 * kKeptLogBytes),
                       .how = outcome};
  if (!result.ok) {
    absl::StrAppend(&result.output, "[", outcome.Describe(timeout), "]");
  }
  return result;
}

// Runs `ptxas arg` for its output only (--version, --list-version).
absl::StatusOr<ProcessResult> RunPtxasQuery(const std::string& ptxas,
                                            absl::string_view arg,
                                            absl::Duration timeout) {
  PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<TempDir> dir,
                           TempDir::Create("ptxdiff-ptxas"));
  // A page written first: where TMPDIR is full, ptxas's writes of its
  // output fail unseen, and it would read as ptxas printing nothing.
  constexpr size_t kPageBytes = 4096;
  const std::string log = dir->File("log");
  if (absl::Status s = WriteFile(log, std::string(kPageBytes, '\n')); !s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat(ptxas, " ", arg, ": ", s.message(),
                                     " (the temporary file for its output)"));
  }
  return RunTool({ptxas, std::string(arg)}, log, timeout);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

// What is at `path` where it is no executable file ("a directory"), or
// "nothing": "ptxas not found" said of a file that is there misleads (the
// fifteenth fault run).
std::string WhatIsAt(absl::string_view path) {
  struct stat st;
  const std::string p(path);
  if (stat(p.c_str(), &st) != 0) return "nothing";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (!S_ISREG(st.st_mode)) return "no regular file";
  return "a file without the execute bit";
}

absl::Status PtxasNotFound(absl::string_view where) {
  return absl::FailedPreconditionError(absl::StrCat(
      "ptxas not found at ", where,
      "; install the CUDA toolkit or set PTXAS=/path/to/ptxas (or the "
      "worker option ptxas=...), or use --backend=oracle"));
}

}  // namespace

std::string GetEnv(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// ---------------------------------------------------------------------------
// ptxas's errors.

// "ptxas /tmp/.../m.ptx, line 42; error   : Argument 2 of ..." -> 42 and
// "error : Argument 2 of ...". nullopt for lines without a line number.
std::optional<std::pair<int, std::string>> ParseErrorLine(
    absl::string_view line) {
  const size_t at = line.find(", line ");
  if (at == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = line.substr(at + 7);
  const size_t semicolon = rest.find(';');
  int number = 0;
  if (semicolon == absl::string_view::npos ||
      !absl::SimpleAtoi(rest.substr(0, semicolon), &number)) {
    return std::nullopt;
  }
  rest = absl::StripAsciiWhitespace(rest.substr(semicolon + 1));
  if (!absl::StartsWith(rest, "error")) return std::nullopt;
  // Collapse ptxas's column padding so equal errors read the same.
  std::string message =
      absl::StrJoin(absl::StrSplit(rest, ' ', absl::SkipEmpty()), " ");
  return std::make_pair(number, "ptxas: " + message);
}

// The first lines of a log, for a decline message: each cut at
// kSummaryLineBytes, its bytes that are no printable text escaped (a
// --ptxas that is not ptxas may print anything).
std::string LogSummary(absl::string_view log) {
  constexpr size_t kSummaryLineBytes = 400;
  std::vector<std::string> lines;
  for (absl::string_view line :
       absl::StrSplit(log, '\n', absl::SkipWhitespace())) {
    if (lines.size() == 3) break;
    lines.push_back(
        absl::StrCat(PrintableBytes(line.substr(0, kSummaryLineBytes)),
                     line.size() > kSummaryLineBytes ? "..." : ""));
  }
  return absl::StrJoin(lines, " | ");
}

absl::StatusOr<absl::Duration> PtxasQueryTimeout(const KeyValues& options) {
  int ms = static_cast<int>(absl::ToInt64Milliseconds(kPtxasTimeout));
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptxas", kPtxasQueryTimeoutOption,
                                    1, 24 * 3600 * 1000, ms));
  return absl::Milliseconds(ms);
}

// "Cuda compilation tools, release 13.0, V13.0.88" from `ptxas --version`.
absl::StatusOr<std::string> ToolchainOf(const std::string& ptxas,
                                        absl::Duration timeout) {
  PTXDIFF_ASSIGN_OR_RETURN(const ProcessResult run,
                           RunPtxasQuery(ptxas, "--version", timeout));
  for (absl::string_view line : absl::StrSplit(run.output, '\n')) {
    if (run.ok && absl::StrContains(line, "release")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      ptxas,
      " --version did not print a release line: ", LogSummary(run.output)));
}

// The newest PTX ISA version ptxas accepts (the last line of
// `ptxas --list-version`, "9.0"), as 90.
absl::StatusOr<int> NewestPtxVersion(const std::string& ptxas,
                                     absl::Duration timeout) {
  PTXDIFF_ASSIGN_OR_RETURN(const ProcessResult run,
                           RunPtxasQuery(ptxas, "--list-version", timeout));
  std::vector<absl::string_view> lines =
      absl::StrSplit(run.output, '\n', absl::SkipWhitespace());
  int major = 0, minor = 0;
  if (run.ok && !lines.empty()) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(absl::StripAsciiWhitespace(lines.back()), '.');
    if (parts.size() == 2 && absl::SimpleAtoi(parts[0], &major) &&
        absl::SimpleAtoi(parts[1], &minor) && minor < 10) {
      return major * 10 + minor;
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      ptxas,
      " --list-version did not end with a version: ", LogSummary(run.output)));
}

absl::StatusOr<std::string> FindPtxas(const KeyValues& options) {
  if (std::optional<std::string> path = OptionValue(options, "ptxas")) {
    if (!IsExecutableFile(*path))
      return PtxasNotFound(absl::StrCat(*path, " (", WhatIsAt(*path), ")"));
    return *path;
  }
  if (std::string env = GetEnv("PTXAS"); !env.empty()) {
    if (!IsExecutableFile(env))
      return PtxasNotFound(absl::StrCat(env, " ($PTXAS: ", WhatIsAt(env), ")"));
    return env;
  }
  std::vector<std::string> tried;
  if (std::string home = GetEnv("CUDA_HOME"); !home.empty()) {
    tried.push_back(absl::StrCat(home, "/bin/ptxas"));
  }
  tried.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string& path : tried) {
    if (IsExecutableFile(path)) return path;
  }
  for (absl::string_view dir :
       absl::StrSplit(GetEnv("PATH"), ':', absl::SkipEmpty())) {
    std::string path = absl::StrCat(dir, "/ptxas");
    if (IsExecutableFile(path)) return path;
  }
  tried.push_back("$PATH");
  return PtxasNotFound(absl::StrJoin(tried, ", "));
}

namespace {

// What ptxas says when the machine, not the module, failed its run.
constexpr absl::string_view kMachineFailures[] = {
    "No space left on device", "Disk quota exceeded", "Read-only file system"};

bool SaysTheMachineFailed(absl::string_view log) {
  for (absl::string_view phrase : kMachineFailures) {
    if (absl::StrContains(log, phrase)) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<PtxasOutput> RunPtxas(const std::string& ptxas,
                                     absl::string_view arch,
                                     absl::string_view ptx, int opt_level,
                                     absl::Duration timeout) {
  // A full or read-only TMPDIR is the machine's failure, never a verdict on
  // ptxas (the twenty-third fault run: false crash and protocol-error
  // entries filed while a TMPDIR filled).
  absl::StatusOr<std::unique_ptr<TempDir>> dir =
      TempDir::Create("ptxdiff-ptxas");
  if (!dir.ok()) return EnvironmentFailure(dir.status());
  const std::string input = (*dir)->File("m.ptx");
  const std::string output = (*dir)->File("m.cubin");
  if (absl::Status written = WriteFile(input, ptx); !written.ok())
    return EnvironmentFailure(written);
  std::vector<std::string> args = {ptxas, absl::StrCat("-arch=", arch)};
  if (opt_level != kPtxasDefaultOptLevel)
    args.push_back(absl::StrCat("-O", opt_level));
  args.insert(args.end(), {"-o", output, input});
  PTXDIFF_ASSIGN_OR_RETURN(const ProcessResult run,
                           RunTool(args, (*dir)->File("log"), timeout));
  PtxasOutput out{
      .ok = run.ok, .log = run.output, .how = run.how, .timeout = timeout};
  if (!out.ok && SaysTheMachineFailed(out.log)) {
    return EnvironmentFailure(absl::UnavailableError(absl::StrCat(
        "ptxas could not write its output: ", LogSummary(out.log))));
  }
  if (out.ok) {
    // Bounded, and never a FIFO or a device: a --ptxas that leaves a link
    // to /dev/zero was read until memory ran out, past any --max-time.
    PTXDIFF_ASSIGN_OR_RETURN(out.cubin, ReadRecordFile(output, kMaxCubinBytes));
  }
  return out;
}

}  // namespace ptxdiff
