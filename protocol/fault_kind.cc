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
  }
  return "?";
}

}  // namespace ptxdiff
