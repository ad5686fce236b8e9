// The CUDA backend's failures and declines on a simulated GPU
// (FakeCudaDriver): what the JIT rejects, what survives a restart or another
// driver library, and every way a startup, a run or the device fails.

#include "backends/cuda/cuda_backend.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/cuda/pipeline.h"
#include "backends/cuda/testing/cuda_rig.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CudaBackendTest, JitRejectionDeclinesTheVariantOnce) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  rig.fake->RejectPtxContaining("bfe.u64 %dst",
                                "ptxas application ptx input, line 40; error "
                                "  : Feature not supported");
  const RunRequest request = Batch({"bfe.u64", "bfe.u32"}, {4, 4});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const TupleResult& r = reply.results[i];
    if (request.tuples[i].variant_index == 1) {
      EXPECT_EQ(r.kind, ResultKind::kValue);
      continue;
    }
    ASSERT_EQ(r.kind, ResultKind::kDecline);
    EXPECT_EQ(r.code, DeclineCode::kNotEvaluable);
    EXPECT_THAT(reply.messages[r.message],
                AllOf(HasSubstr("the driver's JIT rejected the kernel"),
                      HasSubstr("CUDA_ERROR_INVALID_PTX"),
                      HasSubstr("line 40; error   : Feature not supported")));
  }
  const int links = rig.fake->CallCount("LinkCreate");
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  EXPECT_EQ(rig.fake->CallCount("LinkCreate"), links);  // not compiled again
  EXPECT_EQ(reply.results[0].kind, request.tuples[0].variant_index == 0
                                       ? ResultKind::kDecline
                                       : ResultKind::kValue);
}

TEST(CudaBackendTest, ImmediateModeJitRejectionIsAnOperandFormDecline) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"mode", "immediate"}}).ok());
  rig.fake->RejectPtxContaining("div.s32 %dst", "error: bad immediate");
  const RunRequest request = Batch({"div.s32", "div.u32"}, {3, 3});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const TupleResult& r = reply.results[i];
    EXPECT_EQ(r.kind, request.tuples[i].variant_index == 0
                          ? ResultKind::kDecline
                          : ResultKind::kValue);
    if (r.kind == ResultKind::kDecline) {
      EXPECT_EQ(r.code, DeclineCode::kOperandForm);
    }
  }
}

// Immediate mode: one single-thread launch per group, writing its group's
// slots; the batch's modules are unloaded when it is done.
TEST(CudaBackendTest, ImmediateLaunchesPerGroup) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"mode", "immediate"}, {"immediate_group", "4"}}).ok());
  const RunRequest request = Batch({"shf.l.clamp.b32"}, {10});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  const auto& launches = rig.fake->launches();
  ASSERT_EQ(launches.size(), 3u);
  for (size_t k = 0; k < launches.size(); ++k) {
    EXPECT_TRUE(launches[k].immediate);
    EXPECT_EQ(launches[k].entry, absl::StrCat("ptxdiff_immediate_", k));
    EXPECT_EQ(launches[k].grid, 1u);
    EXPECT_EQ(launches[k].block, 1u);
    EXPECT_EQ(launches[k].out - launches[0].out, 8 * 4 * k);
  }
  EXPECT_EQ(rig.fake->CallCount("MemcpyHtoDAsync"), 0);  // no operand buffer
  EXPECT_EQ(rig.fake->CallCount("ModuleUnload"),
            rig.fake->CallCount("ModuleLoadDataEx"));
  // The operands are in the PTX.
  EXPECT_THAT(rig.fake->compiled_ptx().back(),
              HasSubstr("shf.l.clamp.b32 %dst, 0x"));
}

TEST(CudaBackendTest, RestartedWorkerDoesNotRecompile) {
  const std::string dir =
      absl::StrCat(testing::TempDir(), "/cuda_backend_", getpid());
  std::filesystem::remove_all(dir);
  const std::vector<std::string> spellings = Assortment();
  const RunRequest request =
      Batch(spellings, std::vector<int>(spellings.size(), 3));
  {
    Rig rig;
    ASSERT_TRUE(rig.Make({{"cache_dir", dir}}).ok());
    RunReply reply;
    ASSERT_TRUE(rig.backend->Run(request, reply).ok());
    EXPECT_GT(rig.fake->CallCount("LinkCreate"), 30);
  }
  Rig rig;
  ASSERT_TRUE(rig.Make({{"cache_dir", dir}}).ok());
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  EXPECT_EQ(rig.fake->CallCount("LinkCreate"), 0);
  std::filesystem::remove_all(dir);
}

// Another driver library's images are kept apart from NVIDIA's: a kernel
// compiled by one is never loaded into the other.
TEST(CudaBackendTest, AnotherDriverLibraryCompilesIntoItsOwnCache) {
  const std::string dir =
      absl::StrCat(testing::TempDir(), "/cuda_backend_driver_", getpid());
  std::filesystem::remove_all(dir);
  const RunRequest request = Batch({"add.s32"}, {3});
  {
    Rig rig;
    ASSERT_TRUE(rig.Make({{"cache_dir", dir}}).ok());
    RunReply reply;
    ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  }
  Rig rig;
  ASSERT_TRUE(
      rig.Make({{"cache_dir", dir}, {"driver_library", "/opt/libmycuda.so"}})
          .ok());
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  EXPECT_EQ(rig.fake->CallCount("LinkCreate"), 1);
  int driver_dirs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    if (name.rfind("driver-", 0) == 0) {
      ++driver_dirs;
      EXPECT_FALSE(std::filesystem::is_empty(entry.path() / "cuda")) << name;
    }
  }
  EXPECT_EQ(driver_dirs, 1);
  std::filesystem::remove_all(dir);
}

TEST(CudaBackendTest, ModulesBeyondTheLimitAreUnloadedBetweenBatches) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"max_modules", "2"}}).ok());
  const RunRequest request = Batch(
      {"add.s32", "sub.s32", "min.s32", "max.s32", "abs.s32"}, {1, 1, 1, 1, 1});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  EXPECT_EQ(rig.fake->CallCount("ModuleLoadDataEx") -
                rig.fake->CallCount("ModuleUnload"),
            2);
}

TEST(CudaBackendTest, BadVariantIndexIsAnError) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  RunRequest request = Batch({"add.s32"}, {2});
  request.tuples[1].variant_index = 7;
  RunReply reply;
  EXPECT_EQ(rig.backend->Run(request, reply).code(),
            absl::StatusCode::kInvalidArgument);
}

// Every driver call made while starting can fail: the error names the call,
// and whatever was acquired is released.
TEST(CudaBackendTest, EveryStartupFailureIsReportedAndCleanedUp) {
  // (method, how many times it is called during startup)
  const std::vector<std::pair<std::string, int>> calls = {
      {"Init", 1},
      {"DriverGetVersion", 1},
      {"DeviceGetCount", 1},
      {"DeviceGet", 1},
      {"DeviceGetName", 1},
      {"DeviceGetAttribute", 3},
      {"DevicePrimaryCtxRetain", 1},
      {"CtxSetCurrent", 1},
      {"StreamCreate", 2},
      {"MemHostAlloc", 4},
      {"MemAlloc", 4}};
  for (const auto& [method, count] : calls) {
    for (int nth = 1; nth <= count; ++nth) {
      Rig rig;
      FakeCudaDriver::Config config;
      config.leaks_at_exit = &rig.leaks;
      auto driver = std::make_unique<FakeCudaDriver>(config);
      driver->FailCall(method, CUDA_ERROR_INVALID_VALUE, nth);
      auto made = MakeCudaBackend({{"cache_dir", ""}}, std::move(driver));
      ASSERT_FALSE(made.ok()) << method << " #" << nth;
      EXPECT_THAT(std::string(made.status().message()),
                  AllOf(HasSubstr(absl::StrCat("cu", method, "(")),
                        HasSubstr("CUDA_ERROR_INVALID_VALUE")))
          << method;
      EXPECT_EQ(rig.leaks, "") << method << " #" << nth;
    }
  }
}

TEST(CudaBackendTest, NoDeviceSuggestsThePtxasBackend) {
  Rig rig;
  auto driver = std::make_unique<FakeCudaDriver>();
  driver->FailCall("Init", CUDA_ERROR_NO_DEVICE);
  auto made = MakeCudaBackend({}, std::move(driver));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(made.status().message()),
              AllOf(HasSubstr("cuInit(0) returned CUDA_ERROR_NO_DEVICE"),
                    HasSubstr("--backend=ptxas")));
}

// With the real driver: this machine (and CI) has no libcuda.so.1 or no
// device, and the backend says so at once.
TEST(CudaBackendTest, RealDriverWithoutAGpuFailsFast) {
  const absl::Time start = absl::Now();
  auto made = MakeCudaBackend({{"cache_dir", ""}});
  if (made.ok()) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(made.status().message()),
              AllOf(testing::AnyOf(HasSubstr("libcuda.so.1"),
                                   HasSubstr("cuInit(0) returned")),
                    HasSubstr("--backend=ptxas")));
}

// A driver library of the user's own that does not load: its path and the
// loader's reason, without the hint meant for machines without NVIDIA's.
TEST(CudaBackendTest, AnotherDriverLibraryThatDoesNotLoad) {
  auto made = MakeCudaBackend(
      {{"cache_dir", ""}, {"driver_library", "/nonexistent/libmycuda.so"}});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(made.status().message()),
              AllOf(HasSubstr("the cuda backend cannot run here: cannot load "
                              "the CUDA driver library "
                              "/nonexistent/libmycuda.so ("),
                    Not(HasSubstr("--backend=ptxas"))));
}

// Errors that leave the context usable fail the batch only.
TEST(CudaBackendTest, OrdinaryRunFailuresFailTheBatchOnly) {
  for (const char* method :
       {"MemcpyHtoDAsync", "LaunchKernel", "MemcpyDtoHAsync",
        "ModuleGetFunction", "LinkCreate", "StreamQuery"}) {
    Rig rig;
    ASSERT_TRUE(rig.Make({{"stage_tuples", "8"}}).ok());
    const RunRequest request = Batch({"add.s32", "mul.hi.u32"}, {12, 12});
    rig.fake->FailCall(method, CUDA_ERROR_INVALID_VALUE);
    RunReply reply;
    const absl::Status status = rig.backend->Run(request, reply);
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << method;
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(absl::StrCat("cu", method, "(")));
    EXPECT_EQ(rig.fatal.calls, 0) << method;
    // The next batch is fine.
    ASSERT_TRUE(rig.backend->Run(request, reply).ok()) << method;
    ExpectOracleResults(request, reply);
    rig.Destroy();
    EXPECT_EQ(rig.leaks, "") << method;
  }
}

// A partial implementation of the driver API answers an entry point it does
// not implement with CUDA_ERROR_NOT_SUPPORTED in every batch: each batch's
// tuples are declined (not run) with one reason naming the entry point and
// the call it failed in, the same in every batch, and no batch fails.
TEST(CudaBackendTest, AnUnsupportedEntryPointDeclinesTheBatchNamingIt) {
  for (const char* method :
       {"StreamQuery", "LinkCreate", "MemcpyDtoHAsync", "LaunchKernel"}) {
    Rig rig;
    ASSERT_TRUE(rig.Make({{"stage_tuples", "8"}}).ok());
    rig.fake->FailEveryCall(method, CUDA_ERROR_NOT_SUPPORTED);
    std::vector<std::string> reasons;
    for (uint64_t seed : {1, 2}) {
      const RunRequest request =
          Batch({"add.s32", "mul.hi.u32"}, {12, 12}, seed);
      RunReply reply;
      ASSERT_TRUE(rig.backend->Run(request, reply).ok()) << method;
      ASSERT_EQ(reply.results.size(), request.tuples.size());
      ASSERT_EQ(reply.messages.size(), 1u) << method;
      for (const TupleResult& r : reply.results) {
        EXPECT_EQ(r.kind, ResultKind::kDecline);
        EXPECT_EQ(r.code, DeclineCode::kOther);
        EXPECT_EQ(r.message, 0u);
      }
      reasons.push_back(reply.messages[0]);
    }
    EXPECT_THAT(
        reasons[0],
        AllOf(HasSubstr(absl::StrCat("not run: cu", method,
                                     " is not supported by the CUDA driver: "
                                     "Failed to ")),
              HasSubstr(absl::StrCat(": cu", method, "(")),
              HasSubstr("returned CUDA_ERROR_NOT_SUPPORTED (backends/"
                        "cuda/")))
        << method;
    EXPECT_EQ(reasons[1], reasons[0]);
    EXPECT_EQ(rig.fatal.calls, 0) << method;
    rig.Destroy();
    EXPECT_EQ(rig.leaks, "") << method;
  }
}

// The JIT's log is not part of the reason: it differs from kernel to
// kernel, and the reason is counted once.
TEST(CudaBackendTest, AnUnsupportedJitCallsReasonHasNoLog) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  rig.fake->FailEveryCall("LinkAddData", CUDA_ERROR_NOT_SUPPORTED);
  const RunRequest request = Batch({"add.s32"}, {4});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ASSERT_EQ(reply.messages.size(), 1u);
  EXPECT_THAT(reply.messages[0],
              AllOf(HasSubstr("not run: cuLinkAddData is not supported"),
                    Not(HasSubstr("\n"))));
}

// Called at start-up, an unsupported entry point is the machine's problem:
// the backend cannot run here, and says which.
TEST(CudaBackendTest, AnUnsupportedEntryPointAtStartupNamesIt) {
  auto driver = std::make_unique<FakeCudaDriver>();
  driver->FailEveryCall("MemHostAlloc", CUDA_ERROR_NOT_SUPPORTED);
  auto made = MakeCudaBackend({{"cache_dir", ""}}, std::move(driver));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(made.status().message()),
              HasSubstr("the cuda backend cannot run here: cuMemHostAlloc is "
                        "not supported by the CUDA driver: Failed to "));
}

TEST(CudaBackendTest, DeviceFaultEndsTheWorker) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"stage_tuples", "8"}}).ok());
  rig.fake->FaultOnLaunch(2, CUDA_ERROR_ILLEGAL_INSTRUCTION);
  const RunRequest request = Batch({"add.s32", "vabsdiff.u32.u32.u32"}, {6, 6});
  RunReply reply;
  EXPECT_FALSE(rig.backend->Run(request, reply).ok());
  ASSERT_EQ(rig.fatal.calls, 1);
  EXPECT_EQ(rig.fatal.code, kExitDeviceFault);
  EXPECT_THAT(rig.fatal.message,
              AllOf(HasSubstr("cuda device fault: Failed to run the batch's "
                              "kernels: cuStreamQuery(stream) returned "
                              "CUDA_ERROR_ILLEGAL_INSTRUCTION"),
                    HasSubstr("in flight: "), HasSubstr("vabsdiff.u32.u32.u32"),
                    HasSubstr("exiting with status 5")));
  EXPECT_EQ(rig.fatal.message.find('\n'), std::string::npos);
  const absl::Status again = rig.backend->Run(request, reply);
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rig.fatal.calls, 1);
}

TEST(CudaBackendTest, StickyErrorFromAnyCallEndsTheWorker) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  rig.fake->FailCall("LaunchKernel", CUDA_ERROR_LAUNCH_FAILED);
  const RunRequest request = Batch({"popc.b32"}, {3});
  RunReply reply;
  EXPECT_FALSE(rig.backend->Run(request, reply).ok());
  EXPECT_EQ(rig.fatal.code, kExitDeviceFault);
  EXPECT_THAT(rig.fatal.message, HasSubstr("CUDA_ERROR_LAUNCH_FAILED"));
}

TEST(CudaBackendTest, HungKernelEndsTheWorker) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"kernel_timeout_ms", "50"}}).ok());
  rig.fake->SetBusyPolls(-1);
  const RunRequest request = Batch({"div.s32"}, {3});
  RunReply reply;
  const absl::Time start = absl::Now();
  EXPECT_FALSE(rig.backend->Run(request, reply).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_EQ(rig.fatal.calls, 1);
  EXPECT_EQ(rig.fatal.code, kExitKernelTimeout);
  EXPECT_THAT(rig.fatal.message,
              AllOf(HasSubstr("cuda kernel timeout: the batch's kernels ran "
                              "longer than the timeout of 50ms"),
                    HasSubstr("in flight: div.s32"),
                    HasSubstr("exiting with status 6")));
}

TEST(ExitWorkerDeathTest, PrintsOneLineAndExitsWithTheCode) {
  EXPECT_EXIT(ExitWorker(kExitDeviceFault, "cuda device fault: x"),
              testing::ExitedWithCode(5),
              "ptxdiff-worker: cuda device fault: x\n");
  EXPECT_EXIT(ExitWorker(kExitKernelTimeout, "cuda kernel timeout: y"),
              testing::ExitedWithCode(6), "cuda kernel timeout: y");
}

}  // namespace
}  // namespace ptxdiff
