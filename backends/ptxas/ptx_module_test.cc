#include "backends/ptxas/ptx_module.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

PtxTuple Tuple(absl::string_view spelling, Operands operands) {
  return {ParseVariant(spelling).value(), operands};
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

// The results' bits, where the tests need no flag words.
std::optional<std::vector<uint64_t>> Bits(
    const std::optional<std::vector<SlotValue>>& values) {
  if (!values.has_value()) return std::nullopt;
  std::vector<uint64_t> bits;
  for (const SlotValue& v : *values) bits.push_back(v.bits);
  return bits;
}

TEST(PtxModuleTest, WritesOperandsAsConstantsOfTheirWidth) {
  const std::vector<PtxTuple> tuples = {
      Tuple("add.s32", {{0xffffffff, 1}}),
      Tuple("mul.wide.u16", {{0x1ffff, 2}}),  // bits above 16 are not operand
      Tuple("bfe.u64", {{0x1122334455667788, 8, 16}}),
      Tuple("vadd.u32.u32.u32.sat d.b1, a, b.h0, c", {{1, 2, 3}}),
  };
  const PtxModule m =
      BuildPtxModule(tuples, {.target = "sm_80", .ptx_version = 90});
  const std::vector<std::string> lines = Lines(m.text);
  EXPECT_EQ(lines[0], ".version 9.0");
  EXPECT_EQ(lines[1], ".target sm_80");
  EXPECT_THAT(m.text, HasSubstr("  mov.b32 %r0, 0xffffffff;\n"
                                "  mov.b32 %r1, 0x00000001;\n"
                                "  add.s32 %r4, %r0, %r1;\n"
                                "  st.global.b32 [%ptr1+0], %r4;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b16 %h0, 0xffff;\n"
                                "  mov.b16 %h1, 0x0002;\n"
                                "  mul.wide.u16 %r4, %h0, %h1;\n"
                                "  st.global.b32 [%ptr1+8], %r4;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b64 %rd0, 0x1122334455667788;\n"
                                "  mov.b32 %r1, 0x00000008;\n"
                                "  mov.b32 %r2, 0x00000010;\n"
                                "  bfe.u64 %rd4, %rd0, %r1, %r2;\n"
                                "  st.global.b64 [%ptr1+16], %rd4;\n"));
  EXPECT_THAT(m.text,
              HasSubstr("vadd.u32.u32.u32.sat %r4.b1, %r0, %r1.h0, %r2;\n"));
  ASSERT_EQ(m.slots.size(), 4u);
  EXPECT_EQ(m.slots[1].bytes, 4);
  EXPECT_EQ(m.slots[2].bytes, 8);
  EXPECT_EQ(m.slots[2].offset, 16);
  EXPECT_EQ(m.kernels, std::vector<std::string>{"k0"});
}

// A runtime source is loaded from a parameter of its own, named after its
// tuple and source; the tuple's lines still map back to it.
TEST(PtxModuleTest, RuntimeSourcesAreKernelParameters) {
  PtxTuple bfe = Tuple("bfe.s32", {{1, 40, 8}});
  bfe.runtime = 0b001;
  PtxTuple selp = Tuple("selp.b16", {{1, 2, 1}});
  selp.runtime = 0b100;
  const std::vector<PtxTuple> tuples = {Tuple("add.s32", {{1, 2}}), bfe, selp};
  const PtxModule m =
      BuildPtxModule(tuples, {.target = "sm_80", .ptx_version = 90});
  EXPECT_THAT(m.text, HasSubstr(".entry k0(.param .u64 out, .param .b32 t1_a, "
                                ".param .b32 t2_c)\n"));
  EXPECT_THAT(m.text, HasSubstr("  ld.param.b32 %r0, [t1_a];\n"
                                "  mov.b32 %r1, 0x00000028;\n"
                                "  mov.b32 %r2, 0x00000008;\n"
                                "  bfe.s32 %r4, %r0, %r1, %r2;\n"));
  EXPECT_THAT(
      m.text,
      HasSubstr("ld.param.b32 %w, [t2_c]; setp.ne.u32 %p2, %w, 0; }\n"));
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(TupleAtLine(m, m.slots[t].first_line), t);
    EXPECT_EQ(TupleAtLine(m, m.slots[t].last_line), t);
  }
  EXPECT_EQ(m.slots[1].last_line - m.slots[1].first_line, 4);
}

// A predicate source is set by setp.ne of its bit, a predicate result is
// stored as a byte through selp, and 8-bit values live in 16-bit registers
// (there is no mov.b8) and are stored as a byte.
TEST(PtxModuleTest, PredicatesAndBytes) {
  const std::vector<PtxTuple> tuples = {
      Tuple("selp.b32", {{5, 7, 1}}),
      Tuple("setp.lt.s16", {{0x8000, 1}}),
      Tuple("cvt.s8.u8", {{0x1ff}}),  // bits above 8 are not operand
      Tuple("cvt.sat.u8.s32", {{0x100}}),
  };
  const PtxModule m =
      BuildPtxModule(tuples, {.target = "sm_80", .ptx_version = 90});
  EXPECT_THAT(m.text, HasSubstr("  .reg .pred %p<5>;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b32 %r0, 0x00000005;\n"
                                "  mov.b32 %r1, 0x00000007;\n"
                                "  setp.ne.u32 %p2, 0x1, 0;\n"
                                "  selp.b32 %r4, %r0, %r1, %p2;\n"
                                "  st.global.b32 [%ptr1+0], %r4;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b16 %h0, 0x8000;\n"
                                "  mov.b16 %h1, 0x0001;\n"
                                "  setp.lt.s16 %p4, %h0, %h1;\n"
                                "  selp.u16 %h4, 1, 0, %p4;\n"
                                "  st.global.b8 [%ptr1+8], %h4;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b16 %h0, 0xff;\n"
                                "  cvt.s8.u8 %h4, %h0;\n"
                                "  st.global.b8 [%ptr1+16], %h4;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b32 %r0, 0x00000100;\n"
                                "  cvt.sat.u8.s32 %h4, %r0;\n"
                                "  st.global.b8 [%ptr1+24], %h4;\n"));
  ASSERT_EQ(m.slots.size(), 4u);
  EXPECT_EQ(m.slots[0].bytes, 4);
  EXPECT_EQ(m.slots[1].bytes, 1);
  EXPECT_EQ(m.slots[2].bytes, 1);
  EXPECT_EQ(m.slots[3].bytes, 1);
  // The selp line belongs to its tuple.
  EXPECT_EQ(m.slots[1].last_line - m.slots[1].first_line + 1, 5);
}

TEST(PtxModuleTest, SplitsTuplesIntoKernels) {
  std::vector<PtxTuple> tuples(5, Tuple("add.s16", {{1, 2}}));
  const PtxModule m = BuildPtxModule(tuples, {.tuples_per_kernel = 2});
  EXPECT_THAT(m.kernels, ElementsAre("k0", "k1", "k2"));
  EXPECT_THAT(m.kernel_begin, ElementsAre(0, 2, 4, 5));
  EXPECT_EQ(m.slots[3].kernel, 1);
  EXPECT_EQ(m.slots[3].offset, 8);
  EXPECT_EQ(m.slots[4].offset, 0);
  EXPECT_THAT(m.text, HasSubstr(".visible .entry k2(.param .u64 out)"));
}

// Kernels of different sizes in one module (the backend's learned sizes).
TEST(PtxModuleTest, SplitsTuplesIntoKernelsOfTheGivenSizes) {
  std::vector<PtxTuple> tuples(6, Tuple("add.s16", {{1, 2}}));
  const PtxModule m = BuildPtxModule(tuples, {.kernel_sizes = {3, 1, 2}});
  EXPECT_THAT(m.kernels, ElementsAre("k0", "k1", "k2"));
  EXPECT_THAT(m.kernel_begin, ElementsAre(0, 3, 4, 6));
  EXPECT_EQ(m.slots[2].kernel, 0);
  EXPECT_EQ(m.slots[3].kernel, 1);
  EXPECT_EQ(m.slots[3].offset, 0);
  EXPECT_EQ(m.slots[5].kernel, 2);
  EXPECT_EQ(m.slots[5].offset, 8);
}

TEST(PtxModuleTest, LinesMapBackToTheirTuples) {
  const std::vector<PtxTuple> tuples = {Tuple("neg.s32", {{5}}),
                                        Tuple("bfi.b32", {{1, 2, 3, 4}}),
                                        Tuple("add.s32", {{1, 2}})};
  const PtxModule m = BuildPtxModule(tuples, {.tuples_per_kernel = 2});
  const std::vector<std::string> lines = Lines(m.text);
  for (size_t t = 0; t < tuples.size(); ++t) {
    for (int line = m.slots[t].first_line; line <= m.slots[t].last_line;
         ++line) {
      EXPECT_EQ(TupleAtLine(m, line), static_cast<int>(t)) << lines[line - 1];
    }
  }
  EXPECT_THAT(lines[m.slots[1].first_line - 1],
              HasSubstr("mov.b32 %r0, 0x00000001"));
  EXPECT_THAT(lines[m.slots[1].last_line - 1], HasSubstr("st.global.b32"));
  EXPECT_EQ(m.slots[1].last_line - m.slots[1].first_line + 1,
            6);  // 4 movs, bfi, st
  for (int line :
       {1, 2, 3, 4, m.slots[0].first_line - 1, m.slots[2].first_line - 1,
        static_cast<int>(lines.size()), 100000, 0, -3}) {
    EXPECT_EQ(TupleAtLine(m, line), -1) << line;
  }
}

// Extended precision: CC.CF set from the cf constant before the
// instruction, read back after it, the flag word stored 8 bytes past the
// result in a 16-byte slot; the next tuple's slot follows.
TEST(PtxModuleTest, CarriesAreSetAndReadAroundTheInstruction) {
  const std::vector<PtxTuple> tuples = {
      Tuple("addc.cc.u32", {{0xffffffff, 0, 1}}),
      Tuple("subc.u64", {{5, 2, 0x101}}),  // bits above cf's 1 are not operand
      Tuple("add.s32", {{1, 2}}),
  };
  const PtxModule m = BuildPtxModule(tuples, {});
  EXPECT_THAT(m.text, HasSubstr("  .reg .b32 %cc_in, %cc_out;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b32 %r0, 0xffffffff;\n"
                                "  mov.b32 %r1, 0x00000000;\n"
                                "  mov.b32 %r2, 0x1;\n"
                                "  add.cc.u32 %cc_in, %r2, 0xffffffff;\n"
                                "  addc.cc.u32 %r4, %r0, %r1;\n"
                                "  addc.u32 %cc_out, 0, 0;\n"
                                "  st.global.b32 [%ptr1+0], %r4;\n"
                                "  st.global.b32 [%ptr1+8], %cc_out;\n"));
  EXPECT_THAT(m.text, HasSubstr("  mov.b32 %r2, 0x1;\n"
                                "  sub.cc.u32 %cc_in, 0, %r2;\n"
                                "  subc.u64 %rd4, %rd0, %rd1;\n"
                                "  st.global.b64 [%ptr1+16], %rd4;\n"));
  ASSERT_EQ(m.slots.size(), 3u);
  EXPECT_TRUE(m.slots[0].flag_word);
  EXPECT_FALSE(m.slots[1].flag_word);
  EXPECT_EQ(m.slots[1].offset, 16);
  EXPECT_EQ(m.slots[2].offset, 24);
  // The setter and the reader belong to their tuple's lines.
  EXPECT_EQ(m.slots[0].last_line - m.slots[0].first_line + 1, 8);
  // No CC.CF registers where no tuple uses them.
  const std::vector<PtxTuple> plain = {Tuple("add.s32", {{1, 2}})};
  EXPECT_THAT(BuildPtxModule(plain, {}).text, Not(HasSubstr("%cc_in")));
}

ConstantStore Store(int64_t offset, int size, uint64_t value) {
  return {.offset = offset,
          .size = size,
          .words = {static_cast<uint32_t>(value),
                    static_cast<uint32_t>(value >> 32)}};
}

TEST(PtxModuleTest, KernelResultsReadEachSlot) {
  const std::vector<PtxTuple> tuples = {Tuple("add.s16", {{1, 2}}),
                                        Tuple("add.s32", {{1, 2}}),
                                        Tuple("add.s64", {{1, 2}})};
  const PtxModule m = BuildPtxModule(tuples, {});
  const std::vector<ConstantStore> exact = {Store(0, 2, 0xbeef),
                                            Store(8, 4, 0xdeadbeef),
                                            Store(16, 8, 0x0123456789abcdef)};
  EXPECT_THAT(Bits(KernelResults(m, 0, exact)),
              Optional(ElementsAre(0xbeef, 0xdeadbeef, 0x0123456789abcdef)));
  // Stores split or merged differently still give the same bytes.
  const std::vector<ConstantStore> split = {
      Store(0, 1, 0xef),    Store(1, 1, 0xbe),        Store(8, 2, 0xbeef),
      Store(10, 2, 0xdead), Store(16, 4, 0x89abcdef), Store(20, 4, 0x01234567)};
  EXPECT_THAT(Bits(KernelResults(m, 0, split)),
              Optional(ElementsAre(0xbeef, 0xdeadbeef, 0x0123456789abcdef)));
}

TEST(PtxModuleTest, KernelResultsReadTheFlagWords) {
  const std::vector<PtxTuple> tuples = {Tuple("sub.cc.u32", {{1, 2}}),
                                        Tuple("add.s16", {{1, 2}})};
  const PtxModule m = BuildPtxModule(tuples, {});
  EXPECT_THAT(KernelResults(m, 0,
                            std::vector<ConstantStore>{Store(0, 4, 0xffffffff),
                                                       Store(8, 4, 0xffffffff),
                                                       Store(16, 2, 3)}),
              Optional(ElementsAre(
                  SlotValue{.bits = 0xffffffff, .flag_word = 0xffffffff},
                  SlotValue{.bits = 3})));
  // A flag word missing, or stored 8 bytes wide.
  EXPECT_EQ(KernelResults(m, 0,
                          std::vector<ConstantStore>{Store(0, 4, 0xffffffff),
                                                     Store(16, 2, 3)}),
            std::nullopt);
  EXPECT_EQ(KernelResults(m, 0,
                          std::vector<ConstantStore>{Store(0, 4, 0xffffffff),
                                                     Store(8, 8, 0xffffffff),
                                                     Store(16, 2, 3)}),
            std::nullopt);
}

std::optional<std::vector<uint64_t>> Results(
    const PtxModule& m, const std::vector<ConstantStore>& stores) {
  return Bits(KernelResults(m, 0, stores));
}

TEST(PtxModuleTest, KernelResultsRefuseMissingExtraOrOverlappingBytes) {
  const std::vector<PtxTuple> tuples = {Tuple("add.s16", {{1, 2}}),
                                        Tuple("add.s32", {{1, 2}})};
  const PtxModule m = BuildPtxModule(tuples, {});
  // A result missing.
  EXPECT_EQ(Results(m, {Store(0, 2, 1)}), std::nullopt);
  // A 16-bit result stored 4 bytes wide.
  EXPECT_EQ(Results(m, {Store(0, 4, 1), Store(8, 4, 2)}), std::nullopt);
  // A store past the kernel's slots, or before them.
  EXPECT_EQ(Results(m, {Store(0, 2, 1), Store(8, 4, 2), Store(16, 4, 3)}),
            std::nullopt);
  EXPECT_EQ(Results(m, {Store(-8, 4, 3), Store(0, 2, 1), Store(8, 4, 2)}),
            std::nullopt);
  // The same bytes twice.
  EXPECT_EQ(Results(m, {Store(0, 2, 1), Store(8, 4, 2), Store(8, 2, 2)}),
            std::nullopt);
}

}  // namespace
}  // namespace ptxdiff
