#include "program/one_step_finding.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/testing/programs.h"

namespace ptxdiff {
namespace {

Variant V(const std::string& spelling) {
  auto v = ParseVariant(spelling);
  EXPECT_TRUE(v.ok()) << spelling;
  return v.ok() ? *v : Variant{};
}

TEST(ProgramAsTupleTest, ATuplesProgramIsThatTuple) {
  for (const char* spelling : {"add.u32", "bfe.s32", "mul.lo.u16",
                               "vshr.s32.u32.u32.clamp.add", "slct.s32.s32",
                               "cvt.sat.s16.u32"}) {
    const Variant v = V(spelling);
    Operands o;
    for (int i = 0; i < NumSources(v); ++i) o.v[i] = 0x11 * (i + 1);
    const Program p = TupleAsProgram(v, o);
    const std::optional<Tuple> runtime =
        ProgramAsTuple(p, ProgramInputs::kRuntime);
    ASSERT_TRUE(runtime.has_value()) << spelling;
    EXPECT_EQ(Spell(runtime->variant), Spell(v));
    uint8_t inputs = 0;
    for (int i = 0; i < NumSources(v); ++i) {
      if (!IsSelectorSource(v, i) && !MustBeImmediate(v, i))
        inputs |= uint8_t{1} << i;
      EXPECT_EQ(runtime->operands.v[i], o.v[i]) << spelling << " source " << i;
    }
    EXPECT_EQ(runtime->runtime, inputs) << spelling;
    const std::optional<Tuple> folded =
        ProgramAsTuple(p, ProgramInputs::kImmediate);
    ASSERT_TRUE(folded.has_value()) << spelling;
    EXPECT_EQ(folded->runtime, 0) << "immediates: no runtime source";
  }
}

TEST(ProgramAsTupleTest, ImmediatesAreOperands) {
  const std::optional<Tuple> t = ProgramAsTuple(
      ProgramOf("input %c .b32 0x7fffffff\n"
                "slct.s32.s32 %r, 0x0, 0x1, %c;\n"
                "output %r\n"),
      ProgramInputs::kRuntime);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(Spell(t->variant), "slct.s32.s32");
  EXPECT_EQ(t->operands.v[0], 0u);
  EXPECT_EQ(t->operands.v[1], 1u);
  EXPECT_EQ(t->operands.v[2], 0x7fffffffu);
  EXPECT_EQ(t->runtime, 0b100);
}

TEST(ProgramAsTupleTest, OtherProgramsAreNoTuple) {
  for (const char* body : {
           // An input read twice: two parameters would not be one value.
           "input %a .b32 3\nmul.lo.u32 %r, %a, %a;\noutput %r\n",
           // Two steps; a move.
           "input %a .b32 3\nadd.u32 %r, %a, 1;\nadd.u32 %s, %r, 1;\n"
           "output %s\n",
           "mov.b32 %a, 3;\noutput %a\n",
           // A carry in or out; an input the tuple's register is not.
           "input %a .b32 3\nadd.cc.u32 %r, %a, 1;\noutput %r\n",
           "input %a .b64 3\ncvt.u32.u64 %r, %a;\nadd.u32 %s, %r, 0;\n"
           "output %s\n",
           // An input the instruction does not read.
           "input %a .b32 3\ninput %b .b32 4\nadd.u32 %r, %a, 1;\n"
           "output %r\n",
       }) {
    EXPECT_EQ(ProgramAsTuple(ProgramOf(body), ProgramInputs::kRuntime),
              std::nullopt)
        << body;
  }
}

}  // namespace
}  // namespace ptxdiff
