// The fixture of the SASS evaluator's tests that run kernels ptxas compiled
// (compiled_kernel.h) at each optimization level: its parameter, -O0 or
// -O3. Each test is skipped where there is no ptxas.

#ifndef PTXDIFF_BACKENDS_PTXAS_TESTING_OPT_LEVEL_FIXTURE_H_
#define PTXDIFF_BACKENDS_PTXAS_TESTING_OPT_LEVEL_FIXTURE_H_

#include "backends/ptxas/testing/compiled_kernel.h"
#include "gtest/gtest.h"

namespace ptxdiff::testing {

class OptLevelTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!HavePtxas()) GTEST_SKIP() << "no ptxas here";
  }
  int opt() const { return GetParam(); }
};

}  // namespace ptxdiff::testing

#endif  // PTXDIFF_BACKENDS_PTXAS_TESTING_OPT_LEVEL_FIXTURE_H_
