#include "common/output_status.h"

namespace ptxdiff {

int StatusAfterOutput(int status, std::ostream& out, std::ostream& err) {
  out.flush();
  if (!out.fail()) return status;
  err << "ptxdiff: its output could not be written (stdout closed, or its "
         "disk full): what it printed is lost\n";
  err.flush();
  return status == 0 ? 1 : status;
}

}  // namespace ptxdiff
