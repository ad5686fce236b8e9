#include "protocol/stdout_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ptxdiff {

absl::StatusOr<int> MoveFramesOffStdout() {
  const int frames = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (frames < 0) {
    return absl::InternalError(absl::StrCat(
        "cannot keep stdout for the protocol: ", std::strerror(errno)));
  }
  if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    const int error = errno;
    close(frames);
    return absl::InternalError(absl::StrCat(
        "cannot point stdout at stderr: ", std::strerror(error)));
  }
  // Flushed only now, so that what was buffered before the move goes to
  // stderr and not into the channel.
  std::cout.flush();
  std::fflush(stdout);
  // Stdout was a pipe, fully buffered: by lines, a library's text reaches
  // the log before a crash that would lose it (glibc allows the change
  // after a flush).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return frames;
}

}  // namespace ptxdiff
