// The campaign's filing: a filing that fails keeps its journal line for
// the next campaign, every mismatch judged is counted in its entry, and a
// worker that cannot start is a clear error.

#include "campaign/campaign.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "campaign/testing/faulty_campaign.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

// Fault run of issue 65: on a full disk the repeats of a finding that could
// not be filed were counted as "already filed" and kept nowhere, so the
// next run filed its entry with count 1 of 4. They are not counted as
// filed: they are kept in the journal with their finding (an R line), and
// the next campaign files the entry with all of them.
TEST(CampaignTest, TheRepeatsOfAFindingNotFiledAreKeptWithIt) {
  const std::string dir = FreshDir("blocked_repeats");
  const std::string triage = dir + "/triage";
  std::system(("mkdir -p '" + triage + "'").c_str());
  std::ofstream(triage + "/" + kBfeEntry) << "in the way\n";
  auto c = Campaign::Start(Options(dir, kWrongBfe));
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "bfe.s64", {{0xff, 300, 8, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));  // its filing failed
  for (uint64_t a = 1; a <= 3; ++a) Offer(**c, "bfe.s64", {{a << 8, 300, 8, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.mismatched, 4);
  EXPECT_EQ(s.known_findings, 0);
  EXPECT_EQ(s.pending_repeats, 3);
  EXPECT_EQ(s.unfiled, 1);
  const std::string pending = triage + "/.pending/";
  ASSERT_EQ(unlink((triage + "/" + kBfeEntry).c_str()), 0);  // room again
  ASSERT_EQ(rename(absl::StrCat(pending, getpid(), ".journal").c_str(),
                   (pending + "999999998.journal").c_str()),
            0);
  auto next = Campaign::Start(Options(dir, kWrongBfe));
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE((*next)->Flush(absl::Seconds(60)));
  (*next)->Stop();
  EXPECT_EQ((*next)->Snapshot().adopted, 1);
  EXPECT_THAT(EntryNames(triage), ElementsAre(absl::StrCat(kBfeEntry, " x4")));
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
