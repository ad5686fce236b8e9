#include "isa/operand_form.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::HasSubstr;

Variant V(absl::string_view spelling) { return *ParseVariant(spelling); }

TEST(OperandFormTest, EveryWrittenNonImmediateSourceMayBeRuntime) {
  EXPECT_EQ(RuntimeCapableSources(V("bfe.s32")), 0b111);
  EXPECT_EQ(RuntimeCapableSources(V("add.u32")), 0b11);
  // lop3's LUT must be an immediate; addc's cf is CC.CF, not an operand.
  EXPECT_EQ(RuntimeCapableSources(V("lop3.b32")), 0b0111);
  EXPECT_EQ(RuntimeCapableSources(V("addc.u32")), 0b011);
  // vISA SHL is not PTX: ptxdiff compiles no module of it.
  EXPECT_EQ(RuntimeCapableSources(V("visa.shl.ud.ud.ud")), 0);
}

TEST(OperandFormTest, SimdSelectorsHaveNoForm) {
  const Variant v = V("vadd2.u32.u32.u32");
  for (int i = 0; i < NumSources(v); ++i) {
    EXPECT_EQ(CanBeRuntime(v, i), !IsSelectorSource(v, i)) << i;
  }
}

TEST(OperandFormTest, ATupleReadsItsFormOneSourceAtATime) {
  const Tuple t{V("bfe.s32"), {{1, 40, 8}}, 0b101};
  EXPECT_TRUE(t.IsRuntime(0));
  EXPECT_FALSE(t.IsRuntime(1));
  EXPECT_TRUE(t.IsRuntime(2));
  EXPECT_FALSE(t.IsRuntime(3));
}

TEST(OperandFormTest, RegisterShapeIsEverySourceThatMayBeRuntimeBeingOne) {
  EXPECT_TRUE(IsRegisterShape(V("bfe.s32"), 0b111));
  EXPECT_FALSE(IsRegisterShape(V("bfe.s32"), 0b011));
  EXPECT_FALSE(IsRegisterShape(V("bfe.s32"), 0));
  // lop3's LUT is an immediate in every form; addc's cf has no form.
  EXPECT_TRUE(IsRegisterShape(V("lop3.b32"), 0b0111));
  EXPECT_TRUE(IsRegisterShape(V("addc.u32"), 0b011));
  // A variant none of whose sources may be runtime values is always in it.
  EXPECT_TRUE(IsRegisterShape(V("visa.shl.ud.ud.ud"), 0));
}

TEST(OperandFormTest, NamesParseBack) {
  const Variant v = V("bfe.s32");
  EXPECT_EQ(RuntimeSourceNames(v, 0b101), "a,c");
  EXPECT_EQ(RuntimeSourceNames(v, 0), "");
  EXPECT_EQ(*ParseRuntimeSources(v, "a,c"), 0b101);
  EXPECT_EQ(*ParseRuntimeSources(v, "c a"), 0b101);
  EXPECT_EQ(*ParseRuntimeSources(v, ""), 0);
  const Variant fns = V("fns.b32");
  EXPECT_EQ(*ParseRuntimeSources(fns, RuntimeSourceNames(fns, 0b010)), 0b010);
}

TEST(OperandFormTest, ParsingRejectsUnknownAndImmediateOnlySources) {
  EXPECT_THAT(ParseRuntimeSources(V("add.u32"), "c").status().message(),
              HasSubstr("has no source 'c'"));
  EXPECT_THAT(ParseRuntimeSources(V("lop3.b32"), "immLut").status().message(),
              HasSubstr("requires an immediate"));
  EXPECT_FALSE(IsLegalForm(V("lop3.b32"), 0b1000));
  EXPECT_TRUE(IsLegalForm(V("lop3.b32"), 0b0111));
}

TEST(OperandFormTest, AKernelDeclaresItsOutputThenEachRuntimeSource) {
  const std::vector<Tuple> tuples = {{V("bfe.s32"), {{1, 40, 8}}, 0b101},
                                     {V("add.u32"), {{1, 2}}, 0},
                                     {V("selp.b16"), {{1, 2, 1}}, 0b110}};
  auto name = [](int t, int i) { return absl::StrCat("t", t, "s", i); };
  EXPECT_EQ(KernelParamList(tuples, name),
            ".param .u64 out, .param .b32 t0s0, .param .b32 t0s2, "
            ".param .b16 t2s1, .param .b32 t2s2");
  EXPECT_EQ(KernelParamList({&tuples[1], 1}, name), ".param .u64 out");
  EXPECT_EQ(KernelParamList({}, name), ".param .u64 out");
}

TEST(OperandFormTest, FormattedInstructionShowsRuntimeSourcesAsRegisters) {
  Tuple t{V("bfe.s32"), {{1, 40, 8}}, 0b001};
  EXPECT_EQ(FormattedInstruction(t), "bfe.s32 d, %a, 0x00000028, 0x00000008");
  t.runtime = 0;
  EXPECT_EQ(FormattedInstruction(t),
            "bfe.s32 d, 0x00000001, 0x00000028, 0x00000008");
}

}  // namespace
}  // namespace ptxdiff
