#include "campaign/campaign.h"

#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "campaign/testing/faulty_campaign.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CampaignTest, JudgesAsynchronouslyAndFilesOneEntryPerRootCause) {
  const std::string dir = FreshDir("root");
  // Wrong on every bfe whose position (operand b) is at least 256.
  auto c = Campaign::Start(
      Options(dir, {"--fault=wrong-on=bfe.", "--when-operand=1:256"}));
  ASSERT_TRUE(c.ok()) << c.status();
  for (const char* s : {"bfe.u64", "bfe.s64"}) {
    Offer(**c, s, {{0xff, 300, 8, 0}});
    Offer(**c, s, {{0xf0f0, 0x1000, 3, 0}});
    Offer(**c, s, {{1, 2, 3, 0}});  // agrees
  }
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.tuples, 6);
  EXPECT_EQ(s.counts.mismatched, 4);
  EXPECT_EQ(s.counts.agreed, 2);
  EXPECT_EQ(s.new_findings, 1);
  // bfe.s64 minimizes to the plainer bfe.u64, and the two operand shapes to
  // one trigger class: one entry, counting all four, found as both forms.
  EXPECT_THAT(EntryNames(dir + "/triage"),
              ElementsAre("value-mismatch~faulty~ge256~bfe.u64 x4"));
  auto shown = TriageStore::Open(dir + "/triage", false)
                   ->Show("value-mismatch~faulty~ge256~bfe.u64");
  ASSERT_TRUE(shown.ok());
  EXPECT_THAT(*shown, HasSubstr("found_as: bfe.u64, bfe.s64"));
  (*c)->Stop();
}

// A backend whose bits are right but whose carry-out is wrong: the mismatch
// is filed, and the entry's case shows both carries.
TEST(CampaignTest, ACarryOnlyMismatchIsFiledWithBothCarries) {
  const std::string dir = FreshDir("carry");
  auto c = Campaign::Start(Options(dir, {"--fault=wrong-carry-on=add.cc."}));
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.cc.u32", {{0xffffffff, 1, 0, 0}});  // carry 1, answered 0
  Offer(**c, "add.u32", {{0xffffffff, 1, 0, 0}});     // no .cc: agrees
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.mismatched, 1);
  EXPECT_EQ(s.counts.agreed, 1);
  EXPECT_EQ(s.new_findings, 1);
  const std::vector<std::string> names = EntryNames(dir + "/triage");
  ASSERT_EQ(names.size(), 1u);
  EXPECT_THAT(names[0], HasSubstr("value-mismatch~faulty~"));
  EXPECT_THAT(names[0], HasSubstr("~add.cc.u32 x1"));
  auto shown = TriageStore::Open(dir + "/triage", false)
                   ->Show(names[0].substr(0, names[0].size() - 3));
  ASSERT_TRUE(shown.ok()) << shown.status();
  // Minimized (the plainest operands still disagree on the carry alone):
  // whatever the tuple, the oracle's carry and the backend's differ.
  EXPECT_THAT(*shown, HasSubstr("variant: add.cc.u32\n"));
  EXPECT_THAT(*shown, HasSubstr("differing-bits: 0x00000000\n"));
  EXPECT_THAT(*shown, HasSubstr("differing-carry: 1\n"));
  EXPECT_THAT(*shown, testing::ContainsRegex(
                          "oracle: 0x[0-9a-f]{8} cf=([01]) defined\n"));
  EXPECT_THAT(*shown, testing::ContainsRegex(
                          "backend-result: 0x[0-9a-f]{8} cf=[01]\n"));
  (*c)->Stop();
}

TEST(CampaignTest, VariantsTheBackendDoesNotSupportAreNotSent) {
  const std::string dir = FreshDir("supports");
  auto c = Campaign::Start(Options(dir, {"--supports=add"}));
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.s32", {{1, 2, 0, 0}});
  Offer(**c, "popc.b32", {{1, 0, 0, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.tuples, 1);
  EXPECT_EQ(s.skipped_unsupported, 1);
  EXPECT_EQ(s.variants_reached, 1);
}

// Variants with a verdict in a runtime form are counted apart: what a
// backend that runs the code answers and one that folds declines.
TEST(CampaignTest, VariantsReachedInARuntimeFormAreCounted) {
  const std::string dir = FreshDir("runtime-reached");
  auto c = Campaign::Start(Options(dir, {}));
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.s32", {{1, 2, 0, 0}});
  Offer(**c, "popc.b32", {{7, 0, 0, 0}}, /*runtime=*/1);
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.variants_reached, 2);
  EXPECT_EQ(s.variants_reached_runtime, 1);
  EXPECT_EQ(
      std::count(s.reached_runtime.begin(), s.reached_runtime.end(), true), 1);
}

// Where compiled code is kept and run (the compiled lane), a fuzz input's
// tuple of a variant not compiled yet goes first in its register shape: that
// compile pays for every later tuple's run, where its folding check pays for
// one. The folding check still goes, as a repeat would.
TEST(CampaignTest, AFuzzTupleOfAVariantNotCompiledYetGoesInItsRegisterShape) {
  for (const bool lane : {true, false}) {
    const std::string dir = FreshDir(lane ? "twin-lane" : "twin-no-lane");
    CampaignOptions o = Options(dir, {"--default-form=both"});
    o.compiled_lane = lane;
    auto c = Campaign::Start(o);
    ASSERT_TRUE(c.ok()) << c.status();
    Offer(**c, "popc.b32", {{7, 0, 0, 0}});
    ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
    const CampaignStats s = (*c)->Snapshot();
    EXPECT_EQ(s.variants_reached, 1);
    EXPECT_EQ(s.variants_reached_runtime, lane ? 1 : 0);
    const OutcomeTable table = (*c)->OutcomesSnapshot();
    const int popc = VariantIndex(*ParseVariant("popc.b32"));
    int64_t immediate = 0;
    for (int k = 0; k < kNumOutcomes; ++k) {
      immediate +=
          table.count(popc, OutcomeForm::kImmediate, static_cast<Outcome>(k));
    }
    EXPECT_EQ(immediate, 1) << "the folding check, with the lane or not";
  }
}

// A register shape whose value is declined as of that value alone, on code
// kept for it (ptxas's code whose -O0 code disagrees too), is compiled all
// the same: the compiled lane runs the variant's other values, where a
// verdict may come. Without the flag, the variant's one answer stays a
// decline.
TEST(CampaignTest, ADeclineOnKeptCodeStillFeedsTheCompiledLane) {
  const std::string dir = FreshDir("kept-code");
  CampaignOptions o =
      Options(dir, {"--default-form=both", "--fault=decline-kept-on=popc.b32"});
  o.compiled_lane = true;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "popc.b32", {{7, 0, 0, 0}});
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while ((*c)->Snapshot().variants_reached_runtime == 0 &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  (*c)->Stop();
  EXPECT_EQ((*c)->Snapshot().variants_reached_runtime, 1);
}

// A compiler whose code is also run (default_form=both): the breadth pass
// gives every variant its first tuple in a runtime form as well, after
// every variant's folding, so that every variant's code is judged before
// any goes deep; without it, the runtime forms wait for each variant's
// runtime tier.
TEST(CampaignTest, BothFormsReachEveryVariantInARuntimeFormInTheBreadthPass) {
  std::vector<Variant> variants;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kAdd || v.family == Family::kBfe ||
        v.family == Family::kShf)
      variants.push_back(v);
  }
  int capable = 0;
  for (const Variant& v : variants) capable += RuntimeCapableSources(v) != 0;
  // Judged in order, a batch at a time, the worker slowed so that the count
  // can be caught (--us-per-tuple): after the pass's tuples and two batches
  // more, every variant had its breadth tuples.
  const int64_t pass = 2 * static_cast<int64_t>(variants.size()) + 2 * 64;
  for (const bool both : {false, true}) {
    const std::string dir = FreshDir(both ? "both-forms" : "one-form");
    CampaignOptions o = Options(
        dir, {"--us-per-tuple=1000",
              both ? "--default-form=both" : "--default-form=immediate"});
    o.systematic = true;
    o.variants = variants;
    o.compiled_lane = false;  // the breadth pass alone
    auto c = Campaign::Start(o);
    ASSERT_TRUE(c.ok()) << c.status();
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while ((*c)->Snapshot().counts.tuples < pass && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    const CampaignStats s = (*c)->Snapshot();
    (*c)->Stop();
    ASSERT_GE(s.counts.tuples, pass);
    if (both) {
      EXPECT_EQ(s.variants_reached_runtime, capable);
    } else {
      // Each variant's runtime tier comes after its first tier and its
      // relations, dozens of tuples in.
      EXPECT_LT(s.variants_reached_runtime, capable / 2);
    }
  }
}

// Tuples in the runtime form, of all variants and by the compiled lane.
int64_t RuntimeFormTuples(const OutcomeTable& table) {
  int64_t n = 0;
  for (size_t v = 0; v < AllVariants().size(); ++v) {
    for (int o = 0; o < kNumOutcomes; ++o) {
      n += table.count(v, OutcomeForm::kRuntime, static_cast<Outcome>(o));
    }
  }
  return n;
}

// Against a compiler whose code is run (default_form=both), each variant
// whose register shape got a value is run at many more inputs in the
// compiled lane, beside the batches of folding checks: many checked tuples
// are then in the runtime form. Without the lane, few are.
TEST(CampaignTest, CompiledRegisterShapesAreRunAtManyMoreInputs) {
  std::vector<Variant> variants;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kAdd || v.family == Family::kPopc)
      variants.push_back(v);
  }
  double share[2] = {};  // of the tuples in a runtime form: without, with
  for (const bool lane : {true, false}) {
    const std::string dir = FreshDir(lane ? "compiled-lane" : "no-lane");
    CampaignOptions o = Options(dir, {"--default-form=both"});
    o.systematic = true;
    o.variants = variants;
    o.compiled_lane = lane;
    o.compiled_per_batch = 512;
    auto c = Campaign::Start(o);
    ASSERT_TRUE(c.ok()) << c.status();
    // Long enough for the lane's share to settle: it is fed only once a
    // register shape has a value, and on a fast machine a short run is
    // over before then.
    constexpr int64_t kTuples = 200000;
    const absl::Time deadline = absl::Now() + absl::Seconds(90);
    while ((*c)->Snapshot().counts.tuples < kTuples && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    (*c)->Stop();
    const CampaignStats s = (*c)->Snapshot();
    ASSERT_GE(s.counts.tuples, kTuples);
    const int64_t runtime = RuntimeFormTuples((*c)->OutcomesSnapshot());
    share[lane] = static_cast<double>(runtime) / s.counts.tuples;
    // With the lane, the systematic source's depth (default forms of
    // small families, as much time as the breadth pass) shares the batches.
    // The lane's share depends on the machine and its load (its producer
    // thread competes for it), so the bound is many runtime tuples, not a
    // share; without the lane, few are.
    if (lane) {
      EXPECT_GT(runtime, 10000) << s.counts.tuples;
    } else {
      EXPECT_LT(runtime, s.counts.tuples / 20) << s.counts.tuples;
    }
  }
  EXPECT_GT(share[1], 10 * share[0]);
}

TEST(CampaignTest, OnlyASmallShareOfUndefinedResultsIsSent) {
  const std::string dir = FreshDir("undefined");
  auto c = Campaign::Start(Options(dir, {}));
  ASSERT_TRUE(c.ok()) << c.status();
  // The share is of what the queue took, so the undefined tuples come after
  // defined ones that make room for them.
  for (uint64_t a = 0; a < 100; ++a) Offer(**c, "div.u32", {{a, 1, 0, 0}});
  for (uint64_t a = 0; a < 100; ++a)
    Offer(**c, "div.u32", {{a, 0, 0, 0}});  // undefined
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.agreed, 100);
  EXPECT_LE(s.counts.unspecified, 10);  // 5% of what was admitted
  EXPECT_GE(s.counts.unspecified, 1);
  EXPECT_EQ(s.skipped_undefined + s.counts.unspecified, 100);
}

TEST(CampaignTest, DefinedDuplicatesDoNotMakeRoomForUndefinedResults) {
  const std::string dir = FreshDir("undefined-dups");
  auto c = Campaign::Start(Options(dir, {}));
  ASSERT_TRUE(c.ok()) << c.status();
  // 100 distinct defined tuples, each offered ten times: the queue takes
  // 100, so at most 5 undefined ones may follow (5% of 105), not 50.
  for (int repeat = 0; repeat < 10; ++repeat) {
    for (uint64_t a = 0; a < 100; ++a) Offer(**c, "div.u32", {{a, 1, 0, 0}});
  }
  for (uint64_t a = 0; a < 100; ++a)
    Offer(**c, "div.u32", {{a, 0, 0, 0}});  // undefined
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.agreed, 100);
  EXPECT_GE(s.counts.unspecified, 1);
  EXPECT_LE(s.counts.unspecified, 5);
}

// The exploration budget counts a variant's fuzz-input tuples that were
// queued, not its repeats; once it had its share, the fuzz stage is wanted
// at the campaign's other variants, each in turn.
TEST(CampaignTest, FuzzInputsAreWantedWhereTheBudgetIsNotSpent) {
  const std::string dir = FreshDir("explore");
  CampaignOptions o = Options(dir, {});
  o.variants = {*ParseVariant("add.u32"), *ParseVariant("sub.u32"),
                *ParseVariant("mul.lo.u32")};
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  const Variant add = *ParseVariant("add.u32");
  for (uint64_t a = 0; a < ExplorationBudget::kTuplesPerPass; ++a) {
    EXPECT_FALSE((*c)->HadItsShare(add));
    Offer(**c, "add.u32", {{a, 1, 0, 0}});
    Offer(**c, "add.u32", {{a, 1, 0, 0}});  // a repeat: not counted
  }
  EXPECT_TRUE((*c)->HadItsShare(add));
  EXPECT_FALSE((*c)->HadItsShare(*ParseVariant("sub.u32")));
  EXPECT_TRUE((*c)->HadItsShare(*ParseVariant("add.s32")));  // not fuzzed
  std::set<std::string> next;
  for (int i = 0; i < 2; ++i) next.insert(Spell(*(*c)->NextToExplore()));
  EXPECT_THAT(next, ElementsAre("mul.lo.u32", "sub.u32"));
  const CampaignStats s = (*c)->Snapshot();
  ASSERT_EQ(s.explored.size(), static_cast<size_t>(kExploredBuckets));
  EXPECT_EQ(s.explored[0], 2);
  EXPECT_EQ(s.explored[ExplorationBudget::kTuplesPerPass], 1);
  (*c)->Stop();
}

// Lets `c` run until it files a new finding (at most 60 s), then stops it.
void StopAtItsFirstFinding(Campaign& c) {
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (c.Snapshot().new_findings == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  c.Stop();
}

TEST(CampaignTest, TheSystematicSourceFindsABugWithoutAnyFuzzInput) {
  const std::string dir = FreshDir("systematic");
  CampaignOptions o = Options(dir, {"--fault=wrong-on=popc.b64"});
  o.systematic = true;
  o.variants = {*ParseVariant("popc.b32"), *ParseVariant("popc.b64")};
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  StopAtItsFirstFinding(**c);
  const CampaignStats s = (*c)->Snapshot();
  // The first, and what the Stop found still to file (filed as found): all
  // of popc.b64.
  EXPECT_GE(s.new_findings, 1);
  for (const std::string& name : EntryNames(dir + "/triage"))
    EXPECT_THAT(name, HasSubstr("~popc.b64 x")) << name;
  EXPECT_EQ(s.variants_reached, 2);
  EXPECT_GT(s.systematic, 0);
}

// A backend that runs operand forms gets the runtime tier: a claim wrong for
// some value of a runtime source is found, minimized (the runtime source
// stays: with it an immediate, the backend answers right) and filed as a
// cause of its own, its class naming the runtime source. A worker that does
// not run forms is sent none.
TEST(CampaignTest, TheRuntimeTierFindsAClaimForEveryValueAndFilesItsForm) {
  const std::string dir = FreshDir("runtime_tier");
  CampaignOptions o = Options(dir, {"--fault=claim-on=bfe.s32"});
  o.systematic = true;
  o.variants = {*ParseVariant("bfe.s32"), *ParseVariant("bfe.u32")};
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  StopAtItsFirstFinding(**c);
  // The first finding minimized; what the Stop cut short filed as found.
  const std::vector<std::string> names = EntryNames(dir + "/triage");
  EXPECT_EQ((*c)->Snapshot().new_findings, static_cast<int64_t>(names.size()));
  int minimized = 0;
  for (const std::string& listed : names) {
    const std::string name =
        listed.substr(0, listed.find(' '));  // without " x<count>"
    std::ifstream in(dir + "/triage/" + name + "/case.txt");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    if (absl::StrContains(text, "not minimized: the campaign ended first"))
      continue;
    ++minimized;
    EXPECT_THAT(name,
                ::testing::StartsWith("value-mismatch~faulty~runtime-a."));
    EXPECT_THAT(name, ::testing::EndsWith("~bfe.s32"));
    EXPECT_THAT(text, ::testing::HasSubstr("runtime: a\n"));
  }
  EXPECT_EQ(minimized, 1);

  const std::string plain = FreshDir("runtime_tier_no_forms");
  o = Options(plain, {"--fault=claim-on=bfe.s32", "--no-forms"});
  o.systematic = true;
  o.variants = {*ParseVariant("bfe.s32")};
  auto without = Campaign::Start(o);
  ASSERT_TRUE(without.ok()) << without.status();
  const absl::Time until = absl::Now() + absl::Seconds(60);
  while ((*without)->Snapshot().systematic < 2000 && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  (*without)->Stop();
  const CampaignStats s = (*without)->Snapshot();
  EXPECT_GE(s.systematic, 2000);
  EXPECT_EQ(s.new_findings, 0);
  EXPECT_EQ(s.declined_by_code[static_cast<int>(DeclineCode::kOperandForm)], 0);
}

// The fuzz loop is asked to yield while the breadth pass (a tuple of every
// variant) is underway, and not after it, nor in a campaign without a
// systematic source.
TEST(CampaignTest, TheFuzzLoopYieldsWhileTheBreadthPassIsUnderway) {
  const std::string dir = FreshDir("yield");
  // ~10k vadd variants through lanes of 64 tuples, 1 ms a tuple: the pass
  // cannot be over for several seconds.
  CampaignOptions o = Options(dir, {"--us-per-tuple=1000"});
  o.systematic = true;
  o.lane_capacity = 64;
  for (const Variant& v : AllVariants()) {
    if (v.family == Family::kVadd) o.variants.push_back(v);
  }
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE((*c)->FuzzLoopShouldYield());
  (*c)->Stop();
}

TEST(CampaignTest, TheFuzzLoopDoesNotYieldOnceTheBreadthPassIsOver) {
  const std::string dir = FreshDir("no_yield");
  CampaignOptions o = Options(dir, {});
  o.variants = {*ParseVariant("popc.b32"), *ParseVariant("clz.b32")};
  auto plain = Campaign::Start(o);  // no systematic source, so no breadth pass
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE((*plain)->FuzzLoopShouldYield());
  (*plain)->Stop();

  o.systematic = true;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while ((*c)->FuzzLoopShouldYield() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_FALSE((*c)->FuzzLoopShouldYield());
  (*c)->Stop();
  EXPECT_GE((*c)->Snapshot().systematic, 2);
}

// Calibration times every family on a backend that is slow per tuple, and
// stops after the first batches on one that is cheap (there the campaign's
// own work sets the pace, and timing would only delay the first finding).
// Each line is drawn where no load can cross it: the slow worker sleeps
// (--us-per-tuple) four times the line it is judged against, and the cheap
// one, which never sleeps, is judged against a line of a second a tuple.
// The calibration budget, which a loaded machine could exhaust before the
// slow worker's last family, is out of reach.
TEST(CampaignTest, CalibrationTimesFamiliesOnlyWhereTheBackendIsSlow) {
  const std::vector<Variant> variants = {
      *ParseVariant("popc.b32"), *ParseVariant("clz.b32"),
      *ParseVariant("brev.b32"), *ParseVariant("bfind.u32"),
      *ParseVariant("cnot.b32"), *ParseVariant("not.b32")};
  for (const bool slow : {true, false}) {
    const std::string dir =
        FreshDir(slow ? "calibrate_slow" : "calibrate_cheap");
    CampaignOptions o =
        Options(dir, slow ? std::vector<std::string>{"--us-per-tuple=20000"}
                          : std::vector<std::string>{});
    o.systematic = true;
    o.variants = variants;
    o.batch_size = 0;  // the exec default: 512 tuples a family, 16 timed
    o.cheap_seconds_per_tuple = slow ? 5e-3 : 1.0;
    o.calibration_budget = absl::InfiniteDuration();
    auto c = Campaign::Start(o);
    ASSERT_TRUE(c.ok()) << c.status();
    (*c)->Stop();
    const CampaignStats s = (*c)->Snapshot();
    // Six families over two senders. A worker's first batch may pay for its
    // one-time set-up, so a cheap backend may show itself only in each
    // sender's second.
    if (slow) {
      EXPECT_EQ(s.families_timed, 6);
    } else {
      EXPECT_GE(s.families_timed, 1);
      EXPECT_LE(s.families_timed, 4)
          << "calibration took " << s.calibration_ms << " ms";
    }
    EXPECT_GT(s.counts.tuples, 0);  // the timed batches were judged
  }
}

// Issue 42, item 4: calibration on a backend whose batches never end (a
// tool that hangs takes its whole batch budget) held `fuzz --max-time 20`
// for 48 s. It ends at the campaign's deadline, and what it cut there is no
// finding.
TEST(CampaignTest, CalibrationEndsAtTheDeadline) {
  const std::string dir = FreshDir("calibrate_deadline");
  CampaignOptions o = Options(dir, {"--fault=hang-on=popc.b32"});
  o.systematic = true;
  o.variants = {*ParseVariant("popc.b32"), *ParseVariant("clz.b32")};
  o.calibration_budget = absl::InfiniteDuration();
  o.worker.timeout = absl::Seconds(60);  // a hang is not caught first
  const absl::Time start = absl::Now();
  o.deadline = start + absl::Seconds(3);
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  (*c)->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(15));
  EXPECT_THAT(EntryNames(dir + "/triage"), testing::IsEmpty());
}

}  // namespace
}  // namespace ptxdiff
