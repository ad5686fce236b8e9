// How a worker process failed a whole batch, as the client saw it: what a
// BackendFault (client/worker_client.h) carries and a triage entry is filed
// under (triage/finding.h). Apart from the client so that what files a
// fault's finding need not depend on the code that starts workers.

#ifndef PTXDIFF_PROTOCOL_FAULT_KIND_H_
#define PTXDIFF_PROTOCOL_FAULT_KIND_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace ptxdiff {

// How the implementation ended on one case alone (a tuple, or a program),
// where it gave no value: one vocabulary for both (a tuple's kFault result
// code byte, protocol.h; a program's ProgramFault).
enum class CaseFault : uint8_t {
  kNone = 0,
  kCrash = 1,  // killed by a signal, or exited without its results
  kHang = 2,   // did not finish in time
};

enum class FaultKind {
  kCrash,        // the worker died
  kHang,         // no reply before the deadline
  kProtocol,     // garbage, ERROR, or the wrong number of results
  kDeviceFault,  // the worker reported a lost GPU context (exit status 5)
  // Not the implementation's: the harness's own files failed on this
  // machine (an ERROR with kEnvironmentErrorPrefix, protocol.h). Never
  // filed; the command stops, saying so.
  kEnvironment,
};

// ptxdiff-worker's exit statuses after a device fault (beside worker_main's
// 0, 2, 3 and 4): the GPU context is lost (a device fault), or a kernel ran
// past its timeout (the implementation hangs: a kHang, as a silent worker).
inline constexpr int kWorkerExitDeviceFault = 5;
inline constexpr int kWorkerExitKernelTimeout = 6;
// "crash", "hang", "protocol-error", "device-fault", "environment"
absl::string_view FaultKindName(FaultKind kind);
// "the worker hung" (crashed, broke the protocol, lost its device): how a
// case that faulted the worker alone is said.
std::string WorkerFaultSaid(FaultKind kind);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_FAULT_KIND_H_
