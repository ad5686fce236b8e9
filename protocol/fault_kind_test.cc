#include "protocol/fault_kind.h"

#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// The names are in reports, in the summary's fault lines and in triage
// entries' names: a renamed kind would split an entry's repeats.
TEST(FaultKindTest, EachKindHasItsName) {
  EXPECT_EQ(FaultKindName(FaultKind::kCrash), "crash");
  EXPECT_EQ(FaultKindName(FaultKind::kHang), "hang");
  EXPECT_EQ(FaultKindName(FaultKind::kProtocol), "protocol-error");
  EXPECT_EQ(FaultKindName(FaultKind::kDeviceFault), "device-fault");
}

}  // namespace
}  // namespace ptxdiff
