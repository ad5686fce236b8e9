// The worker's protocol channel, moved off fd 1 (docs/worker-protocol.md,
// "Transport").
//
// The client reads frames from the worker's stdout, but a library the
// worker loads may print there too: GPGPU-Sim's libcudart prints a banner
// when it is loaded, which the client then reads as a frame header ("not a
// ptxdiff frame: magic 0x4e524157"). A worker therefore keeps the pipe it
// was given as fd 1 on a descriptor of its own and points fd 1 at stderr,
// which the client keeps as the worker's log, before it loads or starts
// anything.

#ifndef PTXDIFF_PROTOCOL_STDOUT_CHANNEL_H_
#define PTXDIFF_PROTOCOL_STDOUT_CHANNEL_H_

#include "absl/status/statusor.h"

namespace ptxdiff {

// Duplicates fd 1 to a new descriptor (3 or above, close-on-exec: the
// commands the worker runs do not inherit the channel), points fd 1 at fd 2,
// and returns the new descriptor, which frames are then written to. From
// then on whatever anyone writes to stdout (printf, std::cout, write(1, ...))
// goes to stderr, line by line, including what stdio had buffered before.
// Call it once, first in main; Internal if a descriptor cannot be made.
absl::StatusOr<int> MoveFramesOffStdout();

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_STDOUT_CHANNEL_H_
