#include "fuzzers/program_mutator.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/program_encoding.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

std::string Mutated(std::string input, unsigned seed) {
  input.resize(4096);
  const size_t n = MutateProgramInput(reinterpret_cast<uint8_t*>(input.data()),
                                      input.size(), 4096, seed);
  input.resize(n);
  return input;
}

// Chains of mutations from generated programs: each result decodes, and
// together they reach every kind of change.
TEST(ProgramMutatorTest, MutantsDecodeAndReachEveryKindOfChange) {
  std::mt19937_64 rng(3);
  std::set<int> step_counts, output_counts, input_counts;
  int with_loops = 0, with_guards = 0, with_ifs = 0, with_else = 0,
      with_branches = 0, with_labels = 0, with_exits = 0,
      distinct_programs = 0;
  std::string input = RandomProgramInput(rng, {});
  std::set<std::string> seen;
  for (unsigned seed = 0; seed < 4000; ++seed) {
    if (seed % 50 == 0) input = RandomProgramInput(rng, {});
    const std::string next = Mutated(input, seed);
    const absl::StatusOr<Program> p = DecodeProgramInput(next);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(ParseProgram(FormatProgram(*p)).ok()) << FormatProgram(*p);
    step_counts.insert(CountSteps(*p));
    output_counts.insert(p->outputs.size());
    input_counts.insert(p->inputs.size());
    for (const ProgramStep& s : p->steps) {
      with_loops += s.kind == ProgramStep::kLoopBegin;
      with_guards += !s.guard.empty() && s.kind != ProgramStep::kIfBegin;
      with_ifs += s.kind == ProgramStep::kIfBegin;
      with_else += s.kind == ProgramStep::kElse;
      with_branches += s.kind == ProgramStep::kBranch;
      with_labels += s.kind == ProgramStep::kLabel;
      with_exits += s.kind == ProgramStep::kExit;
    }
    const std::string text = FormatProgram(*p);
    distinct_programs += !seen.contains(text);
    seen.insert(text);
    input = next;
  }
  EXPECT_GT(step_counts.size(), 10u);
  EXPECT_EQ(output_counts.size(), 4u);
  EXPECT_EQ(input_counts.size(), 5u);
  EXPECT_GT(with_loops, 100);
  EXPECT_GT(with_guards, 100);
  EXPECT_GT(with_ifs, 100);
  EXPECT_GT(with_else, 50);
  EXPECT_GT(with_branches, 100);
  EXPECT_GT(with_labels, 100);
  EXPECT_GT(with_exits, 50);
  EXPECT_GT(distinct_programs, 3000);  // distinct programs
}

int ThreadInputs(const ProgramRecords& r) {
  int n = 0;
  for (const InputRecord& in : r.inputs)
    n += in.type == kTidXInputType || in.type == kLaneIdInputType;
  return n;
}

int LoadedInputs(const ProgramRecords& r) {
  int n = 0;
  for (const InputRecord& in : r.inputs) n += in.type >= kLoadedInputType;
  return n;
}

// Where the shape allows thread inputs, a parameter becomes %tid.x or
// %laneid, and a thread input becomes the other one, a parameter again, or
// is shown at another lane; each mutant decodes. Where it does not, no
// parameter becomes one.
TEST(ProgramMutatorTest, ThreadInputsComeAndGoWhereTheShapeAllowsThem) {
  const absl::StatusOr<ProgramRecords> start = EncodeProgram(
      ProgramOf("input %a .b32 5\ninput %t .b32 %tid.x 3\n"
                "add.u32 %r, %a, %t;\noutput %r\n"));
  ASSERT_TRUE(start.ok()) << start.status();
  std::mt19937_64 rng(4);
  int made = 0, unmade = 0, other_kind = 0, other_lane = 0;
  for (int k = 0; k < 3000; ++k) {
    ProgramRecords r = *start;
    MutateProgramRecords(r, rng, {.thread_inputs = true});
    const absl::StatusOr<Program> p = DecodeProgramRecords(r);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(ParseProgram(FormatProgram(*p)).ok()) << FormatProgram(*p);
    if (r.inputs.size() != 2) continue;
    made += ThreadInputs(r) == 2;
    unmade += ThreadInputs(r) == 0;
    const InputRecord& t = r.inputs[1];
    other_kind += t.type == kLaneIdInputType;
    other_lane += t.type == kTidXInputType &&
                  p->inputs[1].witness != start->inputs[1].witness;
  }
  EXPECT_GT(made, 20);
  EXPECT_GT(unmade, 20);
  EXPECT_GT(other_kind, 20);
  EXPECT_GT(other_lane, 20);

  const absl::StatusOr<ProgramRecords> plain = EncodeProgram(
      ProgramOf("input %a .b32 5\ninput %b .b32 7\n"
                "add.u32 %r, %a, %b;\noutput %r\n"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int k = 0; k < 3000; ++k) {
    ProgramRecords r = *plain;
    for (int chain = 0; chain < 4; ++chain) MutateProgramRecords(r, rng);
    ASSERT_EQ(ThreadInputs(r), 0);
  }
}

// Where the shape allows loaded inputs, a parameter becomes loaded from
// memory and a loaded one a parameter again; where it does not, none is
// made.
TEST(ProgramMutatorTest, LoadedInputsComeAndGoWhereTheShapeAllowsThem) {
  const absl::StatusOr<ProgramRecords> start =
      EncodeProgram(ProgramOf("input %a .b32 5\ninput %b .b64 in[%tid.x] 3\n"
                              "shr.b64 %r, %b, %a;\noutput %r\n"));
  ASSERT_TRUE(start.ok()) << start.status();
  std::mt19937_64 rng(4);
  int both = 0, none = 0;
  for (int k = 0; k < 3000; ++k) {
    ProgramRecords r = *start;
    MutateProgramRecords(r, rng, {.loaded_inputs = true});
    const absl::StatusOr<Program> p = DecodeProgramRecords(r);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(ParseProgram(FormatProgram(*p)).ok()) << FormatProgram(*p);
    if (r.inputs.size() != 2) continue;
    both += LoadedInputs(r) == 2;
    none += LoadedInputs(r) == 0;
  }
  EXPECT_GT(both, 20);
  EXPECT_GT(none, 20);
  for (int k = 0; k < 3000; ++k) {
    ProgramRecords r = *start;
    for (int chain = 0; chain < 4; ++chain) MutateProgramRecords(r, rng);
    ASSERT_LE(LoadedInputs(r), 1);
  }
}

// The steps of `p` spelled `spelling`.
int StepsSpelled(const Program& p, const std::string& spelling) {
  int n = 0;
  for (const ProgramStep& s : p.steps)
    n += s.kind == ProgramStep::kInstruction && Spell(s.variant) == spelling;
  return n;
}

// Issue 64: where it draws a variant anew, the mutator draws a discouraged
// one (a cause that keeps coming back) about one time in kDiscouragedOdds,
// as the generator does, and a suppressed one never.
TEST(ProgramMutatorTest, ADiscouragedVariantIsDrawnSeldomAndASuppressedNever) {
  const absl::StatusOr<ProgramRecords> start = EncodeProgram(
      ProgramOf("input %a .b32 5\ninput %b .b32 7\n"
                "add.u32 %r, %a, %b;\noutput %r\n"));
  ASSERT_TRUE(start.ok()) << start.status();
  const auto mutants_with = [&](const std::string& spelling,
                                const ProgramShape& shape) {
    std::mt19937_64 rng(12);
    int count = 0;
    for (int k = 0; k < 4000; ++k) {
      ProgramRecords r = *start;
      MutateProgramRecords(r, rng, shape);
      const absl::StatusOr<Program> p = DecodeProgramRecords(r);
      if (p.ok()) count += StepsSpelled(*p, spelling) > 0;
    }
    return count;
  };
  const int plain = mutants_with("add.s32", {});
  const int discouraged =
      mutants_with("add.s32", {.discouraged = {"add.s32"}});
  ASSERT_GT(plain, 40) << "the mutator draws add.u32's siblings";
  EXPECT_GT(discouraged, 0);
  EXPECT_LT(discouraged * 3, plain);
  EXPECT_EQ(mutants_with("add.s32", {.suppressed = {"add.s32"}}), 0);
}

TEST(ProgramMutatorTest, ReplaysForASeed) {
  std::mt19937_64 rng(5);
  const std::string input = RandomProgramInput(rng, {});
  EXPECT_EQ(Mutated(input, 17), Mutated(input, 17));
  EXPECT_NE(Mutated(input, 17), Mutated(input, 18));
}

TEST(ProgramMutatorTest, WhatIsNoProgramInputBecomesOne) {
  const std::string mutated = Mutated("not a program input", 1);
  EXPECT_TRUE(DecodeProgramInput(mutated).ok());
}

TEST(ProgramMutatorTest, CrossOverKeepsTheFirstsInputs) {
  std::mt19937_64 rng(9);
  for (unsigned seed = 0; seed < 200; ++seed) {
    const std::string a = RandomProgramInput(rng, {});
    const std::string b = RandomProgramInput(rng, {});
    std::string out(4096, '\0');
    out.resize(CrossOverProgramInputs(
        reinterpret_cast<const uint8_t*>(a.data()), a.size(),
        reinterpret_cast<const uint8_t*>(b.data()), b.size(),
        reinterpret_cast<uint8_t*>(out.data()), out.size(), seed));
    const absl::StatusOr<Program> child = DecodeProgramInput(out);
    ASSERT_TRUE(child.ok()) << child.status();
    EXPECT_EQ(WitnessInputs(*child), WitnessInputs(*DecodeProgramInput(a)));
  }
}

TEST(ProgramMutatorTest, ARoomTooSmallGetsNothing) {
  std::mt19937_64 rng(2);
  std::string input = RandomProgramInput(rng, {});
  EXPECT_EQ(MutateProgramInput(reinterpret_cast<uint8_t*>(input.data()),
                               input.size(), 4, 1),
            0u);
}

}  // namespace
}  // namespace ptxdiff
