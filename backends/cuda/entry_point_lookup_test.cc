// How entry points are looked up in a driver library, and what the handshake
// and a refusal say about them, on libraries made of lookup functions (the
// real libraries, ptxdiff's simulated driver in its three builds, are
// testing/sim_cuda_driver_test.cc's).

#include "backends/cuda/entry_point_lookup.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "backends/cuda/driver_entry_points.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr EntryPointNames kMemAlloc = {"cuMemAlloc", "cuMemAlloc_v2"};
constexpr EntryPointNames kStreamQuery = {"cuStreamQuery", "cuStreamQuery"};

// A library as a set of exported names (each at an address of its own) and
// a cuGetProcAddress_v2 that gives some symbols; every lookup is recorded.
class FakeLibrary {
 public:
  FakeLibrary(std::set<std::string> exported, std::set<std::string> given)
      : exported_(std::move(exported)), given_(std::move(given)) {}

  SymbolLookup ProcAddress() {
    return [this](const char* symbol) -> void* {
      asked_.push_back(std::string("proc:") + symbol);
      return given_.contains(symbol) ? Address(std::string("proc:") + symbol)
                                     : nullptr;
    };
  }
  SymbolLookup Exported() {
    return [this](const char* name) -> void* {
      asked_.push_back(name);
      return exported_.contains(name) ? Address(name) : nullptr;
    };
  }
  void* Address(const std::string& key) { return &addresses_[key]; }
  const std::vector<std::string>& asked() const { return asked_; }

 private:
  std::set<std::string> exported_, given_;
  std::map<std::string, char> addresses_;
  std::vector<std::string> asked_;
};

TEST(CudaEntryPointLookupTest, ExportedNamesAreCudaHeadersAbiNames) {
  // cuda.h: #define cuMemAlloc cuMemAlloc_v2, and so on; cuStreamQuery has
  // kept its first ABI.
  EXPECT_STREQ(PTXDIFF_CUDA_EXPORTED_NAME(cuMemAlloc), "cuMemAlloc_v2");
  EXPECT_STREQ(PTXDIFF_CUDA_EXPORTED_NAME(cuDevicePrimaryCtxRelease),
               "cuDevicePrimaryCtxRelease_v2");
  EXPECT_STREQ(PTXDIFF_CUDA_EXPORTED_NAME(cuMemcpyHtoDAsync),
               "cuMemcpyHtoDAsync_v2");
  EXPECT_STREQ(PTXDIFF_CUDA_EXPORTED_NAME(cuStreamQuery), "cuStreamQuery");
  EXPECT_STREQ(PTXDIFF_CUDA_EXPORTED_NAME(cuLaunchKernel), "cuLaunchKernel");
  // Every row's symbol is its exported name, or that name with a suffix.
  int suffixed = 0;
#define PTXDIFF_COUNT_SUFFIXED(method, symbol, type, function)              \
  {                                                                         \
    const std::string exported = PTXDIFF_CUDA_EXPORTED_NAME(function);      \
    EXPECT_EQ(exported.rfind(symbol, 0), 0u) << exported;                   \
    if (exported != symbol) {                                               \
      ++suffixed;                                                           \
      EXPECT_THAT(exported, testing::MatchesRegex(".*_v[0-9]+")) << symbol; \
    }                                                                       \
  }
  PTXDIFF_CUDA_ENTRY_POINTS(PTXDIFF_COUNT_SUFFIXED)
#undef PTXDIFF_COUNT_SUFFIXED
  // As of CUDA 13.0's cuda.h: cuDevicePrimaryCtxRelease, cuLinkCreate,
  // cuLinkAddData, cuMemAlloc, cuMemFree, cuMemcpyHtoDAsync,
  // cuMemcpyDtoHAsync, cuStreamDestroy (_v2 each). A toolkit that suffixes
  // another changes what libraries without cuGetProcAddress must export
  // (README.md, "Another driver library").
  EXPECT_EQ(suffixed, 8);
}

TEST(CudaEntryPointLookupTest, CuGetProcAddressFirst) {
  FakeLibrary library({"cuMemAlloc_v2", "cuMemAlloc"}, {"cuMemAlloc"});
  const FoundEntryPoint found =
      FindEntryPoint(kMemAlloc, library.ProcAddress(), library.Exported());
  EXPECT_EQ(found.source, EntryPointSource::kProcAddress);
  EXPECT_EQ(found.address, library.Address("proc:cuMemAlloc"));
  EXPECT_EQ(library.asked(), std::vector<std::string>{"proc:cuMemAlloc"});
}

// Where cuGetProcAddress_v2 fails for an entry point, or there is none, the
// ABI-suffixed name comes before the bare one, which is the first ABI.
TEST(CudaEntryPointLookupTest, ThenTheSuffixedNameBeforeTheBareOne) {
  FakeLibrary library({"cuMemAlloc_v2", "cuMemAlloc"}, {});
  const FoundEntryPoint found =
      FindEntryPoint(kMemAlloc, library.ProcAddress(), library.Exported());
  EXPECT_EQ(found.source, EntryPointSource::kExportedName);
  EXPECT_EQ(found.address, library.Address("cuMemAlloc_v2"));
  EXPECT_EQ(library.asked(),
            (std::vector<std::string>{"proc:cuMemAlloc", "cuMemAlloc_v2"}));

  const FoundEntryPoint without =
      FindEntryPoint(kMemAlloc, SymbolLookup(), library.Exported());
  EXPECT_EQ(without.source, EntryPointSource::kExportedName);
  EXPECT_EQ(without.address, library.Address("cuMemAlloc_v2"));
}

TEST(CudaEntryPointLookupTest, TheBareNameOnlyWithoutTheSuffixedOne) {
  FakeLibrary library({"cuMemAlloc", "cuStreamQuery"}, {});
  const FoundEntryPoint found =
      FindEntryPoint(kMemAlloc, SymbolLookup(), library.Exported());
  EXPECT_EQ(found.source, EntryPointSource::kBareName);
  EXPECT_EQ(found.address, library.Address("cuMemAlloc"));
  // An entry point without a suffix is looked for once.
  const FoundEntryPoint query =
      FindEntryPoint(kStreamQuery, SymbolLookup(), library.Exported());
  EXPECT_EQ(query.source, EntryPointSource::kExportedName);
  EXPECT_EQ(library.asked(),
            (std::vector<std::string>{"cuMemAlloc_v2", "cuMemAlloc",
                                      "cuStreamQuery"}));
}

TEST(CudaEntryPointLookupTest, Missing) {
  FakeLibrary library({"cuStreamQuery"}, {"cuStreamQuery"});
  const FoundEntryPoint found =
      FindEntryPoint(kMemAlloc, library.ProcAddress(), library.Exported());
  EXPECT_EQ(found.source, EntryPointSource::kMissing);
  EXPECT_EQ(found.address, nullptr);
}

EntryPointReport ReportOf(
    const std::vector<std::pair<EntryPointNames, EntryPointSource>>& found) {
  EntryPointReport report;
  for (const auto& [names, source] : found) report.Add(names, source);
  return report;
}

constexpr EntryPointNames kLinkCreate = {"cuLinkCreate", "cuLinkCreate_v2"};
constexpr EntryPointNames kLaunch = {"cuLaunchKernel", "cuLaunchKernel"};

TEST(CudaEntryPointLookupTest, SummaryOneWay) {
  const EntryPointReport by_proc_address =
      ReportOf({{kMemAlloc, EntryPointSource::kProcAddress},
                {kStreamQuery, EntryPointSource::kProcAddress}});
  EXPECT_TRUE(by_proc_address.complete());
  EXPECT_EQ(by_proc_address.Summary(), "entry points: 2 by cuGetProcAddress");
  const EntryPointReport by_name =
      ReportOf({{kMemAlloc, EntryPointSource::kExportedName},
                {kStreamQuery, EntryPointSource::kExportedName}});
  EXPECT_EQ(by_name.Summary(), "entry points: 2 by exported name");
}

// Found more than one way, the exceptions are named; so is every entry
// point found without its ABI suffix, whose ABI is taken on trust.
TEST(CudaEntryPointLookupTest, SummaryNamesTheExceptions) {
  const EntryPointReport mixed =
      ReportOf({{kMemAlloc, EntryPointSource::kProcAddress},
                {kLaunch, EntryPointSource::kProcAddress},
                {kLinkCreate, EntryPointSource::kExportedName},
                {kStreamQuery, EntryPointSource::kExportedName}});
  EXPECT_EQ(mixed.Summary(),
            "entry points: 2 by cuGetProcAddress, 2 by exported name "
            "(cuLinkCreate_v2, cuStreamQuery)");
  const EntryPointReport bare =
      ReportOf({{kStreamQuery, EntryPointSource::kExportedName},
                {kMemAlloc, EntryPointSource::kBareName}});
  EXPECT_EQ(bare.Summary(),
            "entry points: 1 by exported name, 1 by its name without the ABI "
            "suffix (cuMemAlloc for cuMemAlloc_v2)");
}

TEST(CudaEntryPointLookupTest, MissingNamesEveryNameLookedFor) {
  const EntryPointReport report =
      ReportOf({{kMemAlloc, EntryPointSource::kExportedName},
                {kLinkCreate, EntryPointSource::kMissing},
                {kLaunch, EntryPointSource::kMissing}});
  EXPECT_FALSE(report.complete());
  EXPECT_EQ(report.missing_count(), 2);
  EXPECT_EQ(report.Missing(),
            "cuLinkCreate_v2 (or cuLinkCreate), "
            "cuLaunchKernel");
}

TEST(CudaEntryPointLookupTest, WhatTheLibrarySeems) {
  EXPECT_EQ(KindOfDriverLibrary(true, true), DriverLibraryKind::kNvidiaSince12);
  EXPECT_EQ(KindOfDriverLibrary(true, false),
            DriverLibraryKind::kNvidiaSince12);
  EXPECT_EQ(KindOfDriverLibrary(false, true), DriverLibraryKind::kNvidia11);
  EXPECT_EQ(KindOfDriverLibrary(false, false), DriverLibraryKind::kOther);
}

TEST(CudaEntryPointLookupTest, RefusalNamesTheMissingAndTheKind) {
  const EntryPointReport report =
      ReportOf({{kMemAlloc, EntryPointSource::kExportedName},
                {kLinkCreate, EntryPointSource::kMissing}});
  const absl::Status other = MissingEntryPointsError(
      "/opt/sim/libcuda.so", report, DriverLibraryKind::kOther);
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      std::string(other.message()),
      AllOf(HasSubstr("/opt/sim/libcuda.so lacks 1 of the 2 CUDA driver entry "
                      "points the cuda backend looks up: cuLinkCreate_v2 (or "
                      "cuLinkCreate); it seems to be another implementation "
                      "of the driver API than NVIDIA's driver (it exports no "
                      "cuGetProcAddress)"),
            Not(HasSubstr("install"))));
  EXPECT_THAT(
      std::string(MissingEntryPointsError("libcuda.so.1", report,
                                          DriverLibraryKind::kNvidiaSince12)
                      .message()),
      HasSubstr("; it seems to be NVIDIA's driver of CUDA 12.0 or "
                "later (it exports cuGetProcAddress_v2)"));
  EXPECT_THAT(
      std::string(MissingEntryPointsError("libcuda.so.1", report,
                                          DriverLibraryKind::kNvidia11)
                      .message()),
      HasSubstr("; it seems to be NVIDIA's driver of CUDA 11.3 to 11.8 (it "
                "exports cuGetProcAddress but not cuGetProcAddress_v2); "
                "install a driver of CUDA 12.0 or later"));
}

}  // namespace
}  // namespace ptxdiff
