#include "program/program_generator.h"

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_ptx.h"

namespace ptxdiff {
namespace {

// Every generated program is a valid case: its text reads back to itself,
// and the oracle evaluates it. The shapes show up: loops, squares, guards,
// if/else blocks and each kind of final narrowing.
TEST(ProgramGeneratorTest, ProgramsAreValidCasesInTheKnownShapes) {
  std::mt19937_64 rng(7);
  int loops = 0, squares = 0, masks = 0, selects = 0, guards = 0, converts = 0,
      ifs = 0;
  std::set<std::string> distinct;
  for (int n = 0; n < 500; ++n) {
    const Program p = RandomProgram(rng);
    const std::string text = FormatProgram(p);
    auto back = ParseProgram(text);
    ASSERT_TRUE(back.ok()) << text << back.status();
    ASSERT_EQ(FormatProgram(*back), text);
    ASSERT_EQ(EvaluateAtWitness(*back).size(), 1u);
    distinct.insert(text);
    loops += text.find("loop ") != std::string::npos;
    masks += text.find("and.b32") != std::string::npos;
    selects += text.find("selp.b32") != std::string::npos;
    guards += text.find("@") != std::string::npos;
    converts += text.find("cvt.") != std::string::npos;
    ifs += text.find("} else {") != std::string::npos;
    for (const ProgramStep& s : p.steps) {
      squares += s.kind == ProgramStep::kInstruction && s.sources.size() >= 2 &&
                 s.sources[0].is_register && s.sources[1].is_register &&
                 s.sources[0].name == s.sources[1].name;
    }
  }
  EXPECT_GT(distinct.size(), 490u);
  EXPECT_GT(loops, 100);
  EXPECT_GT(squares, 50);
  EXPECT_GT(masks, 50);
  EXPECT_GT(selects, 50);
  EXPECT_GT(guards, 50);
  EXPECT_GT(converts, 50);
  EXPECT_GT(ifs, 75);
  EXPECT_LT(ifs, 175);
  std::mt19937_64 again(7);
  std::mt19937_64 same(7);
  EXPECT_EQ(FormatProgram(RandomProgram(again)),
            FormatProgram(RandomProgram(same)));
}

// Forward branches over steps that update registers set before them, bare
// labels and exits show up at a modest rate; a branch's steps are judged
// (the output defined at the witness) as often as not. Off, none does.
TEST(ProgramGeneratorTest, ForwardBranchesLabelsAndExitsAtAModestRate) {
  std::mt19937_64 rng(13);
  int branches = 0, bare_labels = 0, exits = 0, branches_judged = 0;
  for (int n = 0; n < 1000; ++n) {
    const Program p = RandomProgram(rng);
    const std::vector<size_t> targets = BranchTargets(p.steps);
    bool branch = false, bare = false;
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const ProgramStep& s = p.steps[i];
      if (s.kind == ProgramStep::kBranch) {
        branch = true;
        ASSERT_LT(targets[i], p.steps.size()) << FormatProgram(p);
        ASSERT_FALSE(s.guard.empty());
        for (size_t j = i + 1; j < targets[i]; ++j) {
          // What it skips updates a register set before the branch.
          ASSERT_TRUE(SetsRegister(p.steps[j])) << FormatProgram(p);
          ASSERT_NE(RegisterWidth(p, p.steps[j].dst), 0);
        }
      }
      if (s.kind == ProgramStep::kLabel &&
          std::find(targets.begin(), targets.end(), i) == targets.end()) {
        bare = true;
      }
      exits += s.kind == ProgramStep::kExit;
    }
    branches += branch;
    bare_labels += bare;
    if (branch) branches_judged += EvaluateAtWitness(p)[0].defined;
  }
  EXPECT_GT(branches, 150);
  EXPECT_LT(branches, 450);
  EXPECT_GT(bare_labels, 30);
  EXPECT_LT(bare_labels, 200);
  EXPECT_GT(exits, 30);
  EXPECT_LT(exits, 200);
  EXPECT_GT(branches_judged, branches / 2);

  std::mt19937_64 off(13);
  for (int n = 0; n < 300; ++n) {
    const Program p = RandomProgram(off, {.forward_branches = false});
    for (const ProgramStep& s : p.steps) {
      ASSERT_FALSE(IsJumpOrLabel(s)) << FormatProgram(p);
    }
  }
}

// Both branches of a generated if/else set one register, and only it: the
// steps after the block read a value set on either path.
TEST(ProgramGeneratorTest, BothBranchesSetTheSameRegister) {
  std::mt19937_64 rng(9);
  int checked = 0;
  for (int n = 0; n < 300; ++n) {
    const Program p = RandomProgram(rng);
    const std::vector<ProgramBlock> blocks = BlocksOf(p.steps);
    for (size_t i = 0; i < p.steps.size(); ++i) {
      if (p.steps[i].kind != ProgramStep::kIfBegin) continue;
      const ProgramBlock& b = blocks[i];
      ASSERT_NE(b.else_at, b.end) << FormatProgram(p);
      const std::string& set = p.steps[b.else_at - 1].dst;
      EXPECT_EQ(p.steps[b.end - 1].dst, set) << FormatProgram(p);
      for (size_t j = b.begin + 1; j < b.end; ++j) {
        if (SetsRegister(p.steps[j])) EXPECT_EQ(p.steps[j].dst, set);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

// Where the backend judges them, about one program in 8 reads %tid.x or
// %laneid in place of a parameter, at a lane of the block; elsewhere (by
// default, and at 0 percent) none does.
TEST(ProgramGeneratorTest, ThreadInputsOnlyWhereTheShapeSaysSo) {
  std::mt19937_64 rng(5);
  const ProgramShape threads{.thread_inputs = true};
  int with_threads = 0, tid = 0, laneid = 0;
  for (int n = 0; n < 800; ++n) {
    const Program p = RandomProgram(rng, threads);
    const std::string text = FormatProgram(p);
    auto back = ParseProgram(text);
    ASSERT_TRUE(back.ok()) << text << back.status();
    ASSERT_EQ(FormatProgram(*back), text);
    ASSERT_EQ(EvaluateAtWitness(*back).size(), 1u);
    int thread_inputs = 0;
    for (const ProgramInput& in : p.inputs) {
      if (in.thread == ThreadInput::kNone) continue;
      ++thread_inputs;
      EXPECT_LT(in.witness, static_cast<uint64_t>(kProgramLanes));
      tid += in.thread == ThreadInput::kTidX;
      laneid += in.thread == ThreadInput::kLaneId;
    }
    EXPECT_LE(thread_inputs, 1) << text;
    with_threads += thread_inputs;
  }
  EXPECT_GT(with_threads, 60);
  EXPECT_LT(with_threads, 140);
  EXPECT_GT(tid, 20);
  EXPECT_GT(laneid, 20);

  std::mt19937_64 plain(5), none(5);
  for (int n = 0; n < 200; ++n) {
    const Program p = RandomProgram(plain);
    EXPECT_FALSE(HasThreadInputs(p)) << FormatProgram(p);
    EXPECT_FALSE(HasThreadInputs(RandomProgram(
        none, {.thread_inputs = true, .thread_input_percent = 0})));
  }
}

// Programs with exits keep them, and the witness reaches the stores: a
// program whose thread exits at its witness has its exits' guards turned
// round (most such exited at every input a check tried, and were not
// judged).
TEST(ProgramGeneratorTest, TheWitnessIsNeverAnInputThatExits) {
  std::mt19937_64 rng(9);
  int with_exits = 0;
  for (int n = 0; n < 2000; ++n) {
    const Program p = RandomProgram(rng, {.thread_inputs = true});
    if (!HasExit(p)) continue;
    ++with_exits;
    EXPECT_FALSE(ThreadExits(EvaluateAtWitness(p))) << FormatProgram(p);
  }
  EXPECT_GT(with_exits, 40);
}

// Inputs loaded from memory where the shape allows them, about one program
// in 8 (loaded_input_percent), one input each; none by default.
TEST(ProgramGeneratorTest, LoadedInputsOnlyWhereTheShapeSaysSo) {
  std::mt19937_64 rng(6);
  int with_loads = 0;
  for (int n = 0; n < 800; ++n) {
    const Program p = RandomProgram(rng, {.loaded_inputs = true});
    const std::string text = FormatProgram(p);
    auto back = ParseProgram(text);
    ASSERT_TRUE(back.ok()) << text << back.status();
    ASSERT_EQ(FormatProgram(*back), text);
    int loaded = 0;
    for (const ProgramInput& in : p.inputs) loaded += in.loaded;
    EXPECT_LE(loaded, 1) << text;
    with_loads += loaded;
  }
  EXPECT_GT(with_loads, 60);
  EXPECT_LT(with_loads, 140);
  std::mt19937_64 plain(6);
  for (int n = 0; n < 200; ++n)
    EXPECT_FALSE(HasLoadedInputs(RandomProgram(plain))) << n;
}

// Issue 64: a discouraged variant (a cause that keeps coming back) is drawn
// about one time in kDiscouragedOdds, not never; nothing else changes.
TEST(ProgramGeneratorTest, ADiscouragedVariantIsDrawnSeldom) {
  const auto steps_of = [](const std::vector<std::string>& discouraged) {
    std::mt19937_64 rng(11);
    int count = 0;
    for (int n = 0; n < 1000; ++n) {
      const Program p = RandomProgram(rng, {.discouraged = discouraged});
      for (const ProgramStep& s : p.steps) {
        count += s.kind == ProgramStep::kInstruction &&
                 Spell(s.variant) == "cvt.sat.s16.u32";
      }
    }
    return count;
  };
  const int plain = steps_of({});
  const int discouraged = steps_of({"cvt.sat.s16.u32"});
  ASSERT_GT(plain, 30) << "the variant is among the generator's steps";
  EXPECT_GT(discouraged, 0);
  EXPECT_LT(discouraged * 3, plain);
}

// ptxas accepts generated programs' kernels (if/else blocks, forward
// branches, exits, thread and loaded inputs among them) in both input forms on
// several targets, as one module of kernels and as a tool's module of all
// the programs (and a GPU's, its thread-input programs on lanes).
TEST(ProgramGeneratorTest, KernelsAssemble) {
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) GTEST_SKIP() << ptxas.status();
  std::mt19937_64 rng(8);
  std::vector<Program> programs;
  int ifs = 0, branches = 0, exits = 0;
  for (int n = 0; n < 100; ++n) {
    programs.push_back(RandomProgram(rng));
    const std::string text = FormatProgram(programs.back());
    ifs += text.find("if ") != std::string::npos;
    branches += text.find("bra ") != std::string::npos;
    exits += HasExit(programs.back());
  }
  EXPECT_GT(ifs, 10);
  EXPECT_GT(branches, 10);
  EXPECT_GT(exits, 3);
  for (int n = 0; n < 20; ++n) {
    programs.push_back(RandomProgram(
        rng, {.thread_inputs = true, .thread_input_percent = 100}));
    ASSERT_TRUE(HasThreadInputs(programs.back()));
  }
  for (int n = 0; n < 20; ++n) {
    programs.push_back(RandomProgram(
        rng, {.loaded_inputs = true, .loaded_input_percent = 100}));
    ASSERT_TRUE(HasLoadedInputs(programs.back()));
  }
  for (int sm : {75, 90, 120}) {
    const PtxTarget target = *TargetForDevice(sm);
    const std::string arch = absl::StrCat("sm_", sm);
    for (ProgramInputs form :
         {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
      for (const std::string& module :
           {ProgramsModule(programs, target, form),
            ProgramToolModule(programs, target, form),
            ProgramToolModule(programs, target, form, /*lanes=*/true)}) {
        auto out = RunPtxas(*ptxas, arch, module);
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_TRUE(out->ok) << arch << ": " << LogSummary(out->log);
      }
    }
  }
}

// GeneratedSpellings is what a tool's remembered refusals are read against
// (program_refusals.h): a variant drawn but not listed would be refused in
// program after program, run after run.
TEST(ProgramGeneratorTest, GeneratedSpellingsListsEveryStepDrawn) {
  const std::vector<std::string> listed = GeneratedSpellings();
  const std::set<std::string> known(listed.begin(), listed.end());
  std::set<std::string> drawn;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) {
    const Program p = RandomProgram(rng);
    for (const ProgramStep& s : p.steps) {
      if (s.kind == ProgramStep::kInstruction) drawn.insert(Spell(s.variant));
    }
  }
  for (const std::string& d : drawn) EXPECT_TRUE(known.contains(d)) << d;
  // And each listed one is drawn: a stale list would keep a variant out.
  for (const std::string& l : listed) EXPECT_TRUE(drawn.contains(l)) << l;
}

// With every step variant suppressed there is nothing to draw as asked:
// CanDrawAStep says so, and RandomProgram still ends (it drew for ever).
TEST(ProgramGeneratorTest, EveryStepSuppressedIsSaidAndDrawingEnds) {
  ProgramShape shape;
  shape.suppressed = GeneratedSpellings();
  EXPECT_FALSE(CanDrawAStep(shape));
  std::mt19937_64 rng(1);
  EXPECT_GT(CountSteps(RandomProgram(rng, shape)), 0);
  // (Its first spellings are the steps, then the conversions.)
  shape.suppressed.erase(shape.suppressed.begin());
  EXPECT_TRUE(CanDrawAStep(shape));
}

}  // namespace
}  // namespace ptxdiff
