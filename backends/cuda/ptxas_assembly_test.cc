// The generated kernels assemble with ptxas, for every variant and every arch
// it supports among sm_75, sm_80, sm_90 and sm_100: what the driver's JIT will
// be given on a GPU, checked without one. The carry variants' kernels (CC.CF
// set and read around the instruction) are also checked in every writer,
// the ptxas backend's modules included.
//
// Assembling every variant for each of 4 archs as a kernel of its own would
// be hundreds of thousands of kernels: far too slow for CI. The generator
// builds every kernel from parts (kernel_gen.h): a header, a kernel frame,
// and a per-variant body that holds everything variant-specific (its loads,
// the instruction, the store).
// So the tests assemble
//   - EveryRegisterBody / EveryImmediateBody: every variant's exact body, many
//     bodies inside one production frame with the production declarations
//     (bodies are grouped by declarations, so every register a body uses is
//     declared exactly as in its own kernel), under the production `.version`
//     and `.target` (modules are grouped by those too);
//   - WholeModules: complete production modules, one ptxas run each, for every
//     non-video variant and a spread of video variants (which all share one
//     frame), in both modes.
// PTXDIFF_PTXAS_EXHAUSTIVE=1 additionally assembles every variant's complete
// register-mode kernel (production kernels renamed into shared modules).
// ptxas errors are mapped back to the variant whose line failed.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptxas/ptx_module.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

constexpr int kArchs[] = {75, 80, 90, 100};
// CUDA 13's ptxas accepts PTX ISA up to 9.0.
constexpr int kToolkitMaxPtx = 90;
// Bodies per check kernel: big enough to amortize the per-kernel cost, small
// enough that ptxas's time stays linear.
constexpr int kBodiesPerKernel = 2000;

std::string FindPtxas() {
  const char* from_env = std::getenv("PTXAS");
  for (const char* candidate : {from_env, "/usr/local/cuda/bin/ptxas"}) {
    if (candidate != nullptr && access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

// A PTX module to assemble, and which variant each of its lines belongs to.
struct CheckModule {
  int arch = 0;
  std::string what;  // for messages
  std::string text;
  std::map<int, std::string> owner;  // first line of a body -> its spelling
  int lines = 0;                     // newlines in `text`

  void Add(absl::string_view part) {
    lines += static_cast<int>(std::count(part.begin(), part.end(), '\n'));
    absl::StrAppend(&text, part);
  }
  void AddOwned(absl::string_view part, const std::string& spelling) {
    owner[lines + 1] = spelling;
    Add(part);
  }
  std::string OwnerOf(int line) const {
    auto it = owner.upper_bound(line);
    return it == owner.begin() ? "(frame)" : std::prev(it)->second;
  }
};

// Runs ptxas on `module`; the empty string if it assembled, else its errors
// with the variants they belong to.
std::string Assemble(const std::string& ptxas, const CheckModule& module,
                     const std::string& dir, int index) {
  const std::string base = absl::StrCat(dir, "/m", index);
  std::ofstream(base + ".ptx") << module.text;
  const std::string arch = absl::StrCat("-arch=sm_", module.arch);
  const std::string ptx = base + ".ptx", out = base + ".cubin";
  const std::string log = base + ".log";
  auto outcome =
      RunProcess({ptxas, arch, "-o", out, ptx}, {.output_path = log});
  if (!outcome.ok()) return std::string(outcome.status().message());
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  if (std::getenv("PTXDIFF_PTXAS_KEEP") == nullptr) {
    std::filesystem::remove(ptx);
    std::filesystem::remove(out);
    std::filesystem::remove(log);
  }
  if (outcome->ok()) return "";
  // "ptxas m3.ptx, line 812; error   : ..." -> the variant of line 812.
  std::string report = absl::StrCat(module.what, " (sm_", module.arch, "):\n");
  for (absl::string_view line : absl::StrSplit(text.str(), '\n')) {
    int number = 0;
    const size_t at = line.find(", line ");
    if (at != absl::string_view::npos) {
      absl::string_view rest = line.substr(at + 7);
      (void)absl::SimpleAtoi(rest.substr(0, rest.find(';')), &number);
    }
    if (line.empty()) continue;
    absl::StrAppend(
        &report, "  ", line,
        number > 0 ? absl::StrCat("  <- ", module.OwnerOf(number)) : "", "\n");
  }
  return report;
}

// Assembles every module on all cores; the failures' reports.
std::vector<std::string> AssembleAll(const std::vector<CheckModule>& modules) {
  const std::string ptxas = FindPtxas();
  // PTXDIFF_PTXAS_KEEP=DIR keeps the modules and logs there.
  const char* keep = std::getenv("PTXDIFF_PTXAS_KEEP");
  const std::string dir =
      keep != nullptr
          ? std::string(keep)
          : absl::StrCat(testing::TempDir(), "/ptxas_assembly_", getpid());
  std::filesystem::create_directories(dir);
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto worker = [&] {
    for (size_t i = next++; i < modules.size(); i = next++) {
      std::string report = Assemble(ptxas, modules[i], dir, i);
      if (report.empty()) continue;
      std::lock_guard<std::mutex> lock(mu);
      failures.push_back(std::move(report));
    }
  };
  std::vector<std::thread> threads;
  const unsigned int jobs = std::max(2u, std::thread::hardware_concurrency());
  for (unsigned int i = 0; i < jobs; ++i) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (keep == nullptr) std::filesystem::remove_all(dir);
  return failures;
}

void ExpectAllAssemble(const std::vector<CheckModule>& modules) {
  std::vector<std::string> failures = AssembleAll(modules);
  for (size_t i = 0; i < failures.size() && i < 10; ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_EQ(failures.size(), 0u) << "of " << modules.size() << " modules";
}

bool RunsOn(const Variant& v, int arch) {
  return !WhyUnsupported(v, arch, kToolkitMaxPtx).has_value();
}

// Tuples for immediate mode: each edge value of each source's width in each
// position, so every range ptxas might check is reached.
std::vector<Operands> EdgeTuples(const Variant& v) {
  size_t count = 1;
  for (int i = 0; i < NumSources(v); ++i) {
    count = std::max(count, EdgeValues(SourceWidth(v, i)).size());
  }
  std::vector<Operands> tuples(count);
  for (size_t k = 0; k < count; ++k) {
    for (int i = 0; i < NumSources(v); ++i) {
      const std::vector<uint64_t>& edges = EdgeValues(SourceWidth(v, i));
      tuples[k].v[i] = edges[(k + 37 * i) % edges.size()];
    }
  }
  return tuples;
}

// One tuple for a video variant, different from variant to variant: their
// operands are always moved into registers, so one per variant reaches the
// instruction; the edge values rotate across the family.
std::vector<Operands> OneTuple(const Variant& v, size_t seed) {
  Operands tuple;
  for (int i = 0; i < NumSources(v); ++i) {
    const std::vector<uint64_t>& edges = EdgeValues(SourceWidth(v, i));
    tuple.v[i] = edges[(seed * 7 + i * 13) % edges.size()];
  }
  return {tuple};
}

// Builds check modules: for each (family, arch, .version, declarations),
// modules of one kernel of up to kBodiesPerKernel bodies.
class ModuleBuilder {
 public:
  using BodiesFn = std::function<std::vector<std::string>(const Variant&)>;
  using KernelFn = std::function<std::string(
      absl::string_view, absl::string_view, absl::string_view)>;

  ModuleBuilder(std::string mode, BodiesFn bodies, KernelFn kernel)
      : mode_(std::move(mode)), bodies_(bodies), kernel_(kernel) {}

  void AddFamily(Family family, int arch,
                 const std::function<bool(const Variant&)>& include) {
    const PtxTarget target = *TargetForDevice(arch);
    // (.version, declarations) -> variants
    std::map<std::pair<int, std::string>, std::vector<Variant>> groups;
    ForEachVariant(family, [&](const Variant& v) {
      if (!RunsOn(v, arch) || !include(v)) return;
      groups[{PtxVersionFor(v, target), OperandDeclarations(v)}].push_back(v);
    });
    for (const auto& [key, variants] : groups) {
      const std::string header = ModuleHeader(variants.front(), target);
      const std::string what =
          absl::StrCat(mode_, " bodies of ", InfoOf(family).opcode,
                       " at PTX ISA ", key.first);
      AddKernels(arch, header, what, key.second, variants);
    }
  }

  std::vector<CheckModule> Take() { return std::move(modules_); }

 private:
  // Kernels holding every distinct line of the variants' bodies. A body's
  // loads and stores are the same for all variants of one declaration
  // block, so after the first body mostly the instruction is new; ptxas
  // checks each statement on its own, against the declarations, so each
  // distinct line needs assembling once, in its production frame.
  // One module per kernel, so that the two ptxas processes stay balanced.
  void AddKernels(int arch, const std::string& header, const std::string& what,
                  const std::string& declarations,
                  const std::vector<Variant>& variants) {
    std::vector<std::pair<std::string, std::string>> owned;  // lines, spelling
    absl::flat_hash_set<std::string> seen;
    int count = 0;
    auto flush = [&] {
      if (count == 0) return;
      const std::string kernel =
          kernel_(absl::StrCat("check_", kernels_++), declarations, "@BODIES@");
      const size_t at = kernel.find("@BODIES@");
      CheckModule module{.arch = arch, .what = what};
      module.Add(header);
      module.Add(kernel.substr(0, at));
      for (const auto& [lines, spelling] : owned)
        module.AddOwned(lines, spelling);
      module.Add(kernel.substr(at + 8));
      modules_.push_back(std::move(module));
      owned.clear();
      seen.clear();
      count = 0;
    };
    for (const Variant& v : variants) {
      const std::string spelling = Spell(v);
      for (const std::string& body : bodies_(v)) {
        std::string lines;
        for (absl::string_view line : absl::StrSplit(body, '\n')) {
          if (!line.empty() && seen.insert(std::string(line)).second) {
            absl::StrAppend(&lines, line, "\n");
          }
        }
        owned.push_back({std::move(lines), spelling});
        if (++count == kBodiesPerKernel) flush();
      }
    }
    flush();
  }

  std::string mode_;
  BodiesFn bodies_;
  KernelFn kernel_;
  std::vector<CheckModule> modules_;
  int kernels_ = 0;
};

class PtxasAssemblyTest : public testing::Test {
 protected:
  void SetUp() override {
    if (FindPtxas().empty()) {
      GTEST_SKIP() << "no ptxas: set PTXAS or install the CUDA toolkit";
    }
  }
};

bool Any(const Variant&) { return true; }

TEST_F(PtxasAssemblyTest, EveryRegisterBody) {
  ModuleBuilder builder(
      "register",
      [](const Variant& v) {
        return std::vector<std::string>{RegisterBody(v)};
      },
      RegisterKernel);
  for (const FamilyInfo& family : AllFamilies()) {
    for (int arch : kArchs) builder.AddFamily(family.family, arch, Any);
  }
  const std::vector<CheckModule> modules = builder.Take();
  // Issue 67: a builder that grouped nothing away would pass unchecked.
  ASSERT_GT(modules.size(), 700u);
  ExpectAllAssemble(modules);
}

TEST_F(PtxasAssemblyTest, EveryImmediateBody) {
  // Video operands are never immediates, so their immediate bodies differ
  // from the register bodies (checked on every arch above) only in the
  // `mov`s: one arch and one tuple per variant reach them all. The SIMD
  // video selectors are immediates, spelled as a/b suffixes: one tuple per
  // variant, the selectors rotating across the family, on every arch. The
  // other families, where immediates and their ranges matter, get every
  // edge value on every arch.
  size_t seed = 0;
  ModuleBuilder builder(
      "immediate",
      [&seed](const Variant& v) {
        std::vector<std::string> bodies;
        const bool one = IsVideo(v.family) || IsSimdVideo(v.family);
        const std::vector<Operands> tuples =
            one ? OneTuple(v, seed++) : EdgeTuples(v);
        for (size_t j = 0; j < tuples.size(); ++j) {
          bodies.push_back(ImmediateBody(v, tuples[j], j % kBodiesPerKernel));
        }
        return bodies;
      },
      ImmediateKernel);
  for (const FamilyInfo& family : AllFamilies()) {
    for (int arch : kArchs) {
      if (IsVideo(family.family) && arch != kArchs[0]) continue;
      builder.AddFamily(family.family, arch, Any);
    }
  }
  const std::vector<CheckModule> modules = builder.Take();
  ASSERT_GT(modules.size(), 750u);
  ExpectAllAssemble(modules);
}

// Families this large differ variant to variant only in their bodies (a
// comparison, its types, a boolean op: set, setp), which every variant's
// body test assembles; their whole modules are sampled.
constexpr size_t kSampledFamilySize = 200;

// A deterministic spread: every variant of the other families, every 8th
// of a family of more than kSampledFamilySize, every 1000th video one (the
// video variants share one frame per operand count) and every 100th SIMD
// video one (two frames: the 2-lane dispatch, the 4-lane gather).
std::vector<Variant> WholeModuleSample() {
  std::vector<Variant> sample;
  size_t video = 0, simd = 0, large = 0;
  for (const Variant& v : AllVariants()) {
    if (IsVideo(v.family)) {
      if (video++ % 1000 == 0) sample.push_back(v);
    } else if (IsSimdVideo(v.family)) {
      if (simd++ % 100 == 0) sample.push_back(v);
    } else if (VariantsOf(v.family).size() > kSampledFamilySize) {
      if (large++ % 8 == 0) sample.push_back(v);
    } else {
      sample.push_back(v);
    }
  }
  return sample;
}

TEST_F(PtxasAssemblyTest, WholeModules) {
  std::vector<CheckModule> modules;
  for (const Variant& v : WholeModuleSample()) {
    for (int arch : kArchs) {
      if (!RunsOn(v, arch)) continue;
      const PtxTarget target = *TargetForDevice(arch);
      // Two immediate-mode kernels' worth: every edge value is covered by
      // EveryImmediateBody already.
      std::vector<Operands> tuples = EdgeTuples(v);
      tuples.resize(std::min<size_t>(tuples.size(), 40));
      for (const auto& [mode, text] :
           {std::pair<std::string, std::string>{"register",
                                                RegisterModule(v, target)},
            {"immediate", ImmediateModule(v, target, tuples, 32)}}) {
        CheckModule module{.arch = arch,
                           .what = absl::StrCat(mode, " module of ", Spell(v))};
        module.AddOwned(text, Spell(v));
        modules.push_back(std::move(module));
      }
    }
  }
  ASSERT_GT(modules.size(), 1500u);
  ExpectAllAssemble(modules);
}

// Kernel ABI 2's batch modules (what ptx-cmd hands a tool), as ptxas reads
// them: many variants' segments in one entry, on every arch. Each module
// mixes plain, carry and video variants (WholeModuleSample's spread, with
// a few 2-lane SIMD ones: their dispatch makes a long function, slow to
// assemble, and each body is assembled on its own above).
TEST_F(PtxasAssemblyTest, BatchModules) {
  std::vector<CheckModule> modules;
  std::mt19937_64 rng(9);
  for (int arch : kArchs) {
    const PtxTarget target = *TargetForDevice(arch);
    std::vector<BatchSegment> segments;
    int dispatching = 0;
    auto flush = [&] {
      if (segments.empty()) return;
      CheckModule module{
          .arch = arch,
          .what = absl::StrCat("batch module of ", segments.size(),
                               " variants from ", Spell(segments[0].variant))};
      module.AddOwned(BatchModule(segments, target),
                      Spell(segments[0].variant));
      modules.push_back(std::move(module));
      segments.clear();
    };
    for (const Variant& v : WholeModuleSample()) {
      if (!RunsOn(v, arch)) continue;
      segments.push_back({v, static_cast<uint32_t>(segments.size() * 3), 3});
      // A few loops dispatch over every value; the others over the values
      // of three tuples, as the ptx-cmd backend builds them.
      if (DispatchSource(v) >= 0 && ++dispatching > 3) {
        std::vector<Operands> ops(3);
        FillEdgeTuples(v, rng, ops);
        segments.back().dispatch_values = DispatchValuesOf(v, ops);
      }
      if (segments.size() == 100) flush();
    }
    flush();
  }
  ASSERT_GT(modules.size(), 4u);
  ExpectAllAssemble(modules);
}

// Batch modules whose segments run their tuples as written (operand forms:
// runtime sources loaded, the others immediates), on every arch: each
// variant's edge tuples, the form rotating through all-immediate, each
// source that may be a runtime value alone, and all of them.
TEST_F(PtxasAssemblyTest, BatchModulesWithWrittenTuples) {
  std::vector<CheckModule> modules;
  for (int arch : kArchs) {
    const PtxTarget target = *TargetForDevice(arch);
    std::vector<BatchSegment> segments;
    uint32_t first = 0;
    auto flush = [&] {
      if (segments.empty()) return;
      CheckModule module{.arch = arch,
                         .what = absl::StrCat("written batch module from ",
                                              Spell(segments[0].variant))};
      module.AddOwned(BatchModule(segments, target),
                      Spell(segments[0].variant));
      modules.push_back(std::move(module));
      segments.clear();
      first = 0;
    };
    for (const Variant& v : WholeModuleSample()) {
      if (!RunsOn(v, arch)) continue;
      const uint8_t capable = RuntimeCapableSources(v);
      std::vector<uint8_t> forms = {0, capable};
      for (int i = 0; i < NumSources(v); ++i) {
        if ((capable >> i) & 1) forms.push_back(uint8_t(1 << i));
      }
      BatchSegment segment{.variant = v, .first = first};
      std::vector<Operands> tuples = EdgeTuples(v);
      tuples.resize(std::min<size_t>(tuples.size(), 12));
      for (size_t j = 0; j < tuples.size(); ++j) {
        segment.written.push_back({v, tuples[j], forms[j % forms.size()]});
      }
      segment.count = segment.written.size();
      first += segment.count;
      segments.push_back(std::move(segment));
      if (segments.size() == 60) flush();
    }
    flush();
  }
  ASSERT_GT(modules.size(), 4u);
  ExpectAllAssemble(modules);
}

// The 48 extended-precision variants in every writer of kernels that set
// and read CC.CF: the cuda backend's register and immediate modules (which
// ptx-cmd runs too) and the ptxas backend's modules, every edge value of
// every source (cf 0 and 1), on every arch.
TEST_F(PtxasAssemblyTest, EveryCarryVariantInEveryKernelWriter) {
  std::vector<CheckModule> modules;
  int carries = 0;
  for (const Variant& v : AllVariants()) {
    if (!HasCarryOut(v) && !HasCarryIn(v)) continue;
    ++carries;
    const std::vector<Operands> tuples = EdgeTuples(v);
    std::vector<PtxTuple> ptxas_tuples;
    for (const Operands& o : tuples) ptxas_tuples.push_back({v, o});
    for (int arch : kArchs) {
      ASSERT_TRUE(RunsOn(v, arch)) << Spell(v) << " on sm_" << arch;
      const PtxTarget target = *TargetForDevice(arch);
      const std::string sm = absl::StrCat("sm_", arch);
      for (const auto& [what, text] :
           {std::pair<std::string, std::string>{"register module",
                                                RegisterModule(v, target)},
            {"immediate module", ImmediateModule(v, target, tuples, 32)},
            {"ptxas backend module",
             BuildPtxModule(ptxas_tuples,
                            {.target = sm, .ptx_version = kToolkitMaxPtx})
                 .text}}) {
        CheckModule module{.arch = arch,
                           .what = absl::StrCat(what, " of ", Spell(v))};
        module.AddOwned(text, Spell(v));
        modules.push_back(std::move(module));
      }
    }
  }
  EXPECT_EQ(carries, 48);
  ExpectAllAssemble(modules);
}

TEST_F(PtxasAssemblyTest, ExhaustiveRegisterKernels) {
  if (std::getenv("PTXDIFF_PTXAS_EXHAUSTIVE") == nullptr) {
    GTEST_SKIP() << "set PTXDIFF_PTXAS_EXHAUSTIVE=1 (~14 minutes of ptxas "
                    "CPU time; 7 on 2 idle cores)";
  }
  // Each variant's production kernel, entry renamed, 500 to a module.
  std::vector<CheckModule> modules;
  for (int arch : kArchs) {
    const PtxTarget target = *TargetForDevice(arch);
    std::map<std::pair<Family, int>, std::vector<Variant>> groups;
    for (const Variant& v : AllVariants()) {
      if (RunsOn(v, arch)) {
        groups[{v.family, PtxVersionFor(v, target)}].push_back(v);
      }
    }
    for (const auto& [key, variants] : groups) {
      for (size_t first = 0; first < variants.size(); first += 500) {
        CheckModule module{.arch = arch,
                           .what = absl::StrCat("register kernels of ",
                                                InfoOf(key.first).opcode)};
        module.Add(ModuleHeader(variants[first], target));
        for (size_t i = first; i < variants.size() && i < first + 500; ++i) {
          const Variant& v = variants[i];
          module.AddOwned(
              RegisterKernel(absl::StrCat("k", i), OperandDeclarations(v),
                             RegisterBody(v)),
              Spell(v));
        }
        modules.push_back(std::move(module));
      }
    }
  }
  ExpectAllAssemble(modules);
}

}  // namespace
}  // namespace ptxdiff
