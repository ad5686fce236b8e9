#include "cli/fuzzer_output.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "fuzzers/differential_target.h"
#include "triage/pending_journal.h"

namespace ptxdiff {
namespace {

constexpr size_t kTailBytes = 64 * 1024;
// What the fuzz target prints when a write of its own under --out fails:
// kTargetPrefix, then "cannot write PATH: cause".
constexpr absl::string_view kTargetPrefix = "ptxdiff: ";
constexpr absl::string_view kTargetWriteError = "ptxdiff: cannot write ";
// libFuzzer names a corpus file by the SHA-1 of its bytes.
constexpr absl::string_view kSha1OfNothing =
    "da39a3ee5e6b4b0d3255bfef95601890afd80709";

// Why a file in `dir` was left empty, as far as the file system tells.
std::string EmptyFileCause(const std::string& dir) {
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0) return "libFuzzer left it empty";
  if (fs.f_bavail == 0)
    return "No space left on device (libFuzzer left it empty)";
  if (fs.f_favail == 0)
    return "no inodes left on the device (libFuzzer left it empty)";
  return absl::StrCat("libFuzzer left it empty (",
                      fs.f_bavail * fs.f_frsize / 1024, " KiB free now)");
}

}  // namespace

absl::StatusOr<std::unique_ptr<FuzzerLog>> FuzzerLog::Open(
    const std::string& path) {
  // Not blocking on a FIFO left at the log's name, which nothing reads.
  absl::StatusOr<int> opened = OpenToWrite(path, O_APPEND);
  if (!opened.ok())
    return absl::FailedPreconditionError(opened.status().message());
  const int log = *opened;
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) {
    const int error = errno;
    close(log);
    return absl::InternalError(
        absl::StrCat("cannot make a pipe: ", std::strerror(error)));
  }
  fcntl(ends[0], F_SETFL, O_NONBLOCK);
  return std::unique_ptr<FuzzerLog>(new FuzzerLog(path, log, ends[0], ends[1]));
}

FuzzerLog::~FuzzerLog() {
  CloseFuzzerEnd();
  close(read_end_);
  close(log_);
}

void FuzzerLog::CloseFuzzerEnd() {
  if (fuzzer_end_ >= 0) close(fuzzer_end_);
  fuzzer_end_ = -1;
}

void FuzzerLog::Pump(absl::Duration timeout) {
  pollfd p = {.fd = read_end_, .events = POLLIN};
  poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  char buf[16384];
  ssize_t n;
  while ((n = read(read_end_, buf, sizeof(buf))) > 0) Take(buf, n);
}

void FuzzerLog::Take(const char* data, size_t size) {
  Append(data, size);
  tail_.append(data, size);
  if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != '\n') {
      line_ += data[i];
      continue;
    }
    if (absl::StartsWith(line_, kTargetWriteError)) {
      write_errors_.push_back(line_.substr(kTargetPrefix.size()));
    }
    if (absl::StartsWith(line_, kTargetPrefix) &&
        absl::EndsWith(line_, kStoppingInOrderSaid)) {
      campaign_stopping_ = true;
    }
    if (absl::StartsWith(absl::StripPrefix(line_, kTargetPrefix),
                         kEnvironmentFailureSaid) &&
        environment_failure_.empty()) {
      environment_failure_ = std::string(absl::StripSuffix(
          absl::string_view(line_).substr(kTargetPrefix.size()),
          kStoppingInOrderSaid));
    }
    if (absl::StartsWith(line_, kPendingJournalSaid)) {
      journal_warnings_.push_back(line_.substr(kTargetPrefix.size()));
    }
    line_.clear();
  }
}

void FuzzerLog::Append(const char* data, size_t size) {
  if (log_failed_) return;  // one error is enough; the tail keeps the rest
  while (size > 0) {
    const ssize_t n = write(log_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      log_failed_ = true;
      write_errors_.push_back(
          absl::StrCat("cannot write ", path_, ": ",
                       n < 0 ? std::strerror(errno) : "nothing written"));
      return;
    }
    data += n;
    size -= n;
  }
}

namespace {

// The empty regular files of `corpus` last written at or before
// `written_before` (Unix seconds), but for libFuzzer's name of an empty
// input.
std::vector<std::string> EmptyFilesIn(const std::string& corpus,
                                      time_t written_before) {
  std::vector<std::string> empty;
  DIR* d = opendir(corpus.c_str());
  if (d == nullptr) return empty;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    const std::string path = corpus + "/" + name;
    if (name[0] != '.' && name != kSha1OfNothing &&
        stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size == 0 && st.st_mtime <= written_before) {
      empty.push_back(path);
    }
  }
  closedir(d);
  return empty;
}

}  // namespace

std::set<std::string> EmptyCorpusFiles(const std::string& corpus) {
  const std::vector<std::string> empty =
      EmptyFilesIn(corpus, std::numeric_limits<time_t>::max());
  return std::set<std::string>(empty.begin(), empty.end());
}

std::vector<std::string> RemoveEmptyCorpusFiles(
    const std::string& corpus, absl::Duration min_age,
    const std::set<std::string>& left_before) {
  std::vector<std::string> errors;
  const time_t written_before = absl::ToUnixSeconds(absl::Now() - min_age);
  for (const std::string& path : EmptyFilesIn(corpus, written_before)) {
    // An earlier run's, or the user's: a resumed run stopped at its first
    // progress line, calling them its failed writes (exit 1, 76 GB free).
    if (left_before.count(path)) continue;
    errors.push_back(
        absl::StrCat("cannot write ", path, ": ", EmptyFileCause(corpus)));
    unlink(path.c_str());
  }
  return errors;
}

bool OutWrites::TakeNew(std::optional<absl::Duration> corpus_min_age,
                        std::ostream& err) {
  const size_t before = errors.size();
  const std::vector<std::string>& from_log = log.write_errors();
  errors.insert(errors.end(), from_log.begin() + taken_from_log,
                from_log.end());
  taken_from_log = from_log.size();
  if (corpus_min_age) {
    for (std::string& e :
         RemoveEmptyCorpusFiles(corpus, *corpus_min_age, empty_before)) {
      errors.push_back(std::move(e));
    }
  }
  // A full disk leaves libFuzzer's corpus files empty by the hundred:
  // the first few are said, the rest counted (the summary has them all).
  constexpr size_t kSaid = 5;
  for (size_t i = before; i < std::min(errors.size(), kSaid); ++i) {
    err << "ptxdiff fuzz: error: " << errors[i] << "\n";
  }
  if (errors.size() > kSaid && errors.size() > before) {
    err << "ptxdiff fuzz: error: " << errors.size() - std::max(before, kSaid)
        << " more failed write(s) under --out\n";
  }
  err.flush();
  return errors.size() > before;
}

}  // namespace ptxdiff
