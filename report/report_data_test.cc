#include "report/report_data.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "report/report_html.h"
#include "triage/testing/findings.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

std::string FreshDir(const std::string& name) {
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/report_", name, "_", getpid());
  RemoveTree(dir);
  return dir;
}

int IndexOf(absl::string_view spelling) {
  return VariantIndex(*ParseVariant(spelling));
}

// Writes one process's outcomes for `backend` into a run of `out`.
void WriteRun(const std::string& out, int64_t start, const std::string& backend,
              const OutcomeTable& table, const std::vector<bool>& supported) {
  const std::string dir = absl::StrCat(out, "/stats/run-", start, "-1");
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFile(dir + "/1.outcomes", table.Format(backend, supported)).ok());
}

TEST(ReportDataTest, SumsRunsPerBackendAndGivesEachItsFindings) {
  const std::string out = FreshDir("sum");
  std::vector<bool> supported(AllVariants().size());
  const int add = IndexOf("add.u32");
  supported[add] = supported[IndexOf("sub.u32")] = true;
  OutcomeTable first, second, other;
  first.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  second.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  second.Count(add, OutcomeForm::kRuntime, Outcome::kMismatch);
  other.Count(add, OutcomeForm::kImmediate, Outcome::kHang);
  WriteRun(out, 1000, "faulty 1", first, supported);
  WriteRun(out, 2000, "faulty 1", second, supported);
  WriteRun(out, 3000, "slow 2", other, supported);
  auto store = TriageStore::Open(out + "/triage", /*create=*/true);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->File(AValueMismatch("add.u32", 1, 3, "faulty 1")).ok());
  ASSERT_TRUE(store->File(AValueMismatch("sub.u32", 1, 3, "gone 0")).ok());

  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_THAT(data->implementations, SizeIs(2));
  const Implementation& faulty = data->implementations[0];
  EXPECT_EQ(faulty.backend, "faulty 1");
  EXPECT_THAT(faulty.runs, SizeIs(2));
  EXPECT_EQ(faulty.counts[add * 2][static_cast<int>(Outcome::kAgree)], 2);
  EXPECT_EQ(faulty.counts[add * 2 + 1][static_cast<int>(Outcome::kMismatch)], 1);
  EXPECT_TRUE(faulty.supported[IndexOf("sub.u32")]);
  EXPECT_FALSE(faulty.supported[IndexOf("sub.s32")]);
  ASSERT_THAT(faulty.entries, SizeIs(1));
  EXPECT_EQ(faulty.entries[0].signature.spelling, "add.u32");
  EXPECT_EQ(data->implementations[1].backend, "slow 2");
  EXPECT_EQ(data->implementations[1].counts[add * 2]
                                            [static_cast<int>(Outcome::kHang)],
            1);
  // The entry of a backend no run here had: listed apart, not dropped.
  ASSERT_THAT(data->other_entries, SizeIs(1));
  EXPECT_EQ(data->other_entries[0].entries[0].signature.spelling, "sub.u32");

  const std::string json = ReportJson(*data);
  EXPECT_THAT(json, HasSubstr("\"backend\":\"faulty 1\""));
  EXPECT_THAT(json, HasSubstr("ptxdiff repro '" + out + "/triage/"));
  // add.u32's row: 2 agree as immediates, 1 mismatch with runtime operands.
  EXPECT_THAT(json, HasSubstr("[[2],[0,1]]"));
  RemoveTree(out);
}

TEST(ReportDataTest, SaysWhatItCouldNotShow) {
  const std::string out = FreshDir("empty");
  ASSERT_TRUE(MakeDirs(out + "/stats/run-1000-1").ok());
  const absl::StatusOr<ReportData> data =
      ReadReport({{.out_dir = out, .triage_dir = out + "/triage"}});
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->implementations, SizeIs(0));
  const std::string notes = absl::StrJoin(data->notes, "\n");
  EXPECT_THAT(notes, HasSubstr("1 run has no outcome records"));
  EXPECT_THAT(notes, HasSubstr("no triage directory there"));
  EXPECT_FALSE(ReadReport({{.out_dir = out + "/missing"}}).ok());
  RemoveTree(out);
}

TEST(ReportHtmlTest, TheDataCannotEndItsScript) {
  const std::string html =
      ReportHtml("{\"case\":\"</script><script>alert(1)</script><!--\"}");
  EXPECT_THAT(html, Not(HasSubstr("</script><script>alert")));
  EXPECT_THAT(html, HasSubstr("<\\/script><script>alert(1)<\\/script>"));
  EXPECT_THAT(html, Not(HasSubstr("/*PTXDIFF_REPORT_DATA*/")));
  EXPECT_THAT(html, HasSubstr("<title>ptxdiff conformance report</title>"));
}

}  // namespace
}  // namespace ptxdiff
