// What earlier ptxdiff versions wrote is read by this one (issue 63, item
// 5): triage/testdata/c87fd0f holds a triage directory and a pending
// journal of tuples written by main's c87fd0f (README.md there says how).

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "triage/pending_journal.h"
#include "triage/testing/store_fixtures.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using store_testing::FreshDir;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kOld[] = PTXDIFF_SOURCE_DIR "/triage/testdata/c87fd0f";

// A copy of the checked-in `what` under a fresh directory (tests write).
std::string CopyOfOld(const std::string& what, const std::string& test) {
  const std::string dir = FreshDir(test);
  const std::string to = dir + "/triage";
  EXPECT_EQ(std::system(absl::StrCat("mkdir -p '", dir, "' && cp -a '", kOld,
                                     "/", what, "' '", to, "'")
                            .c_str()),
            0);
  return to;
}

std::map<std::string, std::string> CountsOf(const TriageStore& store) {
  std::map<std::string, std::string> counts;
  auto entries = store.List();
  EXPECT_TRUE(entries.ok()) << entries.status();
  if (!entries.ok()) return counts;
  for (const EntryInfo& e : *entries) {
    EXPECT_TRUE(e.damage.empty()) << e.name << ": " << e.damage.front();
    counts[e.name] = e.CountText();
  }
  return counts;
}

TEST(OlderVersionsTest, ATriageDirectoryOfC87fd0fIsReadWithoutDamage) {
  auto store = TriageStore::Open(CopyOfOld("triage", "old_list"), false);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_THAT(
      CountsOf(*store),
      UnorderedElementsAre(
          Pair("value-mismatch~ptxas~immediate-executed~program-53edab4c", "1"),
          Pair("value-mismatch~ptxas~immediate-fold~program-0e37a12f", "1"),
          Pair("value-mismatch~ptxas~immediate-fold~program-3af60e9b", "1"),
          Pair("value-mismatch~ptxas~immediate-fold~program-b1ef9b02", "1"),
          Pair("value-mismatch~ptxas~immediate-fold~program-defc8fda", "1"),
          Pair("value-mismatch~ptxas~in-range~madc.hi.s64", "4"),
          Pair("value-mismatch~ptxas~min~fns.b32", "6")));
  for (const char* name : {"value-mismatch~ptxas~min~fns.b32",
                           "value-mismatch~ptxas~immediate-fold~program-"
                           "3af60e9b"}) {
    auto shown = store->Show(name);
    ASSERT_TRUE(shown.ok()) << shown.status();
    EXPECT_THAT(*shown, Not(HasSubstr("DAMAGED")));
  }
}

// Merged into a directory of this version, old entries are copied, and
// merged again their counts add up.
TEST(OlderVersionsTest, EntriesOfC87fd0fMergeAndTheirCountsAdd) {
  const std::string old = CopyOfOld("triage", "old_merge_from");
  auto store = TriageStore::Open(FreshDir("old_merge_into"), true);
  ASSERT_TRUE(store.ok()) << store.status();
  auto merged = store->MergeFrom(old);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(*merged, 7);
  ASSERT_TRUE(store->MergeFrom(old).ok());
  const std::map<std::string, std::string> counts = CountsOf(*store);
  EXPECT_EQ(counts.size(), 7u);
  EXPECT_EQ(counts.at("value-mismatch~ptxas~min~fns.b32"), "12");
  EXPECT_EQ(counts.at("value-mismatch~ptxas~in-range~madc.hi.s64"), "8");
}

// A journal of c87fd0f (before R lines): its four unfiled mismatches, the
// ones its run could not file for an entry's name in the way, are adopted.
TEST(OlderVersionsTest, APendingJournalOfC87fd0fIsAdopted) {
  const std::string triage = FreshDir("old_journal") + "/triage";
  ASSERT_TRUE(MakeDirs(triage + "/.pending").ok());
  ASSERT_EQ(
      std::system(absl::StrCat("cp '", kOld, "/pending/999999997.journal' '",
                               triage, "/.pending/'")
                      .c_str()),
      0);
  auto journal = PendingJournal::Open(triage);
  ASSERT_TRUE(journal.ok()) << journal.status();
  const auto adopted = AdoptOrphanedJournals(triage, **journal);
  std::multiset<std::string> variants;
  for (const auto& [seq, m] : adopted) {
    variants.insert(Spell(m.tuple.variant));
    EXPECT_EQ(m.repeats, 0);
  }
  EXPECT_THAT(variants, ::testing::ElementsAre("fns.b32", "madc.hi.cc.s64",
                                               "madc.hi.s64", "madc.hi.s64"));
  // Its line "M 0 5d5dfb64d687f783 0 0 80000000 0 0": fns.b32 of mask 0,
  // base 0, offset INT_MIN, which ptxas gave as 0.
  for (const auto& [seq, m] : adopted) {
    if (Spell(m.tuple.variant) != "fns.b32") continue;
    EXPECT_EQ(m.tuple.operands.v[0], 0u);
    EXPECT_EQ(m.tuple.operands.v[1], 0u);
    EXPECT_EQ(m.tuple.operands.v[2], 0x80000000u);
    EXPECT_EQ(m.tuple.runtime, 0);
    EXPECT_EQ(m.backend_bits, 0u);
  }
  (*journal)->Remove();
}

}  // namespace
}  // namespace ptxdiff
