#include "backends/cuda/driver_api.h"

#include <unistd.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::Optional;

TEST(CheckCudaResultTest, SuccessIsOk) {
  FakeCudaDriver driver;
  EXPECT_TRUE(PTXDIFF_CU_CALL(driver, "initialize", Init(0)).ok());
}

TEST(CheckCudaResultTest, NamesWhatCallErrorAndPlace) {
  FakeCudaDriver driver;
  driver.FailCall("MemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
  CUdeviceptr pointer = 0;
  const absl::Status status =
      PTXDIFF_CU_CALL(driver, "allocate device memory", MemAlloc(&pointer, 64));
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()),
              MatchesRegex("Failed to allocate device memory: "
                           "cuMemAlloc\\(&pointer, 64\\) returned "
                           "CUDA_ERROR_OUT_OF_MEMORY "
                           "\\(backends/cuda/driver_api_test.cc:[0-9]+\\)"));
  EXPECT_THAT(CudaResultOf(status), Optional(CUDA_ERROR_OUT_OF_MEMORY));
}

TEST(CheckCudaResultTest, CodesSayWhetherTheMachineCanRunCuda) {
  FakeCudaDriver driver;
  auto code = [&](CUresult r) {
    return CheckCudaResult(driver, r, "x", "cuX()", "f.cc", 1).code();
  };
  EXPECT_EQ(code(CUDA_ERROR_NO_DEVICE), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code(CUDA_ERROR_STUB_LIBRARY),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code(CUDA_ERROR_ILLEGAL_INSTRUCTION), absl::StatusCode::kInternal);
}

TEST(CheckCudaResultTest, UnnamedErrorsByNumber) {
  FakeCudaDriver driver;  // names only the errors the tests use
  const absl::Status status = CheckCudaResult(
      driver, static_cast<CUresult>(1000), "x", "cuX()", "f.cc", 1);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("returned CUDA error 1000"));
  EXPECT_THAT(CudaResultOf(status), Optional(static_cast<CUresult>(1000)));
  EXPECT_EQ(CudaResultOf(absl::InternalError("other")), std::nullopt);
}

TEST(CheckCudaResultTest, NamesTheEntryPointCalled) {
  FakeCudaDriver driver;
  driver.FailCall("StreamQuery", CUDA_ERROR_INVALID_VALUE);
  const absl::Status status =
      PTXDIFF_CU_CALL(driver, "wait", StreamQuery(nullptr));
  EXPECT_THAT(CudaCallOf(status), Optional(std::string("cuStreamQuery")));
  EXPECT_EQ(CudaCallOf(absl::InternalError("other")), std::nullopt);
}

TEST(UnsupportedCudaCallTest, NamesTheEntryPointAndTheCall) {
  FakeCudaDriver driver;
  EXPECT_TRUE(IsUnsupportedCudaError(CUDA_ERROR_NOT_SUPPORTED));
  EXPECT_FALSE(IsUnsupportedCudaError(CUDA_ERROR_INVALID_VALUE));
  driver.FailEveryCall("StreamQuery", CUDA_ERROR_NOT_SUPPORTED);
  const absl::Status status =
      PTXDIFF_CU_CALL(driver, "run the batch's kernels", StreamQuery(nullptr));
  EXPECT_THAT(
      DescribeUnsupportedCall(driver, status),
      Optional(MatchesRegex(
          "cuStreamQuery is not supported by the CUDA driver: Failed to run "
          "the batch's kernels: cuStreamQuery\\(nullptr\\) returned "
          "CUDA_ERROR_NOT_SUPPORTED "
          "\\(backends/cuda/driver_api_test.cc:[0-9]+\\)")));
  // Every later call too.
  EXPECT_EQ(driver.StreamQuery(nullptr), CUDA_ERROR_NOT_SUPPORTED);
  // Not for another error, nor a status of no call.
  driver.FailCall("MemFree", CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(DescribeUnsupportedCall(
                driver, PTXDIFF_CU_CALL(driver, "free", MemFree(0))),
            std::nullopt);
  EXPECT_EQ(DescribeUnsupportedCall(driver, absl::OkStatus()), std::nullopt);
  EXPECT_EQ(DescribeUnsupportedCall(driver, absl::InternalError("x")),
            std::nullopt);
}

TEST(StickyTest, ContextDestroyingErrors) {
  EXPECT_TRUE(IsStickyCudaError(CUDA_ERROR_ILLEGAL_INSTRUCTION));
  EXPECT_TRUE(IsStickyCudaError(CUDA_ERROR_ILLEGAL_ADDRESS));
  EXPECT_TRUE(IsStickyCudaError(CUDA_ERROR_LAUNCH_FAILED));
  EXPECT_TRUE(IsStickyCudaError(CUDA_ERROR_LAUNCH_TIMEOUT));
  EXPECT_FALSE(IsStickyCudaError(CUDA_ERROR_INVALID_VALUE));
  EXPECT_FALSE(IsStickyCudaError(CUDA_ERROR_OUT_OF_MEMORY));
  EXPECT_FALSE(IsStickyCudaError(CUDA_ERROR_INVALID_PTX));
  EXPECT_FALSE(IsStickyCudaError(CUDA_ERROR_NOT_READY));
}

// The real driver on this machine. CI has no GPU and no libcuda.so.1; where
// a working driver and device exist, there is nothing to check here.
TEST(LoadCudaDriverTest, FailsAtOnceAndSaysWhyWithoutAGpu) {
  const absl::Time start = absl::Now();
  auto driver = LoadCudaDriver();
  if (driver.ok()) GTEST_SKIP() << "this machine has a working CUDA driver";
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(driver.status().message()),
      AnyOf(HasSubstr("libcuda.so.1"), HasSubstr("cuInit(0) returned")));
}

// A library named by the user: the error names it and the loader's reason,
// and does not blame a missing NVIDIA driver.
TEST(LoadCudaDriverTest, MissingLibraryNamesIt) {
  auto driver = LoadCudaDriver("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(driver.status().message()),
      AllOf(HasSubstr("cannot load the CUDA driver library "
                      "/nonexistent/libcuda.so.1 ("),
            HasSubstr("No such file or directory"), Not(HasSubstr("NVIDIA"))));
}

TEST(LoadCudaDriverTest, NotADriverLibrary) {
  auto driver = LoadCudaDriver("libm.so.6");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()),
              HasSubstr("libm.so.6 exports neither cuInit nor cuGetErrorName: "
                        "it is not the CUDA driver"));
}

// The toolkit's link stub, which containers without the driver mounted often
// end up loading: cuInit's error names the problem.
TEST(LoadCudaDriverTest, StubLibraryReportsCuInitsError) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0) GTEST_SKIP() << "no " << stub;
  auto driver = LoadCudaDriver(stub);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(driver.status().message()),
      MatchesRegex("Failed to initialize the CUDA driver: cuInit\\(0\\) "
                   "returned CUDA_ERROR_STUB_LIBRARY "
                   "\\(backends/cuda/driver_api.cc:[0-9]+\\)"));
}

}  // namespace
}  // namespace ptxdiff
