// Programs on the `cuda` backend without a GPU: a module of programs run by
// RunModuleOnDevice on the simulated GPU (FakeCudaDriver, whose batch
// modules run through the ptx-cmd tests' PTX interpreter), and the backend
// end to end, on persistent `ptxdiff-worker --backend=cuda` processes on the
// simulated driver library (libptxdiff_sim_cuda.so), its bugs planted
// through the environment.

#include "program/program_cuda.h"

#include <stdlib.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cuda/device.h"
#include "backends/cuda/module_run.h"
#include "backends/cuda/testing/fake_cuda_driver.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "program/composed_oracle.h"
#include "program/program_backends.h"
#include "program/program_generator.h"
#include "program/program_ptx.h"
#include "program/program_tool.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Saturates to 0x7fffffff, shifted down to 7; wrapping gives 8.
Program SaturatingProgram() {
  return ProgramOf(
      "input %a .b32 0x7fffffff\nadd.sat.s32 %r, %a, 1;\nshr.u32 %s, %r, "
      "28;\noutput %s\n");
}
Program SquareProgram() {
  return ProgramOf("input %a .b32 5\nmul.lo.u32 %r, %a, %a;\noutput %r\n");
}
Program DivisionProgram() {
  return ProgramOf(
      "input %a .b32 9\ninput %b .b32 3\ndiv.u32 %r, %a, %b;\noutput %r\n");
}

std::vector<Program> RandomPrograms(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Program> programs;
  for (int k = 0; k < count; ++k) programs.push_back(RandomProgram(rng));
  return programs;
}

// Program k's outputs in a module's output buffer.
std::vector<uint64_t> OutputsOf(const std::string& out, const Program& p,
                                size_t k) {
  std::vector<uint64_t> outputs(p.outputs.size());
  for (size_t j = 0; j < outputs.size(); ++j) {
    std::memcpy(&outputs[j], out.data() + 32 * k + 8 * j, 8);
  }
  return outputs;
}

class ModuleOnFakeGpuTest : public testing::Test {
 protected:
  void SetUp() override {
    auto context = DeviceContext::Open(driver_, 0);
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = *std::move(context);
  }
  absl::StatusOr<CudaModuleRun> Run(
      const std::vector<Program>& programs,
      ProgramInputs form = ProgramInputs::kRuntime,
      absl::Duration timeout = absl::Seconds(10)) {
    return RunModuleOnDevice(
        driver_, ProgramToolModule(programs, *TargetForDevice(90), form),
        ProgramInputBuffer(programs), 2 * programs.size(), timeout);
  }
  FakeCudaDriver driver_;
  std::unique_ptr<DeviceContext> context_;
};

// Generated programs (loops, squares, narrowing) give the composed oracle's
// outputs, many in one module launched on one block of 32 threads (the
// first runs them), in both input forms.
TEST_F(ModuleOnFakeGpuTest, RightProgramsGiveTheOraclesOutputs) {
  const std::vector<Program> programs = RandomPrograms(40, 5);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto run = Run(programs, form);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_EQ(run->end, CudaModuleRun::kOk) << run->what;
    for (size_t k = 0; k < programs.size(); ++k) {
      EXPECT_FALSE(Disagrees(EvaluateAtWitness(programs[k]),
                             OutputsOf(run->out, programs[k], k)))
          << FormatProgram(programs[k]);
    }
    const FakeCudaDriver::LaunchRecord& launch = driver_.launches().back();
    EXPECT_EQ(launch.grid, 1u);
    EXPECT_EQ(launch.block, static_cast<unsigned>(kProgramLanes));
    EXPECT_EQ(launch.n, 2 * programs.size());
  }
}

// Forward branches, a bare label and exits run on the GPU as on a tool:
// the program at a witness that branches and stores, and at two that exit
// each by its own `exit` (nothing stored, nothing judged), in one module.
TEST_F(ModuleOnFakeGpuTest, BranchesAndExitsGiveTheOraclesOutputs) {
  auto p = TestdataProgram("forward-branches-exit.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<Program> programs(3, *p);
  programs[1].inputs[0].witness = 200;  // @%big exit
  programs[2].inputs[0].witness = 20;   // @!%p exit
  ASSERT_FALSE(EvaluateAtWitness(programs[0])[0].exits);
  ASSERT_TRUE(EvaluateAtWitness(programs[1])[0].exits);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto run = Run(programs, form);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_EQ(run->end, CudaModuleRun::kOk) << run->what;
    EXPECT_EQ(OutputsOf(run->out, programs[0], 0),
              std::vector<uint64_t>{0x7fffffffu + 15});
    for (size_t k = 0; k < programs.size(); ++k) {
      EXPECT_FALSE(Disagrees(EvaluateAtWitness(programs[k]),
                             OutputsOf(run->out, programs[k], k)))
          << k;
    }
  }
}

// Inputs loaded from memory on the GPU: from the module's input buffer at
// an address computed from %tid.x, as on a tool.
TEST_F(ModuleOnFakeGpuTest, LoadedInputsGiveTheOraclesOutputs) {
  auto p = TestdataProgram("loaded-inputs.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<Program> programs(2, *p);
  programs[1].inputs[1].witness = 7;
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    auto run = Run(programs, form);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_EQ(run->end, CudaModuleRun::kOk) << run->what;
    for (size_t k = 0; k < programs.size(); ++k) {
      const std::vector<uint64_t> got = OutputsOf(run->out, programs[k], k);
      EXPECT_FALSE(Disagrees(EvaluateAtWitness(programs[k]), got)) << k;
      EXPECT_EQ(got[1], 0x123456789abcdef0ull >> 3);
    }
  }
}

TEST_F(ModuleOnFakeGpuTest, AWrongInstructionGivesItsWrongValue) {
  driver_.IgnoreSaturation("add.sat.s32");
  auto run = Run({SaturatingProgram(), SquareProgram()});
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->end, CudaModuleRun::kOk) << run->what;
  EXPECT_EQ(OutputsOf(run->out, SaturatingProgram(), 0),
            std::vector<uint64_t>{8});
  EXPECT_EQ(OutputsOf(run->out, SquareProgram(), 1), std::vector<uint64_t>{25});
}

TEST_F(ModuleOnFakeGpuTest, AJitRejectionIsTheModulesWithItsLog) {
  driver_.RejectPtxContaining("div.u32", "ptxas: div.u32 is not for you");
  auto run = Run({SquareProgram(), DivisionProgram()});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->end, CudaModuleRun::kRejected);
  EXPECT_THAT(run->what, HasSubstr("div.u32 is not for you"));
}

TEST_F(ModuleOnFakeGpuTest, AStickyErrorIsADeviceFault) {
  driver_.FaultOnPtxContaining("div.u32 ", CUDA_ERROR_ILLEGAL_INSTRUCTION);
  auto run = Run({SquareProgram(), DivisionProgram()});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->end, CudaModuleRun::kDeviceFault);
  EXPECT_THAT(run->what, HasSubstr("CUDA_ERROR_ILLEGAL_INSTRUCTION"));
}

TEST_F(ModuleOnFakeGpuTest, AKernelPastItsTimeoutIsATimeout) {
  driver_.HangOnPtxContaining("div.u32 ");
  auto run =
      Run({DivisionProgram()}, ProgramInputs::kRuntime, absl::Milliseconds(50));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->end, CudaModuleRun::kTimeout);
  EXPECT_THAT(run->what, HasSubstr("longer than the timeout of 50ms"));
}

#if defined(PTXDIFF_SIM_CUDA_PATH) && defined(PTXDIFF_WORKER_PATH)

constexpr const char* kPlants[] = {
    "PTXDIFF_SIM_CUDA_WRONG", "PTXDIFF_SIM_CUDA_TRAP", "PTXDIFF_SIM_CUDA_HANG",
    "PTXDIFF_SIM_CUDA_UNSUPPORTED"};

// The backend on the simulated driver library, in both ways it gives the
// loader its entry points (through cuGetProcAddress_v2, and exported by name
// without it); its workers inherit the bugs a test plants in the
// environment.
class CudaProgramBackendTest : public testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    for (const char* plant : kPlants) unsetenv(plant);
  }
  void TearDown() override {
    for (const char* plant : kPlants) unsetenv(plant);
  }
  // The presenter alone (what the harness describes a case with).
  ProgramGpu Gpu() const {
    return {.driver_library = GetParam(),
            .target = *TargetForDevice(90),
            .device_name = "ptxdiff simulated GPU (sm_90, device 0, 4 SMs)",
            .driver = "CUDA 13.0 driver at the simulated library"};
  }
  // The backend a user chooses: its worker runs the modules.
  std::optional<ProgramWorker> OnWorker(
      absl::Duration kernel_timeout = absl::Seconds(10)) const {
    absl::StatusOr<ProgramWorker> started =
        StartProgramWorker({.backend = "cuda",
                            .timeout = kernel_timeout,
                            .driver_library = GetParam()});
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return std::nullopt;
    EXPECT_EQ(started->arch, "sm_90");  // the simulated device's
    return *std::move(started);
  }
  std::vector<ProgramCheck> Check(
      std::span<const Program> programs, ProgramInputs form,
      absl::Duration kernel_timeout = absl::Seconds(10)) {
    std::optional<ProgramWorker> worker = OnWorker(kernel_timeout);
    if (!worker) return {};
    auto checks = worker->backend->Check(programs, form, Reading::kSpec,
                                         absl::InfiniteFuture());
    EXPECT_TRUE(checks.ok()) << checks.status();
    return checks.ok() ? *std::move(checks) : std::vector<ProgramCheck>{};
  }
};

TEST_P(CudaProgramBackendTest, RightProgramsAgreeInBothForms) {
  const std::vector<Program> programs = RandomPrograms(12, 7);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    const std::vector<ProgramCheck> checks = Check(programs, form);
    ASSERT_EQ(checks.size(), programs.size());
    int judged = 0;
    for (size_t k = 0; k < checks.size(); ++k) {
      // Only a program that exits (at every vector, the witness among
      // them) stores nothing to judge.
      EXPECT_TRUE(checks[k].judged ||
                  ThreadExits(EvaluateAtWitness(programs[k])))
          << checks[k].why_not;
      judged += checks[k].judged;
      EXPECT_FALSE(checks[k].mismatch.has_value())
          << FormatProgram(programs[k]);
      EXPECT_FALSE(checks[k].fault.has_value()) << checks[k].fault->what;
    }
    EXPECT_GE(judged, 10);
  }
}

TEST_P(CudaProgramBackendTest, APlantedWrongInstructionIsFound) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  const std::vector<Program> programs = {SaturatingProgram(), SquareProgram()};
  const std::vector<ProgramCheck> checks =
      Check(programs, ProgramInputs::kRuntime);
  ASSERT_EQ(checks.size(), 2u);
  ASSERT_TRUE(checks[0].mismatch.has_value());
  EXPECT_EQ(checks[0].mismatch->claimed, std::vector<uint64_t>{8});
  EXPECT_EQ(
      MakeCudaProgramBackend(Gpu())->Describe(programs[0], *checks[0].mismatch),
      "the GPU gives %s = 0x00000008 at %a = 0x7fffffff; the composed "
      "oracle gives %s = 0x00000007");
  EXPECT_TRUE(checks[1].judged);
  EXPECT_FALSE(checks[1].mismatch.has_value());
}

// Thread inputs on the GPU: the module runs on a block of 32 threads, a
// program reading %tid.x on each lane, judged lane by lane in both forms.
// A sum that saturates from lane 16 on agrees at its witness (lane 0) and
// on a right GPU; on one that wraps instead, the lanes find it. The
// programs without thread inputs beside it still run on one thread.
TEST_P(CudaProgramBackendTest, ThreadInputsAreJudgedOnEveryLane) {
  const Program lanes = ProgramOf(
      "input %t .b32 %tid.x 0\ninput %a .b32 0x7ffffff0\n"
      "add.sat.s32 %r, %a, %t;\noutput %r\n");
  const std::vector<Program> programs = {SquareProgram(), lanes,
                                         SquareProgram()};
  EXPECT_TRUE(MakeCudaProgramBackend(Gpu())->JudgesThreadInputs());
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    const std::vector<ProgramCheck> checks = Check(programs, form);
    ASSERT_EQ(checks.size(), 3u);
    for (const ProgramCheck& c : checks) {
      EXPECT_TRUE(c.judged) << c.why_not;
      EXPECT_FALSE(c.mismatch.has_value());
    }
  }
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    const std::vector<ProgramCheck> checks = Check(programs, form);
    ASSERT_EQ(checks.size(), 3u);
    ASSERT_TRUE(checks[1].mismatch.has_value());
    const uint32_t lane = LaneOf(lanes, checks[1].mismatch->inputs);
    EXPECT_GE(lane, 16u);
    EXPECT_EQ(checks[1].mismatch->claimed,
              std::vector<uint64_t>{0x7ffffff0u + lane});
    EXPECT_FALSE(checks[0].mismatch.has_value());
    EXPECT_FALSE(checks[2].mismatch.has_value());
  }
}

// The module faults the device, and the worker exits with its lost
// context; on fresh workers the batch is halved down to the one program
// whose kernel traps, filed as its crash, and the others are judged.
TEST_P(CudaProgramBackendTest, ADeviceFaultIsACrashOfTheProgramAlone) {
  setenv("PTXDIFF_SIM_CUDA_TRAP", "div.u32 ", 1);
  const std::vector<Program> programs = {SaturatingProgram(), DivisionProgram(),
                                         SquareProgram()};
  const std::vector<ProgramCheck> checks =
      Check(programs, ProgramInputs::kRuntime);
  ASSERT_EQ(checks.size(), 3u);
  ASSERT_TRUE(checks[1].fault.has_value());
  EXPECT_EQ(checks[1].fault->kind, CaseFault::kCrash);
  EXPECT_THAT(checks[1].fault->what,
              HasSubstr("cuda device fault: Failed to run the module's "
                        "kernel: cuStreamQuery(stream) returned "
                        "CUDA_ERROR_ILLEGAL_INSTRUCTION"));
  EXPECT_TRUE(checks[0].judged && !checks[0].mismatch) << checks[0].why_not;
  EXPECT_TRUE(checks[2].judged && !checks[2].mismatch) << checks[2].why_not;
}

TEST_P(CudaProgramBackendTest, AKernelPastItsTimeoutIsAHang) {
  setenv("PTXDIFF_SIM_CUDA_HANG", "div.u32 ", 1);
  const std::vector<Program> programs = {SquareProgram(), DivisionProgram()};
  const std::vector<ProgramCheck> checks =
      Check(programs, ProgramInputs::kImmediate, absl::Milliseconds(300));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_TRUE(checks[0].judged && !checks[0].mismatch);
  ASSERT_TRUE(checks[1].fault.has_value());
  EXPECT_EQ(checks[1].fault->kind, CaseFault::kHang);
  EXPECT_THAT(checks[1].fault->what,
              HasSubstr("cuda kernel timeout: the module's kernel ran longer "
                        "than the timeout of 300ms"));
}

// An entry point the driver library does not support fails every module
// alike: not a finding of any program but the harness's error, naming the
// entry point and the call it failed in.
TEST_P(CudaProgramBackendTest,
       AnUnsupportedEntryPointIsTheHarnessErrorNamingIt) {
  setenv("PTXDIFF_SIM_CUDA_UNSUPPORTED", "cuStreamQuery", 1);
  const std::vector<Program> programs = {SquareProgram(), SaturatingProgram()};
  std::optional<ProgramWorker> worker = OnWorker();
  ASSERT_TRUE(worker.has_value());
  auto checks = worker->backend->Check(programs, ProgramInputs::kRuntime,
                                       Reading::kSpec, absl::InfiniteFuture());
  ASSERT_FALSE(checks.ok());
  EXPECT_THAT(std::string(checks.status().message()),
              AllOf(HasSubstr(absl::StrCat(
                        "cuStreamQuery is not supported by the CUDA driver "
                        "library ")),
                    HasSubstr(": cuStreamQuery(stream) returned "
                              "CUDA_ERROR_NOT_SUPPORTED")));
}

// The replay flags and the reproducer name the driver library and the
// target, so a filed case runs again as it was found.
TEST_P(CudaProgramBackendTest, ReproducersSayHowToRunThem) {
  auto backend = MakeCudaProgramBackend(Gpu());
  EXPECT_EQ(backend->Name(), "cuda");
  EXPECT_THAT(backend->ReplayFlags(),
              HasSubstr(absl::StrCat("--backend cuda --cuda-driver '",
                                     GetParam(), "' --arch sm_90")));
  EXPECT_THAT(backend->ReproModule(SquareProgram(), ProgramInputs::kRuntime),
              HasSubstr("// Run: ptxdiff-worker --backend=cuda --run-module "
                        "repro.ptx input.bin out.bin 2 device=0"));
}

INSTANTIATE_TEST_SUITE_P(BothWays, CudaProgramBackendTest,
                         testing::Values(PTXDIFF_SIM_CUDA_PATH,
                                         PTXDIFF_SIM_CUDA_PLAIN_PATH),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(
                               info.param == std::string(PTXDIFF_SIM_CUDA_PATH)
                                   ? "ProcAddress"
                                   : "ExportedNames");
                         });

#endif  // PTXDIFF_SIM_CUDA_PATH && PTXDIFF_WORKER_PATH

}  // namespace
}  // namespace ptxdiff
