#include "campaign/campaign.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "triage/text_case.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/campaign_" + name + "_" +
                          std::to_string(getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

CampaignOptions Options(const std::string& dir,
                        std::vector<std::string> faulty_args) {
  CampaignOptions o;
  o.worker.argv = {PTXDIFF_FAULTY_WORKER_PATH};
  for (std::string& a : faulty_args) o.worker.argv.push_back(std::move(a));
  o.triage_dir = dir + "/triage";
  o.systematic = false;
  o.batch_size = 64;
  return o;
}

void Offer(Campaign& c, const char* spelling, Operands ops,
           uint8_t runtime = 0) {
  const Tuple t{*ParseVariant(spelling), ops, runtime};
  const Result r = Evaluate(t.variant, t.operands);
  c.Offer(t, r, SemanticClasses(t, r));
}

std::vector<std::string> EntryNames(const std::string& triage_dir) {
  std::vector<std::string> names;
  auto store = TriageStore::Open(triage_dir, false);
  if (!store.ok()) return {store.status().ToString()};
  const auto entries = store->List();
  if (!entries.ok()) return {entries.status().ToString()};
  for (const EntryInfo& e : *entries) {
    names.push_back(absl::StrCat(e.name, " x", e.count()));
  }
  return names;
}

// What `triage show` shows of an EntryNames line's entry ("<name> x<count>").
absl::StatusOr<std::string> ShowListed(const std::string& triage_dir,
                                       const std::string& listed) {
  auto store = TriageStore::Open(triage_dir, false);
  if (!store.ok()) return store.status();
  return store->Show(listed.substr(0, listed.rfind(' ')));
}

// A campaign of `o` with one sender, offered a batch of add.u32 and div.u32
// (the faulty worker's --fault picks which faults it), flushed and stopped:
// its entries (EntryNames).
std::vector<std::string> FileABatchThatFaults(CampaignOptions o) {
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  if (!c.ok()) return {c.status().ToString()};
  Offer(**c, "add.u32", {{1, 2, 0, 0}});
  Offer(**c, "div.u32", {{7, 2, 0, 0}});
  const bool flushed = (*c)->Flush(absl::Seconds(60));
  (*c)->Stop();
  if (!flushed) return {"the campaign did not flush in 60 s"};
  return EntryNames(o.triage_dir);
}

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
// compiled lane, beside the batches of folding checks: most checked tuples
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
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while ((*c)->Snapshot().counts.tuples < 20000 && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    (*c)->Stop();
    const CampaignStats s = (*c)->Snapshot();
    ASSERT_GE(s.counts.tuples, 20000);
    const int64_t runtime = RuntimeFormTuples((*c)->OutcomesSnapshot());
    share[lane] = static_cast<double>(runtime) / s.counts.tuples;
    // With the lane, the systematic source's depth (default forms of
    // small families, as much time as the breadth pass) shares the batches:
    // about half are runtime forms (48.6% in a run of the full suite).
    if (lane) {
      EXPECT_GT(runtime, s.counts.tuples / 3) << s.counts.tuples;
    } else {
      EXPECT_LT(runtime, s.counts.tuples / 4) << s.counts.tuples;
    }
  }
  EXPECT_GT(share[1], 2 * share[0]);
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

// The sender isolates the tuple that crashes the worker: it alone is a
// fault (filed as a crash of div.u32), add.u32 is judged.
TEST(CampaignTest, ATupleThatCrashesTheWorkerIsIsolatedAndFiled) {
  const std::string dir = FreshDir("fault");
  auto c = Campaign::Start(Options(dir, {"--fault=crash-on=div.u32"}));
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.u32", {{1, 2, 0, 0}});
  Offer(**c, "div.u32", {{7, 2, 0, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  EXPECT_EQ((*c)->Snapshot().counts.faulty_batches, 0);
  EXPECT_EQ((*c)->Snapshot().counts.faulted, 1);
  EXPECT_EQ((*c)->Snapshot().counts.agreed, 1);
  EXPECT_THAT(EntryNames(dir + "/triage"),
              ElementsAre("crash~faulty~crash~div.u32 x1"));
}

// A worker that hangs on one tuple (add.sat.s32 with a = MAX): that tuple is
// isolated by the sender and filed as a hang of add.sat.s32, nothing is
// blamed on another variant, and the rest of its batch is judged. The
// timeout is what an innocent tuple's reply must beat on a loaded machine
// (1 s failed once there; a worker's restart has a floor of its own,
// kMinHandshakeTimeout).
TEST(CampaignTest, ATupleThatHangsTheWorkerIsFiledAloneAndTheRestJudged) {
  const std::string dir = FreshDir("hang_tuple");
  CampaignOptions o = Options(
      dir, {"--fault=hang-on=add.sat.s32", "--when-operand=0:2147483647"});
  o.worker.timeout = absl::Seconds(3);
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.sat.s32", {{0x7fffffff, 1, 0, 0}});
  Offer(**c, "add.sat.s32", {{5, 6, 0, 0}});
  Offer(**c, "add.cc.s32", {{7, 8, 0, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.faulted, 1);
  EXPECT_EQ(s.counts.agreed, 2);
  EXPECT_EQ(s.counts.faulty_batches, 0);
  (*c)->Stop();
  EXPECT_THAT(EntryNames(dir + "/triage"),
              ElementsAre("hang~faulty~hang~add.sat.s32 x1"));
}

// Options whose first two workers (the senders') are wrong on bfe with a
// position of at least 256, and whose third (the minimizer's, started at the
// first finding) runs `third` instead: a shell command.
CampaignOptions WithMinimizerWorker(
    const std::string& dir, const std::string& third,
    const std::string& first_two =
        "--fault=wrong-on=bfe. --when-operand=1:256") {
  std::system(("mkdir -p '" + dir + "/starts'").c_str());  // mkdir is atomic
  CampaignOptions o = Options(dir, {});
  o.worker.argv = {"/bin/sh", "-c",
                   absl::StrCat("for i in 1 2; do mkdir '", dir,
                                "/starts/'$i 2>/dev/null && exec ",
                                PTXDIFF_FAULTY_WORKER_PATH, " ", first_two,
                                "; done; ", third)};
  o.in_flight = 2;
  return o;
}

// The finding the campaign files for one mismatching bfe.s64 tuple, as
// `triage show` prints it.
std::string FiledWithMinimizerWorker(const std::string& dir,
                                     const std::string& third) {
  auto c = Campaign::Start(WithMinimizerWorker(dir, third));
  if (!c.ok()) return c.status().ToString();
  Offer(**c, "bfe.s64", {{0xff, 300, 8, 0}});
  if (!(*c)->Flush(absl::Seconds(60))) return "not flushed";
  (*c)->Stop();
  auto shown = TriageStore::Open(dir + "/triage", false)
                   ->Show("value-mismatch~faulty~ge256~bfe.s64");
  return shown.ok() ? *shown : shown.status().ToString();
}

// When the minimizer's worker cannot start or faults, the finding is filed
// as found (not minimized to bfe.u64, not called flaky), with the reason.
TEST(CampaignTest, AFindingIsFiledWhenNoWorkerCanStartToMinimizeIt) {
  const std::string shown = FiledWithMinimizerWorker(
      FreshDir("nominimizer"), "echo no more workers >&2; exit 7");
  EXPECT_THAT(shown, HasSubstr("cannot start a worker to minimize with"));
  EXPECT_THAT(shown, HasSubstr("no more workers"));
  EXPECT_THAT(shown, ::testing::Not(HasSubstr("flaky")));
}

TEST(CampaignTest, AFindingIsFiledWhenItsMinimizationFaults) {
  const std::string shown = FiledWithMinimizerWorker(
      FreshDir("crashingminimizer"),
      absl::StrCat("exec ", PTXDIFF_FAULTY_WORKER_PATH, " --fault=crash"));
  EXPECT_THAT(shown, HasSubstr("crash"));
  EXPECT_THAT(shown, ::testing::Not(HasSubstr("flaky")));
}

// A fault whose isolation ran out of budget is filed as an unisolated fault
// of the batch, naming its variants: not declines only (nothing filed), nor
// a fault of the batch's first tuple (issue 28, item 3). (A zero budget:
// spent at once.)
TEST(CampaignTest, AFaultThatCouldNotBeIsolatedIsFiledAsSuchNamingTheBatch) {
  const std::string dir = FreshDir("unisolated");
  CampaignOptions o = Options(
      dir, {"--fault=hang-on=add.sat.s32", "--when-operand=0:2147483647"});
  o.worker.timeout = absl::Seconds(1);
  o.isolation_budget = absl::ZeroDuration();
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.cc.s32", {{7, 8, 0, 0}});
  Offer(**c, "add.sat.s32", {{0x7fffffff, 1, 0, 0}});
  Offer(**c, "add.sat.s32", {{5, 6, 0, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.faulted, 0);
  EXPECT_EQ(s.counts.faulty_batches, 1);
  const std::vector<std::string> names = EntryNames(dir + "/triage");
  ASSERT_EQ(names.size(), 1u);
  // Named after the batch, not its first variant (add.cc.s32, innocent),
  // and its case holds every tuple of the batch.
  const std::string entry = names[0].substr(0, names[0].size() - 3);
  EXPECT_THAT(entry, ::testing::MatchesRegex(
                         "hang~faulty~unisolated-hang~batch-[0-9a-f]{8}"));
  auto shown = TriageStore::Open(dir + "/triage", false)->Show(entry);
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_THAT(*shown, HasSubstr("not narrowed to one tuple: isolating a hang"));
  EXPECT_THAT(*shown, HasSubstr("none is known to be at fault"));
  std::ifstream in(dir + "/triage/" + entry + "/case.txt");
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  auto tuples = ParseTextCaseTuples(text);
  ASSERT_TRUE(tuples.ok()) << tuples.status();
  const Variant sat = *ParseVariant("add.sat.s32");
  EXPECT_THAT(*tuples, ::testing::UnorderedElementsAre(
                           Tuple{*ParseVariant("add.cc.s32"), {{7, 8, 0, 0}}},
                           Tuple{sat, {{0x7fffffff, 1, 0, 0}}},
                           Tuple{sat, {{5, 6, 0, 0}}}));
}

// The entry names of `triage_dir` that start with `prefix`, once one is
// there or `give_up` has passed.
std::vector<std::string> AwaitEntries(const std::string& triage_dir,
                                      const std::string& prefix,
                                      absl::Time give_up) {
  while (true) {
    std::vector<std::string> found;
    for (const std::string& name : EntryNames(triage_dir)) {
      if (name.starts_with(prefix)) found.push_back(name);
    }
    if (!found.empty() || absl::Now() >= give_up) return found;
    absl::SleepFor(absl::Milliseconds(50));
  }
}

// Isolating a fault ends at the campaign's deadline (issue 28, item 3): a
// batch whose every tuple hangs the worker would otherwise keep its sender
// isolating for the whole budget (two minutes here: a run bisected one
// timeout at a time), far past --max-time. What isolation did not settle is
// filed as an unisolated fault of the batch, at once: before Stop, long
// before the budget's end.
TEST(CampaignTest, IsolationEndsAtTheCampaignsDeadlineAndFilesWhatItLeft) {
  const std::string dir = FreshDir("isolation_deadline");
  CampaignOptions o = Options(dir, {"--fault=hang-on=add.sat.s32"});
  o.worker.timeout = absl::Seconds(1);
  o.isolation_budget = absl::Minutes(2);
  o.in_flight = 1;
  o.deadline = absl::Now() + absl::Seconds(4);
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  for (uint64_t a = 0; a < 64; ++a) Offer(**c, "add.sat.s32", {{a, 1, 0, 0}});
  // Generous for a loaded machine, and a minute and a half short of the
  // budget's end.
  const std::vector<std::string> unisolated =
      AwaitEntries(dir + "/triage", "hang~faulty~unisolated-hang~",
                   o.deadline + absl::Seconds(30));
  ASSERT_EQ(unisolated.size(), 1u) << "isolation went on past the deadline";
  auto shown = ShowListed(dir + "/triage", unisolated[0]);
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_THAT(
      *shown,
      HasSubstr(
          "isolating a hang of the worker reached the campaign's deadline"));
  (*c)->Stop();
  // (The tuples may have gone in one batch or two.)
  EXPECT_GE((*c)->Snapshot().counts.faulty_batches, 1);
  // A run cut short by the deadline blames nothing: every tuple filed alone
  // hung alone (none is a crash, and none was cut to a shorter timeout).
  for (const std::string& name : EntryNames(dir + "/triage")) {
    EXPECT_THAT(name, ::testing::StartsWith("hang~faulty~")) << name;
  }
}

// The filer's isolation of a batch fault (one the senders do not isolate: a
// device fault) stops at the deadline too: past it, the fault is filed
// unisolated at once instead of bisected.
TEST(CampaignTest, TheFilersIsolationStopsAtTheDeadline) {
  const std::string dir = FreshDir("filer_deadline");
  CampaignOptions o = Options(dir, {"--fault=device-fault-on=div.u32"});
  o.deadline = absl::Now();  // past by the time the fault is filed
  const std::vector<std::string> names = FileABatchThatFaults(o);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_THAT(names[0],
              ::testing::StartsWith(
                  "device-fault~faulty~unisolated-device-fault~batch-"));
  auto shown = ShowListed(dir + "/triage", names[0]);
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_THAT(*shown,
              HasSubstr("isolating the fault reached the campaign's deadline"));
}

// A campaign stopped (Ctrl-C) while a sender isolates: the tuples not yet
// settled were dropped as "not run" and the batch's fault lost, and the run
// Stop's interrupt killed was blamed on its tuple as a crash. The fault is
// filed as unisolated, saying it was cut short, and no crash is filed.
TEST(CampaignTest, IsolationCutShortByStopFilesTheFaultAndBlamesNothing) {
  const std::string dir = FreshDir("isolation_stopped");
  CampaignOptions o = Options(dir, {"--fault=hang-on=add.sat.s32"});
  o.worker.timeout = absl::Seconds(1);
  o.isolation_budget = absl::Minutes(2);
  o.stop_grace = absl::Milliseconds(100);
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  for (uint64_t a = 0; a < 64; ++a) Offer(**c, "add.sat.s32", {{a, 1, 0, 0}});
  // Isolation is underway once its parts have restarted the worker.
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while ((*c)->Snapshot().worker_restarts < 2 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_GE((*c)->Snapshot().worker_restarts, 2);
  (*c)->Stop();
  const std::vector<std::string> names = EntryNames(dir + "/triage");
  bool unisolated = false;
  for (const std::string& name : names) {
    EXPECT_THAT(name, ::testing::StartsWith("hang~faulty~")) << name;
    if (!name.starts_with("hang~faulty~unisolated-hang~")) continue;
    unisolated = true;
    auto shown = ShowListed(dir + "/triage", name);
    ASSERT_TRUE(shown.ok()) << shown.status();
    EXPECT_THAT(*shown,
                HasSubstr("was cut short: the client was told to stop"));
  }
  EXPECT_TRUE(unisolated) << ::testing::PrintToString(names);
}

// A batch fault the sender does not isolate (a device fault), when no
// worker could start to isolate it, is filed as an unisolated fault of the
// batch, with the reason: not as a device fault of the batch's first
// variant (add.u32, innocent; issue 28, item 3).
TEST(CampaignTest,
     ABatchFaultNoWorkerCouldIsolateIsNotBlamedOnItsFirstVariant) {
  const std::string dir = FreshDir("unisolated_no_minimizer");
  CampaignOptions o =
      WithMinimizerWorker(dir, "echo no more workers >&2; exit 7",
                          "--fault=device-fault-on=div.u32");
  // One sender: its worker and the restart after the fault, then none.
  const std::vector<std::string> names = FileABatchThatFaults(o);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_THAT(names[0], ::testing::StartsWith(
                            "device-fault~faulty~unisolated-device-fault~"));
  EXPECT_THAT(names[0], ::testing::EndsWith(" x1"));
  auto shown = ShowListed(dir + "/triage", names[0]);
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_THAT(*shown, HasSubstr("cannot start a worker to minimize with"));
  EXPECT_THAT(*shown, HasSubstr("the batch's variants: add.u32, div.u32"));
}

// A tuple that faulted the worker is not sent again, each time costing an
// isolation (issue 28, item 3): the campaign withholds it for the rest of
// the run, though the dedup table (tiny here) forgot it and the decline
// model's quarantine lets one in 256 of its class through.
TEST(CampaignTest, ATupleThatFaultedIsNotSentAgain) {
  const std::string dir = FreshDir("withheld");
  CampaignOptions o = Options(dir, {"--fault=crash-on=div.u32"});
  o.dedup_slots = 8;
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  uint64_t next = 0;
  for (int round = 0; round < 600; ++round) {
    Offer(**c, "div.u32", {{7, 2, 0, 0}});
    for (int i = 0; i < 64; ++i, ++next)
      Offer(**c, "add.u32", {{next, 1, 0, 0}});
    ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  }
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.faulted, 1);
  EXPECT_EQ(s.counts.faulty_batches, 0);
  EXPECT_GE(s.withheld_faulting, 1);
  EXPECT_THAT(EntryNames(dir + "/triage"),
              ElementsAre("crash~faulty~crash~div.u32 x1"));
}

// Tuples a batch left unrun, because the backend's time budget ran out
// before it got to them, are sent again, not declined (issue 41, item 1):
// every tuple offered is judged.
TEST(CampaignTest, TuplesABatchLeftUnrunAreSentAgain) {
  const std::string dir = FreshDir("sent_again");
  CampaignOptions o = Options(dir, {"--fault=not-run-once-on=add.u32",
                                    "--state=" + dir + "-not-run-once"});
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  for (uint64_t i = 0; i < 32; ++i) {
    Offer(**c, "add.u32", {{i, 1, 0, 0}});
    Offer(**c, "sub.u32", {{i, 1, 0, 0}});
  }
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_GT(s.sent_again, 0);
  EXPECT_EQ(s.counts.tuples, 64);
  EXPECT_EQ(s.counts.agreed, 64);
  EXPECT_EQ(s.counts.declined, 0);
  std::remove((dir + "-not-run-once").c_str());
}

// A backend that never gets to a variant's tuples: sent again 8 times
// (kMaxSendsAgain), then counted as declined "not run", apart from the other
// declines, so that a summary can show how many a run left unrun.
TEST(CampaignTest, TuplesNeverRunAreCountedApart) {
  const std::string dir = FreshDir("never_run");
  auto c = Campaign::Start(Options(dir, {"--fault=not-run-on=add.u32"}));
  ASSERT_TRUE(c.ok()) << c.status();
  for (uint64_t i = 0; i < 8; ++i) {
    Offer(**c, "add.u32", {{i, 1, 0, 0}});
    Offer(**c, "sub.u32", {{i, 1, 0, 0}});
  }
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.agreed, 8);
  EXPECT_EQ(s.counts.declined, 8);
  EXPECT_EQ(s.declined_not_run, 8);
  EXPECT_EQ(s.sent_again, 8 * 8);
  int64_t by_code = 0;
  for (int64_t n : s.declined_by_code) by_code += n;
  EXPECT_EQ(by_code, 0);
}

// Tuples left unrun whose class the backend declines by now (here the
// variant: every tuple it answered was declined) are dropped as the model
// drops such tuples before they are sent, not sent again and not counted
// as declined "not run": a run declines as not run only what it sent again
// kMaxSendsAgain times.
TEST(CampaignTest, UnrunTuplesOfADecliningClassAreDroppedNotDeclined) {
  const std::string dir = FreshDir("unrun_declining");
  // A slow worker: while the first batch (whatever was offered by then)
  // runs, the rest are queued, so the next batch's answers teach the model
  // before any unrun tuple could be sent again kMaxSendsAgain times in
  // batches of a few (a loaded machine offered them that slowly).
  CampaignOptions o = Options(
      dir,
      {"--fault=decline-even-not-run-odd-on=add.u32", "--us-per-tuple=2000"});
  o.batch_size = 256;
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  for (uint64_t i = 0; i < 256; ++i) Offer(**c, "add.u32", {{i, 1, 0, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  // Only even ones were judged (declined); the odd ones, never run, were
  // dropped once the variant was learned as declining (after the first
  // batch or two: how many tuples each holds depends on how fast they were
  // offered, so not how many were declined before).
  EXPECT_GT(s.counts.declined, 0);
  EXPECT_EQ(s.counts.tuples, s.counts.declined);
  EXPECT_EQ(s.declined_not_run, 0);
  EXPECT_GT(s.skipped_declining, 0);
}

// Nothing found is left pending when the run ends (issue 41, item 6): a
// mismatch whose minimizing the deadline cuts short is filed as found,
// saying so, not kept in the journal for the next campaign.
TEST(CampaignTest, AFindingMinimizingAtTheDeadlineIsFiledAsFound) {
  const std::string dir = FreshDir("filed_as_found");
  // Each tuple costs 0.3 s: a minimizing round of tens of candidates takes
  // seconds, past the deadline.
  CampaignOptions o =
      Options(dir, {"--fault=wrong-on=add.u32", "--us-per-tuple=300000"});
  o.deadline = absl::Now() + absl::Seconds(3);
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "add.u32", {{0x12345678, 0x9abcdef, 0, 0}});
  while ((*c)->Snapshot().counts.mismatched == 0)
    absl::SleepFor(absl::Milliseconds(20));
  absl::SleepFor(o.deadline - absl::Now());
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.unfiled, 0);
  EXPECT_EQ(s.new_findings, 1);
  const std::vector<std::string> names = EntryNames(dir + "/triage");
  ASSERT_EQ(names.size(), 1u);
  const std::string entry =
      dir + "/triage/" + names[0].substr(0, names[0].find(' '));
  std::ifstream case_file(entry + "/case.txt");
  const std::string text((std::istreambuf_iterator<char>(case_file)), {});
  EXPECT_THAT(text, HasSubstr("not minimized: the campaign ended first"));
  // Its last runs interrupted are not the backend's doing: not flaky.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("flaky")));
}

// The entry a mismatching bfe.s64 with a position of 256 or more files as
// (minimized to the plainer bfe.u64), and the worker that gives it.
constexpr char kBfeEntry[] = "value-mismatch~faulty~ge256~bfe.u64";
const std::vector<std::string> kWrongBfe = {"--fault=wrong-on=bfe.",
                                            "--when-operand=1:256"};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// A campaign that judges one bfe mismatch while the triage directory cannot
// take its entry: a regular file where the entry's directory goes makes the
// store's write fail, as a full disk would (and as root, whom a read-only
// directory would not stop). Returns the campaign's stats after Stop.
CampaignStats FileIntoABlockedEntry(const std::string& dir) {
  const std::string triage = dir + "/triage";
  std::system(("mkdir -p '" + triage + "'").c_str());
  std::ofstream(triage + "/" + kBfeEntry) << "in the way\n";
  auto c = Campaign::Start(Options(dir, kWrongBfe));
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return {};
  Offer(**c, "bfe.s64", {{0xff, 300, 8, 0}});
  EXPECT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  return (*c)->Snapshot();
}

// A filing that fails keeps its mismatch: the journal keeps the line (it is
// not removed at Stop for want of anything left to file), and the stats,
// not only the log, say why (issue 28).
TEST(CampaignTest, AFilingThatFailsKeepsItsJournalLineAndSaysWhy) {
  const std::string dir = FreshDir("blocked");
  const CampaignStats s = FileIntoABlockedEntry(dir);
  EXPECT_EQ(s.counts.mismatched, 1);
  EXPECT_EQ(s.new_findings, 0);
  EXPECT_EQ(s.filing_errors, 1);
  EXPECT_THAT(s.filing_error, HasSubstr(kBfeEntry));
  EXPECT_THAT(s.filing_error, HasSubstr("Not a directory"));
  EXPECT_EQ(s.unfiled, 1);
  EXPECT_EQ(s.unjournaled, 0);
  const std::string journal =
      absl::StrCat(dir, "/triage/.pending/", getpid(), ".journal");
  const std::vector<PendingMismatch> kept = ParseJournal(ReadAll(journal));
  ASSERT_EQ(kept.size(), 1u) << "no journal at " << journal;
  EXPECT_EQ(Spell(kept[0].tuple.variant),
            "bfe.s64");  // as judged, before minimizing
  EXPECT_EQ(kept[0].tuple.operands.v[1], 300u);
}

// ... and the next campaign on the directory, once it can write there,
// files what the journal kept, and then removes the journal.
TEST(CampaignTest, TheNextCampaignFilesWhatAFailedFilingKept) {
  const std::string dir = FreshDir("refile");
  ASSERT_EQ(FileIntoABlockedEntry(dir).unfiled, 1);
  const std::string pending = dir + "/triage/.pending/";
  ASSERT_EQ(unlink((dir + "/triage/" + kBfeEntry).c_str()), 0);  // room again
  // The process that kept it is gone (journals are adopted only from those):
  // this one stands in for it under a pid no process can have.
  ASSERT_EQ(rename(absl::StrCat(pending, getpid(), ".journal").c_str(),
                   (pending + "999999999.journal").c_str()),
            0);
  auto next = Campaign::Start(Options(dir, kWrongBfe));
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE((*next)->Flush(absl::Seconds(60)));
  (*next)->Stop();
  const CampaignStats s = (*next)->Snapshot();
  EXPECT_EQ(s.adopted, 1);
  EXPECT_EQ(s.new_findings, 1);
  EXPECT_EQ(s.filing_errors, 0);
  EXPECT_EQ(s.unfiled, 0);
  EXPECT_THAT(EntryNames(dir + "/triage"),
              ElementsAre(absl::StrCat(kBfeEntry, " x1")));
  struct stat st;
  EXPECT_NE(stat((pending + "999999999.journal").c_str(), &st), 0);
  EXPECT_NE(stat(absl::StrCat(pending, getpid(), ".journal").c_str(), &st), 0)
      << "everything was filed, yet the journal was kept";
}

// The repeat counts written to the triage directory are every mismatch the
// run reported: the filer's last flush comes after the senders' last
// judging (issue 28, item 6). A worker slowed per tuple holds repeats in
// flight when Stop is called.
TEST(CampaignTest, EveryMismatchJudgedIsCountedInItsEntry) {
  const std::string dir = FreshDir("counts");
  std::vector<std::string> slow_and_wrong = kWrongBfe;
  slow_and_wrong.push_back("--us-per-tuple=50000");
  CampaignOptions o = Options(dir, slow_and_wrong);
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "bfe.u64", {{0xff, 300, 8, 0}});
  ASSERT_TRUE(
      (*c)->Flush(absl::Seconds(60)));  // filed: what follows repeats it
  for (uint64_t a = 1; a <= 8; ++a)
    Offer(**c, "bfe.u64", {{a << 8, 300, 8, 0}});
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while ((*c)->Snapshot().queue.taken < 9 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ((*c)->Snapshot().queue.taken, 9) << "the repeats were never sent";
  (*c)->Stop();  // while they are in flight
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.mismatched, 9);
  EXPECT_EQ(s.known_findings, 8);
  EXPECT_THAT(EntryNames(dir + "/triage"),
              ElementsAre(absl::StrCat(kBfeEntry, " x9")));
}

// The restart counter counts the filer's worker (the minimizer's) too,
// which here crashes on every run (issue 28, item 6).
TEST(CampaignTest, TheMinimizersWorkerRestartsAreCounted) {
  auto c = Campaign::Start(WithMinimizerWorker(
      FreshDir("minimizer_restarts"),
      absl::StrCat("exec ", PTXDIFF_FAULTY_WORKER_PATH, " --fault=crash")));
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "bfe.s64", {{0xff, 300, 8, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  EXPECT_GT((*c)->Snapshot().worker_restarts, 0);
}

TEST(CampaignTest, AWorkerThatCannotStartIsAClearError) {
  CampaignOptions o;
  o.worker.argv = {"/nonexistent/worker"};
  o.triage_dir = FreshDir("bad") + "/triage";
  auto c = Campaign::Start(o);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/worker"));
}

}  // namespace
}  // namespace ptxdiff
