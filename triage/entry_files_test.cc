// An entry's files as they lie on disk: counts that cannot grow past
// INT64_MAX, and the files read as records (ReadEntryFile).

#include "triage/entry_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "triage/testing/findings.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();

std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/entry_files_",
                                       name, "_", getpid());
  RemoveTree(dir);
  return dir;
}

// The one entry of a new triage directory at `dir`, of add.s32, its count
// set to `count` by hand.
std::string EntryCounting(const std::string& dir, int64_t count) {
  auto store = TriageStore::Open(dir, true);
  EXPECT_TRUE(store.ok()) << store.status();
  const auto filed = store->File(AValueMismatch("add.s32", 1, 2));
  EXPECT_TRUE(filed.ok()) << filed.status();
  const std::string meta = absl::StrCat(dir, "/", filed->entry, "/meta.txt");
  const absl::StatusOr<std::string> text = ReadFile(meta);
  EXPECT_TRUE(text.ok());
  EXPECT_TRUE(WriteFile(meta, absl::StrReplaceAll(
                                  *text, {{"count: 1\n",
                                           absl::StrCat("count: ", count,
                                                        "\n")}}))
                  .ok());
  return filed->entry;
}

TEST(EntryCountTest, AddsAndHoldsAtTheLargestCount) {
  EXPECT_EQ(triage_internal::AddCounts(2, 3), 5);
  EXPECT_EQ(triage_internal::AddCounts(kMaxCount, 1), kMaxCount);
  EXPECT_EQ(triage_internal::AddCounts(kMaxCount, kMaxCount), kMaxCount);
}

// Fault run of issue 65: `triage merge` of two entries whose count was
// INT64_MAX wrote `count: -2`, exit 0, and the entry was then listed as
// damaged. The sum holds at INT64_MAX; so does a filing on top of it.
TEST(EntryCountTest, AMergeOrAFilingOfTheLargestCountsNeverWraps) {
  const std::string mine = FreshDir("merge_mine"),
                    theirs = FreshDir("merge_theirs");
  const std::string entry = EntryCounting(mine, kMaxCount);
  ASSERT_EQ(EntryCounting(theirs, kMaxCount), entry);
  auto store = TriageStore::Open(mine, false);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE(store->MergeFrom(theirs).ok());
  auto listed = store->List();
  ASSERT_TRUE(listed.ok() && listed->size() == 1u);
  EXPECT_TRUE((*listed)[0].damage.empty());
  EXPECT_EQ((*listed)[0].count(), kMaxCount);
  EXPECT_EQ((*listed)[0].meta.at("count"), absl::StrCat(kMaxCount));
  ASSERT_TRUE(store->File(AValueMismatch("add.s32", 1, 2)).ok());
  EXPECT_EQ(store->List()->at(0).meta.at("count"), absl::StrCat(kMaxCount));
  EXPECT_EQ(GroupByRootCause(*store->List()).at(0).count, kMaxCount);
}

// An entry's file is read as every record a run leaves is (ReadRecordFile):
// what is no regular file is damage in the same words, and TooLarge (set
// aside by the next filing); a directory is not, and a link to a file is
// read.
TEST(ReadEntryFileTest, ReadsAsARecordAndKeepsTheEntrysKindsOfDamage) {
  const std::string entry = FreshDir("read");
  ASSERT_TRUE(MakeDirs(entry + "/meta.txt").ok());  // a directory
  ASSERT_EQ(mkfifo((entry + "/case.txt").c_str(), 0600), 0);
  ASSERT_EQ(symlink("/dev/zero", (entry + "/repro.ptx").c_str()), 0);
  ASSERT_TRUE(WriteFile(entry + "/real.bin", "bytes").ok());
  ASSERT_EQ(symlink("real.bin", (entry + "/input.bin").c_str()), 0);

  const auto fifo = triage_internal::ReadEntryFile(entry, "case.txt");
  EXPECT_TRUE(triage_internal::TooLarge(fifo.status()));
  EXPECT_EQ(fifo.status().message(),
            ReadRecordFile(entry + "/case.txt", 1).status().message());
  EXPECT_EQ(fifo.status().message(),
            absl::StrCat(entry, "/case.txt is not a regular file: not read"));
  const auto zero = triage_internal::ReadEntryFile(entry, "repro.ptx");
  EXPECT_TRUE(triage_internal::TooLarge(zero.status()));
  const auto dir = triage_internal::ReadEntryFile(entry, "meta.txt");
  EXPECT_TRUE(absl::IsFailedPrecondition(dir.status())) << dir.status();
  EXPECT_FALSE(triage_internal::TooLarge(dir.status()));
  EXPECT_THAT(dir.status().message(), HasSubstr("is a directory, not a file"));
  EXPECT_EQ(*triage_internal::ReadEntryFile(entry, "input.bin"), "bytes");
  EXPECT_TRUE(absl::IsNotFound(
      triage_internal::ReadEntryFile(entry, "missing").status()));
}

}  // namespace
}  // namespace ptxdiff
