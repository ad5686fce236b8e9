#include "worker/backends/ptxas/sass_calibration.h"

#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

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
  std::string ptxas_;
};

// The evaluator against the oracle on -O0 code of every family: where it
// runs a kernel, it must agree (issue 40's calibration, here on a sample;
// the campaign mode runs it over millions).
TEST_F(SassCalibrationTest, AgreesWithTheOracleAtO0OnEveryFamily) {
  const std::vector<Tuple> tuples = SampleTuples(4, 6, 1);
  const absl::StatusOr<CalibrationReport> report = CalibrateTuples(
      ptxas_, *FindSassArchInfo("sm_90"), tuples, /*opt_level=*/0);
  ASSERT_TRUE(report.ok()) << report.status();
  std::cout << report->Summary() << "\n";
  if (std::getenv("PTXDIFF_CALIBRATE") != nullptr) {  // debugging: show all
    std::cout << absl::StrJoin(report->disagreements, "\n") << "\n"
              << absl::StrJoin(report->known_example, "\n",
                               absl::PairFormatter(": "))
              << "\n"
              << report->first_trace;
  }
  EXPECT_THAT(report->disagreements, testing::IsEmpty())
      << report->first_trace;
  EXPECT_EQ(report->tuples, static_cast<int64_t>(tuples.size()));
  EXPECT_GT(report->executed, report->tuples / 2);
  // A kernel per variant: its tuples differ only in runtime values.
  EXPECT_LT(report->kernels, report->tuples / 4);
  EXPECT_GT(report->kernels_run, report->kernels / 2);
}

TEST_F(SassCalibrationTest, AgreesWithTheOracleAtO3OnEveryFamily) {
  const std::vector<Tuple> tuples = SampleTuples(4, 6, 2);
  const char* opt = std::getenv("PTXDIFF_CALIBRATE_OPT");  // debugging
  const absl::StatusOr<CalibrationReport> report =
      CalibrateTuples(ptxas_, *FindSassArchInfo("sm_90"), tuples,
                      opt != nullptr ? std::atoi(opt) : 3);
  ASSERT_TRUE(report.ok()) << report.status();
  std::cout << report->Summary() << "\n";
  if (std::getenv("PTXDIFF_CALIBRATE") != nullptr) {  // debugging: show all
    std::cout << absl::StrJoin(report->disagreements, "\n") << "\n"
              << absl::StrJoin(report->known_example, "\n",
                               absl::PairFormatter(": "))
              << "\n"
              << report->first_trace;
  }
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
      CalibrateTuples(ptxas_, *FindSassArchInfo("sm_90"), tuples, 0);
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

TEST(KnownCalibrationFindingTest, NamesPtxasCodeThatDisagreesAtALevel) {
  EXPECT_TRUE(KnownCalibrationFinding(*ParseVariant("vadd.u32.u32.u32"), 0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("vadd2.u32.u32.u32"), 0));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("madc.hi.cc.u64"), 0));
  EXPECT_TRUE(KnownCalibrationFinding(*ParseVariant("madc.hi.cc.u64"), 3));
  EXPECT_FALSE(KnownCalibrationFinding(*ParseVariant("add.s32"), 3));
}

}  // namespace
}  // namespace ptxdiff
