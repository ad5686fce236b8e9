#include "campaign/case_lane.h"

#include <sys/stat.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "campaign/campaign.h"
#include "campaign/testing/faulty_campaign.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "triage/pending_journal.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

TEST(LaneShareTest, TuplesGoFirstThenEachGetsItsShareOfTheTime) {
  LaneShare half(0.5);
  EXPECT_FALSE(half.LanesTurn());
  half.TuplesTook(absl::Seconds(1));
  EXPECT_TRUE(half.LanesTurn());
  half.LaneTook(absl::Seconds(1));
  EXPECT_FALSE(half.LanesTurn());
  half.TuplesTook(absl::Milliseconds(10));
  EXPECT_TRUE(half.LanesTurn());
}

TEST(LaneShareTest, ShareZeroNeverAndShareOneAlways) {
  LaneShare none(0), all(1);
  none.TuplesTook(absl::Seconds(10));
  all.LaneTook(absl::Seconds(10));
  EXPECT_FALSE(none.LanesTurn());
  EXPECT_TRUE(all.LanesTurn());
}

// A lane that runs one add.u32 on the worker it is given per batch (at
// most `batches` of them; -1: no end), finds something in its first
// `finds` batches, and files each on the worker the filer gives it, taking
// `filing` to.
class FakeLane : public CaseLane {
 public:
  explicit FakeLane(int finds, int batches = -1,
                    absl::Duration filing = absl::ZeroDuration())
      : finds_(finds), batches_(batches), filing_(filing) {}

  bool RunBatch(WorkerClient& worker, absl::Time) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (batches_ == 0) return false;
      if (batches_ > 0) --batches_;
    }
    const Tuple t{*ParseVariant("add.u32"), {{1, 2, 0, 0}}, 0};
    const BatchOutcome out = worker.Run(std::vector<Tuple>{t});
    std::lock_guard<std::mutex> lock(mu_);
    senders_.insert(&worker);
    if (!out.fault) ++counts_.checked;
    if (finds_ > 0) {
      --finds_;
      ++found_;
      ++counts_.disagreements;
    }
    return true;
  }
  bool HasFound() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return found_ > 0;
  }
  void FileFound(WorkerClient& worker, absl::Time) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      filers_.insert(&worker);
      --found_;
    }
    absl::SleepFor(filing_);  // taken, and not filed yet
    if (on_filing) on_filing();
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.filed;
  }
  // Called as each find is filed (set before the campaign runs).
  std::function<void()> on_filing;
  void Finish() override { ++finished_; }
  CaseLaneCounts Counts() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }

  std::set<WorkerClient*> senders() const {
    std::lock_guard<std::mutex> lock(mu_);
    return senders_;
  }
  std::set<WorkerClient*> filers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return filers_;
  }
  int finished() const { return finished_; }

 private:
  mutable std::mutex mu_;
  int finds_, batches_, found_ = 0;
  const absl::Duration filing_;
  CaseLaneCounts counts_;
  std::set<WorkerClient*> senders_, filers_;
  std::atomic<int> finished_{0};
};

// Waits (at most a minute) until `done`.
template <typename F>
bool WaitFor(F done) {
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (!done()) {
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

TEST(CaseLaneTest, SendersRunTheLaneOnTheirWorkersAndTheFilerFilesItsFinds) {
  const std::string dir = FreshDir("lane");
  CampaignOptions o = Options(dir, {"--fault=wrong-on=bfe."});
  FakeLane* lane = nullptr;
  o.lane = [&lane](const WorkerIdentity&)
      -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    auto made = std::make_unique<FakeLane>(/*finds=*/2);
    lane = made.get();
    return std::unique_ptr<CaseLane>(std::move(made));
  };
  o.lane_share = 0.5;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(lane, nullptr);
  // Tuples are judged and filed beside the lane.
  Offer(**c, "bfe.u32", {{0xff, 4, 4, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  ASSERT_TRUE(WaitFor([&] { return lane->Counts().filed == 2; }));
  ASSERT_TRUE(WaitFor([&] { return lane->senders().size() == 2; }));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.mismatched, 1);
  EXPECT_EQ(s.new_findings, 1);
  EXPECT_GT(s.lane.checked, 0);
  EXPECT_EQ(s.lane.disagreements, 2);
  EXPECT_EQ(s.lane.filed, 2);
  // The filer's worker is its own, not a sender's.
  ASSERT_EQ(lane->filers().size(), 1u);
  EXPECT_EQ(lane->senders().count(*lane->filers().begin()), 0u);
  EXPECT_EQ(lane->finished(), 0);
  (*c)->Stop();
  EXPECT_EQ(lane->finished(), 1);
}

TEST(CaseLaneTest, ALaneTheWorkerCannotRunLeavesTheTuplesAndSaysWhy) {
  const std::string dir = FreshDir("no_lane");
  CampaignOptions o = Options(dir, {"--fault=wrong-on=bfe."});
  o.lane = [](const WorkerIdentity&)
      -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    return absl::FailedPreconditionError("the worker runs no programs");
  };
  o.lane_share = 0.5;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  Offer(**c, "bfe.u32", {{0xff, 4, 4, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  const CampaignStats s = (*c)->Snapshot();
  EXPECT_EQ(s.counts.mismatched, 1);
  EXPECT_THAT(s.lane_not_started, HasSubstr("runs no programs"));
  EXPECT_EQ(s.lane.checked, 0);
  (*c)->Stop();
}

TEST(CaseLaneTest, ShareZeroMakesNoLane) {
  const std::string dir = FreshDir("share_zero");
  CampaignOptions o = Options(dir, {});
  bool made = false;
  o.lane = [&made](const WorkerIdentity&)
      -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    made = true;
    return std::unique_ptr<CaseLane>(std::make_unique<FakeLane>(0));
  };
  o.lane_share = 0;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE((*c)->LaneFinished());
  (*c)->Stop();
  EXPECT_FALSE(made);
}

// The eighteenth fault run: a backend wrong on a family kept tuple
// findings queued all run, and the filer took the lane's only when none
// waited, so they were never filed. It takes one of the lane's after each
// tuple finding while both wait.
TEST(CaseLaneTest, TheLanesFindsAreFiledBetweenQueuedTupleFindings) {
  const std::string dir = FreshDir("lane_turn");
  CampaignOptions o = Options(dir, {"--fault=wrong-on=vadd."});
  FakeLane* lane = nullptr;
  std::atomic<int64_t> unfiled_then{-1};
  std::unique_ptr<Campaign>* campaign = nullptr;
  o.lane =
      [&](const WorkerIdentity&) -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    auto made = std::make_unique<FakeLane>(/*finds=*/1);
    made->on_filing = [&] {
      if (campaign != nullptr) unfiled_then = (*campaign)->Snapshot().unfiled;
    };
    lane = made.get();
    return std::unique_ptr<CaseLane>(std::move(made));
  };
  o.lane_share = 0.5;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  campaign = &*c;
  // Mismatches of many vadd variants: a tuple filing each, minimized.
  const auto vadd = VariantsOf(Family::kVadd);
  for (size_t k = 0; k < vadd.size(); k += vadd.size() / 300)
    Offer(**c, Spell(vadd[k]).c_str(), {{1, 2, 3, 0}});
  ASSERT_TRUE(WaitFor([&] { return lane->Counts().filed == 1; }));
  // Filed while tuple findings still waited.
  EXPECT_GT(unfiled_then.load(), 0);
  (*c)->Stop();
}

// A campaign of the lane alone (`ptxdiff programs`) ends when the lane is
// finished: only once what it found is filed, a finding the filer has
// taken and not yet filed included.
TEST(CaseLaneTest, ALaneIsFinishedOnlyOnceItsLastFindIsFiled) {
  const std::string dir = FreshDir("lane_alone");
  CampaignOptions o = Options(dir, {});
  FakeLane* lane = nullptr;
  o.lane =
      [&lane](
          const WorkerIdentity&) -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    auto made = std::make_unique<FakeLane>(/*finds=*/3, /*batches=*/5,
                                           absl::Milliseconds(100));
    lane = made.get();
    return std::unique_ptr<CaseLane>(std::move(made));
  };
  o.lane_share = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(lane, nullptr);
  ASSERT_TRUE(WaitFor([&] { return (*c)->LaneFinished(); }));
  EXPECT_EQ(lane->Counts().filed, 3);
  EXPECT_EQ(lane->Counts().checked, 5);
  (*c)->Stop();
  EXPECT_TRUE((*c)->LaneFinished());
}

// A campaign of its lane alone (`ptxdiff programs`) runs no tuples: the
// tuple mismatches an earlier campaign left unfiled are not its to file
// (they were found on a backend it does not know), and stay for one that
// runs tuples.
TEST(CaseLaneTest, ALaneAloneLeavesTheTupleJournalsOfEarlierRuns) {
  const std::string dir = FreshDir("lane_alone_journal");
  const std::string pending = dir + "/triage/.pending/";
  ASSERT_TRUE(MakeDirs(dir + "/triage").ok());
  {
    auto journal = PendingJournal::Open(dir + "/triage");
    ASSERT_TRUE(journal.ok()) << journal.status();
    (*journal)->Add({.tuple = {*ParseVariant("add.u32"), {{1, 2, 0, 0}}, 0},
                     .backend_bits = 4});
    ASSERT_FALSE((*journal)->RemoveIfAllDone());
  }
  // Left by a process that is gone: one under a pid no process can have.
  ASSERT_EQ(rename(absl::StrCat(pending, getpid(), ".journal").c_str(),
                   (pending + "999999999.journal").c_str()),
            0);
  CampaignOptions o = Options(dir, {});
  o.lane =
      [](const WorkerIdentity&) -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    return std::unique_ptr<CaseLane>(
        std::make_unique<FakeLane>(/*finds=*/0, /*batches=*/1));
  };
  o.lane_share = 1;
  auto alone = Campaign::Start(o);
  ASSERT_TRUE(alone.ok()) << alone.status();
  ASSERT_TRUE(WaitFor([&] { return (*alone)->LaneFinished(); }));
  (*alone)->Stop();
  EXPECT_EQ((*alone)->Snapshot().adopted, 0);
  struct stat st;
  EXPECT_EQ(stat((pending + "999999999.journal").c_str(), &st), 0);

  o.lane_share = 0.5;  // tuples too: it adopts them
  auto both = Campaign::Start(o);
  ASSERT_TRUE(both.ok()) << both.status();
  (*both)->Stop();
  EXPECT_EQ((*both)->Snapshot().adopted, 1);
}

// lane_files_on_senders: each sender files what the lane found on its own
// worker, and the filer's worker files none of it.
TEST(CaseLaneTest, SendersThatFileTheirFindsFileThemOnTheirWorkers) {
  const std::string dir = FreshDir("lane_senders_file");
  CampaignOptions o = Options(dir, {});
  FakeLane* lane = nullptr;
  o.lane =
      [&lane](
          const WorkerIdentity&) -> absl::StatusOr<std::unique_ptr<CaseLane>> {
    auto made = std::make_unique<FakeLane>(/*finds=*/3, /*batches=*/6);
    lane = made.get();
    return std::unique_ptr<CaseLane>(std::move(made));
  };
  o.lane_share = 1;
  o.lane_files_on_senders = true;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(lane, nullptr);
  ASSERT_TRUE(WaitFor([&] { return (*c)->LaneFinished(); }));
  EXPECT_EQ(lane->Counts().filed, 3);
  ASSERT_FALSE(lane->filers().empty());
  for (WorkerClient* filer : lane->filers())
    EXPECT_EQ(lane->senders().count(filer), 1u);
  (*c)->Stop();
}

}  // namespace
}  // namespace ptxdiff
