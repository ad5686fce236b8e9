#include "program/program.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"
#include "program/composed_oracle.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

constexpr char kCarryChain[] = R"(# ptxdiff program 1
# a 64-bit sum of two 32-bit values, low word then high word
input %a .b32 0xffffffff
input %b .b32 1
add.cc.u32 %lo, %a, %b;
addc.u32 %hi, 0, 0;   # the carry
output %lo
output %hi
)";

TEST(ProgramTest, ParsesInputsStepsAndOutputs) {
  auto p = ParseProgram(kCarryChain);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->inputs.size(), 2u);
  EXPECT_EQ(p->inputs[0].name, "a");
  EXPECT_EQ(p->inputs[0].width, 32);
  EXPECT_EQ(p->inputs[0].witness, 0xffffffffu);
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(Spell(p->steps[1].variant), "addc.u32");
  EXPECT_EQ(p->steps[1].line, 6);
  EXPECT_FALSE(p->steps[1].sources[0].is_register);
  EXPECT_EQ(p->outputs, (std::vector<std::string>{"lo", "hi"}));
  EXPECT_TRUE(LooksLikeProgram(kCarryChain));
  EXPECT_FALSE(LooksLikeProgram("# ptxdiff case 1\n"));
}

constexpr char kLoops[] = R"(# ptxdiff program 1
input %n .b32 3
mov.b32 %acc, 0;
loop 4 {
  add.u32 %acc, %acc, %n;
  loop 2 {
    add.u32 %acc, %acc, 1;
  }
}
output %acc
)";

TEST(ProgramTest, LoopsAndMovesReadBack) {
  auto p = ParseProgram(kLoops);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->steps.size(), 7u);
  EXPECT_EQ(p->steps[0].kind, ProgramStep::kMove);
  EXPECT_EQ(p->steps[1].kind, ProgramStep::kLoopBegin);
  EXPECT_EQ(p->steps[1].trip, 4);
  EXPECT_EQ(p->steps[5].kind, ProgramStep::kLoopEnd);
  const std::string text = FormatProgram(*p);
  EXPECT_EQ(text,
            "# ptxdiff program 1\n"
            "input %n .b32 0x3\n"
            "mov.b32 %acc, 0x0;\n"
            "loop 4 {\n"
            "  add.u32 %acc, %acc, %n;\n"
            "  loop 2 {\n"
            "    add.u32 %acc, %acc, 0x1;\n"
            "  }\n"
            "}\n"
            "output %acc\n");
  auto again = ParseProgram(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(FormatProgram(*again), text);
}

constexpr char kIfElse[] = R"(# ptxdiff program 1
input %a .b32 3
input %n .b32 7
setp.lt.u32 %p, %a, 16;
if %p {
  shl.b32 %r, %n, 24;
  loop 2 {
    add.u32 %r, %r, 1;
  }
} else {
  mov.b32 %r, 0x80000000;
}
loop 3 {
  if !%p {
    add.u32 %r, %r, 2;
  }
}
and.b32 %s, %r, 0xff;
output %s
)";

// if/else blocks nest with loops and each other, and read back from their
// text; `} else {` splits an if, `}` closes the innermost block.
TEST(ProgramTest, IfElseBlocksNestAndReadBack) {
  auto p = ParseProgram(kIfElse);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->steps.size(), 15u);
  EXPECT_EQ(p->steps[1].kind, ProgramStep::kIfBegin);
  EXPECT_EQ(p->steps[1].guard, "p");
  EXPECT_FALSE(p->steps[1].guard_negated);
  EXPECT_EQ(p->steps[1].line, 5);
  EXPECT_EQ(p->steps[5].kind, ProgramStep::kLoopEnd);
  EXPECT_EQ(p->steps[6].kind, ProgramStep::kElse);
  EXPECT_EQ(p->steps[8].kind, ProgramStep::kIfEnd);
  EXPECT_EQ(p->steps[10].kind, ProgramStep::kIfBegin);
  EXPECT_TRUE(p->steps[10].guard_negated);
  EXPECT_EQ(p->steps[12].kind, ProgramStep::kIfEnd);
  EXPECT_EQ(p->steps[13].kind, ProgramStep::kLoopEnd);
  EXPECT_EQ(CountSteps(*p), 6);
  EXPECT_EQ(BlockKinds(*p), "loops, if/else");
  EXPECT_EQ(BlockKinds(*ParseProgram(kLoops)), "loops");
  EXPECT_EQ(BlockKinds(*ParseProgram(kCarryChain)), "");
  const std::string text = FormatProgram(*p);
  EXPECT_EQ(text,
            "# ptxdiff program 1\n"
            "input %a .b32 0x3\n"
            "input %n .b32 0x7\n"
            "setp.lt.u32 %p, %a, 0x10;\n"
            "if %p {\n"
            "  shl.b32 %r, %n, 0x18;\n"
            "  loop 2 {\n"
            "    add.u32 %r, %r, 0x1;\n"
            "  }\n"
            "} else {\n"
            "  mov.b32 %r, 0x80000000;\n"
            "}\n"
            "loop 3 {\n"
            "  if !%p {\n"
            "    add.u32 %r, %r, 0x2;\n"
            "  }\n"
            "}\n"
            "and.b32 %s, %r, 0xff;\n"
            "output %s\n");
  auto again = ParseProgram(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(FormatProgram(*again), text);
}

// Each block's parts, found from any of its brackets.
TEST(ProgramTest, BlocksOfFindEachBlocksParts) {
  auto p = ParseProgram(kIfElse);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<ProgramBlock> blocks = BlocksOf(p->steps);
  for (size_t i : {1, 6, 8}) {
    EXPECT_EQ(blocks[i].begin, 1u) << i;
    EXPECT_EQ(blocks[i].else_at, 6u) << i;
    EXPECT_EQ(blocks[i].end, 8u) << i;
  }
  EXPECT_EQ(blocks[3].begin, 3u);
  EXPECT_EQ(blocks[3].end, 5u);
  EXPECT_EQ(blocks[10].begin, 10u);  // an if without an else
  EXPECT_EQ(blocks[10].else_at, 12u);
  EXPECT_EQ(blocks[12].end, 12u);
  EXPECT_EQ(blocks[13].begin, 9u);
}

TEST(ProgramTest, FormatReadsBackToTheSameProgram) {
  auto p = ParseProgram(kCarryChain);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = FormatProgram(*p);
  EXPECT_EQ(text,
            "# ptxdiff program 1\n"
            "input %a .b32 0xffffffff\n"
            "input %b .b32 0x1\n"
            "add.cc.u32 %lo, %a, %b;\n"
            "addc.u32 %hi, 0x0, 0x0;\n"
            "output %lo\n"
            "output %hi\n");
  auto again = ParseProgram(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(FormatProgram(*again), text);
}

// Every PTX variant as a one-step program of register inputs (a sample of
// the video families): its text reads back, and the composed oracle gives
// the per-variant oracle's result at the witness.
TEST(ProgramTest, EveryVariantIsAStepThatReadsBackAndEvaluatesAsItsTuple) {
  std::mt19937_64 rng(5);
  int checked = 0, video = 0;
  for (const Variant& v : AllVariants()) {
    if (InfoOf(v.family).isa != TargetIsa::kPtx || HasCarryIn(v)) continue;
    if ((IsVideo(v.family) || IsSimdVideo(v.family)) && video++ % 97 != 0)
      continue;
    std::vector<Operands> ops(1);
    FillEdgeTuples(v, rng, ops);
    const Program p = TupleAsProgram(v, ops[0]);
    const std::string text = FormatProgram(p);
    auto back = ParseProgram(text);
    ASSERT_TRUE(back.ok()) << Spell(v) << ":\n" << text << back.status();
    ASSERT_EQ(FormatProgram(*back), text);
    const Result want = Evaluate(v, ops[0]);
    const std::vector<ProgramValue> got = EvaluateAtWitness(*back);
    ASSERT_EQ(got[0].bits, want.bits) << text;
    ASSERT_EQ(got[0].defined, want.defined()) << text;
    ++checked;
  }
  EXPECT_GT(checked, 800);
}

// Nested loops whose trips multiply to 1024 at most are a case; their
// evaluation stays bounded.
TEST(ProgramTest, NestedLoopsUpToTheCapParse) {
  auto p = ParseProgram(
      "# ptxdiff program 1\ninput %a .b32 1\nloop 32 {\nloop 0 {\n}\nloop 32 "
      "{\nadd.u32 %a, %a, 1;\n}\n}\noutput %a\n");
  ASSERT_TRUE(p.ok()) << p.status();
  auto out = EvaluateProgram(*p, WitnessInputs(*p), Reading::kSpec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].bits, 1025u);
}

TEST(ProgramTest, BadProgramsNameTheLineAndTheProblem) {
  const std::string h = "# ptxdiff program 1\n";
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {"add.s32 %r, 1, 2;\noutput %r\n", "expected '# ptxdiff program 1'"},
           {h + "add.s32 %r, %x, 2;\noutput %r\n",
            "line 2: %x is used before it is set"},
           {h + "input %a .b32 1\nadd.s64 %a, 5, 2;\noutput %a\n",
            "line 3: %a is 32 bits wide; set again as 64"},
           {h + "loop 2 {\nmov.b32 %a, 1;\noutput %a\n",
            "line 2: this loop's '}' is missing"},
           {h + "mov.b32 %a, 1;\n}\noutput %a\n", "line 3: '}' closes no loop"},
           {h + "loop 2000 {\n}\nmov.b32 %a, 1;\noutput %a\n",
            "N from 0 to 1024"},
           // Issue 42, item 2: four nested loops of 1024 never ended.
           {h + "input %a .b32 1\nloop 1024 {\nloop 1024 {\nloop 1024 "
                "{\nloop 1024 {\nadd.u32 %a, %a, 1;\n}\n}\n}\n}\noutput "
                "%a\n",
            "line 4: loop 1024 inside loops of 1024 trips in all would run "
            "its body 1048576 times; nested loops run at most 1024 times in "
            "all"},
           {h + "input %a .b32 1\nloop 32 {\nloop 0 {\n}\nloop 33 "
                "{\n}\n}\noutput %a\n",
            "line 6: loop 33 inside loops of 32 trips"},
           {h + "mov.b32 %a, %q;\noutput %a\n", "%q is used before it is set"},
           {h + "mov.b64 %a, 1;\nmov.b32 %b, %a;\noutput %b\n",
            "%a is 64 bits wide; the move is 32"},
           {h + "input %a .b32 1\nadd.s64 %r, %a, 2;\noutput %r\n",
            "line 3: %a is 32 bits wide; add.s64 source a reads 64"},
           {h + "input %a .b32 1\nadd.q32 %r, %a, 2;\noutput %r\n", "line 3: "},
           {h + "input %a .b32 1\nadd.s32 %r, %a;\noutput %r\n",
            "line 3: unknown instruction"},
           {h + "input %a .b32 1\n@%p add.s32 %r, %a, 1;\noutput %r\n",
            "line 3: %p is used before it is set"},
           {h + "input %a .b32 1\n@%a add.s32 %r, %a, 1;\noutput %r\n",
            "line 3: the guard %a is 32 bits wide, not a .pred"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\n@%p add.s32 %r, %a, "
                "1;\noutput %r\n",
            "line 4: the guarded step's %r must be set before it"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\n@%p loop 2 "
                "{\n}\noutput %a\n",
            "line 4: only an instruction, a move, a branch or an exit can be guarded"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\nif %p {\nmov.b32 "
                "%r, 1;\noutput %r\n",
            "line 4: this if's '}' is missing"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\nif %p {\nloop 2 "
                "{\n}\noutput %a\n",
            "line 4: this if's '}' is missing"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\nloop 2 {\nif %p "
                "{\n}\noutput %a\n",
            "line 4: this loop's '}' is missing"},
           {h + "input %a .b32 1\n} else {\n}\noutput %a\n",
            "line 3: '} else {' without its 'if %p {'"},
           {h + "input %a .b32 1\nloop 2 {\n} else {\n}\noutput %a\n",
            "line 4: '} else {' without its 'if %p {'"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\nif %p {\n} else "
                "{\n} else {\n}\noutput %a\n",
            "line 6: a second '} else {' for one 'if'"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\nif %p {\nelse "
                "{\n}\noutput %a\n",
            "line 5: expected '}' or '} else {' alone on its line"},
           {h + "input %a .b32 1\nsetp.lt.u32 %p, %a, 2;\nif %p {\n} mov.b32 "
                "%r, 1;\noutput %a\n",
            "line 5: expected '}' or '} else {' alone on its line"},
           {h + "input %a .b32 1\nif %a {\n}\noutput %a\n",
            "line 3: the condition %a is 32 bits wide, not a .pred"},
           {h + "input %a .b32 1\nif %q {\n}\noutput %a\n",
            "line 3: %q is used before it is set"},
           {h + "input %a .b32 1\nif 1 {\n}\noutput %a\n",
            "line 3: expected 'if %p {' or 'if !%p {'"},
           {h + "input %p .pred 1\nif %p\n}\noutput %p\n",
            "line 3: expected 'if %p {' or 'if !%p {'"},
           {h + "input %p .pred 1\n@%p if %p {\n}\noutput %p\n",
            "line 3: only an instruction, a move, a branch or an exit can be guarded"},
           {h + "input %a .b32 1\nadd.s32 %r, %a, 1;\n", "no output"},
           {h + "input %a .b32 1\noutput %q\n", "output %q is never set"},
           {h + "input %a .f32 1\noutput %a\n", "unknown type '.f32'"},
           {h + "input %a .b32 zz\noutput %a\n",
            "cannot read the witness 'zz'"},
           // Issue 42, item 13: these were taken (0x100000005 as 5, a
           // second %a, a name ptxas then refused), or printed raw.
           {h + "input %a .b32 0x100000005\noutput %a\n",
            "line 2: the witness 0x100000005 does not fit .b32 (32 bits, "
            "signed or not)"},
           {h + "input %a .b16 -70000\noutput %a\n",
            "the witness -70000 does not fit .b16"},
           {h + "input %p .pred 7\noutput %p\n",
            "the witness 7 does not fit .pred (0 or 1)"},
           {h + "input %a .b32 1\ninput %a .b32 2\noutput %a\n",
            "line 3: %a is declared twice"},
           {h + "input %\xc3\xa9t\xc3\xa9 .b32 1\noutput %a\n",
            "line 2: '%\\xc3\\xa9t\\xc3\\xa9' is not a register name"},
           {h + "input %a .b32 1\nadd.u32 %" + std::string(100, 'r') +
                ", %a, 1;\noutput %a\n",
            "line 3: '%rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr...' is not a "
            "register name: a letter, then letters, digits, _ or $, at most "
            "64 in all"},
           {h + std::string("input %a .b32 zz\0\noutput %a\n", 28),
            "cannot read the witness 'zz\\x00'"},
           {h + "input %a .b32 1\nbfe.u32 %r, %a, 300, 8;\noutput %r\n",
            "bfe.u32 source b cannot be the immediate 300 (ptxas takes 0 to "
            "255 there)"},
           // Issue 65: these immediates were cut to their width unseen.
           {h + "input %a .b16 1\nadd.u16 %r, %a, 0x12345;\noutput %r\n",
            "line 3: the immediate 0x12345 does not fit in 16 bits (add.u16 "
            "source b)"},
           {h + "input %a .b32 1\nadd.u32 %r, %a, 0x1ffffffff;\noutput %r\n",
            "line 3: the immediate 0x1ffffffff does not fit in 32 bits"},
           {h + "mov.b16 %r, 0x12345;\noutput %r\n",
            "line 2: the immediate 0x12345 does not fit in 16 bits"},
           {h + "mov.pred %p, 2;\noutput %p\n",
            "line 2: the immediate 2 does not fit in 1 bit (0 or 1)"},
       }) {
    auto p = ParseProgram(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_THAT(p.status().message(), HasSubstr(c.message)) << c.text;
  }
}

// Issue 65: an operand of a million digits was echoed whole in the
// message; the line's number says where the rest is.
TEST(ProgramTest, AHugeOperandIsShortenedInTheMessage) {
  const std::string digits(1000000, '7');
  for (const std::string& line :
       {"add.u32 %r, %a, " + digits + ";", "mov.b32 %r, " + digits + ";"}) {
    auto p = ParseProgram("# ptxdiff program 1\ninput %a .b32 1\n" + line +
                          "\noutput %r\n");
    ASSERT_FALSE(p.ok());
    EXPECT_LT(p.status().message().size(), 300u) << line.substr(0, 20);
    EXPECT_THAT(p.status().message(),
                HasSubstr("program line 3: cannot read operand '7777"));
    EXPECT_THAT(p.status().message(), HasSubstr("(1000002 characters)"));
  }
}

// What a triage store is given to check a program entry's case.txt: the
// parser's verdict, its message naming the line.
TEST(ProgramTest, CheckProgramTextIsTheParsersVerdict) {
  EXPECT_TRUE(CheckProgramText(kCarryChain).ok());
  const absl::Status bad = CheckProgramText(
      "# ptxdiff program 1\nnot.an.instruction %r;\noutput %r\n");
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_THAT(bad.message(), HasSubstr("program line 2"));
}

// Issue 65: a program saved by an editor that writes a UTF-8 byte order
// mark before the header reads as the same program.
TEST(ProgramTest, AByteOrderMarkBeforeTheHeaderIsTaken) {
  const std::string text = std::string("\xef\xbb\xbf") + kCarryChain;
  EXPECT_TRUE(LooksLikeProgram(text));
  auto p = ParseProgram(text);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FormatProgram(*p), FormatProgram(*ParseProgram(kCarryChain)));
}

// A guarded step runs where its predicate holds (`@!%p`: where it does
// not) and leaves its register as it was elsewhere; it reads back from its
// text.
TEST(ProgramTest, GuardedStepsRunWhereTheirPredicateHolds) {
  auto p = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %a .b32 5
mov.b32 %r, 100;
mov.b32 %s, 100;
setp.lt.u32 %p, %a, 10;
@%p add.u32 %r, %r, 1;
@!%p mov.b32 %s, 7;
output %r
output %s
)"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ParseProgram(FormatProgram(*p))->steps.size(), p->steps.size());
  EXPECT_THAT(FormatProgram(*p),
              HasSubstr("@%p add.u32 %r, %r, 0x1;\n@!%p mov.b32 %s, 0x7;\n"));
  const std::vector<uint64_t> small = {5}, large = {50};
  EXPECT_EQ((*EvaluateProgram(*p, small))[0].bits, 101u);
  EXPECT_EQ((*EvaluateProgram(*p, small))[1].bits, 100u);
  EXPECT_EQ((*EvaluateProgram(*p, large))[0].bits, 100u);
  EXPECT_EQ((*EvaluateProgram(*p, large))[1].bits, 7u);
}

// PTX ISA 9.4.1: cvt reads the low bits of a source register wider than its
// source type; every other instruction wants the width it reads.
TEST(ProgramTest, CvtReadsTheLowBitsOfAWiderRegister) {
  auto p = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %a .b64 0x123456789abcfff0
cvt.u32.u16 %r, %a;
cvt.s32.s8 %s, %a;
cvt.u32.u8 %t, %r;
output %r
output %s
output %t
)"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ParseProgram(FormatProgram(*p))->steps.size(), p->steps.size());
  auto out = EvaluateProgram(*p, WitnessInputs(*p), Reading::kSpec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].bits, 0xfff0u);
  EXPECT_EQ((*out)[1].bits, 0xfffffff0u);  // 0xf0 as s8 is -16
  EXPECT_EQ((*out)[2].bits, 0xf0u);
  auto add = ParseProgram(absl::StrCat(
      kProgramHeader, "\ninput %a .b64 1\nadd.u32 %r, %a, 1;\noutput %r\n"));
  EXPECT_THAT(add.status().message(),
              HasSubstr("%a is 64 bits wide; add.u32 source a reads 32"));
  auto narrower = ParseProgram(absl::StrCat(
      kProgramHeader, "\ninput %a .b16 1\ncvt.u64.u32 %r, %a;\noutput %r\n"));
  EXPECT_THAT(narrower.status().message(),
              HasSubstr("%a is 16 bits wide; cvt.u64.u32 source a reads 32"));
}

// set writes its comparison as a word: all ones, or 1.0f for .f32.
TEST(ProgramTest, SetWritesAWordAPredicateCanBeComparedFrom) {
  auto p = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %a .b32 0xffffffff
set.eq.u32.u32 %m, %a, 0xffffffff;
set.lt.f32.s32 %f, %a, 0;
setp.ne.b32 %p, %m, 0;
set.eq.and.s32.b16 %n, 7, 7, %p;
output %m
output %f
output %n
)"));
  ASSERT_TRUE(p.ok()) << p.status();
  auto out = EvaluateProgram(*p, WitnessInputs(*p), Reading::kSpec);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].bits, 0xffffffffu);
  EXPECT_EQ((*out)[1].bits, 0x3f800000u);  // -1 < 0 as .s32: 1.0f
  EXPECT_EQ((*out)[2].bits, 0xffffffffu);
  const std::vector<uint64_t> zero = {0};
  EXPECT_EQ((*EvaluateProgram(*p, zero))[0].bits, 0u);
  EXPECT_EQ((*EvaluateProgram(*p, zero))[2].bits, 0u);
}

// %tid.x and %laneid: each thread's own value, the lane shown after it.
TEST(ProgramTest, ThreadInputsReadBackAndShareOneLane) {
  auto p = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %t .b32 %tid.x 20
input %l .b32 %laneid 3
input %a .b32 5
add.u32 %r, %t, %a;
output %r
)"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(HasThreadInputs(*p));
  EXPECT_EQ(p->inputs[0].thread, ThreadInput::kTidX);
  EXPECT_EQ(p->inputs[1].thread, ThreadInput::kLaneId);
  EXPECT_THAT(FormatProgram(*p), HasSubstr("input %t .b32 %tid.x 20\n"
                                           "input %l .b32 %laneid 3\n"));
  EXPECT_EQ(FormatProgram(*ParseProgram(FormatProgram(*p))), FormatProgram(*p));
  // One thread's inputs: the first thread input's lane for both.
  EXPECT_EQ(WitnessInputs(*p), (std::vector<uint64_t>{20, 20, 5}));
  EXPECT_EQ((*EvaluateProgram(*p, WitnessInputs(*p)))[0].bits, 25u);
  EXPECT_EQ(LaneOf(*p, AtLane(*p, {0, 0, 5}, 9)), 9u);
  const std::string h = absl::StrCat(kProgramHeader, "\n");
  for (const auto& [text, message] : std::vector<std::pair<std::string,
                                                           std::string>>{
           {h + "input %t .b64 %tid.x\noutput %t\n",
            "line 2: %tid.x is 32 bits wide, not .b64"},
           {h + "input %t .b32 %ctaid.x\noutput %t\n",
            "line 2: unknown thread input '%ctaid.x' (%tid.x, %laneid)"},
           {h + "input %t .b32 %tid.x 32\noutput %t\n",
            "line 2: the lane '32' is not one of 0 to 31"},
           {h + "input %t .b32 5 6\noutput %t\n",
            "line 2: expected 'input %name .type witness'"},
       }) {
    EXPECT_THAT(ParseProgram(text).status().message(), HasSubstr(message))
        << text;
  }
}

// An input loaded from memory (in[%tid.x]): read and written back as such,
// its witness the value; evaluated like a parameter. A predicate or a
// thread input is not loaded.
TEST(ProgramTest, LoadedInputsReadBack) {
  auto p = TestdataProgram("loaded-inputs.ptxprog");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(HasLoadedInputs(*p));
  EXPECT_FALSE(HasThreadInputs(*p));
  EXPECT_TRUE(p->inputs[0].loaded);
  EXPECT_EQ(p->inputs[0].width, 16);
  EXPECT_FALSE(p->inputs[3].loaded);
  EXPECT_THAT(FormatProgram(*p),
              HasSubstr("input %h .b16 in[%tid.x] 0x8001\n"
                        "input %a .b32 in[%tid.x] 0xfffffff0\n"
                        "input %w .b64 in[%tid.x] 0x123456789abcdef0\n"
                        "input %n .b32 0x3\n"));
  EXPECT_EQ(FormatProgram(*ParseProgram(FormatProgram(*p))), FormatProgram(*p));
  const std::vector<ProgramValue> out = *EvaluateProgram(*p, WitnessInputs(*p));
  const uint64_t y = 0x123456789abcdef0ull >> 3;
  EXPECT_EQ(out[0].bits, ((0xfffffff0u + 0x8001u) ^ static_cast<uint32_t>(y)));
  EXPECT_EQ(out[1].bits, y);
  const std::string h = absl::StrCat(kProgramHeader, "\n");
  for (const auto& [text, message] :
       std::vector<std::pair<std::string, std::string>>{
           {h + "input %p .pred in[%tid.x] 1\noutput %p\n",
            "line 2: a predicate is not loaded from memory"},
           {h + "input %t .b32 in[%tid.x] %tid.x\noutput %t\n",
            "line 2: a thread input is not loaded from memory"},
           {h + "input %a .b16 in[%tid.x] 0x10000\noutput %a\n",
            "line 2: the witness 0x10000 does not fit .b16"},
       }) {
    EXPECT_THAT(ParseProgram(text).status().message(), HasSubstr(message))
        << text;
  }
}

// A guard the spec leaves open leaves the guarded register open: whether
// the step ran is not known.
TEST(ProgramTest, AnUndefinedGuardPoisonsWhatItGuards) {
  auto p = ParseProgram(absl::StrCat(kProgramHeader, R"(
input %a .b32 5
div.u32 %q, %a, 0;
setp.lt.u32 %p, %q, 10;
mov.b32 %r, 100;
@%p add.u32 %r, %r, 1;
output %r
)"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(EvaluateAtWitness(*p)[0].defined);
}

constexpr char kBranches[] = R"(# ptxdiff program 1
input %a .b32 5
setp.lt.u32 %p, %a, 16;
mov.b32 %r, 1;
@%p bra SKIP;
add.u32 %r, %r, 2;
SKIP:
UNUSED:
loop 2 {
  @!%p bra NEXT;
  add.u32 %r, %r, 4;
  NEXT:
}
bra OVER;
add.u32 %r, %r, 8;
OVER:
@!%p exit;
output %r
)";

// Labels, forward branches (plain, guarded, inside a loop's body) and an
// exit parse into their steps and print back as they were written.
TEST(ProgramTest, LabelsBranchesAndExitsReadBack) {
  auto p = ParseProgram(kBranches);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->steps.size(), 15u);
  EXPECT_EQ(p->steps[2].kind, ProgramStep::kBranch);
  EXPECT_EQ(p->steps[2].label, "SKIP");
  EXPECT_EQ(p->steps[2].guard, "p");
  EXPECT_EQ(p->steps[4].kind, ProgramStep::kLabel);
  EXPECT_EQ(p->steps[5].label, "UNUSED");
  EXPECT_TRUE(p->steps[7].guard_negated);
  EXPECT_TRUE(p->steps[11].guard.empty());
  EXPECT_EQ(p->steps[14].kind, ProgramStep::kExit);
  EXPECT_TRUE(p->steps[14].guard_negated);
  EXPECT_EQ(CountSteps(*p), 5);
  EXPECT_EQ(BlockKinds(*p), "loops, branches, exit");
  const std::vector<size_t> targets = BranchTargets(p->steps);
  EXPECT_EQ(targets[2], 4u);
  EXPECT_EQ(targets[7], 9u);
  EXPECT_EQ(targets[11], 13u);
  EXPECT_EQ(targets[3], p->steps.size());
  const std::string text = FormatProgram(*p);
  EXPECT_THAT(text, HasSubstr("@%p bra SKIP;\nadd.u32 %r, %r, 0x2;\nSKIP:\n"
                              "UNUSED:\n"));
  EXPECT_THAT(text, HasSubstr("  @!%p bra NEXT;\n  add.u32 %r, %r, 0x4;\n"
                              "  NEXT:\n}\n"));
  EXPECT_THAT(text, HasSubstr("@!%p exit;\n"));
  auto again = ParseProgram(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(FormatProgram(*again), text);
}

TEST(ProgramTest, ABareLabelIsItsOwnKind) {
  auto p = ParseProgram(absl::StrCat(kProgramHeader, R"(
mov.b32 %r, 1;
L1:
output %r
)"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(BlockKinds(*p), "labels");
}

// A branch goes forward to a label in its own block: not back, not into a
// loop or an if, nor out of one; a label is set once.
TEST(ProgramTest, BranchesThatLeaveTheirBlockOrGoBackAreRefused) {
  const std::string h = absl::StrCat(kProgramHeader,
                                     "\ninput %p .pred 1\nmov.b32 %r, 1;\n");
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {h + "L:\nbra L;\noutput %r\n",
            "line 5: bra L goes back to L: a branch only goes forward"},
           {h + "bra L;\nloop 2 {\nL:\n}\noutput %r\n",
            "line 6: bra L on line 4 would jump into a loop or if"},
           {h + "if %p {\nbra L;\n}\nL:\noutput %r\n",
            "line 5: bra L: no label L after it in its block"},
           {h + "loop 2 {\nbra L;\n}\nL:\noutput %r\n",
            "line 5: bra L: no label L after it in its block"},
           {h + "if %p {\n@%p bra L;\n} else {\nL:\n}\noutput %r\n",
            "line 5: bra L: no label L after it in its block"},
           {h + "bra NOWHERE;\noutput %r\n",
            "line 4: bra NOWHERE: no label NOWHERE after it"},
           {h + "L:\nL:\noutput %r\n", "line 5: the label L is set twice"},
           {h + "bra 3x;\noutput %r\n", "expected 'bra LABEL;'"},
           {h + "9a:\noutput %r\n", "'9a:' is not a label"},
           {h + "@%q exit;\noutput %r\n", "line 4: %q is used before it is set"},
           {h + "@%r bra L;\nL:\noutput %r\n",
            "the guard %r is 32 bits wide, not a .pred"},
       }) {
    auto p = ParseProgram(c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_THAT(p.status().message(), HasSubstr(c.message)) << c.text;
  }
}

}  // namespace
}  // namespace ptxdiff
