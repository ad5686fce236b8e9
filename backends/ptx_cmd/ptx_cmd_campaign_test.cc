// Campaigns against the ptx-cmd backend, the test interpreter as the tool:
// what they file, and how mismatches of one cause are counted in its entry.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/testing/interpreter_tool.h"
#include "campaign/campaign.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/semantic_classes.h"
#include "oracle/oracle.h"
#include "triage/triage_store.h"
#include "worker/testing/ptx_cmd_worker.h"

namespace ptxdiff {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A campaign's options for the test interpreter run with `flags`, filing
// into `dir`'s triage directory.
CampaignOptions InterpreterCampaign(const std::string& flags,
                                    const TempDir& dir) {
  auto command = PtxCmdWorkerCommand(
      absl::StrCat(kInterpreter, " ", flags, " {ptx} {in} {out}"));
  EXPECT_TRUE(command.ok()) << command.status();
  CampaignOptions options;
  if (command.ok()) options.worker = *command;
  options.triage_dir = dir.File("triage");
  return options;
}

// The same judging only the tuples a test offers (no systematic source), in
// batches of 64.
CampaignOptions OfferedTuplesCampaign(const std::string& flags,
                                      const TempDir& dir) {
  CampaignOptions options = InterpreterCampaign(flags, dir);
  options.systematic = false;
  options.batch_size = 64;
  return options;
}

// Offers `t` as the fuzz loop does: with the oracle's result and classes.
void OfferTuple(Campaign& campaign, const Tuple& t) {
  const Result r = Evaluate(t.variant, t.operands);
  campaign.Offer(t, r, SemanticClasses(t, r));
}

// A campaign sends a tool the operand forms too: the systematic source's
// runtime tier gives bfe.s32 tuples with immediates, where a tool whose
// constant path is wrong (and whose register path, the default form, is
// right) is caught and filed against bfe.s32 alone.
TEST(PtxCmdCampaignTest, AToolWrongOnImmediatesOnlyIsFiled) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      InterpreterCampaign("--flip-immediate-forms=bfe.s32", **dir);
  options.variants = {V("bfe.s32"), V("bfe.u32")};
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  // The systematic source alone, until its first finding.
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while ((*campaign)->Snapshot().new_findings == 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  (*campaign)->Stop();
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_FALSE(entries->empty());
  for (const EntryInfo& e : *entries) {
    EXPECT_TRUE(absl::StartsWith(e.name, "value-mismatch~ptx-cmd~")) << e.name;
    EXPECT_TRUE(absl::EndsWith(e.name, "~bfe.s32")) << e.name;
    // Every source a runtime value is the register shape, which is right.
    EXPECT_FALSE(absl::StrContains(e.name, "runtime-a-b-c.")) << e.name;
    // The minimizer's contrast says so (issue 41, item 4), in the entry it
    // minimized; one the Stop cut short (filed as found) joins its cause.
    const auto cause = e.meta.find("cause");
    if (cause != e.meta.end()) {
      EXPECT_EQ(cause->second,
                "wrong only with 32-bit immediates in bfe (the same operands "
                "in registers agree)");
    }
  }
  const std::vector<RootCause> causes = GroupByRootCause(*entries);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].spelling,
            "wrong only with 32-bit immediates in bfe (the same operands in "
            "registers agree)");
}

// A campaign whose workers cannot write their own temporary files (the
// fifteenth fault run's full TMPDIR; here a file size limit) files nothing
// against the tool: the failure is kept, naming the file and the reason,
// for the run to stop on.
TEST(PtxCmdCampaignTest, NothingIsFiledWhenTheWorkersOwnFilesFail) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options = InterpreterCampaign("", **dir);
  options.worker = WithNoRoomToWrite(options.worker);
  options.variants = {V("add.s32"), V("add.cc.s32"), V("sub.s32")};
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  for (uint64_t a = 0; a < 200; ++a)
    OfferTuple(**campaign, {V("add.cc.s32"), {{a, 1}}});
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while ((*campaign)->environment_failure().empty() && absl::Now() < give_up)
    absl::SleepFor(absl::Milliseconds(50));
  (*campaign)->Flush(absl::Seconds(30));
  (*campaign)->Stop();
  EXPECT_THAT((*campaign)->environment_failure(),
              AllOf(HasSubstr("kernel.ptx: File too large"),
                    HasSubstr("under TMPDIR")));
  const CampaignStats stats = (*campaign)->Snapshot();
  EXPECT_EQ(stats.counts.faulty_batches, 0);
  EXPECT_EQ(stats.counts.faulted, 0);
  EXPECT_EQ(stats.new_findings, 0);
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  if (store.ok()) {
    auto entries = store->List();
    ASSERT_TRUE(entries.ok());
    EXPECT_TRUE(entries->empty()) << (*entries)[0].name;
  }
}

// A tool that reads 64-bit immediates as 32 bits is wrong in every 64-bit
// variant: once the first is minimized and its cause told by contrast, the
// others are contrasted in one run and counted in that entry (issue 41,
// item 4), not minimized into an entry each.
TEST(PtxCmdCampaignTest, MismatchesOfACauseAlreadyFiledAreCountedInIt) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      InterpreterCampaign("--dense-faults --startup-ms=2", **dir);
  options.variants = {V("add.u64"), V("sub.u64"), V("max.u64"), V("xor.b64")};
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  auto entries_now = [&] {
    auto store = TriageStore::Open((*dir)->File("triage"), false);
    auto entries = store.ok()
                       ? store->List()
                       : absl::StatusOr<std::vector<EntryInfo>>(store.status());
    return entries.ok() ? *entries : std::vector<EntryInfo>{};
  };
  auto families_found = [](const std::vector<EntryInfo>& entries) {
    std::set<std::string> families;
    for (const EntryInfo& e : entries) {
      const auto found_as = e.meta.find("found_as");
      if (found_as == e.meta.end()) continue;
      for (absl::string_view spelling : absl::StrSplit(found_as->second, ", "))
        families.insert(std::string(spelling.substr(0, spelling.find('.'))));
    }
    return families.size();
  };
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (families_found(entries_now()) < 4 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(200));
  }
  (*campaign)->Stop();
  const std::vector<EntryInfo> entries = entries_now();
  EXPECT_EQ(families_found(entries), 4u);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].meta.at("cause"),
            "64-bit immediates read as their low 32 bits (the same operands "
            "in registers agree)");
}

// Mismatches that wait to be filed while the first of their cause is being
// minimized are contrasted together, in one run of the tool, where each
// cost a run of its own (and the tool's start-up): a tool that reads 64-bit
// immediates as 32 bits is wrong in hundreds of variants, each found first
// in its own batch.
TEST(PtxCmdCampaignTest, MismatchesWaitingToBeFiledAreContrastedInOneRun) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      OfferedTuplesCampaign("--dense-faults --startup-ms=2", **dir);
  const std::vector<std::string> spellings = {"add.u64", "sub.u64", "max.u64",
                                              "min.u64", "xor.b64", "or.b64"};
  for (const std::string& s : spellings) options.variants.push_back(V(s));
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  // All offered at once: one batch, six mismatches queued together.
  for (const std::string& s : spellings)
    OfferTuple(**campaign, {V(s), {{0x100000003, 0x200000005}}});
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while ((*campaign)->Snapshot().contrasted < 5 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  (*campaign)->Stop();
  const CampaignStats stats = (*campaign)->Snapshot();
  // The first is minimized (its cause told there); the five queued behind
  // it are run in registers in one batch, and counted in its entry.
  EXPECT_EQ(stats.contrasted, 5);
  EXPECT_EQ(stats.contrast_runs, 1);
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(absl::c_count((*entries)[0].meta.at("found_as"), ','), 5);
}

// Sixth fault run of issue 65: two `fuzz` runs on one triage directory
// said "226 already filed" and "108 already filed", their entries counted
// 79. A variant counted in the entry of its cause (told by contrast) left
// its later repeats counted in no entry, though "already filed" said they
// were. Every mismatch judged is counted in an entry.
TEST(PtxCmdCampaignTest, RepeatsOfAVariantCountedUnderItsCauseAreCountedToo) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options =
      OfferedTuplesCampaign("--dense-faults --startup-ms=2", **dir);
  options.variants = {V("add.u64"), V("sub.u64")};
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  auto offer = [&](const char* spelling, uint64_t a) {
    OfferTuple(**campaign, {V(spelling), {{a, 0x200000005}}});
  };
  offer("add.u64", 0x100000003);  // minimized, its cause told by contrast
  ASSERT_TRUE((*campaign)->Flush(absl::Seconds(120)));
  offer("sub.u64", 0x300000007);  // counted under that cause
  ASSERT_TRUE((*campaign)->Flush(absl::Seconds(120)));
  for (uint64_t a : {0x300000009, 0x30000000b, 0x30000000d}) {
    offer("sub.u64", a);  // its repeats
  }
  ASSERT_TRUE((*campaign)->Flush(absl::Seconds(120)));
  (*campaign)->Stop();
  const CampaignStats stats = (*campaign)->Snapshot();
  ASSERT_EQ(stats.counts.mismatched, 5);
  EXPECT_EQ(stats.new_findings, 1);
  EXPECT_EQ(stats.known_findings, 4);
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].count(), 5) << (*entries)[0].name;
}

// A campaign against a tool that crashes on div.u32 and hangs on one bfe
// tuple files both as findings, with the tuple that causes each, and goes
// on judging everything else. The tool's timeout is the backend's own,
// adapted to what its runs cost here and now (ToolCostModel): a fixed
// one under that (timeout_ms=800, once) made a good run slowed by a loaded
// machine a hang, filed against a tuple that never hangs.
TEST(PtxCmdCampaignTest, CrashesAndHangsOfTheToolAreFiled) {
  auto dir = TempDir::Create("ptx-cmd-campaign-test");
  ASSERT_TRUE(dir.ok());
  CampaignOptions options = OfferedTuplesCampaign(
      "--crash-on=div.u32 --hang-on=bfe.u32:0x1234", **dir);
  auto campaign = Campaign::Start(options);
  ASSERT_TRUE(campaign.ok()) << campaign.status();
  auto offer = [&](const char* spelling, Operands ops) {
    OfferTuple(**campaign, {V(spelling), ops});
  };
  offer("add.u32", {{1, 2}});
  offer("div.u32", {{7, 2}});
  offer("bfe.u32", {{0x1234, 4, 8}});
  offer("bfe.u32", {{0x1235, 4, 8}});
  ASSERT_TRUE((*campaign)->Flush(absl::Seconds(120)));
  const CampaignStats stats = (*campaign)->Snapshot();
  EXPECT_EQ(stats.counts.faulted, 2);
  EXPECT_EQ(stats.counts.agreed, 2);
  EXPECT_EQ(stats.counts.faulty_batches, 0);
  EXPECT_EQ(stats.new_findings, 2);
  (*campaign)->Stop();
  auto store = TriageStore::Open((*dir)->File("triage"), false);
  ASSERT_TRUE(store.ok());
  auto entries = store->List();
  ASSERT_TRUE(entries.ok());
  std::vector<std::string> names;
  for (const EntryInfo& e : *entries) names.push_back(e.name);
  EXPECT_THAT(names,
              ::testing::UnorderedElementsAre("crash~ptx-cmd~crash~div.u32",
                                              "hang~ptx-cmd~hang~bfe.u32"));
  auto crash = store->Show("crash~ptx-cmd~crash~div.u32");
  ASSERT_TRUE(crash.ok());
  EXPECT_THAT(*crash, HasSubstr("killed by signal 11 (SIGSEGV)"));
  auto hang = store->Show("hang~ptx-cmd~hang~bfe.u32");
  ASSERT_TRUE(hang.ok());
  // Filed as found (a hang is not minimized): the exact tuple.
  EXPECT_THAT(*hang,
              AllOf(HasSubstr("0x00001234"), HasSubstr("timed out after")));
  // The eighteenth fault run: which timeout it was is said.
  EXPECT_THAT(*hang, HasSubstr("(the adaptive timeout: 4 times what a run of"));
}

}  // namespace
}  // namespace ptxdiff
