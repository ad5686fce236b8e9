#include "protocol/fault_kind.h"

namespace ptxdiff {

absl::string_view FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCrash:
      return "crash";
    case FaultKind::kHang:
      return "hang";
    case FaultKind::kProtocol:
      return "protocol-error";
    case FaultKind::kDeviceFault:
      return "device-fault";
    case FaultKind::kEnvironment:
      return "environment";
  }
  return "?";
}

std::string WorkerFaultSaid(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCrash:
      return "the worker crashed";
    case FaultKind::kHang:
      return "the worker hung";
    case FaultKind::kProtocol:
      return "the worker broke the protocol";
    case FaultKind::kDeviceFault:
      return "the worker's device faulted";
    case FaultKind::kEnvironment:
      return "the worker's temporary files failed";
  }
  return "the worker failed";
}

}  // namespace ptxdiff
