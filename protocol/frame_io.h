// Frames over file descriptors (pipes), with a deadline on every read and
// write so that a hung peer is noticed instead of blocking forever.

#ifndef PTXDIFF_PROTOCOL_FRAME_IO_H_
#define PTXDIFF_PROTOCOL_FRAME_IO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "protocol/protocol.h"

namespace ptxdiff {

struct Frame {
  MessageType type;
  std::string payload;
};

// Status codes: DeadlineExceeded when the deadline passes, Unavailable when
// the peer closed the stream (or died), InvalidArgument for a malformed frame,
// Cancelled (kInterruptedWait) when this process was told to stop
// (common/interrupt.h) while it waited.
inline constexpr char kInterruptedWait[] = "interrupted while waiting";
absl::Status WriteFrame(int fd, MessageType type, absl::string_view payload,
                        absl::Time deadline = absl::InfiniteFuture());
absl::StatusOr<Frame> ReadFrame(int fd,
                                absl::Time deadline = absl::InfiniteFuture());

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_FRAME_IO_H_
