#include "worker/backends/ptxas/sass_calibration.h"

#include <random>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

// A few variants of every PTX family, spread over its list, each with a
// few edge and random operands, every runtime-capable source a parameter.
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
      std::vector<Operands> operands(tuples_per_variant);
      FillEdgeTuples(v, rng, operands);
      // $PTXDIFF_CALIBRATE: only variants whose spelling has it (debugging).
      const char* only = std::getenv("PTXDIFF_CALIBRATE");
      if (only != nullptr && !absl::StrContains(Spell(v), only)) continue;
      for (const Operands& o : operands) {
        out.push_back(
            {.variant = v, .operands = o, .runtime = RuntimeCapableSources(v)});
      }
    }
  }
  return out;
}

// The scalar video instructions (vadd ... vset, not the SIMD vadd2/vadd4):
// ptxas's -O0 code for them disagrees with the oracle on destination part
// merges and mixed-signedness saturation, open -O0 findings written down
// in docs/sass-evaluator.md; the evaluator runs every instruction of those
// kernels as it does elsewhere.
bool IsScalarVideo(const Variant& v) {
  const absl::string_view op = InfoOf(v.family).opcode;
  return op[0] == 'v' && op.back() != '2' && op.back() != '4';
}

// madc.hi.cc.{u64,s64} at -O1..-O3: the code ptxas emits never adds c
// into d (c's registers feed only the carry out: data flow, whatever the
// evaluator computes), where -O0 code runs to the oracle's values; an open
// finding of ptxas (docs/sass-evaluator.md), not of the evaluator.
bool IsOpenO3Defect(const Variant& v) {
  return absl::StartsWith(Spell(v), "madc.hi.cc.");
}

// The disagreements outside the scalar video families (and, at -O3, the
// open defect).
std::vector<std::string> Unexplained(const CalibrationReport& report,
                                     bool o3 = false) {
  std::vector<std::string> out;
  for (size_t i = 0; i < report.disagreeing.size(); ++i) {
    const Variant& v = report.disagreeing[i].variant;
    if (!IsScalarVideo(v) && !(o3 && IsOpenO3Defect(v))) {
      out.push_back(report.disagreements[i]);
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
              << report->first_trace;
  }
  const std::vector<std::string> wrong = Unexplained(*report);
  EXPECT_TRUE(wrong.empty()) << absl::StrJoin(wrong, "\n") << "\n"
                             << report->first_trace;
  EXPECT_EQ(report->tuples, static_cast<int64_t>(tuples.size()));
  EXPECT_GT(report->executed, report->tuples / 2);
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
              << report->first_trace;
  }
  const std::vector<std::string> wrong = Unexplained(*report, /*o3=*/true);
  EXPECT_TRUE(wrong.empty()) << absl::StrJoin(wrong, "\n") << "\n"
                             << report->first_trace;
  EXPECT_GT(report->executed, report->tuples / 2);
}

}  // namespace
}  // namespace ptxdiff
