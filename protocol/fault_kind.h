// How a worker process failed a whole batch, as the client saw it: what a
// BackendFault (client/worker_client.h) carries and a triage entry is filed
// under (triage/finding.h). Apart from the client so that what files a
// fault's finding need not depend on the code that starts workers.

#ifndef PTXDIFF_PROTOCOL_FAULT_KIND_H_
#define PTXDIFF_PROTOCOL_FAULT_KIND_H_

#include "absl/strings/string_view.h"

namespace ptxdiff {

enum class FaultKind {
  kCrash,        // the worker died
  kHang,         // no reply before the deadline
  kProtocol,     // garbage, ERROR, or the wrong number of results
  kDeviceFault,  // the worker reported a lost GPU context or a hung kernel
                 // (ptxdiff-worker's exit statuses 5 and 6)
};
// "crash", "hang", "protocol-error", "device-fault"
absl::string_view FaultKindName(FaultKind kind);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_FAULT_KIND_H_
