// For tests that a FIFO left where a file is written (or read) is refused,
// not waited on: a reader (or, with O_WRONLY, a writer) that opens the FIFO
// after `after` unless the test ends first, so that a writer (a reader)
// which did block is freed to fail the test instead of hanging it.

#ifndef PTXDIFF_COMMON_TESTING_FIFO_READER_H_
#define PTXDIFF_COMMON_TESTING_FIFO_READER_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ptxdiff {

class LateFifoReader {
 public:
  // Makes the FIFO at `path` (false from made() if it could not).
  LateFifoReader(std::string path, absl::Duration after,
                 int open_flags = O_RDONLY)
      : path_(std::move(path)),
        open_flags_(open_flags),
        made_(mkfifo(path_.c_str(), 0644) == 0),
        thread_([this, after] { Run(after); }) {}
  ~LateFifoReader() {
    done_ = true;
    thread_.join();
  }
  LateFifoReader(const LateFifoReader&) = delete;
  LateFifoReader& operator=(const LateFifoReader&) = delete;

  bool made() const { return made_; }
  // Whether it had to open the FIFO: a writer may have waited on it (with
  // O_WRONLY: a reader did wait on it).
  bool opened() const { return opened_; }

 private:
  void Run(absl::Duration after) {
    const absl::Time open_at = absl::Now() + after;
    while (!done_ && absl::Now() < open_at)
      absl::SleepFor(absl::Milliseconds(10));
    if (done_ || !made_) return;
    // A writer's open fails (ENXIO) unless a reader waits.
    const int fd = open(path_.c_str(), open_flags_ | O_NONBLOCK);
    opened_ = fd >= 0;
    char buffer[1 << 16];
    while (!done_) {
      if (fd < 0 || open_flags_ != O_RDONLY ||
          read(fd, buffer, sizeof buffer) <= 0)
        absl::SleepFor(absl::Milliseconds(10));
    }
    if (fd >= 0) close(fd);
  }

  const std::string path_;
  const int open_flags_;
  const bool made_;
  std::atomic<bool> done_{false};
  std::atomic<bool> opened_{false};
  std::thread thread_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_TESTING_FIFO_READER_H_
