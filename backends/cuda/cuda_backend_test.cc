// The CUDA backend's host side, on a simulated GPU (FakeCudaDriver): what it
// launches with which parameters, how it stages and double-buffers, what it
// caches, how it declines, and every way it fails. The fake runs each kernel
// as the oracle, so a result in the wrong place, a buffer reused too early or
// a parameter off by one shows up as a wrong value.

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

Variant V(absl::string_view spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Variant{};
}

// What the fatal handler was called with (it returns, unlike ExitWorker).
struct Fatal {
  int calls = 0;
  int code = 0;
  std::string message;
};

// A backend on a fake GPU; the fake stays reachable through `fake` while the
// backend lives, and reports its leaks into `leaks` when the backend dies.
struct Rig {
  // Before `backend`, which writes into them when it is destroyed.
  std::string leaks = "(not destroyed)";
  Fatal fatal;
  FakeCudaDriver* fake = nullptr;
  std::unique_ptr<Backend> backend;

  absl::Status Make(const KeyValues& options,
                    FakeCudaDriver::Config config = {}) {
    config.leaks_at_exit = &leaks;
    auto driver = std::make_unique<FakeCudaDriver>(config);
    fake = driver.get();
    KeyValues all = {{"cache_dir", ""}};  // tests opt in to a disk cache
    all.insert(all.end(), options.begin(), options.end());
    auto made = MakeCudaBackend(all, std::move(driver),
                                [this](int code, const std::string& message) {
                                  ++fatal.calls;
                                  fatal.code = code;
                                  fatal.message = message;
                                });
    if (!made.ok()) return made.status();
    backend = std::move(*made);
    return absl::OkStatus();
  }
  void Destroy() { backend.reset(); }
};

// A batch of `counts[i]` tuples of `spellings[i]`, shuffled together, with
// edge and random operands, in the form a campaign sends most: every source
// that may be a runtime value one (the cached register kernels).
RunRequest Batch(const std::vector<std::string>& spellings,
                 const std::vector<int>& counts, uint64_t seed = 1) {
  RunRequest request;
  request.spellings = spellings;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < spellings.size(); ++i) {
    auto v = ParseVariant(spellings[i]);
    std::vector<Operands> operands(counts[i]);
    if (v.ok()) {
      FillEdgeTuples(*v, rng, operands);
    } else {
      for (Operands& o : operands) o.v[0] = rng();
    }
    const uint8_t form = v.ok() ? RuntimeCapableSources(*v) : 0;
    for (const Operands& o : operands) {
      request.tuples.push_back({static_cast<uint32_t>(i), o, form});
    }
  }
  std::shuffle(request.tuples.begin(), request.tuples.end(), rng);
  return request;
}

// Every tuple answered with the oracle's bits, and a `.cc` variant's with
// its carry.
void ExpectOracleResults(const RunRequest& request, const RunReply& reply) {
  ASSERT_EQ(reply.results.size(), request.tuples.size());
  int wrong = 0;
  for (size_t i = 0; i < request.tuples.size() && wrong < 5; ++i) {
    const WireTuple& t = request.tuples[i];
    const Variant v = V(request.spellings[t.variant_index]);
    const TupleResult& r = reply.results[i];
    const Result want = Evaluate(v, t.operands);
    if (r.kind != ResultKind::kValue || r.bits != want.bits ||
        (HasCarryOut(v) && r.carry != want.carry)) {
      ++wrong;
      ADD_FAILURE() << "tuple " << i << " " << ReplayLine(v, t.operands, want)
                    << ": got kind " << int(r.kind) << " bits 0x" << std::hex
                    << r.bits << " carry " << r.carry;
    }
  }
}

// One variant of every PTX family the kernels run (not vISA:
// WhyUnsupported), plus widths, operand forms and carries that stress the
// kernel frame.
std::vector<std::string> Assortment() {
  std::vector<std::string> spellings;
  for (const FamilyInfo& f : AllFamilies()) {
    bool first = true;
    ForEachVariant(f.family, [&](const Variant& v) {
      if (first && !WhyUnsupported(v, /*device_sm=*/100, /*max_ptx=*/90)) {
        spellings.push_back(Spell(v));
      }
      first = false;
    });
  }
  for (const char* s : {"mul.wide.u16",
                        "mad.wide.s32",
                        "mad.lo.u64",
                        "popc.b64",
                        "bfe.s64",
                        "bfi.b64",
                        "add.s16x2",
                        "max.relu.s16x2",
                        "div.u64",
                        "rem.s16",
                        "vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c",
                        "vmad.s32.s32.u32.sat.shr15 d, -a.b1, b.h0, c",
                        "vset.u32.u32.ge.add d, a.h1, b.b0, c",
                        "vshr.s32.s32.u32.sat.wrap d.h1, a.b3, b, c",
                        "add.cc.u32",
                        "sub.cc.s64",
                        "mad.hi.cc.s32",
                        "addc.cc.u64",
                        "subc.cc.u32",
                        "madc.lo.cc.s64"}) {
    spellings.push_back(s);
  }
  return spellings;
}

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
