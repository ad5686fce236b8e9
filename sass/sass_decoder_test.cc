#include "sass/sass_decoder.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "backends/ptxas/testing/compiled_kernel.h"

namespace ptxdiff {
namespace {

using ::ptxdiff::testing::CompileSass;
using ::ptxdiff::testing::KernelOf;
using ::testing::HasSubstr;
using ::testing::Not;

class SassDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ptxdiff::testing::HavePtxas()) GTEST_SKIP() << "no ptxas here";
  }

  // The listing of `body` compiled at -O`opt`; fails the test on a slot the
  // decoder does not understand before the EXIT.
  std::string Listing(int params, const std::string& body, int opt = 3) {
    absl::StatusOr<std::vector<SassSlot>> kernel =
        CompileSass(KernelOf(params, body), "k", opt);
    EXPECT_TRUE(kernel.ok()) << kernel.status();
    if (!kernel.ok()) return "";
    const std::string listing = SassListing(*kernel);
    EXPECT_FALSE(absl::StrContains(listing, "??")) << listing;
    return listing;
  }
};

TEST_F(SassDecoderTest, ReadsTheThreeRegisterAddAndTheStore) {
  const std::string listing =
      Listing(2, "  add.s32 %r2, %r0, %r1;\n  st.global.b32 [%out+12], %r2;\n");
  EXPECT_THAT(listing, HasSubstr("IADD3 R"));
  EXPECT_THAT(listing, HasSubstr(", RZ\n"));
  EXPECT_THAT(listing, HasSubstr("STG.E [R2.64+0xc]"));
  EXPECT_THAT(listing, HasSubstr("LDC.64 R"));
  EXPECT_THAT(listing, HasSubstr("c[0x0][0x210]"));  // the output pointer
  EXPECT_THAT(listing, HasSubstr("EXIT"));
}

// 64-bit division is a subroutine after the kernel's EXIT: the listing
// shows it, with the call, the return and the reciprocal's conversions.
TEST_F(SassDecoderTest, ReadsSixtyFourBitDivisionsSubroutine) {
  const std::string listing = Listing(
      2,
      "  cvt.u64.u32 %rd1, %r0;\n  cvt.u64.u32 %rd2, %r1;\n"
      "  shl.b64 %rd1, %rd1, 20;\n  div.u64 %rd3, %rd1, %rd2;\n"
      "  st.global.b64 [%out], %rd3;\n");
  EXPECT_THAT(listing, HasSubstr("CALL.REL.NOINC 0x"));
  EXPECT_THAT(listing, HasSubstr("I2F.U64.RP R"));
  EXPECT_THAT(listing, HasSubstr("MUFU.RCP R"));
  EXPECT_THAT(listing, HasSubstr("F2I.U64.TRUNC R"));
  EXPECT_THAT(listing, ::testing::ContainsRegex("IMAD.HI.U32 R[0-9]+, P[0-9]"));
  EXPECT_THAT(listing, ::testing::ContainsRegex("RET.REL.NODEC R[0-9]+, 0x0\n$"));
  EXPECT_THAT(listing, Not(HasSubstr("??"))) << "every instruction read";
}

TEST_F(SassDecoderTest, ReadsTheModifiersThatChangeValues) {
  const std::string listing = Listing(
      3,
      "  mul.hi.s32 %r3, %r0, %r1;\n  st.global.b32 [%out], %r3;\n"
      "  shf.r.clamp.b32 %r4, %r0, %r1, %r2;\n  st.global.b32 [%out+4], %r4;\n"
      "  prmt.b32 %r5, %r0, %r1, %r2;\n  st.global.b32 [%out+8], %r5;\n"
      "  min.s32 %r6, %r0, %r1;\n  st.global.b32 [%out+12], %r6;\n"
      "  max.u32 %r7, %r0, %r1;\n  st.global.b32 [%out+16], %r7;\n"
      "  xor.b32 %r8, %r0, %r1;\n  st.global.b32 [%out+20], %r8;\n"
      "  popc.b32 %r9, %r0;\n  st.global.b32 [%out+24], %r9;\n"
      "  brev.b32 %r10, %r1;\n  st.global.b32 [%out+28], %r10;\n");
  EXPECT_THAT(listing, HasSubstr("IMAD.HI R"));    // signed: no .U32
  EXPECT_THAT(listing, HasSubstr("SHF.R.U32 R"));  // the low word
  EXPECT_THAT(listing, HasSubstr("PRMT R"));
  EXPECT_THAT(listing, HasSubstr("VIMNMX.S32 R"));
  EXPECT_THAT(listing, HasSubstr("VIMNMX.U32 R"));
  EXPECT_THAT(listing, HasSubstr("LOP3.LUT R"));
  EXPECT_THAT(listing, HasSubstr(", 0x3c\n"));  // a ^ b's table
  EXPECT_THAT(listing, HasSubstr("POPC R"));
  EXPECT_THAT(listing, HasSubstr("BREV R"));
}

TEST_F(SassDecoderTest, BranchTargetsAreInstructionsOfTheKernel) {
  absl::StatusOr<std::vector<SassSlot>> kernel = CompileSass(
      KernelOf(2,
               "  mov.u32 %r2, 0;\n$L:\n  setp.eq.u32 %p0, %r1, 0;\n"
               "  @%p0 bra $D;\n  sub.u32 %r1, %r1, 1;\n"
               "  xor.b32 %r2, %r2, %r0;\n  bra $L;\n$D:\n"
               "  st.global.b32 [%out], %r2;\n"),
      "k", 0);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  int branches = 0;
  for (const SassSlot& s : *kernel) {
    ASSERT_TRUE(s.ok()) << s.why_not;
    if (s.insn.op != SassOp::kBra) continue;
    ++branches;
    EXPECT_EQ(s.insn.target % 16, 0);
    EXPECT_GE(s.insn.target, 0);
    EXPECT_LT(s.insn.target, static_cast<int64_t>(16 * kernel->size()));
  }
  EXPECT_GE(branches, 3);  // the exit test, the back edge, the padding
}

TEST_F(SassDecoderTest, AnUnreadBitMakesTheInstructionNotUnderstood) {
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  // IADD3 R5, R4, R5, RZ as ptxas writes it.
  const uint64_t lo = 0x0000000504057210, hi = 0x00007ffe0ff;
  ASSERT_TRUE(DecodeSassInstruction(arch, lo, hi, 0).ok());
  const SassSlot flipped =
      DecodeSassInstruction(arch, lo, hi | (uint64_t{1} << (76 - 64)), 0x40);
  EXPECT_FALSE(flipped.ok());
  EXPECT_THAT(flipped.why_not, HasSubstr("IADD3 at +0x0040"));
  EXPECT_THAT(flipped.why_not, HasSubstr("bits 76 not understood"));
}

// I2I's type (bits 76..77), opcode 0x21f's sign table (bits 72..79) and
// its predicate, VIMNMX.RELU (bit 76), VIADD's 16-bit lanes (bit 73).
TEST_F(SassDecoderTest, ReadsSaturationsAndTheSignTable) {
  const std::string listing = Listing(
      2,
      "  cvt.sat.s16.s32 %r2, %r0;\n  st.global.b32 [%out], %r2;\n"
      "  add.sat.s32 %r3, %r0, %r1;\n  st.global.b32 [%out+4], %r3;\n"
      "  max.relu.s32 %r4, %r0, %r1;\n  st.global.b32 [%out+8], %r4;\n"
      "  add.u16x2 %r5, %r0, %r1;\n  st.global.b32 [%out+12], %r5;\n",
      0);
  EXPECT_THAT(listing, HasSubstr("I2I.S16.S32.SAT R"));
  EXPECT_THAT(listing, HasSubstr(", 0x2\n"));   // a, b >= 0, c < 0
  EXPECT_THAT(listing, HasSubstr(", 0x40\n"));  // a, b < 0, c >= 0
  EXPECT_THAT(listing, HasSubstr("OP0x21F.SIGNS P0, R"));
  EXPECT_THAT(listing, HasSubstr("VIMNMX.S32.RELU R"));
  EXPECT_THAT(listing, HasSubstr("VIADD.16x2 R"));
}

// 32-bit division: the divisor's reciprocal as an f32 (I2F.RP of an s32 or
// a u32, MUFU.RCP), truncated back (F2I).
TEST_F(SassDecoderTest, ReadsTheFloatStepsOfDivision) {
  const std::string listing = Listing(
      2,
      "  div.u32 %r2, %r0, %r1;\n  st.global.b32 [%out], %r2;\n"
      "  div.s32 %r3, %r0, %r1;\n  st.global.b32 [%out+4], %r3;\n");
  EXPECT_THAT(listing, HasSubstr("I2F.U32.RP R"));
  EXPECT_THAT(listing, HasSubstr("I2F.RP R"));
  EXPECT_THAT(listing, HasSubstr("MUFU.RCP R"));
  EXPECT_THAT(listing, HasSubstr("F2I.FTZ.U32.TRUNC.NTZ R"));
}

TEST_F(SassDecoderTest, AnUnknownOpcodeIsNamed) {
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  const SassSlot slot = DecodeSassInstruction(arch, 0x215, 0, 0x10);
  EXPECT_FALSE(slot.ok());
  EXPECT_THAT(slot.why_not, HasSubstr("op 0x215 at +0x0010"));
}

// ptxas's VIADD with a uniform b negated (bit 63, as IADD3's b), seen in
// kernels of many video tuples; and the predicate spill P2R (0x803).
TEST(SassDecoderEncodings, ReadsVaddsNegatedUniformAndP2r) {
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  const SassSlot viadd =
      DecodeSassInstruction(arch, 0x8000000406067c36, 0x8000000, 0x440);
  ASSERT_TRUE(viadd.ok()) << viadd.why_not;
  EXPECT_EQ(SassText(viadd.insn), "VIADD R6, R6, -UR4");
  const SassSlot p2r =
      DecodeSassInstruction(arch, 0x00000040ff1c7803, 0, 0x640);
  ASSERT_TRUE(p2r.ok()) << p2r.why_not;
  EXPECT_EQ(SassText(p2r.insn), "P2R R28, PR, RZ, 0x40");
  // Merging into a register other than RZ is not read.
  EXPECT_FALSE(DecodeSassInstruction(arch, 0x00000040051c7803, 0, 0).ok());
}

// FSETP (op 0x80b, form 4: an immediate b), as nvJitLink writes it in
// 16-bit division: the divisor's magnitude against FLT_MIN. The compare
// field is 4 bits at 76 (GEU: 14), a's magnitude flag bit 73.
TEST(SassDecoderEncodings, ReadsFsetpsCompareAndModifiers) {
  const SassArchInfo arch = *FindSassArchInfo("sm_90");
  const uint64_t lo = 0x008000000600780b, hi = 0x00003f2e200;
  const SassSlot fsetp = DecodeSassInstruction(arch, lo, hi, 0x1b0);
  ASSERT_TRUE(fsetp.ok()) << fsetp.why_not;
  EXPECT_EQ(SassText(fsetp.insn), "FSETP.GEU.AND P1, |R6|, 0x800000, PT");
  EXPECT_EQ(fsetp.insn.float_compare, SassFloatCompare::kGeu);
  EXPECT_TRUE(fsetp.insn.src[0].abs);
  EXPECT_FALSE(fsetp.insn.src[0].negate);
  // Every compare code reads as its own.
  const uint64_t without_compare = hi & ~(uint64_t{0xf} << (76 - 64));
  for (uint64_t code = 0; code < 16; ++code) {
    const SassSlot s = DecodeSassInstruction(
        arch, lo, without_compare | code << (76 - 64), 0);
    ASSERT_TRUE(s.ok()) << s.why_not;
    EXPECT_EQ(static_cast<uint64_t>(s.insn.float_compare), code);
  }
  // -a (bit 72) and OR (set operation 1, bits 74..75).
  const SassSlot negated_or = DecodeSassInstruction(
      arch, lo, (hi & ~(uint64_t{1} << 9)) | 1 << 8 | 1 << 10, 0);
  ASSERT_TRUE(negated_or.ok()) << negated_or.why_not;
  EXPECT_EQ(SassText(negated_or.insn), "FSETP.GEU.OR P1, -R6, 0x800000, PT");
  // b a register (form 1): its magnitude (62) and negation (63) flags.
  const SassSlot registers = DecodeSassInstruction(
      arch, 0xc00000050600720b, hi, 0);
  ASSERT_TRUE(registers.ok()) << registers.why_not;
  EXPECT_EQ(SassText(registers.insn), "FSETP.GEU.AND P1, |R6|, -|R5|, PT");
  // What is not read: .FTZ (bit 80), a second predicate destination, set
  // operation 3, a destination register.
  EXPECT_THAT(DecodeSassInstruction(arch, lo, hi | 1 << 16, 0).why_not,
              HasSubstr("FSETP.FTZ"));
  EXPECT_THAT(
      DecodeSassInstruction(arch, lo, hi & ~(uint64_t{7} << 20), 0).why_not,
      HasSubstr("FSETP's second predicate"));
  EXPECT_THAT(DecodeSassInstruction(arch, lo, hi | 3 << 10, 0).why_not,
              HasSubstr("FSETP set operation 3"));
  EXPECT_THAT(DecodeSassInstruction(arch, lo | 0x40000, hi, 0).why_not,
              HasSubstr("FSETP with a destination register"));
}

TEST(SassArchInfoTest, NamesTheArchsItReads) {
  EXPECT_TRUE(FindSassArchInfo("sm_90a").ok());
  const absl::StatusOr<SassArchInfo> old = FindSassArchInfo("sm_80");
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.status().message(), HasSubstr("sm_90"));
}

}  // namespace
}  // namespace ptxdiff
