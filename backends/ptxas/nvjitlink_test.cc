#include "backends/ptxas/nvjitlink.h"

#include "backends/ptxas/cubin.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/ptxas_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

class NvJitLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ptxas = FindPtxas({});
    if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
    ptxas_ = *ptxas;
    auto loaded = NvJitLink::Load(ptxas_);
    if (!loaded.ok()) GTEST_SKIP() << loaded.status().message();
    library_ = *std::move(loaded);
  }

  // The kernels' .text sections of `module` from both assemblers at
  // -O`opt_level` are the same bytes.
  void ExpectTheSameMachineCode(const PtxModule& module, int opt_level);

  std::string ptxas_;
  std::unique_ptr<NvJitLink> library_;
};

// The in-process assembler and the ptxas executable of one release write
// the same machine code for a module (so the backend's answers are ptxas's),
// at -O3 and at the -O0 its executed values are cross-checked on; with
// runtime operands too, so that code is kept.
TEST_F(NvJitLinkTest, AssemblesAModuleAsThePtxasExecutableDoes) {
  std::vector<PtxTuple> tuples;
  for (const char* spelling : {"add.s32", "bfe.u64", "fns.b32", "mul.hi.s64"}) {
    tuples.push_back({*ParseVariant(spelling), {{0x80000000, 3, 7}}});
    tuples.push_back({*ParseVariant(spelling), {{0x80000000, 3, 7}}, 0b1});
  }
  const PtxModule module = BuildPtxModule(tuples, {.tuples_per_kernel = 4});
  for (const int opt_level : {0, 3}) {
    SCOPED_TRACE(opt_level);
    ExpectTheSameMachineCode(module, opt_level);
  }
}

void NvJitLinkTest::ExpectTheSameMachineCode(const PtxModule& module,
                                             int opt_level) {
  auto in_process = library_->Compile("sm_90", module.text, opt_level);
  auto executable = RunPtxas(ptxas_, "sm_90", module.text, opt_level);
  ASSERT_TRUE(in_process.ok()) << in_process.status();
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_TRUE(in_process->ok) << in_process->log;
  ASSERT_TRUE(executable->ok) << executable->log;
  auto elf_a = ParseElf(in_process->cubin);
  auto elf_b = ParseElf(executable->cubin);
  ASSERT_TRUE(elf_a.ok() && elf_b.ok());
  auto texts_a = KernelTexts(*elf_a);
  auto texts_b = KernelTexts(*elf_b);
  ASSERT_TRUE(texts_a.ok() && texts_b.ok());
  ASSERT_EQ(texts_a->size(), 2u);
  for (const std::string& kernel : module.kernels) {
    ASSERT_TRUE(texts_a->contains(kernel) && texts_b->contains(kernel))
        << kernel;
    EXPECT_EQ(texts_a->at(kernel), texts_b->at(kernel)) << kernel;
  }
  EXPECT_EQ(CubinSm(*elf_a), 90);
}

// Rejected lines are named as ptxas names them, so the backend drops the
// right tuples.
TEST_F(NvJitLinkTest, ARejectedModuleComesBackWithTheLinesItNames) {
  const std::string ptx =
      ".version 9.0\n.target sm_90\n.address_size 64\n"
      ".visible .entry k0(.param .u64 out)\n{\n"
      "  .reg .b32 %r<2>;\n  .reg .b64 %rd<2>;\n"
      "  add.s32 %r0, %r1, %rd0;\n"  // line 8: a 64-bit register in a 32-bit
                                     // add
      "  ret;\n}\n";
  auto out = library_->Compile("sm_90", ptx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->ok);
  EXPECT_THAT(out->log, HasSubstr(", line 8; error"));
  EXPECT_TRUE(out->cubin.empty());
}

}  // namespace
}  // namespace ptxdiff
