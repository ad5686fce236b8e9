// The fast oracle against the literal transcription of the pseudocode, over
// every variant, on edge and random operands.

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/literal/literal_oracle.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

// Compares the two oracles on `tuples_per_variant` tuples of every variant;
// stops a family at its first few disagreements to keep the output readable.
void CrossCheck(int tuples_per_variant, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Operands> tuples(tuples_per_variant);
  std::vector<int> failures(kNumFamilies);
  for (const Variant& v : AllVariants()) {
    int& family_failures = failures[static_cast<int>(v.family)];
    if (family_failures >= 3) continue;
    FillEdgeTuples(v, rng, tuples);
    for (const Operands& o : tuples) {
      const Result fast = Evaluate(v, o);
      const Result literal = LiteralEvaluate(v, o);
      if (fast != literal) {
        ADD_FAILURE() << "fast:    " << ReplayLine(v, o, fast)
                      << "\nliteral: " << ReplayLine(v, o, literal);
        if (++family_failures >= 3) break;
      }
    }
  }
}

TEST(LiteralCrossTest, EveryVariantOnEdgeAndRandomOperands) {
  CrossCheck(/*tuples_per_variant=*/40, /*seed=*/1);
}

// The scalar families have few variants; give each many more tuples. (The
// video families, scalar and SIMD, have thousands: the test above covers
// them.)
TEST(LiteralCrossTest, ScalarFamiliesInDepth) {
  std::mt19937_64 rng(2);
  std::vector<Operands> tuples(20000);
  for (const Variant& v : AllVariants()) {
    if (IsVideo(v.family) || IsSimdVideo(v.family) ||
        v.family == Family::kVisaShl) {
      continue;
    }
    FillEdgeTuples(v, rng, tuples);
    int failures = 0;
    for (const Operands& o : tuples) {
      const Result fast = Evaluate(v, o), literal = LiteralEvaluate(v, o);
      if (fast != literal && failures++ < 3) {
        ADD_FAILURE() << "fast:    " << ReplayLine(v, o, fast)
                      << "\nliteral: " << ReplayLine(v, o, literal);
      }
    }
  }
}

// Every pair of edge values for the two-source 32-bit video families.
TEST(LiteralCrossTest, VideoEdgePairsExhaustive) {
  const std::vector<uint64_t>& edges = EdgeValues(32);
  for (absl::string_view spelling :
       {"vadd.s32.s32.u32.sat d.b2, a.h1, b.b3, c",
        "vshl.s32.s32.u32.sat.clamp.max",
        "vshr.u32.s32.u32.wrap.min d, a.b1, b, c",
        "vmin.u32.s32.s32.sat d.h0, a, b.h1, c",
        "vmad.s32.u32.s32.sat.shr15 d, -a.b1, b.h0, c",
        "vset.s32.u32.ge.add d, a.h1, b, c",
        "vmad.u32.u32.u32.sat.shr7 d, a, b, -c"}) {
    const Variant v = *ParseVariant(spelling);
    for (uint64_t a : edges) {
      for (uint64_t b : edges) {
        const Operands o = {{a, b, edges[(a ^ b) % edges.size()], 0}};
        const Result fast = Evaluate(v, o), literal = LiteralEvaluate(v, o);
        ASSERT_EQ(fast, literal) << "fast:    " << ReplayLine(v, o, fast)
                                 << "\nliteral: " << ReplayLine(v, o, literal);
      }
    }
  }
}

}  // namespace
}  // namespace ptxdiff
