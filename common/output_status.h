// Whether a command's output reached where it goes: its stdout closed
// (`>&-`), a full disk (`> /dev/full`), a file system that fails.

#ifndef PTXDIFF_COMMON_OUTPUT_STATUS_H_
#define PTXDIFF_COMMON_OUTPUT_STATUS_H_

#include <ostream>

namespace ptxdiff {

// `status` once `out` is flushed: unchanged if all of it was written;
// otherwise said on `err`, and 1 in place of 0, so that a summary, a
// verdict or a list that was lost is not a success. `out_fd` is `out`'s
// file: a pipe whose reader left (`ptxdiff sweep | head`) is no failure to
// say, and ends as SIGPIPE would have ended it (141).
int StatusAfterOutput(int status, std::ostream& out, std::ostream& err,
                      int out_fd = -1);

// Whether `fd` is a pipe no one reads any more.
bool PipeReaderGone(int fd);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_OUTPUT_STATUS_H_
