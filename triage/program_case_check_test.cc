// A program entry's case.txt is checked with the check its store was given
// (TriageStore::Open's ProgramCaseCheck): triage cannot parse a program, the
// floor above it can, and lists, shows and repairs go by what it says.

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "triage/testing/findings.h"
#include "triage/triage_store.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string FreshDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/program_case_" + name +
                          "_" + std::to_string(getpid());
  RemoveTree(dir);
  return dir;
}

// A stand-in for program/'s parser: a case holding "garbage" is no program.
absl::Status RejectsGarbage(absl::string_view text) {
  return absl::StrContains(text, "garbage")
             ? absl::InvalidArgumentError("line 1: no such instruction")
             : absl::OkStatus();
}

std::vector<std::string> DamageOfTheOnlyEntry(const TriageStore& store) {
  const absl::StatusOr<std::vector<EntryInfo>> entries = store.List();
  EXPECT_TRUE(entries.ok() && entries->size() == 1);
  return entries.ok() && entries->size() == 1 ? entries->front().damage
                                              : std::vector<std::string>{};
}

TEST(ProgramCaseCheckTest, ACaseTheCheckRejectsIsDamageUntilAFilingRebuildsIt) {
  const std::string dir = FreshDir("rejected");
  auto store = TriageStore::Open(dir, /*create=*/true, RejectsGarbage);
  ASSERT_TRUE(store.ok()) << store.status();
  auto filed = store->File(AProgramMismatch());
  ASSERT_TRUE(filed.ok()) << filed.status();
  EXPECT_THAT(DamageOfTheOnlyEntry(*store), IsEmpty());

  ASSERT_TRUE(
      WriteFile(dir + "/" + filed->entry + "/case.txt", "garbage\n").ok());
  EXPECT_THAT(DamageOfTheOnlyEntry(*store),
              ElementsAre("case.txt does not parse: line 1: no such "
                          "instruction"));
  auto shown = store->Show(filed->entry);
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_THAT(*shown, StartsWith("# DAMAGED: case.txt does not parse"));

  auto again = store->File(AProgramMismatch());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->repaired, HasSubstr("case.txt does not parse"));
  EXPECT_THAT(DamageOfTheOnlyEntry(*store), IsEmpty());
  EXPECT_EQ(*ReadFile(dir + "/" + filed->entry + "/case.txt"),
            AProgramMismatch().program->case_text);
  RemoveTree(dir);
}

// Without a check a store still sees what triage can: a case cut short.
TEST(ProgramCaseCheckTest, WithoutACheckOnlyACaseCutShortIsDamage) {
  const std::string dir = FreshDir("unchecked");
  auto store = TriageStore::Open(dir, /*create=*/true);
  ASSERT_TRUE(store.ok()) << store.status();
  auto filed = store->File(AProgramMismatch());
  ASSERT_TRUE(filed.ok()) << filed.status();
  const std::string case_path = dir + "/" + filed->entry + "/case.txt";

  ASSERT_TRUE(WriteFile(case_path, "garbage\n").ok());
  EXPECT_THAT(DamageOfTheOnlyEntry(*store), IsEmpty());
  ASSERT_TRUE(WriteFile(case_path, "garbage").ok());
  EXPECT_THAT(DamageOfTheOnlyEntry(*store),
              ElementsAre("case.txt is cut short: its last line has no "
                          "newline"));
  RemoveTree(dir);
}

}  // namespace
}  // namespace ptxdiff
