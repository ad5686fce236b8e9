#include "harness/differential.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "worker/testing/faulty_worker_client.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<WorkerClient> Faulty(std::vector<std::string> flags) {
  return StartFaultyWorker(flags);
}

// Three tuples each of add.u32 and popc.b32.
std::vector<Tuple> AddAndPopcTuples() {
  std::vector<Tuple> tuples;
  for (const char* s : {"add.u32", "popc.b32"}) {
    for (uint64_t x : {1ull, 2ull, 3ull})
      tuples.push_back({*ParseVariant(s), {{x, x}}});
  }
  return tuples;
}

TEST(DifferentialTest, Judge) {
  const Variant add = *ParseVariant("add.u32");
  const Result defined{5, Undefined::kDefined};
  const Result open{0, Undefined::kDivisionByZero};
  EXPECT_EQ(Judge(add, defined, {.bits = 5}), Verdict::kAgree);
  EXPECT_EQ(Judge(add, defined, {.bits = 6}), Verdict::kMismatch);
  EXPECT_EQ(Judge(add, open, {.bits = 0xffffffff}), Verdict::kUnspecified);
  EXPECT_EQ(
      Judge(add, defined,
            {.kind = ResultKind::kDecline, .code = DeclineCode::kNotEvaluable}),
      Verdict::kDeclined);
  // A crash is a finding even where the spec leaves the value open: a
  // division by zero may give anything, but not kill the machine.
  EXPECT_EQ(Judge(add, open,
                  {.kind = ResultKind::kFault, .fault = CaseFault::kCrash}),
            Verdict::kFault);
  JudgeCounts counts;
  counts.Count(Verdict::kFault);
  EXPECT_EQ(counts.faulted, 1);
  EXPECT_EQ(counts.judged(), 1);
}

// A `.cc` variant agrees only where the bits and the carry both do; for a
// variant without `.cc` the reply's carry flag is ignored.
TEST(DifferentialTest, JudgeComparesTheCarryOfCcVariantsOnly) {
  const Tuple add_cc{*ParseVariant("add.cc.u32"), {{0xffffffff, 1, 0, 0}}};
  EXPECT_EQ(JudgeTuple(add_cc, {.bits = 0, .carry = true}).verdict,
            Verdict::kAgree);
  const Judgement carry_only = JudgeTuple(add_cc, {.bits = 0, .carry = false});
  EXPECT_EQ(carry_only.verdict, Verdict::kMismatch);
  EXPECT_TRUE(carry_only.oracle.carry);
  EXPECT_FALSE(carry_only.backend_carry);
  EXPECT_EQ(carry_only.backend_bits, 0u);
  EXPECT_EQ(JudgeTuple(add_cc, {.bits = 1, .carry = true}).verdict,
            Verdict::kMismatch);
  // sub.cc: the borrow.
  const Tuple sub_cc{*ParseVariant("sub.cc.u32"), {{0, 1, 0, 0}}};
  EXPECT_EQ(JudgeTuple(sub_cc, {.bits = 0xffffffff, .carry = true}).verdict,
            Verdict::kAgree);
  EXPECT_EQ(JudgeTuple(sub_cc, {.bits = 0xffffffff}).verdict,
            Verdict::kMismatch);
  // addc without .cc writes no carry: a set flag is ignored, and reported
  // as false.
  const Tuple addc{*ParseVariant("addc.u32"), {{0xffffffff, 0, 1, 0}}};
  const Judgement ignored = JudgeTuple(addc, {.bits = 0, .carry = true});
  EXPECT_EQ(ignored.verdict, Verdict::kAgree);
  EXPECT_FALSE(ignored.backend_carry);
  const Tuple plain{*ParseVariant("add.u32"), {{0xffffffff, 1, 0, 0}}};
  EXPECT_EQ(JudgeTuple(plain, {.bits = 0, .carry = true}).verdict,
            Verdict::kAgree);
  EXPECT_EQ(Judge(plain.variant, {0, Undefined::kDefined},
                  {.bits = 0, .carry = true}),
            Verdict::kAgree);
  EXPECT_EQ(Judge(add_cc.variant, {0, Undefined::kDefined, true}, {.bits = 0}),
            Verdict::kMismatch);
}

// A value that only the other reading explains is not a mismatch, under
// either reading; one that neither explains is.
TEST(DifferentialTest, TheOtherReadingsValueIsClassifiedNotFiled) {
  const Tuple bfe{*ParseVariant("bfe.u64"),
                  {{1, 256, 1, 0}}};  // spec 1, hardware 0
  EXPECT_EQ(JudgeTuple(bfe, {.bits = 0}, Reading::kSpec).verdict,
            Verdict::kOtherReading);
  EXPECT_STREQ(JudgeTuple(bfe, {.bits = 0}, Reading::kSpec).erratum->id.data(),
               "bfe-bfi-64-unmasked");
  EXPECT_EQ(JudgeTuple(bfe, {.bits = 1}, Reading::kHardware).verdict,
            Verdict::kOtherReading);
  EXPECT_EQ(JudgeTuple(bfe, {.bits = 1}, Reading::kSpec).verdict,
            Verdict::kAgree);
  EXPECT_EQ(JudgeTuple(bfe, {.bits = 7}, Reading::kSpec).verdict,
            Verdict::kMismatch);
  // Division by zero: open under the spec, all ones on hardware.
  const Tuple div{*ParseVariant("div.u32"), {{7, 0, 0, 0}}};
  EXPECT_EQ(JudgeTuple(div, {.bits = 5}, Reading::kSpec).verdict,
            Verdict::kUnspecified);
  EXPECT_EQ(JudgeTuple(div, {.bits = 5}, Reading::kHardware).verdict,
            Verdict::kMismatch);
  EXPECT_EQ(JudgeTuple(div, {.bits = 0xffffffff}, Reading::kHardware).verdict,
            Verdict::kAgree);
}

TEST(DifferentialTest, MismatchLineReplays) {
  const Tuple t{*ParseVariant("add.s16"), {{1, 0xffff, 0, 0}}};
  EXPECT_EQ(
      MismatchLine(t, Evaluate(t.variant, t.operands), 7, "ptxas"),
      "ptxdiff eval 'add.s16' 0x0001 0xffff  # oracle 0x0000, ptxas 0x0007");
  // A carry-only mismatch shows as one: both carries are written.
  const Tuple cc{*ParseVariant("add.cc.u32"), {{0xffffffff, 1, 0, 0}}};
  EXPECT_EQ(
      MismatchLine(cc, Evaluate(cc.variant, cc.operands), 0, "ptxas", false),
      "ptxdiff eval 'add.cc.u32' 0xffffffff 0x00000001  # oracle 0x00000000 "
      "cf=1, ptxas 0x00000000 cf=0");
  const Tuple addc{*ParseVariant("addc.u32"), {{0xffffffff, 0, 1, 0}}};
  EXPECT_EQ(
      MismatchLine(addc, Evaluate(addc.variant, addc.operands), 1, "x", true),
      "ptxdiff eval 'addc.u32' 0xffffffff 0x00000000 0x1  # oracle 0x00000000, "
      "x "
      "0x00000001");
}

// A fault's line replays the tuple in the form it faulted in: a runtime
// tuple with --runtime (the twenty-third fault run: `sweep --runtime a`
// printed its hangs as all-immediate commands).
TEST(DifferentialTest, TupleFaultLineReplaysTheFormThatFaulted) {
  const std::vector<std::string> messages = {"ptxas hung\nits detail"};
  const TupleResult hang{
      .kind = ResultKind::kFault, .message = 0, .fault = CaseFault::kHang};
  Tuple t{*ParseVariant("add.sat.s32"), {{0x69, 0x7fffff, 0, 0}}};
  EXPECT_EQ(TupleFaultLine(t, hang, messages),
            "hang on ptxdiff eval 'add.sat.s32' 0x00000069 0x007fffff: "
            "ptxas hung");
  t.runtime = 1;  // source a
  EXPECT_EQ(TupleFaultLine(t, hang, messages),
            "hang on ptxdiff eval 'add.sat.s32' 0x00000069 0x007fffff "
            "--runtime a: ptxas hung");
}

// A crash mid-run is counted as a faulty batch while the other batches are
// still judged (the faulty worker otherwise serves the oracle: all agree).
TEST(DifferentialTest, CountsAgreementsAndFaultyBatches) {
  auto client = Faulty({"--fault=crash-on=div.u32"});
  ASSERT_NE(client, nullptr);
  std::vector<Tuple> tuples;
  for (const char* s : {"add.u32", "div.u32", "div.s32"}) {
    for (uint64_t x : {0ull, 1ull, 7ull, 0x80000000ull}) {
      tuples.push_back({*ParseVariant(s), {{x, x ^ 3, 0, 0}}});
    }
  }
  DiffSummary summary;
  RunDifferential(*client, tuples, /*batch_size=*/4, summary);
  EXPECT_EQ(summary.counts.tuples, 12);
  EXPECT_EQ(summary.counts.faulty_batches, 1);
  ASSERT_EQ(summary.faults.size(), 1u);
  EXPECT_THAT(summary.faults[0],
              HasSubstr("crash on a batch of 4 tuples starting with div.u32"));
  EXPECT_EQ(summary.counts.agreed + summary.counts.unspecified, 8);
  EXPECT_EQ(summary.counts.mismatched, 0);
}

TEST(DifferentialTest, ABackendThatDisagreesIsAMismatch) {
  auto client = Faulty({"--fault=wrong-on=popc.b32"});
  ASSERT_NE(client, nullptr);
  const std::vector<Tuple> tuples = {
      {*ParseVariant("popc.b32"), {{0xff, 0, 0, 0}}},
      {*ParseVariant("popc.b64"), {{0xff, 0, 0, 0}}}};
  DiffSummary summary;
  RunDifferential(*client, tuples, 100, summary);
  EXPECT_EQ(summary.counts.mismatched, 1);
  EXPECT_EQ(summary.counts.agreed, 1);
  ASSERT_EQ(summary.mismatches.size(), 1u);
  EXPECT_EQ(summary.mismatches[0],
            "ptxdiff eval 'popc.b32' 0x000000ff  # oracle 0x00000008, faulty "
            "0x00000009");
}

// A tuple a batch left not run (a backend's time budget or fault cap) is
// sent again, and judged when it runs: a sweep runs every tuple the backend
// can run, and counts each once.
TEST(DifferentialTest, TuplesABatchLeftNotRunAreSentAgain) {
  const std::string state = testing::TempDir() + "/not_run_once_state";
  std::remove(state.c_str());
  auto client = Faulty({"--fault=not-run-once-on=add.u32", "--state=" + state});
  ASSERT_NE(client, nullptr);
  const std::vector<Tuple> tuples = AddAndPopcTuples();
  DiffSummary summary;
  RunDifferential(*client, tuples, 100, summary);
  EXPECT_EQ(summary.counts.tuples, 6);
  EXPECT_EQ(summary.counts.agreed, 6);
  EXPECT_EQ(summary.counts.declined, 0);
}

// One never run is declined after its last send, with the backend's reason,
// and counted once.
TEST(DifferentialTest, ATupleNeverRunIsDeclinedAfterItsLastSend) {
  auto client = Faulty({"--fault=not-run-on=add.u32"});
  ASSERT_NE(client, nullptr);
  const std::vector<Tuple> tuples = AddAndPopcTuples();
  DiffSummary summary;
  RunDifferential(*client, tuples, 2, summary);
  EXPECT_EQ(summary.counts.tuples, 6);
  EXPECT_EQ(summary.counts.agreed, 3);
  EXPECT_EQ(summary.counts.declined, 3);
  const auto declines = summary.DeclinesByCount();
  ASSERT_EQ(declines.size(), 1u);
  EXPECT_THAT(declines[0].first,
              HasSubstr("not run: faulty_worker: the batch's time budget"));
}

// Declines are counted by family and reason: one line per reason, however
// many variants and tuples it covers.
TEST(DifferentialTest, DeclinesAreCountedByReason) {
  auto client = Faulty({"--supports=popc.b32"});
  ASSERT_NE(client, nullptr);
  std::vector<Tuple> tuples;
  for (const char* s : {"popc.b32", "popc.b64", "clz.b32", "clz.b64"}) {
    for (uint64_t x : {1ull, 2ull, 3ull})
      tuples.push_back({*ParseVariant(s), {{x}}});
  }
  DiffSummary summary;
  RunDifferential(*client, tuples, 100, summary);
  EXPECT_EQ(summary.counts.agreed, 3);
  EXPECT_EQ(summary.counts.declined, 9);
  const auto declines = summary.DeclinesByCount();
  ASSERT_EQ(declines.size(), 2u);
  EXPECT_EQ(declines[0].second, 6);
  EXPECT_THAT(declines[0].first, testing::StartsWith("clz: "));
  EXPECT_EQ(declines[1].second, 3);
  EXPECT_THAT(declines[1].first, testing::StartsWith("popc: "));
  EXPECT_GT(declines[1].first.size(), std::string("popc: ").size())
      << "the reason itself is missing";
}

// Reasons are counted by their first line (the rest is a tool's output);
// the most common wins, a tie going to the first in sorted order.
TEST(DifferentialTest, DeclineReasonsCountFirstLines) {
  DeclineReasons reasons;
  EXPECT_EQ(reasons.Top(), (std::pair<std::string, int64_t>("", 0)));
  reasons.Add("tool failed: exit status 1\nits output", 3);
  reasons.Add("tool failed: exit status 1\nother output", 2);
  reasons.Add("not folded", 5);
  EXPECT_EQ(reasons.Top(), (std::pair<std::string, int64_t>("not folded", 5)));
  reasons.Add("another reason");
  EXPECT_EQ(reasons.Top(), (std::pair<std::string, int64_t>("not folded", 5)));
}

}  // namespace
}  // namespace ptxdiff
