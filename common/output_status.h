// Whether a command's output reached where it goes: its stdout closed
// (`>&-`), a full disk (`> /dev/full`), a file system that fails.

#ifndef PTXDIFF_COMMON_OUTPUT_STATUS_H_
#define PTXDIFF_COMMON_OUTPUT_STATUS_H_

#include <ostream>

namespace ptxdiff {

// `status` once `out` is flushed: unchanged if all of it was written;
// otherwise said on `err`, and 1 in place of 0, so that a summary, a
// verdict or a list that was lost is not a success.
int StatusAfterOutput(int status, std::ostream& out, std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_OUTPUT_STATUS_H_
