// The systematic source across variants: every variant reached before any
// goes deep, the breadth pass a family at a time and in both forms, families
// past their pass going deep, planned tiers counted, family costs, runs and
// a source exhausted or going on with random tails.

#include "campaign/systematic_source.h"

#include <algorithm>
#include <bit>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

TEST(SystematicTest, TheSourceReachesEveryVariantBeforeGoingDeep) {
  std::vector<Variant> variants;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kAdd || v.family == Family::kBfe ||
        v.family == Family::kVadd) {
      variants.push_back(v);
    }
  }
  SystematicSource source(variants, /*run=*/8);
  absl::flat_hash_set<Variant> reached;
  // One pass: 8 tuples per variant.
  for (size_t i = 0; i < variants.size() * 8; ++i) {
    const std::optional<Tuple> t = source.Next();
    ASSERT_TRUE(t.has_value());
    reached.insert(t->variant);
  }
  // Round-robin over families: the small families are already through
  // several passes, so not every vadd variant is reached yet, but every add
  // and bfe variant is.
  for (const Variant& v : variants) {
    if (v.family != Family::kVadd) EXPECT_TRUE(reached.contains(v)) << Spell(v);
  }
}

// Every variant of these families.
std::vector<Variant> VariantsOfFamilies(
    std::initializer_list<Family> families) {
  std::vector<Variant> out;
  for (const Family f : families) {
    const absl::Span<const Variant> of = VariantsOf(f);
    out.insert(out.end(), of.begin(), of.end());
  }
  return out;
}

// Each family's variants in the order of StableId x 0x9e3779b97f4a7c15
// (fixed, so that a campaign meets the variants in the same order on every
// run and every machine).
std::vector<std::vector<Variant>> ByFamilyInStableIdOrder(
    const std::vector<Variant>& variants) {
  std::vector<std::vector<std::pair<uint64_t, Variant>>> keyed(kNumFamilies);
  for (const Variant& v : variants) {
    keyed[static_cast<int>(v.family)].emplace_back(
        StableId(v) * 0x9e3779b97f4a7c15ull, v);
  }
  std::vector<std::vector<Variant>> out;
  for (auto& family : keyed) {
    if (family.empty()) continue;
    std::sort(family.begin(), family.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    out.emplace_back();
    for (const auto& [key, v] : family) out.back().push_back(v);
  }
  return out;
}

// The breadth pass: one tuple of every variant, each its set's first; one
// variant of each family in turn (in table order), each family's in stable
// id order, so that a small family's pass is over within its first turns.
TEST(SystematicTest, TheBreadthPassTakesAVariantOfEachFamilyInTurn) {
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kAdd, Family::kVmin, Family::kFns});
  const std::vector<std::vector<Variant>> families =
      ByFamilyInStableIdOrder(variants);
  std::vector<Variant> expected;
  for (size_t turn = 0; expected.size() < variants.size(); ++turn) {
    for (const std::vector<Variant>& family : families) {
      if (turn < family.size()) expected.push_back(family[turn]);
    }
  }
  SystematicSource source(variants);
  std::vector<Tuple> breadth;
  while (!source.breadth_done()) ASSERT_TRUE(source.NextRun(breadth));
  ASSERT_EQ(breadth.size(), variants.size());
  for (size_t i = 0; i < breadth.size(); ++i) {
    ASSERT_EQ(breadth[i].variant, expected[i]) << i;
    ASSERT_TRUE(breadth[i] == SystematicTuple(expected[i], 0)) << i;
  }
  // fns (one variant) and add (13) are through by add's last turn.
  EXPECT_EQ(breadth[1].variant.family, Family::kFns);
  EXPECT_NE(breadth[2 * 13].variant.family, Family::kAdd);
}

// For a compiler whose code is also run: each variant's tuple 0 as
// immediates, then, once every variant of its family had it, the same
// tuples in the same order with every runtime-capable source a runtime
// value; a variant with none (no source can be one) once.
// For a backend that keeps its compiled code, the runtime forms alone (the
// default form only of a variant with none), and each set then starts at
// tuple 0: its default form is not lost, only put off to the depth.
class BreadthInBothFormsTest : public ::testing::TestWithParam<bool> {};

TEST_P(BreadthInBothFormsTest, TheBreadthPassInBothFormsGivesTupleZeroTwice) {
  const bool runtime_first = GetParam();
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kAdd, Family::kBfe, Family::kFns});
  SystematicSource source(variants, 8, /*endless=*/false,
                          /*runtime_forms=*/true);
  source.SetBreadthInBothForms(true, runtime_first);
  std::vector<Tuple> breadth;
  while (!source.breadth_done()) ASSERT_TRUE(source.NextRun(breadth));
  size_t copies = 0;
  for (const std::vector<Variant>& family : ByFamilyInStableIdOrder(variants)) {
    std::vector<Tuple> defaults, runtime;
    for (const Variant& v : family)
      defaults.push_back(SystematicTuple(v, 0, /*forms=*/true));
    for (const Variant& v : family) {
      Tuple copy = SystematicTuple(v, 0, /*forms=*/true);
      ASSERT_EQ(copy.runtime, 0) << Spell(v);
      copy.runtime = RuntimeCapableSources(v);
      if (copy.runtime != 0) runtime.push_back(copy), ++copies;
    }
    std::vector<Tuple> expected;
    if (runtime_first) {
      for (const Variant& v : family) {
        Tuple t = SystematicTuple(v, 0, /*forms=*/true);
        t.runtime = RuntimeCapableSources(v);
        expected.push_back(t);
      }
    } else {
      expected = defaults;
      for (const Tuple& t : runtime) expected.push_back(t);
    }
    std::vector<Tuple> got;
    for (const Tuple& t : breadth) {
      if (t.variant.family == family[0].family) got.push_back(t);
    }
    ASSERT_EQ(got.size(), expected.size()) << Spell(family[0]);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_TRUE(got[i] == expected[i]) << Spell(family[0]) << " " << i;
  }
  EXPECT_EQ(breadth.size(), variants.size() + (runtime_first ? 0 : copies));
  EXPECT_GT(copies, variants.size() / 2);
  // After the pass, the sets go on from tuple 1, or from tuple 0 (still to
  // come in its default form) where the pass gave a variant's runtime form
  // alone.
  std::vector<Tuple> next;
  ASSERT_TRUE(source.NextRun(next));
  const bool runtime_only =
      runtime_first && RuntimeCapableSources(next[0].variant) != 0;
  EXPECT_TRUE(next[0] == SystematicTuple(next[0].variant, runtime_only ? 0 : 1,
                                         /*forms=*/true));
}

INSTANTIATE_TEST_SUITE_P(RuntimeFirstOrNot, BreadthInBothFormsTest,
                         ::testing::Bool());

// An endless source (a campaign's) runs the families whose pass is over
// while the pass goes on, with at most the depth share of the pass's time
// (kDepthShareDuringBreadth, or kDepthShareWithKeptCode where set), and
// never a variant before its breadth tuple; the pass still gives every
// variant its tuple 0.
class DepthShareTest : public ::testing::TestWithParam<double> {};

TEST_P(DepthShareTest, FamiliesWhosePassIsOverGoDeepWhileThePassGoesOn) {
  const double share = GetParam();
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kFns, Family::kBfe, Family::kVadd});
  SystematicSource source(variants, 8, /*endless=*/true);
  if (share != SystematicSource::kDepthShareDuringBreadth)
    source.SetDepthShareDuringBreadth(share);
  source.SetFamilyCost(Family::kVadd, 2);
  auto cost = [](const Tuple& t) {
    return t.variant.family == Family::kVadd ? 2.0 : 1.0;
  };
  absl::flat_hash_set<Variant> reached;
  absl::flat_hash_map<Variant, uint64_t> produced;
  double breadth_time = 0, deep_time = 0;
  int64_t deep_runs = 0;
  std::vector<Tuple> run;
  while (!source.breadth_done()) {
    run.clear();
    ASSERT_TRUE(source.NextRun(run));
    const bool deep = std::all_of(run.begin(), run.end(), [&](const Tuple& t) {
      return t.variant == run[0].variant && reached.contains(t.variant);
    });
    if (deep) {
      ++deep_runs;
      deep_time += static_cast<double>(run.size()) * cost(run[0]);
      EXPECT_NE(run[0].variant.family, Family::kVadd);
      // The set goes on after the breadth tuple (tuple 0).
      uint64_t& k = produced[run[0].variant];
      if (k < SystematicCount(run[0].variant)) {
        EXPECT_TRUE(run[0] == SystematicTuple(run[0].variant, k))
            << Spell(run[0].variant) << " " << k;
      }
      k += run.size();
      continue;
    }
    for (const Tuple& t : run) {
      breadth_time += cost(t);
      EXPECT_TRUE(reached.insert(t.variant).second) << Spell(t.variant);
      produced[t.variant] = 1;
    }
  }
  EXPECT_EQ(reached.size(), variants.size());
  EXPECT_GT(deep_runs, 100);
  EXPECT_LE(deep_time, share * breadth_time + 8);
  EXPECT_GT(deep_time, share * breadth_time - 8 - 64);
}

INSTANTIATE_TEST_SUITE_P(
    DefaultAndKeptCode, DepthShareTest,
    ::testing::Values(SystematicSource::kDepthShareDuringBreadth,
                      SystematicSource::kDepthShareWithKeptCode));

// Where depth during the pass is for planned tiers only (a backend whose
// every tuple of depth costs a compile), a family whose variants are past
// their planned tiers waits for the pass to end; without it, it goes on
// into its pairs and its random tail.
TEST(SystematicTest, DepthDuringThePassStopsAtThePlannedTiersWhereAsked) {
  const std::vector<Variant> variants =
      VariantsOfFamilies({Family::kFns, Family::kVadd});
  const Variant fns = *ParseVariant("fns.b32");
  const auto fns_tuples_during_pass = [&](bool planned_only) {
    SystematicSource source(variants, 8, /*endless=*/true);
    source.SetDepthShareDuringBreadth(1.0);
    source.SetDepthPlannedOnlyDuringBreadth(planned_only);
    uint64_t n = 0;
    std::vector<Tuple> run;
    while (!source.breadth_done()) {
      run.clear();
      if (!source.NextRun(run)) break;
      for (const Tuple& t : run) n += t.variant == fns;
    }
    return n;
  };
  const uint64_t planned = PlannedCount(fns);
  EXPECT_LE(fns_tuples_during_pass(true), planned + 8);
  EXPECT_GT(fns_tuples_during_pass(true), planned / 2);
  EXPECT_GT(fns_tuples_during_pass(false), planned + 8);
}

// A variant counts in planned_done the moment its planned tiers (first
// tier, relations, middle tier) have all been produced, whether by runs or
// one tuple at a time, and once.
TEST(SystematicTest, PlannedDoneCountsEachVariantAsItPassesItsPlannedTiers) {
  const std::vector<Variant> variants = {*ParseVariant("add.s32"),
                                         *ParseVariant("mul.hi.u32"),
                                         *ParseVariant("bfe.u32")};
  for (const bool runs : {false, true}) {
    SystematicSource source(variants, 8, /*endless=*/true);
    absl::flat_hash_map<uint64_t, uint64_t> produced;  // by stable id
    int64_t passed = 0;
    std::vector<Tuple> out;
    for (int step = 0; step < 2000 && passed < 3; ++step) {
      out.clear();
      if (runs) {
        ASSERT_TRUE(source.NextRun(out));
      } else {
        out.push_back(*source.Next());
      }
      for (const Tuple& t : out) {
        const uint64_t n = ++produced[StableId(t.variant)];
        if (n == PlannedCount(t.variant)) ++passed;
      }
      EXPECT_EQ(source.planned_done(), passed) << step;
    }
    EXPECT_EQ(passed, 3);
  }
  // add.s32's: the first tier and relations (as the middle tier's test
  // counts them), then each of its two sources at every middle value.
  EXPECT_EQ(PlannedCount(*ParseVariant("add.s32")),
            2 * 5 * 3 + 4 * 3 + 4 * 5 + 2 * MiddleValues(32).size());
}

// Where the compiled code is kept (runtime_first), a set's runtime tier
// (what ptxas claims for every value of an operand: bfe.s32 past the top)
// comes right after the relations, not after the middle tier; the set
// holds the same tuples either way.
TEST(SystematicTest, WithKeptCodeTheRuntimeTierComesBeforeTheMiddleTier) {
  const Variant v = *ParseVariant("bfe.s32");
  const auto run = [&](bool runtime_first, std::vector<Tuple>& all) {
    SystematicSource source({v}, 64, /*endless=*/false, /*runtime_forms=*/true);
    source.SetBreadthInBothForms(true, runtime_first);
    size_t first_probe = 0;
    while (std::optional<Tuple> t = source.Next()) {
      // Past the breadth pass's tuple 0 in both forms.
      if (all.size() >= 2 && first_probe == 0 && t->runtime != 0)
        first_probe = all.size();
      all.push_back(*t);
    }
    return first_probe;
  };
  std::vector<Tuple> early_set, late_set;
  const size_t early = run(true, early_set);
  const size_t late = run(false, late_set);
  // The breadth pass's two tuples, then the set from its tuple 1: late,
  // the probes come after the planned tiers (the first, the relations and
  // the middle tier); early, before the middle tier, each of whose three
  // numbers is alone at its middle values.
  EXPECT_EQ(late, 1 + PlannedCount(v, /*forms=*/true));
  EXPECT_EQ(late - early, MiddleValues(32).size() +
                              2 * MiddleValues(32, /*amount=*/true).size());
  absl::flat_hash_map<Tuple, int> count;
  for (const Tuple& t : early_set) ++count[t];
  for (const Tuple& t : late_set) --count[t];
  for (const auto& [t, n] : count) EXPECT_EQ(n, 0) << Spell(t.variant);
  EXPECT_EQ(early_set.size(), late_set.size());
}

TEST(SystematicTest, RunsGiveTheSameTuplesAsOneAtATime) {
  std::vector<Variant> variants;
  for (const char* s : {"add.s32", "bfe.u64", "vadd.u32.u32.u32", "popc.b32"}) {
    variants.push_back(*ParseVariant(s));
  }
  SystematicSource one(variants, 5), runs(variants, 5);
  std::vector<Tuple> batched;
  while (batched.size() < 2000 && runs.NextRun(batched)) {
  }
  for (const Tuple& t : batched) {
    const std::optional<Tuple> next = one.Next();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(*next, t);
  }
}

// For a worker whose default form is runtime, the tiers that leave the form
// open give every source that may be a runtime value as one; the runtime
// tier keeps its probes (one source runtime, the others immediates).
TEST(SystematicTest, OpenFormsTakeTheDefaultForm) {
  const Variant v = *ParseVariant("bfe.s32");
  SystematicSource source({v}, 64, /*endless=*/false, /*runtime_forms=*/true);
  source.SetRuntimeByDefault(true);
  std::vector<Tuple> tuples;
  while (source.NextRun(tuples)) {
  }
  ASSERT_EQ(tuples.size(), SystematicCount(v, /*forms=*/true));
  int all = 0, one = 0;
  for (const Tuple& t : tuples) {
    all += t.runtime == 0b111;
    one += std::popcount(t.runtime) == 1;
    ASSERT_NE(t.runtime, 0) << "an open form left as immediates";
  }
  EXPECT_GT(all, 0);
  EXPECT_GT(one, 0);
  EXPECT_EQ(all + one, static_cast<int>(tuples.size()));
}

// Equal time, not equal tuples: a family four times as costly gets a
// quarter of the tuples after the breadth pass.
TEST(SystematicTest, FamilyCostsGiveFamiliesEqualTime) {
  std::vector<Variant> variants;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kAdd || v.family == Family::kMul)
      variants.push_back(v);
  }
  SystematicSource source(variants, 8);
  source.SetFamilyCost(Family::kMul, 4);
  for (size_t i = 0; i < variants.size(); ++i)
    ASSERT_TRUE(source.Next());  // breadth
  int add = 0, mul = 0;
  for (int i = 0; i < 10000; ++i) {  // well before any add variant is exhausted
    const std::optional<Tuple> t = source.Next();
    ASSERT_TRUE(t.has_value());
    (t->variant.family == Family::kAdd ? add : mul) += 1;
  }
  EXPECT_NEAR(static_cast<double>(add) / mul, 4.0, 0.1);
}

// An endless source: once a family's every variant is in its random tail,
// it gets a sixteenth of a family still in its set, so that the video
// families' planned tiers are not held back by small families' random
// tuples; before that, the two share equally.
TEST(SystematicTest, AFamilyInItsRandomTailYieldsToOnesStillInTheirSets) {
  const std::vector<Variant> variants = {*ParseVariant("popc.b32"),
                                         *ParseVariant("bfi.b64")};
  SystematicSource source(variants, 8, /*endless=*/true);
  std::vector<Tuple> run;
  int popc_in_set = 0, bfi_in_set = 0;
  while (source.exhausted() == 0) {
    run.clear();
    ASSERT_TRUE(source.NextRun(run));
    ++(run[0].variant.family == Family::kPopc ? popc_in_set : bfi_in_set);
  }
  EXPECT_NEAR(popc_in_set, bfi_in_set, 2);  // equal time while both in sets
  int popc = 0, bfi = 0;
  for (int i = 0; i < 1700; ++i) {
    run.clear();
    ASSERT_TRUE(source.NextRun(run));
    ++(run[0].variant.family == Family::kPopc ? popc : bfi);
  }
  ASSERT_LT(source.exhausted(), 2);  // bfi.b64 is still in its set
  EXPECT_NEAR(static_cast<double>(bfi) / popc, 16.0, 1.0);
}

TEST(SystematicTest, ASmallSourceIsExhaustedExactly) {
  const std::vector<Variant> variants = {*ParseVariant("popc.b32"),
                                         *ParseVariant("clz.b32")};
  SystematicSource source(variants, 3);
  uint64_t expected =
      SystematicCount(variants[0]) + SystematicCount(variants[1]);
  uint64_t n = 0;
  while (source.Next()) ++n;
  EXPECT_EQ(n, expected);
  EXPECT_EQ(source.exhausted(), 2);
}

// After the sets, an endless source goes on with each variant's random tail:
// fresh tuples (few repeats of three operands), within the operand widths, the
// same for the same index, and small amounts for amount sources now and then.
TEST(SystematicTest, AnEndlessSourceGoesOnWithRandomTails) {
  const std::vector<Variant> variants = {*ParseVariant("popc.b32"),
                                         *ParseVariant("bfe.u64")};
  SystematicSource source(variants, 4, /*endless=*/true);
  const uint64_t sets =
      SystematicCount(variants[0]) + SystematicCount(variants[1]);
  std::vector<Tuple> tuples;
  while (tuples.size() < sets + 20000) ASSERT_TRUE(source.NextRun(tuples));
  EXPECT_EQ(source.exhausted(), 2);
  std::set<std::pair<std::string, std::vector<uint64_t>>> tail;
  int small_positions = 0, tail_tuples = 0;
  for (size_t i = sets; i < tuples.size(); ++i) {
    const Tuple& t = tuples[i];
    std::vector<uint64_t> ops;
    for (int s = 0; s < NumSources(t.variant); ++s) {
      ASSERT_EQ(t.operands.v[s],
                Low(t.operands.v[s], SourceWidth(t.variant, s)));
      ops.push_back(t.operands.v[s]);
    }
    if (t.variant.family != Family::kBfe) continue;  // one operand repeats
    tail.insert({Spell(t.variant), ops});
    ++tail_tuples;
    if (t.operands.v[1] <= 300 && t.operands.v[1] > 64) {
      ++small_positions;  // neither an edge value nor random bits
    }
  }
  EXPECT_GT(tail.size(), 0.8 * tail_tuples);
  EXPECT_GT(small_positions, 100);
  std::vector<Tuple> again;
  TailTuples(variants[1], 123, 2, again);
  std::vector<Tuple> same;
  TailTuples(variants[1], 123, 2, same);
  EXPECT_EQ(again[1].operands.v[0], same[1].operands.v[0]);
  EXPECT_EQ(again[1].operands.v[2], same[1].operands.v[2]);
}

}  // namespace
}  // namespace ptxdiff
