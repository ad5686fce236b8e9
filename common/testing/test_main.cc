// The main of every test binary: gtest's, then a wait for the calls a test
// left running past their wait (CallWithin: an in-process compile of
// libnvJitLink). Returning from main while one runs has exit()'s handlers
// free libnvJitLink's state under it: ASan's "attempting free on address
// which was not malloc()-ed", or a hang in the report.

#include <iostream>

#include "absl/time/time.h"
#include "common/call_within.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

// Long enough for any compile a test starts (the slowest takes seconds).
constexpr absl::Duration kLeftRunningWait = absl::Minutes(3);

void WaitForCallsLeftRunning() {
  if (ptxdiff::WaitForCallsToReturn(kLeftRunningWait)) return;
  std::cerr << "test main: " << ptxdiff::CallsNotReturned()
            << " call(s) still running after " << kLeftRunningWait
            << "; exiting beside them\n";
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleMock(&argc, argv);
  const int status = RUN_ALL_TESTS();
  WaitForCallsLeftRunning();
  return status;
}
