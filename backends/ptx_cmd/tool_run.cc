#include "backends/ptx_cmd/tool_run.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/printable.h"
#include "common/subprocess.h"

namespace ptxdiff {
namespace {

// What is kept of what the tool printed, for messages (before its bytes
// that are no printable text are escaped: at most four times as long).
constexpr size_t kOutputTailBytes = 1000;

// What is read of what the tool printed for its error lines: all of it,
// unless it printed more than this, then its end.
constexpr size_t kErrorScanBytes = size_t{4} << 20;
constexpr size_t kErrorLineBytes = 240;

// The first kMaxErrorLines lines of `log` that say "error".
std::vector<std::string> ErrorLines(const std::string& log) {
  std::vector<std::string> lines;
  for (absl::string_view line :
       absl::StrSplit(ReadFileTail(log, kErrorScanBytes), '\n')) {
    if (lines.size() == kMaxErrorLines) break;
    const size_t at = absl::AsciiStrToLower(line).find("error");
    if (at == std::string::npos) continue;
    // From a little before the word (a file and line: `kernel.ptx:12: parse
    // error`): a line of the log may run into it (a tool's buffered stdout
    // cut by its stderr).
    constexpr size_t kBefore = 80;
    line = line.substr(at > kBefore ? at - kBefore : 0);
    line = absl::StripAsciiWhitespace(line);
    lines.push_back(PrintableBytes(line.substr(0, kErrorLineBytes)));
  }
  return lines;
}

// What a tool says when the machine failed its run (errno's texts): no
// word on the module.
constexpr absl::string_view kMachineFailures[] = {
    "No space left on device", "Disk quota exceeded", "Cannot allocate memory",
    "Too many open files", "Read-only file system"};

// The phrase of kMachineFailures `run`'s output or error lines hold, if any.
std::string MachineFailureIn(const ToolRun& run) {
  for (absl::string_view phrase : kMachineFailures) {
    if (absl::StrContains(run.output, phrase)) return std::string(phrase);
    for (const std::string& line : run.error_lines) {
      if (absl::StrContains(line, phrase)) return std::string(phrase);
    }
  }
  return "";
}

// What a file that is not a regular one is, for a message.
const char* FileKindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "no regular file";
}

// A shell reports a command that a signal killed as exit status 128 + N.
bool ShellReportsSignal(int exit_status) {
  return exit_status > 128 && exit_status <= 128 + 64;
}

// How a run that ended without its output buffer ended, and the end of
// what the tool printed (kept in `log`), as text to quote: a tool that
// prints binary bytes must not reach the user's terminal raw.
ToolRun Failed(ToolRun run, ToolRun::End end, std::string what,
               const std::string& log) {
  run.end = end;
  run.what = std::move(what);
  run.output = PrintableBytes(
      absl::StripTrailingAsciiWhitespace(ReadFileTail(log, kOutputTailBytes)));
  run.error_lines = ErrorLines(log);
  return run;
}

}  // namespace

ToolRun RunToolOnce(const ToolCall& call) {
  ToolRun run;
  absl::StatusOr<std::unique_ptr<TempDir>> dir =
      TempDir::CreateIn(call.files_root, "run");
  if (!dir.ok()) {
    run.error = EnvironmentFailure(dir.status());
    return run;
  }
  const std::string ptx = (*dir)->File("kernel.ptx");
  const std::string in = (*dir)->File("in.bin");
  const std::string out = (*dir)->File("out.bin");
  // Beside, not inside, what the tool sees as its files.
  const std::string log = (*dir)->File("ptxdiff-command-output.txt");
  run.error = WriteFile(ptx, call.module);
  if (run.error.ok()) run.error = WriteFile(in, call.in);
  if (!run.error.ok()) {
    run.error = EnvironmentFailure(std::move(run.error));
    return run;
  }

  const std::string command = absl::StrReplaceAll(
      call.command, {{"{ptx}", ShellQuote(ptx)},
                     {"{in}", ShellQuote(in)},
                     {"{out}", ShellQuote(out)},
                     {"{n}", absl::StrCat(call.n)},
                     {"{out_bytes}", absl::StrCat(call.n * call.slot_bytes)}});
  const absl::Duration timeout = TimeoutBefore(call.deadline, call.timeout);
  const absl::Time start = absl::Now();
  absl::StatusOr<ProcessOutcome> outcome = RunProcess(
      {"/bin/sh", "-c", command},
      {.output_path = log,
       .working_directory = (*dir)->path(),
       .timeout = timeout,
       // What is read of it (its error lines, its end): a tool that prints
       // without end must not fill the disk before its timeout.
       .keep_output_bytes = kErrorScanBytes});
  run.took = absl::Now() - start;
  if (!outcome.ok()) {  // no process (fork's EAGAIN, no room for the log)
    run.error = EnvironmentFailure(outcome.status());
    return run;
  }
  run.exit_status = outcome->exit_status;
  if (outcome->interrupted) {  // a stop of this process: no verdict on it
    return Failed(std::move(run), ToolRun::kCut, outcome->Describe(timeout),
                  log);
  }
  if (outcome->timed_out && timeout < call.timeout) {
    // Cut short by the caller's deadline, it has not shown that it hangs.
    return Failed(std::move(run), ToolRun::kCut,
                  absl::StrCat("stopped at the run's deadline after ",
                               absl::FormatDuration(timeout),
                               ", before the tool's own timeout of ",
                               absl::FormatDuration(call.timeout)),
                  log);
  }
  if (outcome->timed_out) {
    return Failed(std::move(run), ToolRun::kHung, outcome->Describe(timeout),
                  log);
  }
  if (outcome->signal != 0) {
    return Failed(std::move(run), ToolRun::kCrashed, outcome->Describe(timeout),
                  log);
  }
  if (ShellReportsSignal(outcome->exit_status)) {
    const ProcessOutcome killed{.signal = outcome->exit_status - 128};
    return Failed(std::move(run), ToolRun::kCrashed,
                  absl::StrCat(killed.Describe(timeout), " (a shell's ",
                               outcome->Describe(timeout), ")"),
                  log);
  }
  if (!outcome->ok()) {
    ToolRun failed = Failed(std::move(run), ToolRun::kRefused,
                            outcome->Describe(timeout), log);
    failed.machine_failure = MachineFailureIn(failed);
    if (!failed.machine_failure.empty()) failed.end = ToolRun::kCut;
    return failed;
  }
  const size_t expected = call.n * call.slot_bytes;
  // Only a regular file is read: a FIFO, or a link to a device that
  // blocks (/dev/ptmx), left at {out} would block the read for ever.
  if (struct stat st; stat(out.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Failed(std::move(run), ToolRun::kCrashed,
                  absl::StrCat("it exited 0 but left {out} ",
                               FileKindOf(st.st_mode), ", not a file"),
                  log);
  }
  // No more than the slots are read: a tool may leave a huge or endless
  // {out} (a link to /dev/zero), which must not take this process's memory.
  absl::StatusOr<std::string> bytes = ReadFileAtMost(out, expected);
  const std::string slots =
      absl::StrCat(" (", call.slot_bytes, " per tuple, ", call.n,
                   call.n == 1 ? " tuple)" : " tuples)");
  if (absl::IsInvalidArgument(bytes.status())) {  // past the bound
    return Failed(std::move(run), ToolRun::kCrashed,
                  absl::StrCat("it exited 0 but wrote more than ", expected,
                               " bytes to {out}", slots),
                  log);
  }
  if (!bytes.ok()) {
    return Failed(std::move(run), ToolRun::kCrashed,
                  "it exited 0 but wrote no {out} file", log);
  }
  if (bytes->size() != expected) {
    return Failed(std::move(run), ToolRun::kCrashed,
                  absl::StrCat("it exited 0 but wrote ", bytes->size(),
                               " bytes to {out}, not ", expected, slots),
                  log);
  }
  run.out = *std::move(bytes);
  return run;
}

}  // namespace ptxdiff
