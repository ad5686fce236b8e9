// The cuda backend end to end on the simulated driver library
// (libptxdiff_sim_cuda.so): the real loader, ptxdiff-worker, the client, the
// ptxdiff CLI and triage, as a user with their own driver library runs them.

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cuda/driver_api.h"
#include "client/worker_client.h"
#include "common/subprocess.h"
#include "fuzzers/differential_target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "protocol/frame_io.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) ? resolved : path;
}

// What the tests plant in the simulated driver, through the environment its
// workers inherit.
constexpr const char* kPlants[] = {
    "PTXDIFF_SIM_CUDA_WRONG", "PTXDIFF_SIM_CUDA_TRAP", "PTXDIFF_SIM_CUDA_HANG",
    "PTXDIFF_SIM_CUDA_UNSUPPORTED", "PTXDIFF_SIM_CUDA_NO_PROC_ADDRESS"};

// A scratch directory per test, removed when the test ends; compiled
// kernels go to one of them, not to the user's cache.
class SimCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("XDG_CACHE_HOME", FreshDir("cache").c_str(), 1);
    for (const char* plant : kPlants) unsetenv(plant);
  }
  void TearDown() override {
    for (const char* plant : kPlants) unsetenv(plant);
    for (const std::string& dir : dirs_) {
      std::system(("rm -rf '" + dir + "'").c_str());
    }
  }

  std::string FreshDir(const std::string& name) {
    const std::string dir =
        absl::StrCat(::testing::TempDir(), "/sim_cuda_", name, "_", getpid());
    std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
    dirs_.push_back(dir);
    return dir;
  }

 private:
  std::vector<std::string> dirs_;
};

// The simulated driver in both ways a library can give the loader its entry
// points (sim_cuda_driver.cc): through cuGetProcAddress_v2, as NVIDIA's
// driver does, and exported by name without it, as simulators and
// translators do. Every test of SimCudaLibraryTest runs on both.
struct SimLibrary {
  const char* name;  // the test name's suffix
  const char* path;
  const char* entry_points;  // what the handshake says of them
};
constexpr SimLibrary kProcAddressLibrary = {
    "ProcAddress", PTXDIFF_SIM_CUDA_PATH,
    "entry points: 26 by cuGetProcAddress"};
constexpr SimLibrary kPlainLibrary = {"ExportedNames",
                                      PTXDIFF_SIM_CUDA_PLAIN_PATH,
                                      "entry points: 26 by exported name"};

void PrintTo(const SimLibrary& library, std::ostream* os) {
  *os << library.path;
}

class SimCudaLibraryTest : public SimCudaTest,
                           public ::testing::WithParamInterface<SimLibrary> {
 protected:
  static std::string Sim() { return GetParam().path; }
};

INSTANTIATE_TEST_SUITE_P(BothWays, SimCudaLibraryTest,
                         ::testing::Values(kProcAddressLibrary, kPlainLibrary),
                         [](const ::testing::TestParamInfo<SimLibrary>& info) {
                           return std::string(info.param.name);
                         });

struct CliRun {
  int code = -1;
  std::string output;  // stdout and stderr
};

// Runs the ptxdiff binary with `args` (and the environment of this test).
CliRun Ptxdiff(const std::vector<std::string>& args) {
  std::string command = PTXDIFF_CLI_PATH;
  for (const std::string& a : args) absl::StrAppend(&command, " '", a, "'");
  absl::StrAppend(&command, " 2>&1");
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    run.output.append(buffer, n);
  const int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST_P(SimCudaLibraryTest, LoaderResolvesEveryEntryPointAndRecordsThePath) {
  auto driver = LoadCudaDriver(Sim());
  ASSERT_TRUE(driver.ok()) << driver.status();
  EXPECT_EQ((*driver)->Location(), RealPath(Sim()));
  EXPECT_EQ((*driver)->EntryPoints(), GetParam().entry_points);
  int version = 0;
  EXPECT_EQ((*driver)->DriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, 13000);
  EXPECT_EQ(CudaErrorName(**driver, CUDA_ERROR_NO_DEVICE),
            "CUDA_ERROR_NO_DEVICE");
}

TEST_F(SimCudaTest, MissingLibraryNamesThePathAndTheLoadersError) {
  auto driver = LoadCudaDriver("/nonexistent/libmydriver.so");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()),
              AllOf(HasSubstr("cannot load the CUDA driver library "
                              "/nonexistent/libmydriver.so ("),
                    HasSubstr("No such file or directory")));
}

TEST_P(SimCudaLibraryTest, BadConfigurationFailsCuInitWithTheReason) {
  // Neither a .sat variant nor a .cc one that reads CC.CF.
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.s32", 1);
  const CliRun run = Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver",
                              Sim(), "--family", "add", "--tuples", "1"});
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("cuInit(0) returned CUDA_ERROR_INVALID_VALUE "
                        "(PTXDIFF_SIM_CUDA_WRONG: 'add.s32' is neither a "
                        ".sat variant nor a .cc variant that reads CC.CF)"));
}

absl::StatusOr<WorkerCommand> CudaWorker(const std::string& library) {
  auto command = CommandForBackend("cuda", PTXDIFF_WORKER_PATH);
  if (command.ok())
    command->hello_options.emplace_back("driver_library", library);
  return command;
}

// The worker's handshake names the library it loaded, and how its entry
// points were found: every finding's backend identity
// (WorkerIdentity::Describe) carries them.
TEST_P(SimCudaLibraryTest, WorkerIdentityNamesTheDriverLibrary) {
  auto command = CudaWorker(Sim());
  ASSERT_TRUE(command.ok()) << command.status();
  auto client = WorkerClient::Start(*command);
  ASSERT_TRUE(client.ok()) << client.status();
  const WorkerIdentity& id = (*client)->identity();
  EXPECT_EQ(id.driver, absl::StrCat("CUDA 13.0 driver at ", RealPath(Sim()),
                                    " (", GetParam().entry_points, ")"));
  EXPECT_EQ(id.device, "ptxdiff simulated GPU (sm_90, device 0, 4 SMs)");
  EXPECT_THAT(id.Describe(), HasSubstr(RealPath(Sim())));
}

// A library that cannot be loaded: the worker exits 3 ("cannot start here")
// naming the path and dlerror(), and the client quotes it.
TEST_F(SimCudaTest, WorkerExitsThreeNamingAMissingLibrary) {
  auto command = CudaWorker("/nonexistent/libmydriver.so");
  ASSERT_TRUE(command.ok()) << command.status();
  auto client = WorkerClient::Start(*command);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(std::string(client.status().message()),
              AllOf(HasSubstr("exit status 3"),
                    HasSubstr("cannot load the CUDA driver library "
                              "/nonexistent/libmydriver.so"),
                    HasSubstr("No such file or directory"),
                    Not(HasSubstr("--backend=ptxas"))));
}

TEST_P(SimCudaLibraryTest, SweepAgreesEverywhere) {
  const CliRun run = Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver",
                              Sim(), "--family", "add", "--tuples", "16"});
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(
      run.output,
      AllOf(HasSubstr(absl::StrCat("driver at ", RealPath(Sim()))),
            HasSubstr("mismatched      0\n"), HasSubstr("faulty batches  0")));
  EXPECT_THAT(run.output, Not(HasSubstr("agreed          0\n")));
}

// The replay lines under sweep's "mismatches (first N ...)" heading (the
// decline reasons, if any, follow them).
std::vector<std::string> MismatchLines(const std::string& output) {
  std::istringstream lines(output);
  std::vector<std::string> out;
  bool listed = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("mismatches (first", 0) == 0) listed = true;
    if (line.rfind("declined, by reason:", 0) == 0) listed = false;
    if (listed && line.rfind("  ", 0) == 0) out.push_back(line);
  }
  return out;
}

TEST_P(SimCudaLibraryTest, SweepFindsTheWrongVariant) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  // Enough edge tuples that some saturate (16 per variant need not).
  const CliRun run = Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver",
                              Sim(), "--family", "add", "--tuples", "256"});
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_THAT(run.output, Not(HasSubstr("mismatched      0\n")));
  // Every mismatch is of the broken variant.
  const std::vector<std::string> mismatches = MismatchLines(run.output);
  for (const std::string& line : mismatches) {
    EXPECT_THAT(line, HasSubstr("add.sat.s32")) << line;
  }
  EXPECT_GT(mismatches.size(), 0u) << run.output;
}

// The 48 extended-precision variants through the simulated GPU, which runs
// each kernel's CC.CF setter and reader around the instruction: no
// mismatch, nothing declined.
TEST_P(SimCudaLibraryTest, SweepOfTheCarryFamiliesAgrees) {
  const CliRun run =
      Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver", Sim(), "--family",
               "add", "--family", "sub", "--family", "mad", "--family", "addc",
               "--family", "subc", "--family", "madc", "--tuples", "64"});
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("mismatched      0\n"),
                                HasSubstr("declined        0\n"),
                                Not(HasSubstr("agreed          0\n"))));
}

// A driver whose addc.cc.u32 writes no CC.CF (the flag keeps its carry in):
// found as mismatches of that variant's carry alone (its bits agree).
TEST_P(SimCudaLibraryTest, SweepFindsTheWrongCarry) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "addc.cc.u32", 1);
  const CliRun run =
      Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver", Sim(), "--family",
               "addc", "--family", "add", "--tuples", "256"});
  EXPECT_EQ(run.code, 1) << run.output;
  const std::vector<std::string> mismatches = MismatchLines(run.output);
  for (const std::string& line : mismatches) {
    // "... # oracle 0x00000000 cf=1, cuda 0x00000000 cf=0"
    EXPECT_THAT(line, HasSubstr("'addc.cc.u32'")) << line;
    const size_t oracle = line.find("# oracle ");
    ASSERT_NE(oracle, std::string::npos) << line;
    const std::string bits = line.substr(oracle + 9, 10);
    EXPECT_THAT(line,
                AnyOf(HasSubstr(absl::StrCat("cf=1, cuda ", bits, " cf=0")),
                      HasSubstr(absl::StrCat("cf=0, cuda ", bits, " cf=1"))))
        << line;
  }
  EXPECT_GT(mismatches.size(), 0u) << run.output;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// `minimize` files the finding; its meta.txt and case.txt name the driver.
TEST_P(SimCudaLibraryTest, MinimizedFindingRecordsTheDriver) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  const std::string dir = FreshDir("minimize");
  std::ofstream(dir + "/case.txt") << "# ptxdiff case 1\n"
                                      "variant: add.sat.s32\n"
                                      "operands: 0x7fffffff 0x00000001\n";
  const CliRun run =
      Ptxdiff({"minimize", dir + "/case.txt", "--backend", "cuda",
               "--cuda-driver", Sim(), "--dir", dir + "/triage"});
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("filed new entry"));
  auto store = TriageStore::Open(dir + "/triage", false);
  ASSERT_TRUE(store.ok()) << store.status();
  auto entries = store->List();
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  const std::string entry = dir + "/triage/" + (*entries)[0].name;
  EXPECT_THAT((*entries)[0].name, HasSubstr("add.sat.s32"));
  const std::string driver =
      absl::StrCat("CUDA 13.0 driver at ", RealPath(Sim()));
  EXPECT_THAT(ReadAll(entry + "/meta.txt"), HasSubstr(driver));
  EXPECT_THAT(ReadAll(entry + "/case.txt"), HasSubstr(driver));
}

// A campaign (what `ptxdiff fuzz --cuda-driver` runs in each fuzz process)
// files the finding with the driver, and its stats name it for the summary.
TEST_P(SimCudaLibraryTest, CampaignFilesFindingsWithTheDriver) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  const std::string dir = FreshDir("campaign");
  auto config = FuzzConfigFromPairs({{"PTXDIFF_BACKEND", "cuda"},
                                     {"PTXDIFF_CUDA_DRIVER", Sim()},
                                     {"PTXDIFF_WORKER", PTXDIFF_WORKER_PATH},
                                     {"PTXDIFF_TRIAGE_DIR", dir + "/triage"},
                                     {"PTXDIFF_STATS", dir},
                                     {"PTXDIFF_SYSTEMATIC", "0"},
                                     {"PTXDIFF_BATCH", "64"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->cuda_driver, Sim());
  auto target = DifferentialTarget::Create(*config);
  ASSERT_TRUE(target.ok()) << target.status();
  const std::string input =
      EncodeFuzzInput(*ParseVariant("add.sat.s32"), {{{0x7fffffff, 1, 0, 0}}});
  EXPECT_EQ((*target)->RunInput(reinterpret_cast<const uint8_t*>(input.data()),
                                input.size()),
            0);
  ASSERT_TRUE((*target)->Flush());
  EXPECT_EQ((*target)->stats().new_findings, 1);
  (*target)->WriteStats();
  EXPECT_THAT(ReadAll(absl::StrCat(dir, "/", getpid(), ".stats")),
              HasSubstr(absl::StrCat("driver at ", RealPath(Sim()))));
  (*target)->Stop();

  auto store = TriageStore::Open(dir + "/triage", false);
  ASSERT_TRUE(store.ok()) << store.status();
  auto entries = store->List();
  ASSERT_TRUE(entries.ok()) << entries.status();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_THAT((*entries)[0].meta["backend"],
              HasSubstr(absl::StrCat("driver at ", RealPath(Sim()))));
}

// Program cases on the cuda backend (program/program_cuda.h): `ptxdiff
// program` and `ptxdiff programs` run each module in a worker on the
// simulated driver.
std::string WriteProgram(const std::string& dir, const std::string& body) {
  const std::string path = dir + "/case.ptxprog";
  std::ofstream(path) << "# ptxdiff program 1\n" << body;
  return path;
}

constexpr char kSaturating[] =
    "input %a .b32 0x7fffffff\nadd.sat.s32 %r, %a, 1;\nshr.u32 %s, %r, 28;\n"
    "output %s\n";

TEST_P(SimCudaLibraryTest, ProgramAgreesOnTheSimulatedGpu) {
  const std::string file = WriteProgram(FreshDir("program"), kSaturating);
  const CliRun run =
      Ptxdiff({"program", file, "--backend", "cuda", "--cuda-driver", Sim()});
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("cuda, inputs immediate: agrees"),
                    HasSubstr("cuda, inputs runtime: agrees with the oracle at "
                              "the witness and at more input vectors"),
                    HasSubstr("verdict: agree")));
}

// An input loaded from memory in a program on lanes: each lane loads its
// own word, which holds the witness (the CI's program campaign filed
// "the GPU gives 0" at lane 1: every lane read the slot, lane 1 its upper
// half).
TEST_P(SimCudaLibraryTest, EveryLaneLoadsItsOwnWordOfALoadedInput) {
  const std::string file =
      WriteProgram(FreshDir("program"),
                   "input %a .b32 in[%tid.x] 0x7fffff\ninput %t .b32 %tid.x 1\n"
                   "add.u32 %r, %a, %t;\noutput %r\n");
  const CliRun run =
      Ptxdiff({"program", file, "--backend", "cuda", "--cuda-driver", Sim()});
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("cuda, inputs runtime: agrees with the oracle"),
                    HasSubstr("verdict: agree")));
}

TEST_P(SimCudaLibraryTest, ProgramFindsTheWrongInstructionOnTheSimulatedGpu) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  const std::string file = WriteProgram(FreshDir("program"), kSaturating);
  const CliRun run =
      Ptxdiff({"program", file, "--backend", "cuda", "--cuda-driver", Sim()});
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("cuda, inputs runtime: the GPU gives "
                                          "%s = 0x00000008 at %a = 0x7fffffff"),
                                HasSubstr("verdict: mismatch")));
}

// A filed program case replays with the flags its `# Replay:` line gives.
TEST_P(SimCudaLibraryTest, ProgramCaseReplaysOnTheSimulatedGpu) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  const std::string file = WriteProgram(FreshDir("program"), kSaturating);
  const CliRun run =
      Ptxdiff({"repro", file, "--backend", "cuda", "--cuda-driver", Sim()});
  EXPECT_EQ(run.code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("cuda, inputs runtime: the GPU gives"));
}

// A finding on the GPU is minimized and filed as a cuda entry, whose case
// says how to replay it.
TEST_P(SimCudaLibraryTest, ProgramFindingIsFiledAsACudaEntry) {
  setenv("PTXDIFF_SIM_CUDA_WRONG", "add.sat.s32", 1);
  const std::string dir = FreshDir("program");
  const std::string file = WriteProgram(dir, kSaturating);
  const CliRun run =
      Ptxdiff({"minimize", file, "--backend", "cuda", "--cuda-driver", Sim(),
               "--dir", dir + "/triage"});
  EXPECT_EQ(run.code, 0) << run.output;
  // Minimized to the one wrong instruction, it is filed as that tuple, the
  // entry the tuple campaign on the GPU files (issue 63: one case type).
  EXPECT_THAT(
      run.output,
      AllOf(HasSubstr("filed new entry"),
            HasSubstr("value-mismatch~cuda~"), HasSubstr("~add.sat.s32\n"),
            HasSubstr("variant: add.sat.s32"),
            HasSubstr("the GPU gives %r = 0x80000000")));
}

TEST_P(SimCudaLibraryTest, ProgramsCampaignRunsOnTheSimulatedGpu) {
  const std::string dir = FreshDir("programs");
  // Long enough for a loaded two-core machine to finish a module of
  // programs under ASan: with 4 s, beside two busy loops, none finished.
  const CliRun run = Ptxdiff({"programs", "--backend", "cuda", "--cuda-driver",
                              Sim(), "--max-time", "12", "--threads", "2",
                              "--dir", dir + "/triage", "--out", dir + "/out"});
  EXPECT_EQ(run.code, 0) << run.output;
  // A program that exits on every input vector stores nothing to judge:
  // the GPU runs it, and a few percent are not judged.
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("programs: cuda sm_90, 2 threads"),
                    testing::ContainsRegex(
                        "the GPU ran (8[0-9]|9[0-9]|100)% with the inputs as "
                        "immediates and (8[0-9]|9[0-9]|100)% with runtime"),
                    HasSubstr("programs: found 0 disagreements")));
}

// A library that lacks entry points is refused naming them all, and what it
// seems to be: here one without cuGetProcAddress (not NVIDIA's driver).
TEST_F(SimCudaTest, ALibraryLackingEntryPointsIsRefusedNamingThem) {
  constexpr char kPartial[] = PTXDIFF_SIM_CUDA_PARTIAL_PATH;
  const std::string refusal = absl::StrCat(
      kPartial,
      " lacks 2 of the 26 CUDA driver entry points the cuda backend looks up: "
      "cuLinkCreate_v2 (or cuLinkCreate), cuLaunchKernel; it seems to be "
      "another implementation of the driver API than NVIDIA's driver (it "
      "exports no cuGetProcAddress)");
  auto driver = LoadCudaDriver(kPartial);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(driver.status().message()), HasSubstr(refusal));

  const CliRun run = Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver",
                              kPartial, "--family", "add", "--tuples", "1"});
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr(absl::StrCat("the cuda backend cannot run here: ",
                                           refusal)),
                    Not(HasSubstr("--backend=ptxas"))));
}

// A library with cuGetProcAddress_v2 that does not give an entry point, nor
// exports it: refused naming it, as what looks like NVIDIA's driver.
TEST_F(SimCudaTest, ALibraryWhoseCuGetProcAddressLacksOneIsRefusedNamingIt) {
  setenv("PTXDIFF_SIM_CUDA_NO_PROC_ADDRESS", "cuStreamQuery,cuMemAlloc", 1);
  auto command = CudaWorker(PTXDIFF_SIM_CUDA_PATH);
  ASSERT_TRUE(command.ok()) << command.status();
  auto client = WorkerClient::Start(*command);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(
      std::string(client.status().message()),
      AllOf(HasSubstr("exit status 3"),
            HasSubstr(absl::StrCat(
                PTXDIFF_SIM_CUDA_PATH,
                " lacks 2 of the 26 CUDA driver entry points the cuda backend "
                "looks up: cuMemAlloc_v2 (or cuMemAlloc), cuStreamQuery; it "
                "seems to be NVIDIA's driver of CUDA 12.0 or later (it exports "
                "cuGetProcAddress_v2)"))));
}

// An entry point that answers CUDA_ERROR_NOT_SUPPORTED in every batch (a
// partial implementation): every tuple declined with one reason naming it
// and the call it failed in, counted once; no faulty batch, no restart.
TEST_P(SimCudaLibraryTest, AnUnsupportedEntryPointIsNamedOnce) {
  setenv("PTXDIFF_SIM_CUDA_UNSUPPORTED", "cuStreamQuery", 1);
  const CliRun run =
      Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver", Sim(), "--family",
               "add", "--tuples", "16", "--batch", "64"});
  EXPECT_EQ(run.code, 1) << run.output;  // nothing was tested
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("agreed          0\n"),
                    HasSubstr("faulty batches  0  (worker restarts: 0)"),
                    HasSubstr("declined, by reason:\n")));
  const std::string reason = absl::StrCat(
      "not run: cuStreamQuery is not supported by the CUDA driver library ",
      RealPath(Sim()), ": Failed to ");
  std::istringstream lines(run.output);
  int reason_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(reason) == std::string::npos) continue;
    ++reason_lines;
    EXPECT_THAT(line, AllOf(HasSubstr(": cuStreamQuery("),
                            HasSubstr("returned CUDA_ERROR_NOT_SUPPORTED "
                                      "(backends/cuda/")))
        << line;
  }
  // In the list of reasons once; in the "nothing tested" line, the most
  // common reason, once more.
  EXPECT_EQ(reason_lines, 2) << run.output;
  EXPECT_THAT(run.output, Not(HasSubstr("fault:")));
}

// One called at start-up: the backend cannot run here, and says which.
TEST_P(SimCudaLibraryTest, AnUnsupportedEntryPointAtStartupIsNamed) {
  setenv("PTXDIFF_SIM_CUDA_UNSUPPORTED", "cuMemHostAlloc", 1);
  const CliRun run = Ptxdiff({"sweep", "--backend", "cuda", "--cuda-driver",
                              Sim(), "--family", "add", "--tuples", "1"});
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr(absl::StrCat(
                  "the cuda backend cannot run here: cuMemHostAlloc is not "
                  "supported by the CUDA driver library ",
                  RealPath(Sim()), ": Failed to ")));
}

// A worker on libptxdiff_sim_cuda_noisy.so, which prints on stdout when it
// is loaded and in every call, as GPGPU-Sim's libcudart does: the
// handshake and a batch go through, and the text is in the worker's log.
TEST_F(SimCudaTest, ADriverPrintingOnStdoutCannotCorruptTheChannel) {
  auto command = CudaWorker(PTXDIFF_SIM_CUDA_NOISY_PATH);
  ASSERT_TRUE(command.ok()) << command.status();
  int in[2], out[2];
  ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
  const std::string log = FreshDir("noisy") + "/stderr.txt";
  const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(err, 0);
  auto pid = StartProcess(
      command->argv,
      {.stdin_fd = in[0], .stdout_fd = out[1], .stderr_fd = err}, "worker");
  ASSERT_TRUE(pid.ok()) << pid.status();
  for (int fd : {in[0], out[1], err}) close(fd);

  const std::vector<WireTuple> tuples = {{.operands = {{1, 2, 0, 0}}}};
  for (const auto& [type, payload] :
       {std::pair(MessageType::kHello,
                  EncodeKeyValues(command->hello_options)),
        std::pair(MessageType::kRun, EncodeRunRequest(RunRequest{
                                         {"add.s32"}, tuples})),
        std::pair(MessageType::kBye, std::string())}) {
    ASSERT_TRUE(WriteFrame(in[1], type, payload).ok());
  }
  close(in[1]);
  absl::StatusOr<Frame> hello = ReadFrame(out[0]);
  ASSERT_TRUE(hello.ok()) << hello.status() << "\n" << ReadAll(log);
  EXPECT_EQ(hello->type, MessageType::kHelloReply) << hello->payload;
  absl::StatusOr<Frame> results = ReadFrame(out[0]);
  ASSERT_TRUE(results.ok()) << results.status() << "\n" << ReadAll(log);
  ASSERT_EQ(results->type, MessageType::kResults) << results->payload;
  auto reply = DecodeRunReply(results->payload, 1);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->results[0].kind, ResultKind::kValue);
  EXPECT_EQ(reply->results[0].bits, 3u);
  int status = 0;
  ASSERT_EQ(waitpid(*pid, &status, 0), *pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(out[0]);
  EXPECT_THAT(ReadAll(log),
              AllOf(HasSubstr("WARNING: the ptxdiff simulated driver prints "
                              "on stdout\n"),
                    HasSubstr("ptxdiff simulated driver: a call\n")));
}

// The same library behind the CLI, as the user ran it.
TEST_F(SimCudaTest, EvalRunsOnADriverPrintingOnStdout) {
  const CliRun run = Ptxdiff({"eval", "add.s32", "1", "2", "--backend", "cuda",
                              "--cuda-driver", PTXDIFF_SIM_CUDA_NOISY_PATH});
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("backend: 0x00000003"),
                                HasSubstr("verdict: agree")));
}

// Without a GPU, --backend cuda says why in one line, and what to use.
TEST_F(SimCudaTest, ProgramOnCudaWithoutAGpuSaysWhyInOneLine) {
  if (LoadCudaDriver().ok()) GTEST_SKIP() << "this machine has a CUDA driver";
  const std::string file = WriteProgram(FreshDir("program"), kSaturating);
  for (const char* command : {"program", "programs"}) {
    std::vector<std::string> args = {command, "--backend", "cuda"};
    if (std::string(command) == "program") args.push_back(file);
    const CliRun run = Ptxdiff(args);
    EXPECT_EQ(run.code, 2) << run.output;
    EXPECT_THAT(
        run.output,
        AllOf(HasSubstr(absl::StrCat("ptxdiff ", command, ": ")),
              HasSubstr("the cuda backend cannot run here"),
              HasSubstr("libcuda.so.1"), HasSubstr("try --backend=ptxas")));
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1)
        << run.output;
  }
}

}  // namespace
}  // namespace ptxdiff
