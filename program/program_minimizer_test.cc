#include "program/program_minimizer.h"

#include <string>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/program_ptxas.h"
#include "program/testing/programs.h"
#include "backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

// True if some step multiplies a register by itself.
bool HasSquare(const Program& p) {
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction &&
        Spell(s.variant) == "mul.lo.u32" && s.sources[0].is_register &&
        s.sources[1].is_register && s.sources[0].name == s.sources[1].name) {
      return true;
    }
  }
  return false;
}

constexpr char kChain[] =
    "input %a .b32 0x12345\ninput %b .b32 7\n"
    "add.u32 %r0, %a, %b;\nshl.b32 %r1, %r0, 8;\nmul.lo.u32 %r2, %r1, %r1;\n"
    "xor.b32 %r3, %r2, 0x55;\nand.b32 %r4, %r3, 7;\noutput %r4\noutput %r3\n";

// With a predicate that needs only a square, the chain comes down to that
// one step, on one input, its uses rewired away; every call is counted.
TEST(ProgramMinimizerTest, KeepsOnlyWhatThePredicateNeeds) {
  int calls = 0;
  auto shows = [&calls](const Program& p) -> absl::StatusOr<bool> {
    ++calls;
    return HasSquare(p);
  };
  auto min = MinimizeProgram(ProgramOf(kChain), shows);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(CountSteps(min->program), 1) << FormatProgram(min->program);
  EXPECT_TRUE(HasSquare(min->program));
  EXPECT_EQ(min->program.outputs.size(), 1u);
  EXPECT_EQ(min->program.inputs.size(), 1u);
  EXPECT_EQ(min->candidates, calls);
  EXPECT_GT(min->rounds, 1);
  EXPECT_FALSE(min->budget_out);
}

// A long program whose disagreement is in one step comes down in a few
// rounds (a round is one ptxas run): its blocks and runs of steps go whole,
// not one step a round.
TEST(ProgramMinimizerTest, ALongProgramComesDownInAFewRounds) {
  std::string text =
      "input %a .b32 0x12345\nmul.lo.u32 %sq, %a, %a;\n"
      "mov.b32 %x, %a;\nloop 4 {\n";
  for (int k = 0; k < 40; ++k)
    absl::StrAppend(&text, "  add.u32 %x, %x, ", k, ";\n");
  absl::StrAppend(&text, "}\n");
  for (int k = 0; k < 80; ++k)
    absl::StrAppend(&text, "xor.b32 %x, %x, ", k, ";\n");
  absl::StrAppend(&text, "add.u32 %out, %x, %sq;\noutput %out\n");
  const auto shows = [](const Program& c) -> absl::StatusOr<bool> {
    return HasSquare(c);
  };
  auto min = MinimizeProgram(ProgramOf(text), shows, 1'000'000);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(CountSteps(min->program), 1) << FormatProgram(min->program);
  EXPECT_TRUE(HasSquare(min->program));
  // A step a round took 120 rounds and more.
  EXPECT_LT(min->rounds, 40);
}

// A predicate on the oracle's value keeps the steps the value needs; a
// removed step's uses take the value it held, so the output does not change.
TEST(ProgramMinimizerTest, RewiresARemovedStepsUsesToTheValueItHeld) {
  const Program chain = ProgramOf(kChain);
  const ProgramValue want = EvaluateAtWitness(chain)[0];
  auto shows = [&want](const Program& p) -> absl::StatusOr<bool> {
    return EvaluateAtWitness(p)[0] == want && CountSteps(p) >= 1;
  };
  auto min = MinimizeProgram(chain, shows);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(EvaluateAtWitness(min->program)[0], want);
  EXPECT_EQ(CountSteps(min->program), 1) << FormatProgram(min->program);
}

// The budget bounds the calls, and the program so far is kept.
// What shows is a step whose value is not stored (a tool that crashes on
// `clz`, here a predicate on the spelling): the output is stored from it
// instead, and the rest goes.
TEST(ProgramMinimizerTest, StoresTheStepThatShowsWhenItsValueIsDropped) {
  auto has_clz = [](const Program& p) -> absl::StatusOr<bool> {
    for (const ProgramStep& s : p.steps) {
      if (s.kind == ProgramStep::kInstruction &&
          Spell(s.variant) == "clz.b32") {
        return true;
      }
    }
    return false;
  };
  auto min = MinimizeProgram(
      ProgramOf("input %a .b32 3\nclz.b32 %r7, %a;\nmov.b32 %r8, 0x0;\n"
                "output %r8\n"),
      has_clz);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(CountSteps(min->program), 1) << FormatProgram(min->program);
}

TEST(ProgramMinimizerTest, StopsAtItsBudget) {
  auto shows = [](const Program&) -> absl::StatusOr<bool> { return true; };
  auto min = MinimizeProgram(ProgramOf(kChain), shows, 3);
  ASSERT_TRUE(min.ok());
  EXPECT_EQ(min->candidates, 3);
  EXPECT_TRUE(min->budget_out);
  EXPECT_LT(FormatProgram(min->program).size(),
            FormatProgram(ProgramOf(kChain)).size());
}

// An error from the predicate stops the minimizing and is returned.
// A chain of `n` additions, each step reading the one before.
Program LongChain(int n) {
  std::string text = "input %a .b32 3\n";
  for (int k = 0; k < n; ++k) {
    const std::string from = k == 0 ? "%a" : absl::StrCat("%r", k - 1);
    absl::StrAppend(&text, "add.u32 %r", k, ", ", from, ", 0x1234;\n");
  }
  absl::StrAppend(&text, "output %r", n - 1, "\n");
  return ProgramOf(text);
}

// Every candidate a whole copy: a 6,000-step case's took 24 GB before the
// first was judged. A round's hold kProgramRoundSteps in all: runs of steps
// removed first (the first half first), then the last step.
TEST(ProgramMinimizerTest, ALongProgramsCandidatesKeepWithinTheRoundsSteps) {
  const Program chain = LongChain(300);
  const std::vector<Program> candidates = ProgramSimplifications(chain);
  ASSERT_FALSE(candidates.empty());
  size_t steps = 0;
  for (const Program& c : candidates) steps += c.steps.size();
  EXPECT_LE(steps, kProgramRoundSteps);
  EXPECT_EQ(candidates[0].steps.size(), 150u);  // the first half removed
  EXPECT_TRUE(absl::c_any_of(candidates, [](const Program& c) {
    return c.steps.size() == 299;  // the last step removed
  }));
}

// Ctrl-C during the candidates of a long case went unheard for minutes.
TEST(ProgramMinimizerTest, NoCandidatesOnceAStopIsRecorded) {
  Interrupt();
  const std::vector<Program> candidates =
      ProgramSimplifications(ProgramOf(kChain));
  ClearInterrupt();
  EXPECT_THAT(candidates, ::testing::IsEmpty());
}

TEST(ProgramMinimizerTest, PassesOnThePredicatesError) {
  auto shows = [](const Program&) -> absl::StatusOr<bool> {
    return absl::UnavailableError("ptxas is gone");
  };
  auto min = MinimizeProgram(ProgramOf(kChain), shows);
  EXPECT_EQ(min.status().code(), absl::StatusCode::kUnavailable);
}

// Loops are unwrapped, run once, or removed when empty; every candidate is
// a valid case.
TEST(ProgramMinimizerTest, CandidatesSimplifyLoopsAndAreValid) {
  const Program p = ProgramOf(
      "mov.b32 %r0, 0;\nloop 1 {\n}\nloop 4 {\n  mov.b32 %r0, 0x7fffffff;\n}\n"
      "sub.u32 %r3, 430, %r0;\noutput %r3\n");
  bool unwrapped = false, once = false;
  for (const Program& c : ProgramSimplifications(p)) {
    ASSERT_TRUE(ParseProgram(FormatProgram(c)).ok()) << FormatProgram(c);
    const std::string text = FormatProgram(c);
    unwrapped |=
        text.find("loop 1 {\n}") == std::string::npos && CountSteps(c) == 3;
    once |= text.find("loop 4") == std::string::npos &&
            text.find("loop 1 {\n  mov") != std::string::npos;
  }
  EXPECT_TRUE(unwrapped);
  EXPECT_TRUE(once);
}

constexpr char kBranches[] =
    "input %a .b32 3\ninput %n .b32 5\n"
    "setp.lt.u32 %p, %a, 16;\n"
    "if %p {\n  mov.b32 %r, 0x80000000;\n} else {\n"
    "  mul.lo.u32 %r, %n, %n;\n}\n"
    "if !%p {\n  add.u32 %r, %r, 1;\n} else {\n}\n"
    "and.b32 %s, %r, 0xff;\noutput %s\n";

// An if is replaced by its then part, by its else part (an if without an
// else: removed), and an empty else is dropped; every candidate is valid.
TEST(ProgramMinimizerTest, CandidatesReplaceAnIfByABranch) {
  const Program p = ProgramOf(kBranches);
  bool then_part = false, else_part = false, no_else = false, gone = false;
  for (const Program& c : ProgramSimplifications(p)) {
    const std::string text = FormatProgram(c);
    ASSERT_TRUE(ParseProgram(text).ok()) << text;
    then_part |= absl::StrContains(text,
                                   "setp.lt.u32 %p, %a, 0x10;\n"
                                   "mov.b32 %r, 0x80000000;\nif !%p");
    else_part |= absl::StrContains(text,
                                   "setp.lt.u32 %p, %a, 0x10;\n"
                                   "mul.lo.u32 %r, %n, %n;\nif !%p");
    no_else |= absl::StrContains(text,
                                 "if !%p {\n  add.u32 %r, %r, 0x1;\n}\n"
                                 "and.b32");
    gone |= absl::StrContains(text, "}\nand.b32") &&
            !absl::StrContains(text, "if !%p") && CountSteps(c) == 4;
  }
  EXPECT_TRUE(then_part);
  EXPECT_TRUE(else_part);
  EXPECT_TRUE(no_else);
  EXPECT_TRUE(gone);
}

// A disagreement in one branch comes down to that branch's step, the ifs
// around it gone.
TEST(ProgramMinimizerTest, KeepsOnlyTheBranchThePredicateNeeds) {
  auto shows = [](const Program& p) -> absl::StatusOr<bool> {
    return HasSquare(p);
  };
  auto min = MinimizeProgram(ProgramOf(kBranches), shows);
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(CountSteps(min->program), 1) << FormatProgram(min->program);
  EXPECT_TRUE(HasSquare(min->program));
  EXPECT_EQ(FormatProgram(min->program).find("if "), std::string::npos)
      << FormatProgram(min->program);
}

// A loaded input becomes a parameter where the predicate does not need the
// load, and stays loaded where it does; the signature tells them apart.
TEST(ProgramMinimizerTest, ALoadedInputStaysLoadedOnlyWhereNeeded) {
  const Program p = ProgramOf(
      "input %a .b32 in[%tid.x] 0x12345\ninput %b .b32 in[%tid.x] 7\n"
      "mul.lo.u32 %r, %a, %b;\noutput %r\n");
  const bool candidate =
      absl::c_any_of(ProgramSimplifications(p), [](const Program& c) {
        return c.inputs.size() == 2 && !c.inputs[0].loaded &&
               c.inputs[1].loaded;
      });
  EXPECT_TRUE(candidate);
  auto needs_a_load = [](const Program& c) -> absl::StatusOr<bool> {
    return CountSteps(c) > 0 && !c.inputs.empty() && c.inputs[0].loaded;
  };
  auto min = MinimizeProgram(p, needs_a_load);
  ASSERT_TRUE(min.ok()) << min.status();
  ASSERT_FALSE(min->program.inputs.empty());
  EXPECT_TRUE(min->program.inputs[0].loaded) << FormatProgram(min->program);
  for (const ProgramInput& in : min->program.inputs)
    EXPECT_TRUE(&in == &min->program.inputs[0] || !in.loaded)
        << FormatProgram(min->program);
  Program parameter = p;
  parameter.inputs[0].loaded = false;
  EXPECT_NE(ProgramSignature(p), ProgramSignature(parameter));
}

// The signature forgets names, witnesses and which constant of a class; it
// keeps the steps and the classes.
TEST(ProgramMinimizerTest, SignaturesNameShapesNotSpellings) {
  const Program a = ProgramOf(
      "input %n .b32 1\nshl.b32 %x, %n, 14;\nmul.lo.u32 %y, %x, %x;\n"
      "and.b32 %z, 7, %y;\noutput %z\n");
  const Program b = ProgramOf(
      "input %m .b32 0x99\nshl.b32 %p, %m, 12;\nmul.lo.u32 %q, %p, %p;\n"
      "and.b32 %s, 5, %q;\noutput %s\n");
  const Program c = ProgramOf(
      "input %n .b32 1\nshl.b32 %x, %n, 14;\nmul.lo.u32 %y, %x, %x;\n"
      "and.b32 %z, 0x7fffffff, %y;\noutput %z\n");
  EXPECT_EQ(ProgramSignature(a), ProgramSignature(b));
  EXPECT_NE(ProgramSignature(a), ProgramSignature(c));
  EXPECT_THAT(ProgramSignatureName(ProgramSignature(a)),
              testing::MatchesRegex("program-[0-9a-f]{8}"));
  EXPECT_NE(ProgramSignatureName(ProgramSignature(a)),
            ProgramSignatureName(ProgramSignature(c)));
  EXPECT_TRUE(ParseProgram(ProgramSignature(a)).ok()) << ProgramSignature(a);
}

// The candidates for a fault of one instruction: each instruction as run
// at the witness, alone at its operands there, once each however often a
// loop ran it.
TEST(ProgramMinimizerTest, InstructionsAloneAreEachRunOnceAtItsOperands) {
  const Program p = ProgramOf(
      "input %a .b32 6\nadd.u32 %r, %a, 1;\nloop 3 {\n  mul.lo.u32 %s, %r, "
      "0;\n}\nmov.b32 %t, 2;\noutput %s\n");
  const std::vector<Program> alone = InstructionsAlone(p, Reading::kSpec);
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_EQ(FormatProgram(alone[0]),
            FormatProgram(TupleAsProgram(*ParseVariant("add.u32"), {{6, 1}})));
  EXPECT_EQ(
      FormatProgram(alone[1]),
      FormatProgram(TupleAsProgram(*ParseVariant("mul.lo.u32"), {{7, 0}})));
  EXPECT_THAT(InstructionsAlone(p, Reading::kSpec, 1), testing::SizeIs(1));
}

// The signature of a program with blocks keeps them: the if's condition
// renamed as a guard is, its sense and its else kept.
TEST(ProgramMinimizerTest, SignaturesKeepBlocks) {
  const Program a = ProgramOf(kBranches);
  Program b = ProgramOf(absl::StrReplaceAll(
      kBranches, {{"%p", "%q"}, {"%r", "%x"}, {"16", "20"}, {"0xff", "0x3f"}}));
  b.inputs[0].witness = 99;
  EXPECT_EQ(ProgramSignature(a), ProgramSignature(b));
  const std::string signature = ProgramSignature(a);
  EXPECT_THAT(signature, testing::HasSubstr("if %r2 {\n"));
  EXPECT_THAT(signature, testing::HasSubstr("if !%r2 {\n"));
  EXPECT_TRUE(ParseProgram(signature).ok()) << signature;
  // The same steps with the other sense, or with no else, are other shapes.
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{
           {"if !%p", "if %p"}, {"} else {\n}\nand", "}\nand"}}) {
    const Program other =
        ProgramOf(absl::StrReplaceAll(kBranches, {{from, to}}));
    EXPECT_NE(ProgramSignature(other), signature) << from;
  }
}

constexpr char kJumps[] =
    "input %a .b32 3\n"
    "setp.lt.u32 %p, %a, 16;\n"
    "mov.b32 %r, 0x12345;\n"
    "@%p bra SKIP;\n"
    "add.u32 %r, %r, 2;\n"
    "SKIP:\n"
    "BARE:\n"
    "@!%p exit;\n"
    "mul.lo.u32 %s, %r, %r;\n"
    "output %s\n";

bool Has(const Program& p, ProgramStep::Kind kind) {
  for (const ProgramStep& s : p.steps) {
    if (s.kind == kind) return true;
  }
  return false;
}

// Among the candidates: the branch removed, the exit removed, a bare label
// removed, a label removed with the branch to it, and the branch's and the
// exit's guards dropped; each one valid.
TEST(ProgramMinimizerTest, CandidatesDropBranchesLabelsAndExits) {
  const Program p = ProgramOf(kJumps);
  bool no_branch = false, no_exit = false, no_bare = false,
       no_skip_label = false, plain_branch = false, plain_exit = false;
  for (const Program& c : ProgramSimplifications(p)) {
    const std::string text = FormatProgram(c);
    ASSERT_TRUE(ParseProgram(text).ok()) << text;
    const bool has_skip = absl::StrContains(text, "SKIP:");
    no_branch |= !Has(c, ProgramStep::kBranch) && has_skip;
    no_exit |= !Has(c, ProgramStep::kExit) && CountSteps(c) == 4;
    no_bare |= !absl::StrContains(text, "BARE:") && has_skip;
    no_skip_label |= !has_skip && !Has(c, ProgramStep::kBranch);
    plain_branch |= absl::StrContains(text, "\nbra SKIP;");
    plain_exit |= absl::StrContains(text, "\nexit;");
  }
  EXPECT_TRUE(no_branch);
  EXPECT_TRUE(no_exit);
  EXPECT_TRUE(no_bare);
  EXPECT_TRUE(no_skip_label);
  EXPECT_TRUE(plain_branch);
  EXPECT_TRUE(plain_exit);
}

// A disagreement that needs only the square comes down to it: the branch,
// the labels and the exit go.
TEST(ProgramMinimizerTest, BranchesLabelsAndExitsGoWhenNotNeeded) {
  auto shows = [](const Program& p) -> absl::StatusOr<bool> {
    return HasSquare(p);
  };
  auto min = MinimizeProgram(ProgramOf(kJumps), shows);
  ASSERT_TRUE(min.ok()) << min.status();
  for (const ProgramStep& s : min->program.steps) {
    EXPECT_FALSE(IsJumpOrLabel(s)) << FormatProgram(min->program);
  }
  // And one that needs a bare label before the square keeps only that.
  auto labelled = [](const Program& p) -> absl::StatusOr<bool> {
    return HasSquare(p) && Has(p, ProgramStep::kLabel);
  };
  auto kept = MinimizeProgram(ProgramOf(kJumps), labelled);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(Has(kept->program, ProgramStep::kBranch))
      << FormatProgram(kept->program);
  EXPECT_FALSE(Has(kept->program, ProgramStep::kExit));
  int labels = 0;
  for (const ProgramStep& s : kept->program.steps) {
    labels += s.kind == ProgramStep::kLabel;
  }
  EXPECT_EQ(labels, 1) << FormatProgram(kept->program);
}

// Label names are forgotten by the signature, as register names are.
TEST(ProgramMinimizerTest, SignaturesRenameLabels) {
  const Program a = ProgramOf(kJumps);
  const Program b = ProgramOf(
      absl::StrReplaceAll(kJumps, {{"SKIP", "OVER"}, {"BARE", "HERE"}}));
  EXPECT_EQ(ProgramSignature(a), ProgramSignature(b));
  EXPECT_THAT(ProgramSignature(a), testing::HasSubstr("bra L0;\n"));
  EXPECT_THAT(ProgramSignature(a), testing::HasSubstr("L1:\n"));
  EXPECT_TRUE(ParseProgram(ProgramSignature(a)).ok()) << ProgramSignature(a);
}

class ProgramMinimizerPtxasTest : public testing::Test {
 protected:
  void SetUp() override {
    auto found = FindPtxas({});
    if (!found.ok()) GTEST_SKIP() << "no ptxas: " << found.status();
    ptxas_ = *found;
  }
  // The public reproducer `file`'s disagreement in `form`, minimized.
  Program Minimized(const std::string& file, ProgramInputs form) {
    auto p = TestdataProgram(file);
    EXPECT_TRUE(p.ok()) << p.status();
    // Each round's candidates in one ptxas run, as campaigns minimize.
    auto shows =
        [&](std::span<const Program> c) -> absl::StatusOr<std::vector<bool>> {
      auto checks = CheckPrograms(ptxas_, "sm_90", c, form, Reading::kSpec);
      if (!checks.ok()) return checks.status();
      std::vector<bool> out;
      for (const ProgramCheck& check : *checks)
        out.push_back(check.mismatch.has_value());
      return out;
    };
    EXPECT_EQ(*shows({&*p, 1}), std::vector<bool>{true});
    auto min = MinimizeProgram(*p, ProgramBatchPredicate(shows));
    EXPECT_TRUE(min.ok()) << min.status();
    EXPECT_EQ(*shows({&min->program, 1}), std::vector<bool>{true});
    return min->program;
  }
  std::string ptxas_;
};

// ptxas's real disagreements come down to a few steps that still show them.
TEST_F(ProgramMinimizerPtxasTest, PublicReproducersMinimizeToAFewSteps) {
  const Program m025 = Minimized("fuzzx-m025.ptxprog", ProgramInputs::kRuntime);
  EXPECT_LE(CountSteps(m025), 5) << FormatProgram(m025);
  EXPECT_TRUE(HasSquare(m025)) << FormatProgram(m025);
  const Program m037 =
      Minimized("fuzzx-m037.ptxprog", ProgramInputs::kImmediate);
  EXPECT_LE(CountSteps(m037), 5) << FormatProgram(m037);
}

// A move of a value ptxas takes only as its low byte (bfe's position and
// length) folds into the instruction as that byte: the bfe.s32 claim is one
// step, one root cause with the one-instruction entry, not a program cause
// of its own (issue 42, item 12).
TEST_F(ProgramMinimizerPtxasTest, AMoveOfALowByteOperandFoldsIntoTheStep) {
  const Program p = ProgramOf(
      "input %in0 .b32 0x0\nmov.b32 %r3, 0xffff;\n"
      "bfe.s32 %r4, %in0, %r3, %r3;\noutput %r4\n");
  auto shows =
      [&](std::span<const Program> c) -> absl::StatusOr<std::vector<bool>> {
    auto checks =
        CheckPrograms(ptxas_, "sm_90", c, ProgramInputs::kRuntime,
                      Reading::kSpec);
    if (!checks.ok()) return checks.status();
    std::vector<bool> out;
    for (const ProgramCheck& check : *checks)
      out.push_back(check.mismatch.has_value());
    return out;
  };
  ASSERT_EQ(*shows({&p, 1}), std::vector<bool>{true});
  auto min = MinimizeProgram(p, ProgramBatchPredicate(shows));
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(CountSteps(min->program), 1) << FormatProgram(min->program);
  EXPECT_THAT(FormatProgram(min->program),
              testing::HasSubstr("bfe.s32 %r4, %in0, 0xff, "));
}

}  // namespace
}  // namespace ptxdiff
