#include "program/program_calibration.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "program/program_ptxas.h"

namespace ptxdiff {
namespace {

class ProgramCalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The ptxas backend's compiler (nvJitLink where it loads): what the
    // campaign judges is what is calibrated.
    absl::StatusOr<ProgramCompiler> found = PtxasProgramCompiler({});
    if (!found.ok()) GTEST_SKIP() << "no ptxas here: " << found.status();
    options_.compiler = *found;
  }
  ProgramCalibrationOptions options_;
};

// Random programs' -O0 code, run by the evaluator where ptxas keeps code,
// agrees with the composed oracle (the campaign mode runs it over 100k).
TEST_F(ProgramCalibrationTest, RandomProgramsAgreeAtO0) {
  options_.programs = 96;
  options_.seed = 3;
  absl::StatusOr<ProgramCalibrationReport> r = CalibratePrograms(options_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->programs, 96);
  EXPECT_GT(r->checks, 96);  // the runtime form too, where there are inputs
  EXPECT_THAT(r->disagreements, testing::IsEmpty());
  EXPECT_GT(r->executed, r->checks / 2) << "most -O0 code is run";
  int64_t known = 0;
  for (const auto& [k, n] : r->known) known += n;
  int64_t not_run = 0;
  for (const auto& [k, n] : r->not_run) not_run += n;
  EXPECT_EQ(r->agreed + known + not_run, r->checks);
}

// The same programs whatever the threads: each batch has its own seed.
TEST_F(ProgramCalibrationTest, ThreadsCheckTheSamePrograms) {
  options_.programs = 64;
  absl::StatusOr<ProgramCalibrationReport> one = CalibratePrograms(options_);
  options_.threads = 2;
  absl::StatusOr<ProgramCalibrationReport> two = CalibratePrograms(options_);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(one->checks, two->checks);
  EXPECT_EQ(one->executed, two->executed);
  EXPECT_EQ(one->agreed, two->agreed);
}

}  // namespace
}  // namespace ptxdiff
