#include "backends/ptxas/sass_calibration.h"

#include <sys/stat.h>

#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

// Seventh fault run of issue 65: `calibrate --max-time 10` with a ptxas
// that hangs ran past 120 s, each compile waiting its fixed 60 s. A compile
// ends by the deadline it is given.
TEST(ExecutableAssemblerTest, ACompileEndsByItsDeadline) {
  const std::string path = ::testing::TempDir() + "/hanging_ptxas";
  std::ofstream(path) << "#!/bin/sh\nsleep 30\n";
  chmod(path.c_str(), 0755);
  const Assembler assemble =
      ExecutableAssembler(path, "sm_90", absl::Now() + absl::Milliseconds(300));
  const absl::StatusOr<PtxasOutput> run = assemble("// nothing", 3);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->how.timed_out);
  EXPECT_FALSE(run->ok);
  // Killed at the deadline's remainder, not at kPtxasTimeout ("1m").
  EXPECT_THAT(run->log, ::testing::HasSubstr("ms (killed)")) << run->log;
}

// A few variants of every PTX family, spread over its list, each with a
// few edge and random operands on one kernel (CalibrationTuples).
std::vector<Tuple> SampleTuples(int variants_per_family, int tuples_per_variant,
                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Tuple> out;
  for (const FamilyInfo& family : AllFamilies()) {
    if (family.isa != TargetIsa::kPtx) continue;
    const absl::Span<const Variant> variants = VariantsOf(family.family);
    const size_t step =
        std::max<size_t>(1, variants.size() / variants_per_family);
    for (size_t i = 0; i < variants.size(); i += step) {
      const Variant& v = variants[(i + rng() % step) % variants.size()];
      // $PTXDIFF_CALIBRATE: only variants whose spelling has it (debugging).
      const char* only = std::getenv("PTXDIFF_CALIBRATE");
      if (only != nullptr && !absl::StrContains(Spell(v), only)) continue;
      for (const Tuple& t : CalibrationTuples(v, tuples_per_variant, rng)) {
        out.push_back(t);
      }
    }
  }
  return out;
}

class SassCalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> found = FindPtxas({});
    if (!found.ok()) GTEST_SKIP() << "no ptxas here";
    ptxas_ = *found;
  }
  // The sample calibrated at -O`opt`, its summary printed (and, with
  // $PTXDIFF_CALIBRATE, every disagreement and known finding).
  absl::StatusOr<CalibrationReport> Calibrate(const std::vector<Tuple>& tuples,
                                              int opt) {
    absl::StatusOr<CalibrationReport> report =
        CalibrateTuples(ExecutableAssembler(ptxas_, "sm_90"), *FindSassArchInfo("sm_90"), tuples, opt);
    if (!report.ok()) return report;
    std::cout << report->Summary() << "\n";
    if (std::getenv("PTXDIFF_CALIBRATE") != nullptr) {  // debugging
      std::cout << absl::StrJoin(report->disagreements, "\n") << "\n"
                << absl::StrJoin(report->known_example, "\n",
                                 absl::PairFormatter(": "))
                << "\n"
                << report->first_trace;
    }
    return report;
  }
  std::string ptxas_;
};

// The evaluator against the oracle on -O0 code of every family: where it
// runs a kernel, it must agree (issue 40's calibration, here on a sample;
// the campaign mode runs it over millions).
TEST_F(SassCalibrationTest, AgreesWithTheOracleAtO0OnEveryFamily) {
  const std::vector<Tuple> tuples = SampleTuples(4, 6, 1);
  const absl::StatusOr<CalibrationReport> report = Calibrate(tuples, 0);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->disagreements, testing::IsEmpty())
      << report->first_trace;
  EXPECT_EQ(report->tuples, static_cast<int64_t>(tuples.size()));
  EXPECT_GT(report->executed, report->tuples / 2);
  // A kernel per variant: its tuples differ only in runtime values.
  EXPECT_LT(report->kernels, report->tuples / 4);
  EXPECT_GT(report->kernels_run, report->kernels / 2);
}

// A module ptxas rejects is halved until the tuple it rejects is alone:
// that one is said to be rejected, the others get their kernels.
TEST_F(SassCalibrationTest, AModuleRejectedIsHalvedDownToTheTuple) {
  const Assembler ptxas = ExecutableAssembler(ptxas_, "sm_90");
  int runs = 0;
  const Assembler refuses_sub =
      [&](absl::string_view ptx, int opt_level) -> absl::StatusOr<PtxasOutput> {
    ++runs;
    if (absl::StrContains(ptx, "sub.u32")) return PtxasOutput{.log = "no"};
    return ptxas(ptx, opt_level);
  };
  std::vector<Tuple> tuples;
  for (const char* spelling : {"add.u32", "add.u32", "sub.u32", "add.u32"}) {
    tuples.push_back(
        {.variant = ParseVariant(spelling).value(), .operands = {{7, 5}}});
  }
  const auto kernels = CompileReferenceKernels(
      refuses_sub, *FindSassArchInfo("sm_90"), tuples, 0);
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  for (size_t k : {0, 1, 3}) EXPECT_NE((*kernels)[k].kernel, nullptr) << k;
  EXPECT_TRUE((*kernels)[2].rejected);
  EXPECT_EQ((*kernels)[2].why_not, "rejected by ptxas: no");  // its log
  EXPECT_EQ(runs, 5);  // all, 0-1, 2-3, 2, 3
}

TEST_F(SassCalibrationTest, AgreesWithTheOracleAtO3OnEveryFamily) {
  const char* opt = std::getenv("PTXDIFF_CALIBRATE_OPT");  // debugging
  const absl::StatusOr<CalibrationReport> report =
      Calibrate(SampleTuples(4, 6, 2), opt != nullptr ? std::atoi(opt) : 3);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->disagreements, testing::IsEmpty())
      << report->first_trace;
  EXPECT_GT(report->executed, report->tuples / 2);
}

// What ptxas's code is known to get wrong is counted apart, by finding, not
// as the evaluator's disagreement: here a scalar video destination merge,
// where ptxas's code at every level merges the result's high half into c
// (the spec: its low half), so results whose halves differ disagree.
TEST_F(SassCalibrationTest, KnownFindingsOfPtxasAreCountedApart) {
  const Variant merge = *ParseVariant("vadd.s32.u32.u32 d.h1, a, b.b3, c");
  std::vector<Tuple> tuples;
  for (uint64_t a : {0x400000ull, 0x12345ull, 0x10001ull, 0x20002ull}) {
    tuples.push_back({.variant = merge,
                      .operands = {{a, 0xeb, 0x3c, 0}},
                      .runtime = RuntimeCapableSources(merge)});
  }
  absl::StatusOr<CalibrationReport> report =
      CalibrateTuples(ExecutableAssembler(ptxas_, "sm_90"), *FindSassArchInfo("sm_90"), tuples, 0);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels, 1);
  EXPECT_EQ(report->kernels_run, 1) << report->Summary();
  EXPECT_THAT(report->disagreements, testing::IsEmpty());
  EXPECT_EQ(report->agreed, 2) << report->Summary();
  ASSERT_EQ(report->known.size(), 1u) << report->Summary();
  EXPECT_EQ(report->known.begin()->second, 2);
  EXPECT_THAT(report->known_example.begin()->second,
              testing::HasSubstr("0x00400000"));
}

// The operations the census found missing, each in the code that needs it:
// I2I (cvt.sat to 8 and 16 bits, and vadd2's .sat), opcode 0x21f's sign-bit
// table (add.sat.s32, sub.sat.s32), VIMNMX.RELU, VIADD on 16-bit lanes,
// and at -O3 IADD3's two carries out (vmad) and LEA's negated b
// (vabsdiff), and 32-bit division's I2F.RP, MUFU.RCP and F2I. Every kernel
// runs to the end and agrees (scalar video: but
// for the known findings of ptxas's code).
TEST_F(SassCalibrationTest, RunsTheOperationsTheCensusFoundMissing) {
  struct Case {
    const char* spelling;
    int opt;
  };
  const Case cases[] = {
      {"cvt.sat.u8.s32", 0},      {"cvt.sat.s8.s32", 0},
      {"cvt.sat.u16.s32", 0},     {"cvt.sat.s16.s32", 3},
      {"add.sat.s32", 0},         {"sub.sat.s32", 3},
      {"min.relu.s16x2", 0},      {"max.relu.s32", 3},
      {"add.u16x2", 0},           {"vadd2.u32.s32.u32.sat", 0},
      {"vmad.u32.u32.u32.shr7 d, -a, b, c", 3},
      {"vabsdiff.u32.s32.s32", 3},
      {"div.s32", 3},             {"rem.u32", 0},
  };
  std::mt19937_64 rng(11);
  for (const Case& c : cases) {
    const absl::StatusOr<Variant> v = ParseVariant(c.spelling);
    ASSERT_TRUE(v.ok()) << c.spelling;
    const std::vector<Tuple> tuples = CalibrationTuples(*v, 16, rng);
    const absl::StatusOr<CalibrationReport> report =
        CalibrateTuples(ExecutableAssembler(ptxas_, "sm_90"), *FindSassArchInfo("sm_90"), tuples, c.opt);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->kernels_run, 1) << c.spelling << ": "
                                      << report->Summary();
    EXPECT_EQ(report->executed, 16) << c.spelling;
    EXPECT_THAT(report->disagreements, testing::IsEmpty())
        << c.spelling << "\n" << report->first_trace;
    EXPECT_GT(report->agreed, 8) << c.spelling << ": " << report->Summary();
  }
}

TEST(KnownCalibrationFindingTest, NamesPtxasCodeThatDisagreesAtALevel) {
  auto finding = [](const char* spelling, int opt) {
    return KnownCalibrationFinding(*ParseVariant(spelling), opt)
        .value_or("none");
  };
  EXPECT_THAT(finding("vadd.u32.u32.u32 d.h1, a, b, c", 0),
              testing::HasSubstr("part merges"));
  EXPECT_THAT(finding("vsub.u32.s32.u32.sat", 0),
              testing::HasSubstr("unsigned reading"));
  EXPECT_THAT(finding("vadd.s32.s32.s32.sat", 0),
              testing::HasSubstr("intermediate"));
  EXPECT_THAT(finding("vmin.s32.s32.s32.max", 0),
              testing::HasSubstr("intermediate"));
  EXPECT_THAT(finding("vshr.u32.u32.u32.sat.wrap d.b1, a, b, c", 0),
              testing::HasSubstr("part merges"));
  EXPECT_THAT(finding("vshr.u32.u32.u32.sat.wrap d.b0, a, b, c", 0),
              testing::HasSubstr("shift .sat"));
  EXPECT_THAT(finding("vset.u32.u32.lt.min", 0), testing::HasSubstr("vset"));
  EXPECT_THAT(finding("vmad.u32.u32.u32.shr7", 0),
              testing::HasSubstr("intermediate"));
  // Issue 67: neither a part above the lowest, nor .sat, nor a secondary
  // min/max: no finding's evidence covers it.
  EXPECT_FALSE(KnownCalibrationFinding(
      *ParseVariant("vadd.u32.u32.u32 d.h0, a, b, c"), 0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("vadd.u32.u32.u32.add"),
                                       0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("vmad.u32.u32.u32"), 0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("vset.u32.u32.lt"), 0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("vadd2.u32.u32.u32"), 0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("madc.hi.cc.u64"), 0));
  EXPECT_TRUE(KnownCalibrationFinding(*ParseVariant("madc.hi.cc.u64"), 3));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("add.s32"), 3));
}

// Issue 67: for a tuple, a scalar video finding applies only where its
// operands are of the class on which the code's pattern differs from the
// spec's value.
TEST(KnownCalibrationFindingTest, ScalarVideoFindingsNeedTheirOperandClass) {
  auto finding = [](const char* spelling, Operands o) {
    return KnownCalibrationFinding(*ParseVariant(spelling), o, 0)
        .value_or("none");
  };
  // The sum's halves differ (2 and 1), or are the same (1 and 1).
  EXPECT_THAT(finding("vadd.u32.u32.u32 d.h1, a, b, c", {{0x10002, 0, 0}}),
              testing::HasSubstr("part merges"));
  EXPECT_EQ(finding("vadd.u32.u32.u32 d.h1, a, b, c", {{0x10001, 0, 0}}),
            "none");
  // A negative difference, or a positive one.
  EXPECT_THAT(finding("vsub.u32.s32.u32.sat", {{0xfffffff0, 1, 0}}),
              testing::HasSubstr("unsigned reading"));
  EXPECT_EQ(finding("vsub.u32.s32.u32.sat", {{5, 1, 0}}), "none");
  // A sum past 32 signed bits (docs/sass-evaluator.md's example), or not.
  EXPECT_THAT(finding("vadd.u32.u32.u32.sat", {{0x9f2b54b4, 0x80808080, 0}}),
              testing::HasSubstr("intermediate"));
  EXPECT_EQ(finding("vadd.u32.u32.u32.sat", {{1, 2, 0}}), "none");
  EXPECT_EQ(finding("vadd.u32.u32.u32 d.h0, a, b, c",
                    {{0x9f2b54b4, 0x80808080, 0}}),
            "none");
}

}  // namespace
}  // namespace ptxdiff
