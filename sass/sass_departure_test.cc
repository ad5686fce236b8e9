#include "sass/sass_departure.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "backends/ptxas/testing/compiled_kernel.h"
#include "backends/ptxas/sass_execution.h"

namespace ptxdiff {
namespace {

using ::ptxdiff::testing::RunCompiledKernel;

// A traced run of `body` (KernelOf) at -O`opt` with `params`.
SassRun TracedRun(const std::string& body, const std::vector<uint32_t>& params,
                  int opt) {
  absl::StatusOr<KernelExecution> run =
      RunCompiledKernel(body, params, 4, opt, /*trace=*/true);
  EXPECT_TRUE(run.ok()) << run.status();
  if (!run.ok()) return {};
  EXPECT_TRUE(run->ran) << run->why_not;
  return std::move(run->run);
}

SassAccess Reg(int index, uint32_t value, bool stored = false) {
  return {.kind = SassAccess::kRegister,
          .index = index,
          .value = value,
          .stored = stored};
}

SassAccess Pred(int index, bool value) {
  return {.kind = SassAccess::kPredicate, .index = index, .value = value};
}

SassTraceStep Step(uint32_t pc, std::string text, std::vector<SassAccess> reads,
                   std::vector<SassAccess> writes) {
  return {.pc = pc,
          .text = std::move(text),
          .executed = true,
          .reads = std::move(reads),
          .writes = std::move(writes)};
}

// A reference run that computes `values`, one register write each.
SassRun ReferenceComputing(const std::vector<uint32_t>& values) {
  SassRun run;
  for (uint32_t v : values) run.trace.push_back(Step(0, "MOV", {}, {Reg(0, v)}));
  return run;
}

TEST(FirstDeparture, IsTheEarliestWrongValueWhoseInputsAreRight) {
  SassRun code;
  code.trace = {
      Step(0x00, "LDC R4, c[0x0][0x210]", {}, {Reg(4, 7)}),
      Step(0x10, "ISETP.GT.AND P0, R4, RZ, PT", {Reg(4, 7)}, {Pred(0, true)}),
      // 7 is right, 9 is not: the first wrong value.
      Step(0x20, "IADD3 R5, R4, 0x2, RZ", {Reg(4, 7)}, {Reg(5, 9)}),
      Step(0x30, "SEL R6, R5, RZ, P0", {Pred(0, true), Reg(5, 9)},
           {Reg(6, 9)}),
      Step(0x40, "LOP3.LUT R7, R6, 0xff, RZ, 0xc0", {Reg(6, 9)}, {Reg(7, 9)}),
      Step(0x50, "STG.E [R2.64], R7", {Reg(7, 9, /*stored=*/true)}, {}),
  };
  const SassStore store{.pc = 0x50, .step = 5};
  const std::optional<SassDeparture> d =
      FirstDeparture(code, store, ReferenceComputing({7, 8}));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->step, 2);
  EXPECT_EQ(d->pc, 0x20u);
  EXPECT_EQ(d->value, 9u);
  EXPECT_EQ(d->key, "IADD3 R, R, 0x2, RZ");
  EXPECT_EQ(d->condition, "") << "IADD3 reads no predicate";
}

TEST(FirstDeparture, NamesTheConditionOfASelection) {
  SassRun code;
  code.trace = {
      Step(0x00, "LDC R4, c[0x0][0x210]", {}, {Reg(4, 0x80000000)}),
      Step(0x10, "ISETP.GT.U32.AND P0, R4, 0xffff, PT", {Reg(4, 0x80000000)},
           {Pred(0, true)}),
      Step(0x20, "SEL R0, R4, 0xffff, !P0", {Pred(0, true)}, {Reg(0, 0xffff)}),
      Step(0x30, "STG.E [R2.64], R0", {Reg(0, 0xffff, true)}, {}),
  };
  const std::optional<SassDeparture> d = FirstDeparture(
      code, {.step = 3}, ReferenceComputing({0x80000000, 0}));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->key, "SEL R, R, 0xffff, !P");
  EXPECT_EQ(d->condition, "ISETP.GT.U32.AND P0, R4, 0xffff, PT");
}

TEST(FirstDeparture, NoneWhereTheStoredValueIsOneTheReferenceComputes) {
  SassRun code;
  code.trace = {
      Step(0x00, "MOV R0, 0x1", {}, {Reg(0, 1)}),
      Step(0x10, "STG.E [R2.64], R0", {Reg(0, 1, true)}, {}),
  };
  EXPECT_FALSE(
      FirstDeparture(code, {.step = 1}, ReferenceComputing({1})).has_value());
  EXPECT_FALSE(FirstDeparture(code, {.step = 7}, ReferenceComputing({}))
                   .has_value())
      << "a store outside the trace";
  EXPECT_TRUE(
      FirstDeparture(code, {.step = 1}, ReferenceComputing({2})).has_value());
}

TEST(FirstDeparture, FollowsOnlyTheStoresData) {
  SassRun code;
  code.trace = {
      Step(0x00, "MOV R2, 0x1234", {}, {Reg(2, 0x1234)}),  // the address
      Step(0x10, "MOV R0, 0x5", {}, {Reg(0, 5)}),
      Step(0x20, "STG.E [R2.64], R0", {Reg(2, 0x1234), Reg(0, 5, true)}, {}),
  };
  const std::optional<SassDeparture> d =
      FirstDeparture(code, {.step = 2}, ReferenceComputing({}));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->pc, 0x10u) << "the address's MOV is not the value's history";
}

TEST(SassKey, DropsNumbersAndTheUniformDatapathButKeepsValues) {
  EXPECT_EQ(SassKey("IADD3 R5, P0, R4, c[0x0][0x384], RZ"),
            "IADD3 R, P, R, c[0x0][...], RZ");
  EXPECT_EQ(SassKey("@!UP1 ULOP3.LUT UR4, UR5, 0x95, URZ, UPT"),
            "@!P LOP3.LUT R, R, 0x95, RZ, PT");
  EXPECT_EQ(SassKey("USEL UR4, UR4, 0xffff, !UP1"), SassKey("SEL R2, R0, 0xffff, !P0"));
  EXPECT_EQ(SassKey("STG.E.64 [R2.64+0x8], R4"), "STG.E.64 [R.64+0x8], R");
  EXPECT_EQ(SassKey("IMAD.WIDE.U32 R4, R2, -R3, R10"),
            "IMAD.WIDE.U32 R, R, -R, R");
  EXPECT_EQ(SassKey("PRMT R0, R0, 0x7710, RZ"), "PRMT R, R, 0x7710, RZ")
      << "PRMT's name is not a predicate";
  EXPECT_EQ(SassKey("R2UR UR4, R4"), "R2UR R, R");
}

// A key names its operation (crash mode's frame per departing operation,
// fuzzers/cause_frames.h): the longest mnemonic, past guard and suffixes.
TEST(SassOpOfText, ReadsTheOperationOfAKeyOrAText) {
  EXPECT_EQ(SassOpOfText("IMAD.WIDE.U32 R, R, -R, R"), SassOp::kImadWide);
  EXPECT_EQ(SassOpOfText("IMAD.X R, R, R, R"), SassOp::kImad);
  EXPECT_EQ(SassOpOfText("@!P SEL R, R, 0xffff, !P"), SassOp::kSel);
  EXPECT_EQ(SassOpOfText("@!UP1 ULOP3.LUT UR4, UR5, 0x95, URZ, UPT"),
            SassOp::kLop3);
  EXPECT_EQ(SassOpOfText("PLOP3.LUT P0, PT, PT, PT, 0x8, 0x0"),
            SassOp::kPlop3);
  EXPECT_EQ(SassOpOfText("VIMNMX.U32 R, R, 0xffff, PT"), SassOp::kVimnmx);
  EXPECT_EQ(SassOpOfText("DMUL R, R, R"), std::nullopt);
  EXPECT_EQ(SassOpOfText("IMADX R, R, R, R"), std::nullopt);
  EXPECT_EQ(SassOpOfText(""), std::nullopt);
  for (int k = 0; k < kNumSassOps; ++k) {
    const SassOp op = static_cast<SassOp>(k);
    EXPECT_EQ(SassOpOfText(SassOpName(op, false) + " R0"), op);
    EXPECT_EQ(SassOpOfText(SassOpName(op, true) + " UR0"), op);
  }
}

TEST(DepartingOperation, ReadsTheOperationADepartureCauseNames) {
  const SassDeparture sel{.key = SassKey("SEL R0, R0, 0xffff, !P1")};
  EXPECT_EQ(DepartingOperation(DepartureCause(sel)), SassOp::kSel);
  const SassDeparture wide{.key = SassKey("IMAD.WIDE.U32 R4, R2, R3, R10")};
  EXPECT_EQ(DepartingOperation(DepartureCause(wide)), SassOp::kImadWide);
  EXPECT_EQ(DepartingOperation("SEL R, R, 0xffff, !P"), std::nullopt)
      << "a key alone is no departure cause";
  EXPECT_EQ(DepartingOperation(""), std::nullopt);
}

// ptxas 13's -O3 code for a clamp after a negation or an absolute value
// (docs/sass-evaluator.md, "What it finds"): both depart at the clamp's
// selection of its upper bound, so the two programs are one cause; the
// clamp of `cnot` is another.
class CompiledDepartureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ptxdiff::testing::HavePtxas()) GTEST_SKIP() << "no ptxas here";
  }

  std::optional<SassDeparture> DepartureOf(const std::string& body,
                                           uint32_t input) {
    const SassRun o3 = TracedRun(body, {input}, 3);
    const SassRun o0 = TracedRun(body, {input}, 0);
    EXPECT_EQ(o3.stores.size(), 1u);
    EXPECT_EQ(o0.stores.size(), 1u);
    if (o3.stores.empty() || o0.stores.empty()) return std::nullopt;
    EXPECT_NE(o3.stores[0].words[0], o0.stores[0].words[0])
        << "ptxas's -O3 code is wrong here";
    return FirstDeparture(o3, o3.stores[0], o0);
  }
};

TEST_F(CompiledDepartureTest, AClampAfterNegOrAbsDepartsAtOneInstruction) {
  const std::string clamp =
      "  cvt.sat.u16.s32 %r2, %r1;\n  st.global.b32 [%out], %r2;\n";
  const std::optional<SassDeparture> neg =
      DepartureOf("  neg.s32 %r1, %r0;\n" + clamp, 0x80000000);
  const std::optional<SassDeparture> abs =
      DepartureOf("  abs.s32 %r1, %r0;\n" + clamp, 0x80000000);
  ASSERT_TRUE(neg.has_value());
  ASSERT_TRUE(abs.has_value());
  EXPECT_EQ(neg->key, "SEL R, R, 0xffff, !P");
  EXPECT_EQ(neg->key, abs->key) << neg->text << " and " << abs->text;
  EXPECT_EQ(neg->value, 0xffffu);
  EXPECT_THAT(neg->condition, ::testing::StartsWith("ISETP."));
  EXPECT_THAT(abs->condition, ::testing::StartsWith("ISETP."));

  const std::optional<SassDeparture> cnot = DepartureOf(
      "  cnot.b32 %r1, %r0;\n  cvt.sat.s16.u32 %r2, %r1;\n"
      "  st.global.b32 [%out], %r2;\n",
      0);
  ASSERT_TRUE(cnot.has_value());
  EXPECT_NE(cnot->key, neg->key);
  EXPECT_EQ(cnot->value, 0xffff8000u);
}

}  // namespace
}  // namespace ptxdiff
