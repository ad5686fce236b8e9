// The campaign when its worker faults: a tuple that crashes or hangs it
// isolated and filed, a finding filed when its minimizing cannot run, a
// fault isolation could not narrow filed as its batch, isolation bounded by
// the deadline and by Stop, and tuples a fault left unrun sent again.

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "campaign/campaign.h"
#include "campaign/decline_model.h"
#include "campaign/testing/faulty_campaign.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "triage/text_case.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

// A campaign of `o` with one sender, whose worker's replies get `timeout`
// and whose isolation has no budget (spent at once, so nothing is
// narrowed), offered one batch of add.cc.s32 and add.sat.s32 (a = MAX
// among them), flushed and stopped: its counts.
absl::StatusOr<CampaignStats> RunABatchIsolationCannotNarrow(
    CampaignOptions o, absl::Duration timeout) {
  o.worker.timeout = timeout;
  o.isolation_budget = absl::ZeroDuration();
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  if (!c.ok()) return c.status();
  Offer(**c, "add.cc.s32", {{7, 8, 0, 0}});
  Offer(**c, "add.sat.s32", {{0x7fffffff, 1, 0, 0}});
  Offer(**c, "add.sat.s32", {{5, 6, 0, 0}});
  if (!(*c)->Flush(absl::Seconds(60))) {
    return absl::DeadlineExceededError("not flushed within 60 s");
  }
  (*c)->Stop();
  return (*c)->Snapshot();
}

// A fault whose isolation ran out of budget is filed as an unisolated fault
// of the batch, naming its variants: not declines only (nothing filed), nor
// a fault of the batch's first tuple (issue 28, item 3). (A zero budget:
// spent at once.)
TEST(CampaignTest, AFaultThatCouldNotBeIsolatedIsFiledAsSuchNamingTheBatch) {
  const std::string dir = FreshDir("unisolated");
  const absl::StatusOr<CampaignStats> s = RunABatchIsolationCannotNarrow(
      Options(dir,
              {"--fault=hang-on=add.sat.s32", "--when-operand=0:2147483647"}),
      absl::Seconds(1));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->counts.faulted, 0);
  EXPECT_EQ(s->counts.faulty_batches, 1);
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
  // Filed once it hung again, given longer (RecheckTimeout's floor: 10 s).
  EXPECT_THAT(*shown, HasSubstr("; run again on a fresh worker given 10s: "
                                "no reply within 10s"));
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

// The twenty-third fault run: a backend only slower than --timeout on a
// loaded machine had whole batches filed as unisolated hangs. Isolation
// cannot narrow this one (a zero budget), and its batch, run again given
// longer, answers (the worker's batch takes more than its timeout, far less
// than 10 s): it is judged, and nothing is filed or counted as a fault.
TEST(CampaignTest, ABatchOnlySlowerThanTheTimeoutIsJudgedNotFiled) {
  const std::string dir = FreshDir("slow_not_hung");
  const absl::StatusOr<CampaignStats> s = RunABatchIsolationCannotNarrow(
      Options(dir, {"--us-per-tuple=150000"}), absl::Milliseconds(300));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->answered_given_longer, 1);
  EXPECT_EQ(s->counts.agreed, 3);
  EXPECT_EQ(s->counts.faulty_batches, 0);
  EXPECT_EQ(s->counts.faulted, 0);
  EXPECT_THAT(EntryNames(dir + "/triage"), ::testing::IsEmpty());
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

// Tuples left unrun whose class the backend declines by now (here their
// decline class: every tuple of it that was answered was declined) are
// dropped as the model drops such tuples before they are sent, not sent
// again and not counted as declined "not run": a run declines as not run
// only what it sent again kMaxSendsAgain times.
TEST(CampaignTest, UnrunTuplesOfADecliningClassAreDroppedNotDeclined) {
  const std::string dir = FreshDir("unrun_declining");
  // The even tuples (declined) and the odd ones (left unrun) share a
  // decline class (a >= 2, b = 1). The even ones are offered first, and one
  // sender answers batches in turn: whichever batch an odd tuple first rides
  // in, every even one was answered before its unrun tuples are judged, or
  // dropped unsent because its class had kMinAnswers declines, so the class
  // is learned as declining by then however the tuples fell into batches.
  // (With a = 1, alone in its class, or interleaved, an odd tuple could ride
  // in kMaxSendsAgain batches before its class or the variant was learned:
  // a loaded machine saw one declined "not run".)
  auto tuple = [](uint64_t a) {
    return Tuple{*ParseVariant("add.u32"), {{a, 1, 0, 0}}, 0};
  };
  auto decline_class = [&](uint64_t a) {
    const Tuple t = tuple(a);
    return DeclineClass(t, Evaluate(t.variant, t.operands));
  };
  ASSERT_EQ(decline_class(2), decline_class(3));
  ASSERT_EQ(decline_class(2), decline_class(129));
  CampaignOptions o =
      Options(dir, {"--fault=decline-even-not-run-odd-on=add.u32"});
  o.batch_size = 256;
  o.in_flight = 1;
  auto c = Campaign::Start(o);
  ASSERT_TRUE(c.ok()) << c.status();
  // 64 of each: fewer than kKeepOneIn skipped in all, so that no probe of
  // the declining class sends an odd one again.
  for (uint64_t a = 2; a < 130; a += 2) Offer(**c, "add.u32", {{a, 1, 0, 0}});
  for (uint64_t a = 3; a < 130; a += 2) Offer(**c, "add.u32", {{a, 1, 0, 0}});
  ASSERT_TRUE((*c)->Flush(absl::Seconds(60)));
  (*c)->Stop();
  const CampaignStats s = (*c)->Snapshot();
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

}  // namespace
}  // namespace ptxdiff
