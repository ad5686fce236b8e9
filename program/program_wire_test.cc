#include "program/program_wire.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

constexpr char kProgram[] = R"(# ptxdiff program 1
input %a .b32 0xffffffff
input %b .b32 1
add.cc.u32 %lo, %a, %b;
addc.u32 %hi, 0, 0;
output %lo
output %hi
)";

ProgramCheck AMismatch() {
  return {.judged = true,
          .mismatch =
              ProgramMismatch{
                  .form = ProgramInputs::kImmediate,
                  .claimed = {7, 0x8000000000000000},
                  .inputs = {1, 2},
                  .oracle = {{.bits = 3},
                             {.bits = 4, .defined = false, .exits = true}},
                  .executed = true,
                  .listing = std::string(70000, 'L'),
                  .departure = "departs at SEL",
                  .departure_cause = "SEL R, R, 0xffff"},
          .why_not = "",
          .executed = true,
          .blocker = "op 0x943",
          .constants = std::vector<uint64_t>{5, 6},
          .vectors = 1037};
}

void ExpectSame(const ProgramCheck& a, const ProgramCheck& b) {
  EXPECT_EQ(a.judged, b.judged);
  EXPECT_EQ(a.nothing_defined, b.nothing_defined);
  EXPECT_EQ(a.cut, b.cut);
  EXPECT_EQ(a.executed, b.executed);
  EXPECT_EQ(a.refused, b.refused);
  EXPECT_EQ(a.why_not, b.why_not);
  EXPECT_EQ(a.blocker, b.blocker);
  EXPECT_EQ(a.hung_in_module, b.hung_in_module);
  EXPECT_EQ(a.constants, b.constants);
  EXPECT_EQ(a.vectors, b.vectors);
  ASSERT_EQ(a.fault.has_value(), b.fault.has_value());
  if (a.fault) {
    EXPECT_EQ(a.fault->kind, b.fault->kind);
    EXPECT_EQ(a.fault->what, b.fault->what);
  }
  ASSERT_EQ(a.mismatch.has_value(), b.mismatch.has_value());
  if (a.mismatch) {
    EXPECT_EQ(a.mismatch->form, b.mismatch->form);
    EXPECT_EQ(a.mismatch->claimed, b.mismatch->claimed);
    EXPECT_EQ(a.mismatch->inputs, b.mismatch->inputs);
    EXPECT_EQ(a.mismatch->oracle, b.mismatch->oracle);
    EXPECT_EQ(a.mismatch->executed, b.mismatch->executed);
    EXPECT_EQ(a.mismatch->listing, b.mismatch->listing);
    EXPECT_EQ(a.mismatch->departure, b.mismatch->departure);
    EXPECT_EQ(a.mismatch->departure_cause, b.mismatch->departure_cause);
  }
}

TEST(ProgramWireTest, EveryFieldOfACheckRoundTrips) {
  const std::vector<ProgramCheck> checks = {
      AMismatch(),
      {.fault = ProgramFault{.kind = CaseFault::kHang, .what = "hung"},
       .why_not = "w",
       .cut = true,
       .hung_in_module = "module hung"},
      {.fault = ProgramFault{.kind = CaseFault::kCrash, .what = "SIGSEGV"}},
      {.why_not = "nothing defined", .nothing_defined = true},
      {.why_not = "k.ptx:3: error: 'bmsk' not implemented", .refused = true},
  };
  for (const ProgramCheck& c : checks) {
    const absl::StatusOr<ProgramCheck> back =
        DecodeProgramCheck(EncodeProgramCheck(c));
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSame(c, *back);
  }
}

TEST(ProgramWireTest, DamagedChecksAreErrorsNotCrashes) {
  const std::string bytes = EncodeProgramCheck(AMismatch());
  for (size_t cut = 0; cut < bytes.size(); cut += 97) {
    EXPECT_FALSE(DecodeProgramCheck(bytes.substr(0, cut)).ok()) << cut;
  }
  EXPECT_THAT(DecodeProgramCheck(bytes + "x").status().message(),
              HasSubstr("unexpected bytes"));
}

TEST(ProgramWireTest, ABatchRoundTripsThroughARequest) {
  const Program p = *ParseProgram(kProgram);
  const absl::Time now = absl::FromUnixSeconds(1000);
  const ProgramRunRequest request =
      ProgramRequestOf({&p, 1}, ProgramInputs::kImmediate, Reading::kHardware,
                       /*until_fault=*/true, now + absl::Seconds(3), now);
  EXPECT_EQ(request.time_limit_ms, 3000u);
  const absl::StatusOr<ProgramBatch> batch = ProgramBatchOf(
      *DecodeProgramRunRequest(EncodeProgramRunRequest(request)), now);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->programs.size(), 1u);
  EXPECT_EQ(FormatProgram(batch->programs[0]), FormatProgram(p));
  EXPECT_EQ(batch->form, ProgramInputs::kImmediate);
  EXPECT_EQ(batch->reading, Reading::kHardware);
  EXPECT_TRUE(batch->until_fault);
  EXPECT_EQ(batch->deadline, now + absl::Seconds(3));
}

TEST(ProgramWireTest, NoDeadlineIsNoLimitAndAPassedOneStillCuts) {
  const Program p = *ParseProgram(kProgram);
  const absl::Time now = absl::FromUnixSeconds(1000);
  EXPECT_EQ(ProgramRequestOf({&p, 1}, ProgramInputs::kRuntime, Reading::kSpec,
                             false, absl::InfiniteFuture(), now)
                .time_limit_ms,
            0u);
  const ProgramRunRequest passed =
      ProgramRequestOf({&p, 1}, ProgramInputs::kRuntime, Reading::kSpec, false,
                       now - absl::Seconds(5), now);
  EXPECT_EQ(passed.time_limit_ms, 1u);
  EXPECT_EQ(ProgramBatchOf(passed, now)->deadline, now + absl::Milliseconds(1));
}

TEST(ProgramWireTest, AProgramThatDoesNotParseIsNamed) {
  ProgramRunRequest request{.programs = {kProgram, "not a program"}};
  EXPECT_THAT(ProgramBatchOf(request).status().message(),
              HasSubstr("program 1 of the batch does not parse"));
}

}  // namespace
}  // namespace ptxdiff
