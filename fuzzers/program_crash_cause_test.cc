#include "fuzzers/program_crash_cause.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "fuzzers/cause_frames.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;

// A mismatch of `p` at its witness whose outputs are those of `wrong`: `p`
// as a compiler that got one of its steps wrong computes it.
ProgramMismatch MismatchAs(const Program& p, const Program& wrong,
                           const std::string& departure_cause = "") {
  ProgramMismatch m{.form = ProgramInputs::kImmediate,
                    .inputs = WitnessInputs(p),
                    .oracle = EvaluateAtWitness(p)};
  for (const ProgramValue& v : EvaluateAtWitness(wrong))
    m.claimed.push_back(v.bits);
  m.departure_cause = departure_cause;
  return m;
}

std::vector<std::string> Frames(const std::string& body,
                                const std::string& wrong_body,
                                const std::string& departure_cause = "") {
  const Program p = ProgramOf(body);
  const ProgramMismatch m =
      MismatchAs(p, ProgramOf(wrong_body), departure_cause);
  return CauseFrameNames(CauseOfMismatch(p, m, Reading::kSpec));
}

// The tuple target's frames for a value mismatch of `spelling`.
std::vector<std::string> TupleFrames(const std::string& spelling) {
  return {cause::KindFrameName(FindingKind::kValueMismatch),
          cause::FamilyFrameName(ParseVariant(spelling)->family)};
}

constexpr char kXorThenAdd[] =
    "input %a .b32 5\ninput %b .b32 9\nxor.b32 %s, %a, %b;\n"
    "add.u32 %r, %s, 1;\noutput %r\n";
// The same with the xor taken to give all ones (ptxas's fold of it wrong).
constexpr char kXorWrongThenAdd[] =
    "input %a .b32 5\ninput %b .b32 9\nmov.b32 %s, 0xffffffff;\n"
    "add.u32 %r, %s, 1;\noutput %r\n";

// A culprit's cause is its variant's: the tuple's frames, whatever the
// program around it; another culprit's family is another crash state.
TEST(ProgramCrashCause, ACulpritsCauseIsItsTuplesCrashState) {
  const std::vector<std::string> xor_in_two_steps =
      Frames(kXorThenAdd, kXorWrongThenAdd);
  EXPECT_EQ(xor_in_two_steps, TupleFrames("xor.b32"));
  const std::vector<std::string> xor_alone =
      Frames("input %a .b32 0x80000000\nxor.b32 %r, %a, 3;\noutput %r\n",
             "input %a .b32 0x80000000\nmov.b32 %r, 0;\noutput %r\n");
  EXPECT_EQ(xor_alone, xor_in_two_steps);
  const std::vector<std::string> add_wrong =
      Frames(kXorThenAdd,
             "input %a .b32 5\ninput %b .b32 9\nxor.b32 %s, %a, %b;\n"
             "mov.b32 %r, 0x1234;\noutput %r\n");
  EXPECT_EQ(add_wrong, TupleFrames("add.u32"));
  EXPECT_NE(add_wrong, xor_in_two_steps);
}

// Executed code's departure is named by the SASS operation it departs at:
// one operation at other operands is one crash state, another is another.
TEST(ProgramCrashCause, ADepartureIsNamedByItsSassOperation) {
  const std::string sel =
      "executed code that departs first at `SEL R, R, 0xffff, !P`";
  const std::vector<std::string> at_sel =
      Frames(kXorThenAdd, kXorWrongThenAdd, sel);
  EXPECT_THAT(at_sel,
              ElementsAre(cause::KindFrameName(FindingKind::kValueMismatch),
                          cause::DepartureFrameName(SassOp::kSel)));
  EXPECT_EQ(at_sel[1], "ptxdiff::cause::DepartingAtSel");
  EXPECT_EQ(Frames(kXorThenAdd, kXorWrongThenAdd,
                   "executed code that departs first at `@!P SEL R, R, RZ, P`"),
            at_sel);
  const std::vector<std::string> at_vimnmx =
      Frames(kXorThenAdd, kXorWrongThenAdd,
             "executed code that departs first at `VIMNMX.U32 R, R, 0xffff, "
             "PT`");
  EXPECT_NE(at_vimnmx, at_sel);
  EXPECT_NE(at_sel, TupleFrames("xor.b32"));
}

// Where no one instruction explains the value, and the code departs (if
// at all) at a constant, there is no key: one unkeyed crash state, which
// no family's is, and the cause says so.
TEST(ProgramCrashCause, WithoutAKeyTheFrameSaysUnkeyed) {
  // The output is a move of the input: no instruction's value reaches it.
  const std::string moved =
      "input %a .b32 3\nxor.b32 %s, %a, 1;\nadd.u32 %t, %s, 2;\n"
      "mov.b32 %r, %a;\noutput %r\n";
  const std::string moved_wrong =
      "input %a .b32 3\nxor.b32 %s, %a, 1;\nadd.u32 %t, %s, 2;\n"
      "mov.b32 %r, 0x1234;\noutput %r\n";
  const Program p = ProgramOf(moved);
  const ProgramCrashCause unkeyed =
      CauseOfMismatch(p, MismatchAs(p, ProgramOf(moved_wrong)), Reading::kSpec);
  EXPECT_EQ(unkeyed.keyed, ProgramCrashCause::kUnkeyed);
  EXPECT_TRUE(absl::StartsWith(unkeyed.key, "no cause key")) << unkeyed.key;
  EXPECT_EQ(CauseText(unkeyed), "value-mismatch in an unkeyed program");
  EXPECT_THAT(CauseFrameNames(unkeyed),
              ElementsAre(cause::KindFrameName(FindingKind::kValueMismatch),
                          "ptxdiff::cause::InUnkeyedProgram"));
  const std::vector<std::string> at_a_constant =
      Frames(moved, moved_wrong,
             "executed code that departs first at `MOV R, 0x1234`");
  EXPECT_EQ(at_a_constant, CauseFrameNames(unkeyed))
      << "a departure at a constant names no cause of its own";
  EXPECT_NE(CauseFrameNames(unkeyed), TupleFrames("xor.b32"));
}

// A crash of the backend: a program of one instruction is its family's
// (the tuple's crash state); one of several steps is not minimized in
// crash mode, so it is unkeyed, apart from an unkeyed value mismatch.
TEST(ProgramCrashCause, AFaultIsItsOneInstructionsElseUnkeyed) {
  const ProgramFault crash{CaseFault::kCrash, "killed by signal 11"};
  const ProgramCrashCause alone = CauseOfFault(
      ProgramOf("input %a .b32 7\nadd.s32 %r, %a, 1;\noutput %r\n"), crash);
  EXPECT_THAT(
      CauseFrameNames(alone),
      ElementsAre(cause::KindFrameName(FindingKind::kCrash),
                  cause::FamilyFrameName(ParseVariant("add.s32")->family)));
  EXPECT_EQ(CauseText(alone), "crash in add");
  const ProgramCrashCause several = CauseOfFault(ProgramOf(kXorThenAdd), crash);
  EXPECT_EQ(several.keyed, ProgramCrashCause::kUnkeyed);
  EXPECT_EQ(CauseText(several), "crash in an unkeyed program");
  EXPECT_NE(CauseFrameNames(several), CauseFrameNames(alone));
  const ProgramCrashCause hang = CauseOfFault(
      ProgramOf(kXorThenAdd), {CaseFault::kHang, "timed out after 10 s"});
  EXPECT_NE(CauseFrameNames(hang), CauseFrameNames(several));
}

}  // namespace
}  // namespace ptxdiff
