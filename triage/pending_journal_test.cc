#include "triage/pending_journal.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/journal_" + name + "_" +
                          std::to_string(getpid());
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

// Writes a journal holding one open record, "left over".
bool WriteLeftover(const std::string& path) {
  std::ofstream out(path);
  out << "M 0 left over\nM 1 filed\nF 1\n";
  return out.good();
}

TEST(PendingJournalTest, ParsesOnlyWhatWasNotDoneAndSkipsATornLine) {
  const Variant v = *ParseVariant("bfe.u64");
  const std::string text = absl::StrCat(
      "M 0 ", absl::Hex(StableId(v)), " 1 100 1 0 0\n", "M 1 ",
      absl::Hex(StableId(v)), " 1 0 100 0 1\n", "F 0\nM 2 deadbeef 1 2");
  const std::vector<PendingMismatch> open = ParseJournal(text);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].tuple.variant, v);
  EXPECT_EQ(open[0].tuple.operands.v[2], 0x100u);
  EXPECT_EQ(open[0].backend_bits, 1u);
}

// The thirteenth fault run: a line torn by a full disk was counted as a
// finding by `triage list`, which the next run does not take up.
TEST(PendingJournalTest, ATornLineIsNoFindingNotYetFiled) {
  const std::string dir = FreshDir("torn_count");
  ASSERT_EQ(mkdir((dir + "/.pending").c_str(), 0755), 0);
  std::ofstream(dir + "/.pending/999999999.programs.journal")
      << "M 0 one\nM 1 two\nM 2 thr";
  EXPECT_EQ(CountPendingFindings(dir).programs, 2);
}

// The backend's carry of a `.cc` variant: an optional last field, written
// only when set, so that lines without it read as before.
TEST(PendingJournalTest, TheCarryIsAnOptionalLastField) {
  const Variant v = *ParseVariant("add.cc.u32");
  const std::string id = absl::StrCat(absl::Hex(StableId(v)));
  const std::string text =
      absl::StrCat("M 0 ", id, " ffffffff 1 0 0 0 1\n",   // carry 1
                   "M 1 ", id, " ffffffff 1 0 0 0\n",     // carry 0
                   "M 2 ", id, " ffffffff 1 0 0 0 7\n");  // bad field
  const std::vector<PendingMismatch> open = ParseJournal(text);
  ASSERT_EQ(open.size(), 2u);
  EXPECT_TRUE(open[0].backend_carry);
  EXPECT_FALSE(open[1].backend_carry);
  const std::string dir = FreshDir("carry");
  auto journal = PendingJournal::Open(dir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  const Tuple t{v, {{0xffffffff, 1, 0, 0}}};
  (*journal)->Add({t, 0, true});
  (*journal)->Add({t, 0, false});
  std::ifstream in((*journal)->path());
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written, absl::StrCat("M 0 ", id, " ffffffff 1 0 0 0 1\n", "M 1 ",
                                  id, " ffffffff 1 0 0 0\n"));
  const std::vector<PendingMismatch> back = ParseJournal(written);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back[0].backend_carry);
  EXPECT_FALSE(back[1].backend_carry);
  (*journal)->Remove();
}

// A tuple's operand form follows the carry, which is then written as 0 or 1.
TEST(PendingJournalTest, TheFormFollowsTheCarry) {
  const Variant v = *ParseVariant("bfe.s32");
  const std::string id = absl::StrCat(absl::Hex(StableId(v)));
  const std::string dir = FreshDir("form");
  auto journal = PendingJournal::Open(dir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  const Tuple t{v, {{0, 0x28, 8, 0}}, 0b001};
  (*journal)->Add({t, 0xffffffff, false});
  std::ifstream in((*journal)->path());
  const std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written, absl::StrCat("M 0 ", id, " 0 28 8 0 ffffffff 0 1\n"));
  const std::vector<PendingMismatch> back = ParseJournal(
      written +
      absl::StrCat("M 1 ", id, " 0 28 8 0 ffffffff 2 1\n",     // bad carry
                   "M 2 ", id, " 0 28 8 0 ffffffff 0 zz\n"));  // bad form
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].tuple, t);
  EXPECT_FALSE(back[0].backend_carry);
  (*journal)->Remove();
}

// A fuzzer process killed between judging a mismatch and filing it: the next
// campaign adopts what it left.
TEST(PendingJournalTest, AKilledProcessLeavesItsMismatchesForTheNextCampaign) {
  const std::string dir = FreshDir("killed");
  const Tuple t{*ParseVariant("fns.b32"), {{0xffffffff, 0, 0x80000000, 0}}};
  const pid_t child = fork();
  if (child == 0) {
    auto journal = PendingJournal::Open(dir);
    if (!journal.ok()) _exit(1);
    (*journal)->Add({t, 7});
    (*journal)->Done((*journal)->Add({t, 8}));
    _exit(0);  // no clean Remove: as if killed
  }
  int status;
  waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto mine = PendingJournal::Open(dir);
  ASSERT_TRUE(mine.ok()) << mine.status();
  const auto adopted = AdoptOrphanedJournals(dir, **mine);
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].second.tuple, t);
  EXPECT_EQ(adopted[0].second.backend_bits, 7u);
  // Adopted into this process's journal (it survives this one dying too),
  // and the orphan is gone: a second adoption finds nothing.
  std::ifstream in((*mine)->path());
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(ParseJournal(text).size(), 1u);
  EXPECT_TRUE(AdoptOrphanedJournals(dir, **mine).empty());
}

// Third fault run: a `kill -9` of `fuzz` while it adopted a long journal
// (2M lines: seconds) left it as `999998.journal.adopted-by-PID`, which no
// campaign adopted again, and its findings were lost without a word.
TEST(PendingJournalTest, AJournalWhoseAdopterDiedIsAdoptedAgain) {
  const std::string dir = FreshDir("adopter_died");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/.pending'").c_str()), 0);
  const pid_t adopter = fork();
  if (adopter == 0) _exit(0);
  ASSERT_EQ(waitpid(adopter, nullptr, 0), adopter);  // gone
  const std::string claimed =
      absl::StrCat(dir, "/.pending/999998.journal.adopted-by-", adopter);
  ASSERT_TRUE(WriteLeftover(claimed));
  auto mine = PendingJournal::Open(dir, JournalKind::kTuples);
  ASSERT_TRUE(mine.ok()) << mine.status();
  const auto accept = [](absl::string_view) { return true; };
  const auto adopted = AdoptOrphanedRecords(dir, **mine, accept);
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].second, "left over");
  struct stat st;
  EXPECT_NE(stat(claimed.c_str(), &st), 0);
  EXPECT_TRUE(AdoptOrphanedRecords(dir, **mine, accept).empty());
  (*mine)->Remove();
}

// A journal whose lines were damaged (here one of random bytes' kind, and
// a record no variant of this build has) was removed on adoption without a
// word, its unreadable findings with it. It is kept beside, where no
// campaign adopts it again; a torn last line alone is no damage.
TEST(PendingJournalTest, ADamagedJournalIsKeptNotRemoved) {
  const std::string dir = FreshDir("damaged");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/.pending'").c_str()), 0);
  const std::string damaged = dir + "/.pending/999999.journal";
  const std::string torn = dir + "/.pending/999998.journal";
  std::ofstream(damaged) << "M 0 left over\nM 1 zz not hex\n\x01\xfe\n";
  std::ofstream(torn) << "M 0 left over\nM 1 torn";
  auto mine = PendingJournal::Open(dir, JournalKind::kTuples);
  ASSERT_TRUE(mine.ok()) << mine.status();
  const auto adopted = AdoptOrphanedRecords(
      dir, **mine, [](absl::string_view r) { return r == "left over"; });
  EXPECT_EQ(adopted.size(), 2u);  // "left over", from each
  struct stat st;
  EXPECT_EQ(stat((damaged + ".damaged").c_str(), &st), 0);
  EXPECT_NE(stat(damaged.c_str(), &st), 0);
  EXPECT_NE(stat((torn + ".damaged").c_str(), &st), 0);
  EXPECT_NE(stat(torn.c_str(), &st), 0);
  EXPECT_TRUE(AdoptOrphanedRecords(dir, **mine, [](absl::string_view) {
                return true;
              }).empty());
  (*mine)->Remove();
}

// Fault run of issue 65: a directory named as a journal was claimed (renamed
// `….adopted-by-PID`) and stayed so, unsaid. It is not adopted: it is kept
// as `….damaged`, said once on stderr, and never looked at again. Refused
// by the one check every journal gets after its claim (the record reader),
// in the words any journal that cannot be read is said in.
TEST(PendingJournalTest, ADirectoryNamedAsAJournalIsSetAsideAndSaidOnce) {
  const std::string dir = FreshDir("journal_dir");
  const std::string named = dir + "/.pending/999997.journal";
  ASSERT_EQ(std::system(("mkdir -p '" + named + "'").c_str()), 0);
  auto mine = PendingJournal::Open(dir, JournalKind::kTuples);
  ASSERT_TRUE(mine.ok()) << mine.status();
  const auto any = [](absl::string_view) { return true; };
  testing::internal::CaptureStderr();
  EXPECT_TRUE(AdoptOrphanedRecords(dir, **mine, any).empty());
  const std::string first = testing::internal::GetCapturedStderr();
  testing::internal::CaptureStderr();
  EXPECT_TRUE(AdoptOrphanedRecords(dir, **mine, any).empty());
  const std::string second = testing::internal::GetCapturedStderr();
  EXPECT_EQ(first, absl::StrCat("ptxdiff: the pending journal ", named,
                                " was not read (", named,
                                " is a directory, not a file); kept as ",
                                named, ".damaged, never adopted\n"));
  EXPECT_EQ(second, "");
  struct stat st;
  EXPECT_EQ(stat((named + ".damaged").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_NE(stat(named.c_str(), &st), 0);
  EXPECT_NE(stat(absl::StrCat(named, ".adopted-by-", getpid()).c_str(), &st),
            0);
  (*mine)->Remove();
}

// A journal that is no regular file (a FIFO, a link to /dev/zero) or is
// huge is damage: kept as .damaged without being read, so that adopting it
// neither blocks nor takes the memory.
TEST(PendingJournalTest, AJournalNoRegularFileOrHugeIsKeptUnread) {
  const std::string dir = FreshDir("unread");
  const std::string pending = dir + "/.pending";
  ASSERT_EQ(std::system(("mkdir -p '" + pending + "'").c_str()), 0);
  const std::string fifo = pending + "/999999.journal";
  const std::string zero = pending + "/999998.journal";
  const std::string huge = pending + "/999997.journal";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", zero.c_str()), 0);
  std::ofstream(huge) << "M 0 left over\n";
  ASSERT_EQ(truncate(huge.c_str(), off_t{1} << 40), 0);  // sparse: no disk
  auto mine = PendingJournal::Open(dir, JournalKind::kTuples);
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(AdoptOrphanedRecords(dir, **mine, [](absl::string_view) {
                return true;
              }).empty());
  struct stat st;
  for (const std::string& journal : {fifo, zero, huge}) {
    EXPECT_EQ(lstat((journal + ".damaged").c_str(), &st), 0) << journal;
    EXPECT_NE(lstat(journal.c_str(), &st), 0) << journal;
  }
  (*mine)->Remove();
}

// The repeats of a finding a run could not file (R lines) stay with it:
// summed per open finding, carried into the adopting journal, and no
// damage. An R line of a finding filed since is dropped with it.
TEST(PendingJournalTest, RepeatsKeptWithAnUnfiledFindingAreAdoptedWithIt) {
  const std::string text =
      "M 0 left over\nR 0 3\nM 1 filed\nR 1 2\nF 1\nR 0 1\n";
  EXPECT_EQ(OpenRecordsWithRepeats(text),
            (std::vector<std::pair<std::string, int64_t>>{{"left over", 4}}));
  const std::string dir = FreshDir("repeats");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/.pending'").c_str()), 0);
  const std::string orphan = dir + "/.pending/999996.journal";
  std::ofstream(orphan) << text;
  auto mine = PendingJournal::Open(dir, JournalKind::kTuples);
  ASSERT_TRUE(mine.ok()) << mine.status();
  testing::internal::CaptureStderr();
  const auto adopted =
      AdoptOrphanedRecords(dir, **mine, [](absl::string_view r) {
        return r == "left over" || r == "filed";
      });
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(adopted.size(), 1u);
  std::ifstream in((*mine)->path());
  const std::string now((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(OpenRecordsWithRepeats(now),
            (std::vector<std::pair<std::string, int64_t>>{{"left over", 4}}));
  struct stat st;
  EXPECT_NE(stat((orphan + ".damaged").c_str(), &st), 0);
  (*mine)->Remove();
}

// An R line past any run's count (the fourth fault run's INT64_MAX, which
// became an entry's count) is damage: its finding is adopted without it,
// the journal kept aside as damaged, and said.
TEST(PendingJournalTest, AnRLinePastAnyRunsCountIsDamage) {
  EXPECT_EQ(OpenRecordsWithRepeats("M 0 left over\nR 0 9223372036854775807\n"),
            (std::vector<std::pair<std::string, int64_t>>{{"left over", 0}}));
  const std::string dir = FreshDir("huge_repeats");
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "/.pending'").c_str()), 0);
  const std::string orphan = dir + "/.pending/999995.journal";
  std::ofstream(orphan) << "M 0 left over\nR 0 9223372036854775807\n";
  auto mine = PendingJournal::Open(dir, JournalKind::kTuples);
  ASSERT_TRUE(mine.ok()) << mine.status();
  testing::internal::CaptureStderr();
  const auto adopted = AdoptOrphanedRecords(
      dir, **mine, [](absl::string_view r) { return r == "left over"; });
  EXPECT_NE(testing::internal::GetCapturedStderr().find(
                "had 1 line this ptxdiff cannot read"),
            std::string::npos);
  EXPECT_EQ(adopted.size(), 1u);
  std::ifstream in((*mine)->path());
  const std::string now((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(OpenRecordsWithRepeats(now),
            (std::vector<std::pair<std::string, int64_t>>{{"left over", 0}}));
  struct stat st;
  EXPECT_EQ(stat((orphan + ".damaged").c_str(), &st), 0);
  (*mine)->Remove();
}

// A journal is removed at the end only when everything in it was filed;
// one that holds an unfiled mismatch stays for the next campaign.
TEST(PendingJournalTest, OnlyAJournalWithNothingUnfiledIsRemoved) {
  const std::string dir = FreshDir("remove");
  const Tuple t{*ParseVariant("popc.b32"), {{1, 0, 0, 0}}};
  auto journal = PendingJournal::Open(dir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  const int64_t filed = (*journal)->Add({t, 0});
  (*journal)->Add({t, 2});
  (*journal)->Done(filed);
  EXPECT_EQ((*journal)->unfiled(), 1);
  EXPECT_FALSE((*journal)->RemoveIfAllDone());
  std::ifstream in((*journal)->path());
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(ParseJournal(text).size(), 1u);
  EXPECT_EQ(ParseJournal(text)[0].backend_bits, 2u);

  auto done = PendingJournal::Open(FreshDir("remove_done"));
  ASSERT_TRUE(done.ok()) << done.status();
  (*done)->Done((*done)->Add({t, 0}));
  EXPECT_EQ((*done)->unfiled(), 0);
  EXPECT_TRUE((*done)->RemoveIfAllDone());
  EXPECT_FALSE(std::ifstream((*done)->path()).good());
}

// A journal on a full disk (here /dev/full, which fails every write with
// ENOSPC): the mismatch it could not keep is counted, not forgotten.
TEST(PendingJournalTest, ALineTheDiskCannotTakeIsCounted) {
  const std::string dir = FreshDir("full");
  ASSERT_EQ(mkdir((dir + "/.pending").c_str(), 0755), 0);
  ASSERT_EQ(
      symlink("/dev/full",
              absl::StrCat(dir, "/.pending/", getpid(), ".journal").c_str()),
      0);
  auto journal = PendingJournal::Open(dir);
  ASSERT_TRUE(journal.ok()) << journal.status();
  const Tuple t{*ParseVariant("popc.b32"), {{1, 0, 0, 0}}};
  const int64_t seq = (*journal)->Add({t, 0});
  EXPECT_EQ((*journal)->unfiled(), 1);
  EXPECT_EQ((*journal)->unwritten(), 1);
  (*journal)->Done(seq);  // filed after all
  EXPECT_EQ((*journal)->unwritten(), 0);
  (*journal)->Remove();
}

// The program campaign's journal is a file of its own kind: each kind adopts
// only its own, so that neither campaign drops what it cannot file.
TEST(PendingJournalTest, EachKindAdoptsOnlyItsOwnJournals) {
  const std::string dir = FreshDir("kinds");
  const Tuple t{*ParseVariant("fns.b32"), {{0xffffffff, 0, 0x80000000, 0}}};
  const pid_t child = fork();
  if (child == 0) {
    auto tuples = PendingJournal::Open(dir);
    auto programs = PendingJournal::Open(dir, JournalKind::kPrograms);
    if (!tuples.ok() || !programs.ok()) _exit(1);
    (*tuples)->Add({t, 7});
    (*programs)->AddRecord("a program's record");
    (*programs)->Done((*programs)->AddRecord("one filed"));
    _exit(0);  // as if killed
  }
  int status;
  waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  struct stat st;
  ASSERT_EQ(
      stat(absl::StrCat(dir, "/.pending/", child, ".programs.journal").c_str(),
           &st),
      0);
  auto programs = PendingJournal::Open(dir, JournalKind::kPrograms);
  ASSERT_TRUE(programs.ok()) << programs.status();
  const auto records = AdoptOrphanedRecords(
      dir, **programs, [](absl::string_view) { return true; });
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].second, "a program's record");
  EXPECT_EQ((*programs)->unfiled(), 1);
  auto tuples = PendingJournal::Open(dir);
  ASSERT_TRUE(tuples.ok()) << tuples.status();
  const auto mismatches = AdoptOrphanedJournals(dir, **tuples);
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].second.backend_bits, 7u);
  (*programs)->Remove();
  (*tuples)->Remove();
}

// A campaign of this process that ended with findings unfiled leaves its
// journal closed: the next campaign of the same process adopts it (as it
// would a dead process's), and never one still open.
TEST(PendingJournalTest, ThisProcesssClosedJournalIsAdoptedAndAnOpenOneIsNot) {
  const std::string dir = FreshDir("same_process");
  auto first = PendingJournal::Open(dir, JournalKind::kPrograms);
  ASSERT_TRUE(first.ok()) << first.status();
  (*first)->AddRecord("kept");
  auto second = PendingJournal::Open(dir, JournalKind::kPrograms);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE((*first)->path(), (*second)->path());
  const auto accept = [](absl::string_view) { return true; };
  EXPECT_TRUE(AdoptOrphanedRecords(dir, **second, accept).empty())
      << "adopted a journal still open";
  EXPECT_FALSE((*first)->RemoveIfAllDone());
  const auto adopted = AdoptOrphanedRecords(dir, **second, accept);
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0].second, "kept");
  struct stat st;
  EXPECT_NE(stat((*first)->path().c_str(), &st), 0) << "not removed";
  // A third opened now gets the plain name again; a leftover there is
  // moved aside for adoption, not appended to.
  (*second)->Done(adopted[0].first);
  EXPECT_TRUE((*second)->RemoveIfAllDone());
  ASSERT_TRUE(WriteLeftover(
      absl::StrCat(dir, "/.pending/", getpid(), ".programs.journal")));
  auto third = PendingJournal::Open(dir, JournalKind::kPrograms);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ((*third)->path(),
            absl::StrCat(dir, "/.pending/", getpid(), ".programs.journal"));
  const auto moved = AdoptOrphanedRecords(dir, **third, accept);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].second, "left over");
  (*third)->Remove();
}

}  // namespace
}  // namespace ptxdiff
