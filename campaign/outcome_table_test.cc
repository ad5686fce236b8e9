#include "campaign/outcome_table.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int IndexOf(absl::string_view spelling) {
  return VariantIndex(*ParseVariant(spelling));
}

TupleResult Declined(DeclineCode code) {
  return {.kind = ResultKind::kDecline, .code = code};
}

TEST(OutcomeOfTest, NamesEachVerdictAndWhyADeclineWasGiven) {
  const TupleResult value;
  EXPECT_EQ(OutcomeOf(Verdict::kAgree, value, false), Outcome::kAgree);
  EXPECT_EQ(OutcomeOf(Verdict::kMismatch, value, false), Outcome::kMismatch);
  EXPECT_EQ(OutcomeOf(Verdict::kUnspecified, value, false),
            Outcome::kUnspecified);
  EXPECT_EQ(OutcomeOf(Verdict::kOtherReading, value, false),
            Outcome::kOtherReading);
  EXPECT_EQ(
      OutcomeOf(Verdict::kFault,
                {.kind = ResultKind::kFault, .fault = CaseFault::kHang}, false),
      Outcome::kHang);
  EXPECT_EQ(OutcomeOf(Verdict::kFault,
                      {.kind = ResultKind::kFault, .fault = CaseFault::kCrash},
                      false),
            Outcome::kCrash);
  EXPECT_EQ(OutcomeOf(Verdict::kDeclined,
                      Declined(DeclineCode::kUnsupportedVariant), false),
            Outcome::kUnsupported);
  EXPECT_EQ(OutcomeOf(Verdict::kDeclined, Declined(DeclineCode::kNotEvaluable),
                      false),
            Outcome::kNotEvaluable);
  EXPECT_EQ(OutcomeOf(Verdict::kDeclined, Declined(DeclineCode::kOperandForm),
                      false),
            Outcome::kOperandForm);
  EXPECT_EQ(OutcomeOf(Verdict::kDeclined, Declined(DeclineCode::kOther), false),
            Outcome::kDeclinedOther);
  // A tuple left unrun says nothing of what the backend declines.
  EXPECT_EQ(OutcomeOf(Verdict::kDeclined, Declined(DeclineCode::kOther), true),
            Outcome::kNotRun);
}

TEST(OutcomeTableTest, ReadsBackWhatItWrote) {
  OutcomeTable table;
  const int add = IndexOf("add.u32"), bfe = IndexOf("bfe.s32"),
            never = IndexOf("sub.s64"), unsupported = IndexOf("mul.lo.u16");
  for (int i = 0; i < 3; ++i)
    table.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  table.Count(add, OutcomeForm::kRuntime, Outcome::kMismatch);
  table.Count(bfe, OutcomeForm::kRuntime, Outcome::kNotEvaluable);
  table.SetDeclineReason(bfe, table.InternReason("not folded\tby ptxas\nmore"));
  std::vector<bool> supported(AllVariants().size());
  supported[add] = supported[bfe] = supported[never] = true;

  const std::string text = table.Format("ptxas 1 (sm_90)", supported);
  const absl::StatusOr<OutcomeFile> file = ParseOutcomeFile(text);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->damage.empty()) << file->damage[0];
  EXPECT_EQ(file->backend, "ptxas 1 (sm_90)");
  std::map<std::pair<std::string, OutcomeForm>, OutcomeFile::Row> rows;
  for (const OutcomeFile::Row& r : file->rows)
    rows[{r.spelling, r.form}] = r;
  // add.u32 and bfe.s32 in both forms (bfe.s32 has its immediate line as a
  // supported variant), sub.s64 never reached.
  ASSERT_EQ(rows.size(), 5u) << text;
  auto row = [&](const char* spelling, OutcomeForm form) {
    return rows[std::make_pair(std::string(spelling), form)];
  };
  auto n = [](const OutcomeFile::Row& r, Outcome o) {
    return r.counts[static_cast<int>(o)];
  };
  EXPECT_EQ(n(row("add.u32", OutcomeForm::kImmediate), Outcome::kAgree), 3);
  EXPECT_EQ(n(row("add.u32", OutcomeForm::kRuntime), Outcome::kMismatch), 1);
  EXPECT_EQ(n(row("bfe.s32", OutcomeForm::kRuntime), Outcome::kNotEvaluable),
            1);
  // The reason on one line, as the file keeps it.
  EXPECT_EQ(row("bfe.s32", OutcomeForm::kRuntime).decline_reason,
            "not folded by ptxas");
  // Supported and never reached: its all-zero immediate line.
  EXPECT_THAT(row("sub.s64", OutcomeForm::kImmediate).counts,
              ::testing::Each(0));
  EXPECT_EQ(rows.count(std::make_pair(Spell(AllVariants()[unsupported]),
                                      OutcomeForm::kImmediate)),
            0u);
}

// A program lane's counts (the programs that held a variant) are lines of
// their own forms, read back as such; a file of an earlier version, with
// tuple forms only, reads as before.
TEST(OutcomeTableTest, ProgramFormsAreLinesOfTheirOwn) {
  OutcomeTable table;
  const int add = IndexOf("add.u32");
  table.Count(add, OutcomeForm::kImmediate, Outcome::kAgree);
  table.Count(add, OutcomeForm::kProgramImmediate, Outcome::kAgree, 7);
  table.Count(add, OutcomeForm::kProgramRuntime, Outcome::kMismatch, 2);
  const std::string text = table.Format("ptx-cmd abi 2 (t)", {});
  EXPECT_THAT(text, ::testing::HasSubstr("add.u32\tprogram-imm\t-\t7\n"));
  EXPECT_THAT(text,
              ::testing::HasSubstr("add.u32\tprogram-runtime\t-\t0\t2\n"));
  const absl::StatusOr<OutcomeFile> file = ParseOutcomeFile(text);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->damage.empty()) << file->damage[0];
  ASSERT_EQ(file->rows.size(), 3u) << text;
  EXPECT_EQ(file->rows[1].form, OutcomeForm::kProgramImmediate);
  EXPECT_TRUE(IsProgramForm(file->rows[1].form));
  EXPECT_FALSE(IsProgramForm(file->rows[0].form));
  EXPECT_EQ(file->rows[2].counts[static_cast<int>(Outcome::kMismatch)], 2);
  // An unknown form is damage, named with the forms there are.
  const absl::StatusOr<OutcomeFile> odd = ParseOutcomeFile(
      "# ptxdiff outcomes 1\nbackend\tb\nadd.u32\tprog\t-\t1\n");
  ASSERT_TRUE(odd.ok()) << odd.status();
  ASSERT_EQ(odd->damage.size(), 1u);
  EXPECT_THAT(
      odd->damage[0],
      ::testing::HasSubstr("imm, runtime, program-imm, program-runtime"));
}

TEST(OutcomeTableTest, ReasonsAreKeptOnceAndEachVariantKeepsItsLatest) {
  OutcomeTable table;
  const int a = IndexOf("add.u32"), b = IndexOf("add.s32");
  const int first = table.InternReason("refused");
  EXPECT_EQ(table.InternReason("refused"), first);
  table.SetDeclineReason(a, first);
  table.SetDeclineReason(b, first);
  table.SetDeclineReason(b, table.InternReason("timed out"));
  EXPECT_EQ(table.decline_reason(a), "refused");
  EXPECT_EQ(table.decline_reason(b), "timed out");
  EXPECT_EQ(table.decline_reason(IndexOf("sub.u32")), "");
}

TEST(ParseOutcomeFileTest, ADamagedLineIsNamedAndTheRestKept) {
  const std::string text =
      "# ptxdiff outcomes 1\n"
      "backend\toracle 1\n"
      "add.u32\timm\t-\t5\n"
      "add.s32\timm\t-\tfive\n"
      "sub.u32\tsideways\t-\t1\n"
      "sub.s32\timm\t7\t1\n"
      "mul.lo.u32\timm\t-\t1\t0";
  const absl::StatusOr<OutcomeFile> file = ParseOutcomeFile(text);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->rows.size(), 1u);
  EXPECT_EQ(file->rows[0].spelling, "add.u32");
  EXPECT_EQ(file->rows[0].counts[0], 5);
  EXPECT_THAT(file->damage,
              ElementsAre(HasSubstr("line 4: agree count 'five'"),
                          HasSubstr("line 5: form 'sideways'"),
                          HasSubstr("line 6: reason '7'"),
                          HasSubstr("line 7: cut short")));
}

TEST(ParseOutcomeFileTest, TextThatIsNoOutcomesFileIsAnError) {
  const absl::StatusOr<OutcomeFile> file = ParseOutcomeFile("inputs=3\n");
  EXPECT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("not an outcomes file"));
}

}  // namespace
}  // namespace ptxdiff
