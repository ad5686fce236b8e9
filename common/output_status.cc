#include "common/output_status.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>

namespace ptxdiff {

bool PipeReaderGone(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  // A pipe's writer polls POLLERR once its last reader has closed it.
  pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

int StatusAfterOutput(int status, std::ostream& out, std::ostream& err,
                      int out_fd) {
  out.flush();
  if (!out.fail()) return status;
  // The reader chose to stop reading: as SIGPIPE ends a process that does
  // not ignore it (one that started a worker does), silently.
  if (PipeReaderGone(out_fd)) return status == 0 ? 128 + SIGPIPE : status;
  err << "ptxdiff: its output could not be written (stdout closed, or its "
         "disk full): what it printed is lost\n";
  err.flush();
  return status == 0 ? 1 : status;
}

}  // namespace ptxdiff
