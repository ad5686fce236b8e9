#include "program/program_generator.h"

#include <random>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_ptx.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {
namespace {

// Every generated program is a valid case: its text reads back to itself,
// and the oracle evaluates it. The shapes show up: loops, squares, guards
// and each kind of final narrowing.
TEST(ProgramGeneratorTest, ProgramsAreValidCasesInTheKnownShapes) {
  std::mt19937_64 rng(7);
  int loops = 0, squares = 0, masks = 0, selects = 0, guards = 0, converts = 0;
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
  std::mt19937_64 again(7);
  std::mt19937_64 same(7);
  EXPECT_EQ(FormatProgram(RandomProgram(again)),
            FormatProgram(RandomProgram(same)));
}

// ptxas accepts generated programs' kernels in both input forms.
TEST(ProgramGeneratorTest, KernelsAssemble) {
  auto ptxas = FindPtxas({});
  if (!ptxas.ok()) GTEST_SKIP() << ptxas.status();
  std::mt19937_64 rng(8);
  for (ProgramInputs form :
       {ProgramInputs::kRuntime, ProgramInputs::kImmediate}) {
    std::string kernels;
    for (int n = 0; n < 100; ++n) {
      absl::StrAppend(&kernels, ProgramKernel(RandomProgram(rng),
                                              absl::StrCat("k", n), form));
    }
    auto out = RunPtxas(
        *ptxas, "sm_90",
        absl::StrCat(".version 7.8\n.target sm_90\n.address_size 64\n\n",
                     kernels));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->ok) << LogSummary(out->log);
  }
}

}  // namespace
}  // namespace ptxdiff
