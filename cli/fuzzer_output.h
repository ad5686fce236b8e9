// What `ptxdiff fuzz` watches under --out while its fuzzer runs: the
// fuzzer's output, which this process appends to fuzz.log itself, and the
// corpus files libFuzzer writes. A write there that fails (a full disk) is
// an error for the terminal naming the file and the cause, not a frozen
// progress line, a log cut mid-line and a summary that under-reports.

#ifndef PTXDIFF_CLI_FUZZER_OUTPUT_H_
#define PTXDIFF_CLI_FUZZER_OUTPUT_H_

#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ptxdiff {

// The fuzzer's stdout and stderr, through a pipe, appended to the log.
class FuzzerLog {
 public:
  // Opens `path` to append to (two campaigns sharing --out each add their
  // lines, neither truncates the other's) and the pipe.
  static absl::StatusOr<std::unique_ptr<FuzzerLog>> Open(
      const std::string& path);
  ~FuzzerLog();
  FuzzerLog(const FuzzerLog&) = delete;
  FuzzerLog& operator=(const FuzzerLog&) = delete;

  // The pipe's end for the fuzzer's stdout and stderr; CloseFuzzerEnd once
  // it is started, so that the pipe ends when the fuzzer's processes do.
  int fuzzer_end() const { return fuzzer_end_; }
  void CloseFuzzerEnd();

  // Waits up to `timeout` for output, then moves all there is to the log.
  void Pump(absl::Duration timeout);

  // The last 64 KiB of the fuzzer's output, whether or not the log took it.
  const std::string& tail() const { return tail_; }

  // Each write under --out that failed, "cannot write PATH: cause", in
  // order: the log's own (the first only) and those the fuzzer reported on
  // a "ptxdiff: cannot write ..." line (its stats file).
  const std::vector<std::string>& write_errors() const { return write_errors_; }

  // What the target said when the harness's own temporary files failed
  // (its line beginning with kEnvironmentFailureSaid, worker_client.h, up
  // to kStoppingInOrderSaid); "" if it did not.
  const std::string& environment_failure() const {
    return environment_failure_;
  }

  // Whether the target said its campaign is stopping in order
  // (kStoppingInOrderSaid): at its deadline, or asked to.
  bool campaign_stopping() const { return campaign_stopping_; }

  // The fuzzer's lines about a pending journal it kept aside unadopted
  // (triage/pending_journal.h, kPendingJournalSaid), without "ptxdiff: ":
  // for the summary, where a user looks, not only the log.
  const std::vector<std::string>& journal_warnings() const {
    return journal_warnings_;
  }

 private:
  FuzzerLog(std::string path, int log, int read_end, int fuzzer_end)
      : path_(std::move(path)),
        log_(log),
        read_end_(read_end),
        fuzzer_end_(fuzzer_end) {}
  void Take(const char* data, size_t size);
  void Append(const char* data, size_t size);

  std::string path_;
  int log_ = -1, read_end_ = -1, fuzzer_end_ = -1;
  bool log_failed_ = false;
  bool campaign_stopping_ = false;
  std::string tail_;
  std::string line_;  // the fuzzer's line being read
  std::vector<std::string> write_errors_;
  std::vector<std::string> journal_warnings_;
  std::string environment_failure_;
};

// The writes under --out that failed in this run: the log's, the fuzzer's
// (its stats file) and libFuzzer's corpus files. Each is said on the
// terminal as soon as it is seen.
struct OutWrites {
  FuzzerLog& log;
  std::string corpus;
  // The corpus's empty files before the fuzzer started: not this run's.
  std::set<std::string> empty_before;
  std::vector<std::string> errors;
  size_t taken_from_log = 0;

  // Takes the failures seen since the last call, the corpus files left
  // empty `corpus_min_age` ago included (none looked for without it), and
  // says them; true if there was one.
  bool TakeNew(std::optional<absl::Duration> corpus_min_age, std::ostream& err);
};

// The corpus files of `corpus` that libFuzzer left empty, which it does
// without a word when a write fails (an input of no bytes would be named by
// the SHA-1 of nothing), each as "cannot write PATH: cause" with the cause
// read from the file system's free space. Only those written `min_age` ago
// or earlier: libFuzzer may be writing one now; and none of `left_before`,
// the empty files the corpus held before this run (EmptyCorpusFiles): no
// write of this run failed there. They are removed: the next run would
// read them as inputs.
std::vector<std::string> RemoveEmptyCorpusFiles(
    const std::string& corpus, absl::Duration min_age,
    const std::set<std::string>& left_before = {});

// The paths of `corpus`'s empty files now, for RemoveEmptyCorpusFiles.
std::set<std::string> EmptyCorpusFiles(const std::string& corpus);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_FUZZER_OUTPUT_H_
