#include "protocol/frame_io.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/interrupt.h"
#include "common/status_macros.h"

namespace ptxdiff {
namespace {

// Waits until `fd` is ready for `events` or the deadline passes, or a stop
// of this process (common/interrupt.h: Ctrl-C under `ptxdiff program`) is
// recorded: Cancelled.
absl::Status WaitReady(int fd, short events, absl::Time deadline) {
  while (true) {
    if (Interrupted()) return absl::CancelledError(kInterruptedWait);
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError("no answer before the deadline");
      }
      timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(left)) + 1;
    }
    pollfd p[2] = {{fd, events, 0}, {InterruptFd(), POLLIN, 0}};
    const int n = poll(p, InterruptFd() >= 0 ? 2 : 1, timeout_ms);
    if (n > 0 && p[0].revents != 0) {
      return absl::OkStatus();  // ready, or hung up: read/write tells
    }
    if (n < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
  }
}

absl::Status WriteAll(int fd, const char* data, size_t size,
                      absl::Time deadline) {
  while (size > 0) {
    PTXDIFF_RETURN_IF_ERROR(WaitReady(fd, POLLOUT, deadline));
    const ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == EPIPE)
        return absl::UnavailableError("the peer closed its input");
      return absl::InternalError(absl::StrCat("write: ", std::strerror(errno)));
    }
    data += n;
    size -= n;
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, char* data, size_t size, absl::Time deadline) {
  while (size > 0) {
    PTXDIFF_RETURN_IF_ERROR(WaitReady(fd, POLLIN, deadline));
    const ssize_t n = read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return absl::InternalError(absl::StrCat("read: ", std::strerror(errno)));
    }
    if (n == 0) return absl::UnavailableError("the peer closed its output");
    data += n;
    size -= n;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFrame(int fd, MessageType type, absl::string_view payload,
                        absl::Time deadline) {
  const std::string header = EncodeFrameHeader(type, payload.size());
  PTXDIFF_RETURN_IF_ERROR(WriteAll(fd, header.data(), header.size(), deadline));
  return WriteAll(fd, payload.data(), payload.size(), deadline);
}

absl::StatusOr<Frame> ReadFrame(int fd, absl::Time deadline) {
  char header[kFrameHeaderSize];
  PTXDIFF_RETURN_IF_ERROR(ReadAll(fd, header, sizeof(header), deadline));
  PTXDIFF_ASSIGN_OR_RETURN(FrameHeader h, DecodeFrameHeader(absl::string_view(
                                              header, sizeof(header))));
  Frame frame{h.type, std::string(h.payload_size, '\0')};
  PTXDIFF_RETURN_IF_ERROR(
      ReadAll(fd, frame.payload.data(), frame.payload.size(), deadline));
  return frame;
}

}  // namespace ptxdiff
