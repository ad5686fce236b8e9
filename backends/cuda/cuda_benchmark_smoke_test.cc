// bench/cuda_benchmark.cc runs for real only on a GPU; here it runs on the
// simulated one, so that its code has run at least once before then.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {

// In bench/cuda_benchmark.cc, compiled here without its main().
int RunCudaBenchmark(
    const std::vector<std::string>& args,
    const std::function<absl::StatusOr<std::unique_ptr<CudaDriver>>()>&
        load_driver);

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<CudaDriver>> FakeDriver() {
  return std::make_unique<FakeCudaDriver>();
}

TEST(CudaBenchmarkSmokeTest, RunsOnASimulatedGpu) {
  testing::internal::CaptureStdout();
  const int status = RunCudaBenchmark(
      {"tuples=5000", "seconds=0", "copy_mib=1", "cache_dir="}, FakeDriver);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(status, 0);
  EXPECT_THAT(out,
              AllOf(HasSubstr("Fake GPU (sm_90, device 0, 4 SMs)"),
                    HasSubstr("pinned copies:"),
                    HasSubstr("JIT compile and load per register-mode"),
                    HasSubstr("each further launch in a batch"),
                    HasSubstr("add.s32 per tuple"), HasSubstr("\nadd.u32 "),
                    HasSubstr("\nvmad."), HasSubstr("\ndp4a.")));
}

TEST(CudaBenchmarkSmokeTest, SkipsWithoutADevice) {
  testing::internal::CaptureStdout();
  const int status = RunCudaBenchmark({}, [] {
    return absl::StatusOr<std::unique_ptr<CudaDriver>>(
        absl::FailedPreconditionError("cannot load libcuda.so.1"));
  });
  EXPECT_EQ(status, 0);
  EXPECT_EQ(testing::internal::GetCapturedStdout(),
            "skipped: no CUDA device (cannot load libcuda.so.1)\n");
}

TEST(CudaBenchmarkSmokeTest, BadArgumentsAreUsageErrors) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunCudaBenchmark({"tuples=0"}, FakeDriver), 2);
  EXPECT_THAT(testing::internal::GetCapturedStderr(), HasSubstr("usage"));
}

}  // namespace
}  // namespace ptxdiff
