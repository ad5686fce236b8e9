// The CUDA backend's host side, on a simulated GPU (FakeCudaDriver): what it
// launches with which parameters, how it stages and double-buffers, what it
// caches, how it declines, and every way it fails. The fake runs each kernel
// as the oracle, so a result in the wrong place, a buffer reused too early or
// a parameter off by one shows up as a wrong value. Its failures and
// declines are in cuda_backend_failures_test.cc.

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

TEST(CudaBackendOptionsTest, DefaultsAndErrors) {
  auto options = ParseCudaBackendOptions({{"protocol", "1"}, {"arch", "x"}});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->device, 0);
  EXPECT_EQ(options->mode, KernelMode::kRegister);
  EXPECT_EQ(options->kernel_timeout, absl::Seconds(10));
  EXPECT_EQ(options->stage_tuples, 1u << 20);
  EXPECT_EQ(options->driver_library, "libcuda.so.1");
  auto set = ParseCudaBackendOptions({{"driver_library", "/opt/my/libcuda.so"},
                                      {"device", "3"},
                                      {"mode", "immediate"},
                                      {"cache_dir", "/c"},
                                      {"kernel_timeout_ms", "250"},
                                      {"stage_tuples", "99"},
                                      {"immediate_group", "8"},
                                      {"max_modules", "5"}});
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->driver_library, "/opt/my/libcuda.so");
  EXPECT_EQ(set->device, 3);
  EXPECT_EQ(set->mode, KernelMode::kImmediate);
  EXPECT_EQ(set->cache_dir, "/c");
  EXPECT_EQ(set->kernel_timeout, absl::Milliseconds(250));
  EXPECT_EQ(set->stage_tuples, 99u);
  EXPECT_EQ(set->immediate_group, 8);
  EXPECT_EQ(set->max_modules, 5u);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"driver_library", ""},
           {"device", "-1"},
           {"device", "x"},
           {"mode", "fast"},
           {"stage_tuples", "0"},
           {"stage_tuples", "16777217"},
           {"kernel_timeout_ms", "0"},
           {"immediate_group", "0"}}) {
    auto bad = ParseCudaBackendOptions({{key, value}});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument)
        << key << "=" << value;
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr(key));
  }
}

TEST(CudaBackendTest, IdentityOnAnSm90) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  const WorkerIdentity id = rig.backend->Identity();
  EXPECT_EQ(id.name, "cuda");
  EXPECT_EQ(id.device, "Fake GPU (sm_90, device 0, 4 SMs)");
  EXPECT_EQ(id.driver, "CUDA 13.0");
  EXPECT_THAT(id.toolchain, AllOf(HasSubstr("CUDA 13.0 driver JIT"),
                                  HasSubstr("register mode")));
  // A family whose every variant runs is listed by its opcode, add and the
  // carry-in families too: the kernels set and read CC.CF (carry=1).
  EXPECT_TRUE(id.carry);
  EXPECT_THAT(id.supports, Contains("mul"));
  EXPECT_THAT(id.supports, Contains("vmad"));
  EXPECT_THAT(id.supports, Contains("add"));
  EXPECT_THAT(id.supports, Not(Contains("visa.shl")));
  EXPECT_THAT(id.supports, Contains("addc"));
  EXPECT_TRUE(id.Supports(V("add.u16x2")));
  EXPECT_TRUE(id.Supports(V("add.cc.u32")));
  EXPECT_TRUE(id.Supports(V("addc.u32")));
  EXPECT_FALSE(id.Supports(V("visa.shl.ud.ud.ud")));
}

// Variants above the device's SM are left out of the handshake.
TEST(CudaBackendTest, IdentityOnAnSm80LeavesOutSm90Variants) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}, {.sm = 80}).ok());
  const WorkerIdentity id = rig.backend->Identity();
  EXPECT_THAT(id.supports, Not(Contains("add")));
  EXPECT_THAT(id.supports, Contains("add.s32"));
  EXPECT_THAT(id.supports, Contains("mul"));
  // sub's every variant runs on sm_80, its `.cc` ones too (carry=1).
  EXPECT_THAT(id.supports, Contains("sub"));
  EXPECT_TRUE(id.Supports(V("sub.cc.s64")));
  EXPECT_FALSE(id.Supports(V("add.u16x2")));
  EXPECT_FALSE(id.Supports(V("max.relu.s32")));
  EXPECT_TRUE(id.Supports(V("max.s32")));
  EXPECT_TRUE(id.Supports(V("vadd.u32.u32.u32")));
}

TEST(CudaBackendTest, PicksTheRequestedDevice) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"device", "1"}}, {.device_count = 2}).ok());
  EXPECT_EQ(rig.backend->Identity().device,
            "Fake GPU #1 (sm_90, device 1, 4 SMs)");
  EXPECT_THAT(rig.fake->calls(), Contains("DeviceGet(1)"));

  Rig missing;
  const absl::Status status =
      missing.Make({{"device", "2"}}, {.device_count = 2});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "no CUDA device 2: this machine has 2");
  EXPECT_EQ(missing.leaks, "");
}

struct RunCase {
  std::string mode;
  uint32_t stage_tuples;

  friend void PrintTo(const RunCase& c, std::ostream* os) {
    *os << c.mode << " mode, stages of " << c.stage_tuples;
  }
};

class CudaBackendRunTest : public testing::TestWithParam<RunCase> {};

// Every family, interleaved, through stages of every size: the oracle's
// answers come back in request order.
TEST_P(CudaBackendRunTest, ResultsAreTheKernelsResultsInRequestOrder) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"mode", GetParam().mode},
                        {"stage_tuples", absl::StrCat(GetParam().stage_tuples)},
                        {"immediate_group", "5"}})
                  .ok());
  const std::vector<std::string> spellings = Assortment();
  std::vector<int> counts;
  for (size_t i = 0; i < spellings.size(); ++i) counts.push_back(1 + i % 23);
  for (uint64_t seed : {1, 2}) {  // twice: the second batch reuses modules
    const RunRequest request = Batch(spellings, counts, seed);
    RunReply reply;
    ASSERT_TRUE(rig.backend->Run(request, reply).ok());
    ExpectOracleResults(request, reply);
    EXPECT_TRUE(reply.messages.empty());
  }
  EXPECT_EQ(rig.fatal.calls, 0);
  rig.Destroy();
  EXPECT_EQ(rig.leaks, "");
}

INSTANTIATE_TEST_SUITE_P(
    ModesAndStages, CudaBackendRunTest,
    testing::Values(RunCase{"register", 1u << 20}, RunCase{"register", 64},
                    RunCase{"register", 7}, RunCase{"register", 1},
                    RunCase{"immediate", 1u << 20}, RunCase{"immediate", 7}),
    [](const testing::TestParamInfo<RunCase>& info) {
      return absl::StrCat(info.param.mode, "_", info.param.stage_tuples);
    });

// Register mode runs each tuple in its operand form: every source that may
// be a runtime value one in the variant's cached kernel, any other form as
// written in a module of the batch, launched on one thread. Immediate mode
// writes every operand as an immediate, so it runs no forms.
TEST(CudaBackendTest, RegisterModeRunsEachTupleInItsForm) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"stage_tuples", "50"}}).ok());
  const WorkerIdentity identity = rig.backend->Identity();
  EXPECT_TRUE(identity.forms);
  EXPECT_TRUE(identity.runtime_by_default);
  const std::vector<std::string> spellings = Assortment();
  RunRequest request = Batch(spellings, std::vector<int>(spellings.size(), 6));
  int written = 0;
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    WireTuple& t = request.tuples[i];
    const uint8_t capable =
        RuntimeCapableSources(V(spellings[t.variant_index]));
    const uint8_t forms[] = {capable, 0, uint8_t(capable & -capable)};
    t.runtime = forms[i % 3];
    written += t.runtime != capable;
  }
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  int one_thread = 0, tuples_as_written = 0;
  for (const FakeCudaDriver::LaunchRecord& l : rig.fake->launches()) {
    if (l.grid == 1 && l.block == 1) {
      ++one_thread;
      tuples_as_written += l.n;
      EXPECT_EQ(l.entry, kRegisterEntry);
    }
  }
  EXPECT_GT(one_thread, 0);
  EXPECT_EQ(tuples_as_written, written);

  Rig immediate;
  ASSERT_TRUE(immediate.Make({{"mode", "immediate"}}).ok());
  EXPECT_FALSE(immediate.backend->Identity().forms);
}

// A wrong device shows in tuples as written too: the fake's wrapping
// add.sat.s32 runs through the module's own text.
TEST(CudaBackendTest, AWrongDeviceIsWrongOnTuplesAsWritten) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  rig.fake->IgnoreSaturation("add.sat.s32");
  RunRequest request;
  request.spellings = {"add.sat.s32"};
  request.tuples = {{0, {{0x7fffffff, 1}}, 0b01}, {0, {{0x7fffffff, 1}}, 0b11}};
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ASSERT_EQ(reply.results.size(), 2u);
  EXPECT_EQ(reply.results[0].bits, 0x80000000u);  // as written: wraps
  EXPECT_EQ(reply.results[1].bits, 0x80000000u);  // in registers: wraps
}

TEST(CudaBackendTest, OneLaunchPerVariantGroupWithPackedParameters) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  const RunRequest request =
      Batch({"add.s32", "vadd.u32.u32.u32", "bfe.u64"}, {300, 5, 2000});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  const auto& launches = rig.fake->launches();
  ASSERT_EQ(launches.size(), 3u);
  // Groups in order of first appearance, packed back to back in one stage.
  uint32_t first = 0;
  std::set<std::string> seen;
  for (const FakeCudaDriver::LaunchRecord& l : launches) {
    seen.insert(l.variant);
    EXPECT_FALSE(l.immediate);
    EXPECT_EQ(l.block, kBlockSize);
    // 4 SMs x 32 blocks at most; the kernel's loop covers the rest.
    EXPECT_EQ(l.grid, GridSize(l.n, 128));
    EXPECT_EQ(l.in - launches[0].in, uint64_t{first} * 32);
    EXPECT_EQ(l.out - launches[0].out, uint64_t{first} * 8);
    first += l.n;
  }
  EXPECT_EQ(first, 2305u);
  EXPECT_EQ(seen.size(), 3u);
  for (const FakeCudaDriver::LaunchRecord& l : launches) {
    if (l.n == 2000) EXPECT_EQ(l.grid, 8u);  // ceil(2000/256)
  }
  EXPECT_EQ(GridSize(1u << 20, 128), 128u);
  EXPECT_EQ(GridSize(1, 128), 1u);
  EXPECT_EQ(rig.fake->CallCount("MemcpyHtoDAsync"), 1);
  EXPECT_EQ(rig.fake->CallCount("MemcpyDtoHAsync"), 1);
}

// Stages alternate between two streams, and stage k+1 is queued before the
// host waits for stage k.
TEST(CudaBackendTest, DoubleBufferingOverlapsStages) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"stage_tuples", "10"}}).ok());
  const RunRequest request = Batch({"mul.lo.s32"}, {35});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
  const auto& launches = rig.fake->launches();
  ASSERT_EQ(launches.size(), 4u);  // 10 + 10 + 10 + 5
  EXPECT_NE(launches[0].stream, launches[1].stream);
  EXPECT_EQ(launches[0].stream, launches[2].stream);
  EXPECT_EQ(launches[1].stream, launches[3].stream);
  EXPECT_EQ(launches[3].n, 5u);
  const std::vector<std::string>& calls = rig.fake->calls();
  const std::string stream_a =
      absl::StrCat("stream=", reinterpret_cast<uintptr_t>(launches[0].stream));
  const std::string stream_b =
      absl::StrCat("stream=", reinterpret_cast<uintptr_t>(launches[1].stream));
  auto index_of = [&](absl::string_view prefix, absl::string_view stream) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (absl::StartsWith(calls[i], prefix) &&
          absl::StrContains(calls[i], stream)) {
        return i;
      }
    }
    return calls.size();
  };
  EXPECT_LT(index_of("MemcpyHtoDAsync", stream_b),
            index_of("StreamQuery", stream_a));
  // Buffers are allocated once, when the backend starts.
  EXPECT_EQ(rig.fake->CallCount("MemHostAlloc"), 4);
  EXPECT_EQ(rig.fake->CallCount("MemAlloc"), 4);
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  EXPECT_EQ(rig.fake->CallCount("MemHostAlloc"), 4);
}

TEST(CudaBackendTest, SlowKernelsArePolledUntilDone) {
  Rig rig;
  ASSERT_TRUE(rig.Make({{"stage_tuples", "16"}}).ok());
  rig.fake->SetBusyPolls(2000);  // past the spinning phase into sleeps
  const RunRequest request = Batch({"sad.u32", "brev.b64"}, {40, 9});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ExpectOracleResults(request, reply);
}

TEST(CudaBackendTest, DeviceResultsAreReportedAsTheyAre) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}).ok());
  rig.fake->CorruptVariant("add.s32", 0x10);
  const RunRequest request = Batch({"add.s32", "sub.s32"}, {20, 20});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const WireTuple& t = request.tuples[i];
    const uint64_t want =
        Evaluate(V(request.spellings[t.variant_index]), t.operands).bits;
    EXPECT_EQ(reply.results[i].bits, t.variant_index == 0 ? want ^ 0x10 : want);
  }
}

TEST(CudaBackendTest, DeclinesWhatTheDeviceCannotRun) {
  Rig rig;
  ASSERT_TRUE(rig.Make({}, {.sm = 80}).ok());
  const RunRequest request = Batch(
      {"add.s32", "frob.u32", "visa.shl.ud.ud.ud", "add.u16x2", "max.relu.s32"},
      {3, 2, 2, 2, 2});
  RunReply reply;
  ASSERT_TRUE(rig.backend->Run(request, reply).ok());
  ASSERT_EQ(reply.messages.size(), 3u);  // the two sm_90 variants share one
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const uint32_t v = request.tuples[i].variant_index;
    const TupleResult& r = reply.results[i];
    if (v == 0) {
      EXPECT_EQ(r.kind, ResultKind::kValue);
      continue;
    }
    ASSERT_EQ(r.kind, ResultKind::kDecline);
    EXPECT_EQ(r.code, DeclineCode::kUnsupportedVariant);
    const std::string& message = reply.messages[r.message];
    switch (v) {
      case 1:
        EXPECT_EQ(message, "unknown variant 'frob.u32'");
        break;
      case 2:
        EXPECT_THAT(message, HasSubstr("not a PTX instruction"));
        break;
      default:
        EXPECT_EQ(message,
                  "not run on Fake GPU (sm_80, device 0, 4 SMs): needs sm_90; "
                  "the device is sm_80");
    }
  }
  // The reply survives the protocol's own checks.
  EXPECT_TRUE(
      DecodeRunReply(EncodeRunReply(reply), request.tuples.size()).ok());
  EXPECT_EQ(rig.fake->launches().size(), 1u);
}

}  // namespace
}  // namespace ptxdiff
