#include "triage/minimizer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "worker/testing/faulty_worker_client.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<WorkerClient> Faulty(std::vector<std::string> flags) {
  return StartFaultyWorker(flags);
}

TEST(SimplificationsTest, AreStrictlySimplerAndLegal) {
  const Tuple t{*ParseVariant("vmad.s32.u32.s32.sat.shr15 d, -a.b1, b.h0, c"),
                {{0xdeadbeef, 0x80000001, 7, 0}}};
  const std::vector<Tuple> s = Simplifications(t);
  EXPECT_GT(s.size(), 10u);
  for (const Tuple& c : s) {
    EXPECT_TRUE(IsLegal(c.variant));
    EXPECT_LT(ComplexityOf(c), ComplexityOf(t)) << Spell(c.variant);
  }
  EXPECT_TRUE(Simplifications({*ParseVariant("add.u32"), {}}).empty());
  // A signed type is one step from its unsigned form.
  const std::vector<Tuple> plain =
      Simplifications({*ParseVariant("add.s32"), {}});
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(Spell(plain[0].variant), "add.u32");
}

// A mismatch seen only with immediates: exactly the value of its 64-bit
// immediates cut to 32 bits is one cause in any family (a tool's lexer);
// any other value is told apart by family (a compiler's folds).
TEST(ImmediatesCauseTest, NamesTheReadingOfTheImmediatesThatGivesTheValue) {
  const Tuple add{*ParseVariant("add.u64"), {{0x100000005, 0x200000007}}};
  EXPECT_EQ(ImmediatesCause(add, 12, Reading::kSpec),
            "64-bit immediates read as their low 32 bits (the same operands "
            "in registers agree)");
  const Tuple sub{*ParseVariant("sub.s64"), {{0x1fffffffe, 0}}};
  EXPECT_EQ(ImmediatesCause(sub, ~uint64_t{1}, Reading::kSpec),
            "64-bit immediates read as their low 32 bits, sign-extended (the "
            "same operands in registers agree)");
  EXPECT_EQ(ImmediatesCause(add, 13, Reading::kSpec),
            "wrong only with 64-bit immediates in add (the same operands in "
            "registers agree)");
  // a a runtime value, b = -1 read as 0xffffffff: MIN rem (2^32 - 1).
  const Tuple rem{*ParseVariant("rem.s64"),
                  {{0x8000000000000000, ~uint64_t{0}}},
                  /*runtime=*/1};
  EXPECT_EQ(ImmediatesCause(rem, 0xffffffff80000000, Reading::kSpec),
            "64-bit immediates read as their low 32 bits (the same operands "
            "in registers agree)");
  // One runtime source: only the other is an immediate, of 32 bits.
  const Tuple slct{*ParseVariant("slct.s32.s32"),
                   {{1, 2, 0x7fc00000, 0}},
                   /*runtime=*/1};
  EXPECT_EQ(ImmediatesCause(slct, 2, Reading::kSpec),
            "wrong only with 32-bit immediates in slct (the same operands in "
            "registers agree)");
}

TEST(MinimizerTest, DropsModifiersAndOperandBitsKeepingTheDisagreement) {
  auto client = Faulty({"--fault=wrong-on=vadd."});
  const Tuple failing{*ParseVariant("vadd.s32.u32.s32.sat d.b1, a.h0, b.b2, c"),
                      {{0x12345678, 0x9abcdef0, 0x0f0f0f0f, 0}}};
  auto f = MinimizeMismatch(*client, failing);
  ASSERT_TRUE(f.ok()) << f.status();
  // The bug is in every vadd: the plainest form, unsigned, is what is filed.
  EXPECT_EQ(Spell(f->tuple.variant), "vadd.u32.u32.u32");
  EXPECT_EQ(f->tuple.operands.v[0], 0u);
  EXPECT_EQ(f->tuple.operands.v[1], 0u);
  EXPECT_EQ(*f->backend_bits, f->oracle.bits ^ 1);
  EXPECT_FALSE(f->flaky);
  EXPECT_LT(f->minimize_backend_calls, 50);
  EXPECT_EQ(f->backend, "faulty");
}

// How the backend obtained the minimized tuple's value (its reply's note)
// goes with the finding.
TEST(MinimizerTest, TheFindingKeepsTheBackendsNoteOnItsValue) {
  auto client = Faulty({"--fault=wrong-on=popc.", "--note=executed: here"});
  auto f = MinimizeMismatch(*client, {*ParseVariant("popc.b64"), {{7}}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->backend_note, "executed: here");
  auto plain = Faulty({"--fault=wrong-on=popc."});
  auto g = MinimizeMismatch(*plain, {*ParseVariant("popc.b64"), {{7}}});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->backend_note, "");
}

TEST(MinimizerTest, KeepsTheOperandClassThatTriggersTheBug) {
  // Wrong only when the shift amount (operand b) is at least 32.
  auto client = Faulty({"--fault=wrong-on=vshl.", "--when-operand=1:32"});
  const Tuple failing{*ParseVariant("vshl.u32.u32.u32.sat.clamp.add"),
                      {{0xffffffff, 0x7fffffff, 0x1234, 0}}};
  auto f = MinimizeMismatch(*client, failing);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Spell(f->tuple.variant), "vshl.u32.u32.u32.clamp");
  EXPECT_EQ(f->tuple.operands.v[1], 32u);  // the simplest value >= 32
  EXPECT_EQ(f->tuple.operands.v[0], 0u);
}

// A tool that reads 64-bit immediates as 32 bits gets div.u64 wrong, and
// crashes on a division by zero: the minimizer never steps the divisor to 0
// (the spec leaves that value open, so it cannot show the mismatch), where
// each round's candidates held it and crashed the tool.
TEST(MinimizerTest, NeverTriesACandidateWhoseResultTheSpecLeavesOpen) {
  auto client = Faulty({"--fault=wrong-on=div.u64", "--crash-on-undefined"});
  const Tuple failing{*ParseVariant("div.u64"),
                      {{0x123456789, 0x100000003, 0, 0}}};
  auto f = MinimizeMismatch(*client, failing);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->kind, FindingKind::kValueMismatch);
  EXPECT_NE(f->tuple.operands.v[1], 0u);
  EXPECT_EQ(f->tuple.operands.v[0], 0u);
  EXPECT_FALSE(f->flaky);
}

TEST(MinimizerTest, IsDeterministic) {
  auto client = Faulty({"--fault=wrong-on=bfe.", "--when-operand=2:9"});
  const Tuple failing{*ParseVariant("bfe.s32"), {{0xf0f0f0f0, 0x1f, 0xff, 0}}};
  auto a = MinimizeMismatch(*client, failing);
  auto b = MinimizeMismatch(*client, failing);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->tuple.operands.v[2], b->tuple.operands.v[2]);
  EXPECT_EQ(a->tuple.operands.v[0], b->tuple.operands.v[0]);
  EXPECT_GE(a->tuple.operands.v[2], 9u);
}

TEST(MinimizerTest, NoDisagreementIsAnError) {
  auto client = Faulty({});
  auto f =
      MinimizeMismatch(*client, {*ParseVariant("add.s32"), {{1, 2, 0, 0}}});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("no disagreement"));
}

TEST(IsolateFaultTest, BisectsACrashingBatchToTheTuple) {
  auto client = Faulty({"--fault=crash-on=div.u32"});
  std::vector<Tuple> batch;
  for (const char* s :
       {"add.u32", "sub.u32", "mul.lo.u32", "div.u32", "rem.u32"}) {
    batch.push_back({*ParseVariant(s), {{5, 3, 0, 0}}});
  }
  auto f = IsolateFault(*client, batch);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->kind, FindingKind::kCrash);
  EXPECT_EQ(Spell(f->tuple.variant), "div.u32");
  EXPECT_EQ(f->batch.size(), 1u);
  EXPECT_THAT(f->detail, HasSubstr("SIGABRT"));
}

TEST(IsolateFaultTest, ADeviceFaultIsBisectedAndFiledAsOne) {
  auto client = Faulty({"--fault=device-fault-on=bfe.u64"});
  std::vector<Tuple> batch;
  for (const char* s : {"add.u64", "bfe.u64", "bfi.b64", "popc.b64"}) {
    batch.push_back({*ParseVariant(s), {{5, 3, 1, 2}}});
  }
  auto f = IsolateFault(*client, batch);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->kind, FindingKind::kDeviceFault);
  EXPECT_EQ(Spell(f->tuple.variant), "bfe.u64");
  EXPECT_THAT(f->detail, HasSubstr("cuda device fault: illegal instruction"));
  EXPECT_EQ(SignatureOf(*f).disagreement_class, "device-fault");
}

}  // namespace
}  // namespace ptxdiff
