#include "program/program_encoding.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "isa/fuzz_input.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/program_generator.h"
#include "program/program_minimizer.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

// `p` through the byte form and back: the same program but for register
// names, the same values, and the same bytes again.
void ExpectRoundTrip(const Program& p) {
  const absl::StatusOr<std::string> bytes = ProgramInputBytes(p);
  ASSERT_TRUE(bytes.ok()) << bytes.status() << "\n" << FormatProgram(p);
  const absl::StatusOr<Program> decoded = DecodeProgramInput(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status() << "\n" << FormatProgram(p);
  EXPECT_EQ(ProgramSignature(*decoded), ProgramSignature(p))
      << FormatProgram(p) << "decoded as\n"
      << FormatProgram(*decoded);
  EXPECT_EQ(EvaluateAtWitness(*decoded), EvaluateAtWitness(p))
      << FormatProgram(p);
  EXPECT_EQ(WitnessInputs(*decoded), WitnessInputs(p));
  EXPECT_EQ(ProgramInputBytes(*decoded).value_or(""), *bytes);
}

TEST(ProgramEncodingTest, TestdataProgramsRoundTrip) {
  for (const char* name :
       {"fuzzx-m009.ptxprog", "fuzzx-m011.ptxprog", "fuzzx-m012.ptxprog",
        "fuzzx-m016.ptxprog", "fuzzx-m025.ptxprog", "fuzzx-m037.ptxprog",
        "found-abs-lt-zero.ptxprog", "found-neg-abs-lt-min.ptxprog",
        "found-square-low-bits.ptxprog",
        "found-bmsk-min-max-unsigned.ptxprog",
        "lane-abs-cvt-sat-u16.ptxprog", "lane-bfe-s32-past-top.ptxprog",
        "lane-cnot-cvt-sat-s16.ptxprog", "forward-branches-exit.ptxprog",
        "found-label-bfe-s32-past-top.ptxprog",
        "found-branch-max-neg.ptxprog"}) {
    SCOPED_TRACE(name);
    const absl::StatusOr<Program> p = TestdataProgram(name);
    ASSERT_TRUE(p.ok()) << p.status();
    ExpectRoundTrip(*p);
  }
}

TEST(ProgramEncodingTest, GeneratedProgramsRoundTrip) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 300; ++k) ExpectRoundTrip(RandomProgram(rng));
}

TEST(ProgramEncodingTest, GuardsMovesAndSetAgainRoundTrip) {
  ExpectRoundTrip(ProgramOf(
      "input %a .b32 5\ninput %q .pred 1\ninput %w .b64 0x8000000000000000\n"
      "mov.b32 %m, %a;\n@!%q add.u32 %m, %m, 0x7fffffff;\n"
      "mov.pred %t, %q;\n@%t mov.b32 %a, 3;\nmul.wide.u32 %x, %a, %m;\n"
      "vadd.u32.u32.u32.add %v, %a.b1, %m.h0, %a;\n"
      "output %x\noutput %v\noutput %t\n"));
}

// Labels, branches (to the first or a later label of their block, in a
// loop's body, plain or guarded) and exits round-trip; a branch's record
// names its label by where it is among the labels after it.
TEST(ProgramEncodingTest, LabelsBranchesAndExitsRoundTrip) {
  const Program p = ProgramOf(
      "input %a .b32 5\n"
      "setp.lt.u32 %p, %a, 16;\n"
      "mov.b32 %r, 1;\n"
      "@%p bra FAR;\n"
      "add.u32 %r, %r, 2;\n"
      "NEAR:\n"
      "add.u32 %r, %r, 4;\n"
      "FAR:\n"
      "loop 2 {\n"
      " @!%p bra NEXT;\n"
      " add.u32 %r, %r, 8;\n"
      " NEXT:\n"
      "}\n"
      "bra END;\n"
      "exit;\n"
      "END:\n"
      "@!%p exit;\n"
      "output %r\n");
  ExpectRoundTrip(p);
  const absl::StatusOr<ProgramRecords> records = EncodeProgram(p);
  ASSERT_TRUE(records.ok()) << records.status();
  const StepRecord& far = records->steps[2];
  EXPECT_EQ(far.kind, ProgramStep::kBranch);
  EXPECT_TRUE(far.guarded);
  EXPECT_EQ(far.target_pick, 1);  // NEAR, then FAR
  EXPECT_EQ(records->steps[8].target_pick, 0);
  EXPECT_EQ(records->steps[12].kind, ProgramStep::kBranch);
  EXPECT_FALSE(records->steps[12].guarded);
  EXPECT_EQ(records->steps[15].kind, ProgramStep::kExit);
  EXPECT_TRUE(records->steps[15].guard_negated);
}

// A branch's pick wraps around the labels after it in its block; one with
// none there (none after it, or only in another block) is left out, the
// rest kept.
TEST(ProgramEncodingTest, ABranchWithNoLabelAfterItInItsBlockIsLeftOut) {
  const StepRecord move{.kind = ProgramStep::kMove, .operands = {{}}};
  const StepRecord label{.kind = ProgramStep::kLabel};
  const ProgramRecords records{
      .inputs = {{.type = 3, .witness = 1}},  // .pred
      .steps = {
          {.kind = ProgramStep::kBranch, .target_pick = 3},  // L0 or L1: L1
          move,
          {.kind = ProgramStep::kBranch, .guarded = true},  // left out
          {.kind = ProgramStep::kLoopBegin, .trip = 2},
          label,  // L0, in the loop
          {.kind = ProgramStep::kLoopEnd},
          label,  // L1
          {.kind = ProgramStep::kExit, .guarded = true, .guard_negated = true},
          {.kind = ProgramStep::kBranch},  // no label after it: left out
      }};
  // The second branch's only later label at its level is L1: it is kept.
  const absl::StatusOr<Program> p = DecodeProgramRecords(records);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .pred 0x1\n"
                                            "bra L1;\n"
                                            "mov.b32 %r0, 0x0;\n"
                                            "@%a bra L1;\n"
                                            "loop 2 {\n"
                                            "  L0:\n"
                                            "}\n"
                                            "L1:\n"
                                            "@!%a exit;\n"
                                            "output %r0\n"));
  // Written and read back, the records decode to the same program.
  const absl::StatusOr<Program> again =
      DecodeProgramInput(WriteProgramRecords(records));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(FormatProgram(*again), FormatProgram(*p));
}

// Records written before labels never set op bit 6: an op's low bits read
// as they did (7 modulo 7 an instruction), and bit 6 makes a label, a
// branch or an exit of them.
TEST(ProgramEncodingTest, OnlyBitSixMakesAJumpOrALabel) {
  const std::string label_bytes = absl::HexStringToBytes(
      "50584450524f4731"  // the tag
      "00"                // no inputs
      "03"                // 3 steps
      "010100" "0000000000000000"  // mov.b32 0
      "40"                // a label
      "42"                // exit
      "00");              // 1 output
  const absl::StatusOr<Program> p = DecodeProgramInput(label_bytes);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\nmov.b32 %r0, 0x0;\n"
                                            "L0:\n"
                                            "exit;\n"
                                            "output %r0\n"));
  const absl::StatusOr<ProgramRecords> old = ReadProgramRecords(
      absl::HexStringToBytes("50584450524f4731" "00" "01" "07"));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->steps[0].kind, ProgramStep::kInstruction);
}

// A thread input is an input record of its own type, its lane the witness.
TEST(ProgramEncodingTest, ThreadInputsRoundTrip) {
  const Program p = ProgramOf(
      "input %a .b32 5\ninput %t .b32 %tid.x 20\ninput %l .b32 %laneid 3\n"
      "setp.lt.u32 %p, %t, 16;\nadd.u32 %r, %l, %a;\n@%p add.u32 %r, %r, 1;\n"
      "output %r\n");
  ExpectRoundTrip(p);
  const absl::StatusOr<ProgramRecords> records = EncodeProgram(p);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->inputs.size(), 3u);
  EXPECT_EQ(records->inputs[0].type, 1);  // .b32
  EXPECT_EQ(records->inputs[1].type, kTidXInputType);
  EXPECT_EQ(records->inputs[1].witness, 20u);
  EXPECT_EQ(records->inputs[2].type, kLaneIdInputType);
  EXPECT_EQ(records->inputs[2].witness, 3u);
}

// A loaded input's type code: kLoadedInputType plus its width's.
TEST(ProgramEncodingTest, LoadedInputsRoundTrip) {
  auto p = TestdataProgram("loaded-inputs.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  ExpectRoundTrip(*p);
  const absl::StatusOr<ProgramRecords> records = EncodeProgram(*p);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->inputs.size(), 4u);
  EXPECT_EQ(records->inputs[0].type, kLoadedInputType + 0);  // .b16
  EXPECT_EQ(records->inputs[1].type, kLoadedInputType + 1);  // .b32
  EXPECT_EQ(records->inputs[2].type, kLoadedInputType + 2);  // .b64
  EXPECT_EQ(records->inputs[3].type, 1);
}

// The bytes of a thread input: its type read modulo kNumInputTypes, its
// witness modulo the lanes.
TEST(ProgramEncodingTest, ThreadInputBytesDecodeToALane) {
  std::string bytes = WriteProgramRecords(
      {.inputs = {{.type = kTidXInputType, .witness = 37},
                  {.type = kLaneIdInputType, .witness = 0xffffffff}}});
  const absl::StatusOr<Program> p = DecodeProgramInput(bytes);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b32 %tid.x 5\n"
                                            "input %b .b32 %laneid 31\n"
                                            "output %b\n"));
  bytes[9] = static_cast<char>(kTidXInputType + 2 * kNumInputTypes);
  bytes[18] = static_cast<char>(kNumInputTypes + 2);  // .b64
  const absl::StatusOr<Program> q = DecodeProgramInput(bytes);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(FormatProgram(*q), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b32 %tid.x 5\n"
                                            "input %b .b64 0xffffffff\n"
                                            "output %b\n"));
}

// Bytes written before thread inputs (by the writer that read and wrote an
// input's type modulo 4) decode to the program they did then, and are
// written back the same.
TEST(ProgramEncodingTest, BytesWrittenBeforeThreadInputsDecodeAsThen) {
  const std::string before = absl::HexStringToBytes(
      "50584450524f4731"                    // the tag
      "04"                                  // 4 inputs
      "00ffff000000000000"                  // .b16 0xffff
      "010700000000000000"                  // .b32 7
      "020000000000000080"                  // .b64 0x8000000000000000
      "030100000000000000"                  // .pred 1
      "02"                                  // 2 steps
      "010180"                              // mov.b32 of the last 32 bits
      "21000000" "3412000000000000"         // mov.b16 0x1234 to one set before
      "010004");                            // 2 outputs: the last, the first
  const absl::StatusOr<Program> p = DecodeProgramInput(before);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b16 0xffff\n"
                                            "input %b .b32 0x7\n"
                                            "input %c .b64 0x8000000000000000\n"
                                            "input %d .pred 0x1\n"
                                            "mov.b32 %r0, %b;\n"
                                            "mov.b16 %a, 0x1234;\n"
                                            "output %r0\n"
                                            "output %a\n"));
  EXPECT_EQ(ProgramInputBytes(*p).value_or(""), before);
}

// Any bytes after the tag are a program the parser accepts, or a program
// with nothing to store; and what they decode to round-trips.
TEST(ProgramEncodingTest, AnyBytesAfterTheTagDecodeToAParsedProgram) {
  std::mt19937_64 rng(11);
  int programs = 0, with_steps = 0;
  for (int k = 0; k < 1000; ++k) {
    std::string bytes(8 + rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    for (int b = 0; b < 8; ++b)
      bytes[b] = static_cast<char>(kProgramInputTag >> (8 * b));
    const absl::StatusOr<Program> p = DecodeProgramInput(bytes);
    if (!p.ok()) {
      ASSERT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument)
          << p.status();
      continue;
    }
    ++programs;
    with_steps += CountSteps(*p) > 0;
    ASSERT_TRUE(ParseProgram(FormatProgram(*p)).ok()) << FormatProgram(*p);
    ExpectRoundTrip(*p);
  }
  EXPECT_GT(programs, 500);
  EXPECT_GT(with_steps, 170);
}

ProgramRecords TwoInputs() {
  return {.inputs = {{.type = 1, .witness = 5}, {.type = 1, .witness = 7}}};
}

StepRecord Add(OperandRecord a, OperandRecord b) {
  return {.variant_id = StableId(*ParseVariant("add.u32")), .operands = {a, b}};
}

TEST(ProgramEncodingTest, PicksWrapAroundTheRegistersThatFit) {
  ProgramRecords r = TwoInputs();
  // Pick 0 is the most recent (%b), pick 3 wraps to %a.
  r.steps.push_back(Add({.pick = 0}, {.pick = 3}));
  r.outputs = {0};
  const absl::StatusOr<Program> p = DecodeProgramRecords(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b32 0x5\n"
                                            "input %b .b32 0x7\n"
                                            "add.u32 %r0, %b, %a;\n"
                                            "output %r0\n"));
}

TEST(ProgramEncodingTest, WhatCannotBeMadeWholeIsLeftOut) {
  ProgramRecords r = TwoInputs();
  // A `}` that closes nothing; a step of vISA (not PTX); a guard on a new
  // register (dropped: the step would leave it unset); a register source of
  // a width no register has (shl.b64's a, 64 bits), made an immediate.
  r.steps.push_back({.kind = ProgramStep::kLoopEnd});
  r.steps.push_back({.variant_id = StableId(*ParseVariant("visa.shl.q.ub.uw")),
                     .operands = {{}, {}}});
  r.steps.push_back({.kind = ProgramStep::kMove,
                     .guarded = true,
                     .width_type = 3,
                     .operands = {{.is_register = false, .value = 1}}});
  r.steps.push_back({.variant_id = StableId(*ParseVariant("shl.b64")),
                     .operands = {{.is_register = true, .pick = 0, .value = 9},
                                  {.is_register = true, .pick = 1}}});
  r.outputs = {0};
  const absl::StatusOr<Program> p = DecodeProgramRecords(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b32 0x5\n"
                                            "input %b .b32 0x7\n"
                                            "mov.pred %p0, 0x1;\n"
                                            "shl.b64 %r1, 0x9, %a;\n"
                                            "output %r1\n"));
}

TEST(ProgramEncodingTest, LoopsAreClosedCutAndNestedAtMostThreeDeep) {
  ProgramRecords r = TwoInputs();
  for (int k = 0; k < 5; ++k) {
    r.steps.push_back({.kind = ProgramStep::kLoopBegin, .trip = 1000});
  }
  r.steps.push_back(Add({.pick = 0}, {.pick = 1}));
  r.steps.push_back({.kind = ProgramStep::kLoopEnd});
  r.outputs = {0};
  const absl::StatusOr<Program> p = DecodeProgramRecords(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b32 0x5\n"
                                            "input %b .b32 0x7\n"
                                            "loop 1000 {\n"
                                            "  loop 1 {\n"
                                            "    loop 1 {\n"
                                            "      add.u32 %r0, %b, %a;\n"
                                            "    }\n"
                                            "  }\n"
                                            "}\n"
                                            "output %r0\n"));
}

TEST(ProgramEncodingTest, BlocksAreMadeWhole) {
  ProgramRecords r = TwoInputs();
  // An if with no predicate set before is left out, with its else and `}`;
  // an else after a loop's `{` is too; a `}` closes the innermost block,
  // whichever kind the record says.
  r.steps.push_back({.kind = ProgramStep::kIfBegin});
  r.steps.push_back(Add({.pick = 0}, {.pick = 1}));
  r.steps.push_back({.kind = ProgramStep::kElse});
  r.steps.push_back({.kind = ProgramStep::kIfEnd});
  r.steps.push_back(
      {.variant_id = StableId(*ParseVariant("setp.lt.u32")),
       .operands = {{.pick = 0}, {.is_register = false, .value = 16}}});
  r.steps.push_back({.kind = ProgramStep::kLoopBegin, .trip = 2});
  r.steps.push_back({.kind = ProgramStep::kElse});
  r.steps.push_back({.kind = ProgramStep::kIfBegin, .guard_negated = true});
  r.steps.push_back({.kind = ProgramStep::kMove,
                     .dst_set_before = true,
                     .operands = {{.is_register = false, .value = 3}}});
  r.steps.push_back({.kind = ProgramStep::kElse});
  r.steps.push_back({.kind = ProgramStep::kLoopEnd});
  r.outputs = {0};
  const absl::StatusOr<Program> p = DecodeProgramRecords(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), absl::StrCat(kProgramHeader,
                                            "\ninput %a .b32 0x5\n"
                                            "input %b .b32 0x7\n"
                                            "add.u32 %r0, %b, %a;\n"
                                            "setp.lt.u32 %p1, %r0, 0x10;\n"
                                            "loop 2 {\n"
                                            "  if !%p1 {\n"
                                            "    mov.b32 %r0, 0x3;\n"
                                            "  } else {\n"
                                            "  }\n"
                                            "}\n"
                                            "output %p1\n"));
  ExpectRoundTrip(*p);
}

TEST(ProgramEncodingTest, AnUnknownVariantIdStillNamesAVariant) {
  ProgramRecords r = TwoInputs();
  r.steps.push_back(Add({.pick = 0}, {.pick = 1}));
  r.steps[0].variant_id = 12345;
  const absl::StatusOr<Program> p = DecodeProgramRecords(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(ParseProgram(FormatProgram(*p)).ok());
}

TEST(ProgramEncodingTest, NothingToStoreIsAnError) {
  const absl::StatusOr<Program> p = DecodeProgramRecords({});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeProgramInput("not a program").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ProgramEncodingTest, WhatTheByteFormCannotSayIsAnError) {
  const absl::StatusOr<std::string> five_inputs = ProgramInputBytes(ProgramOf(
      "input %a .b32 1\ninput %b .b32 1\ninput %c .b32 1\ninput %d .b32 1\n"
      "input %e .b32 1\noutput %e\n"));
  EXPECT_FALSE(five_inputs.ok());
  // Both forms cap the trips of nested loops (1024 in all); the text form
  // nests loops deeper than the byte form's kMaxProgramInputLoopDepth.
  const absl::StatusOr<std::string> deep_loops = ProgramInputBytes(
      ProgramOf("mov.b32 %r, 0;\nloop 1 {\nloop 1 {\nloop 1 {\nloop 1 {\n"
                "add.u32 %r, %r, 1;\n}\n}\n}\n}\noutput %r\n"));
  EXPECT_FALSE(deep_loops.ok());
}

// The tag opens no tuple input: a program input is never read as tuples.
TEST(ProgramEncodingTest, TheTagIsNoVariantIdAndNoFormsTag) {
  EXPECT_NE(kProgramInputTag, kFuzzInputFormsTag);
  EXPECT_FALSE(VariantByStableId(kProgramInputTag).has_value());
  EXPECT_TRUE(LooksLikeProgramInput(WriteProgramRecords({})));
  EXPECT_FALSE(LooksLikeProgramInput(EncodeFuzzInput(
      *ParseVariant("add.u32"), std::vector<Operands>{Operands{{1, 2}}})));
}

}  // namespace
}  // namespace ptxdiff
