// Known answers for the literal SIMD video oracle, each derived by hand from
// the PTX ISA 9.7.18.2 text (the derivation is in the comment where it is not
// obvious). Lane notation: for a 2-lane value 0xHHHH_LLLL, lane 1 is HHHH and
// lane 0 is LLLL; for a 4-lane value 0xB3_B2_B1_B0, lane i is Bi. Signed
// lanes are written as numbers: 0x8000 = -32768, 0xFF = -1 (signed byte).

#include "oracle/literal/literal_simd_video.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "isa/axes.h"

namespace ptxdiff {
namespace {

using Op = LiteralSimdOp::Op;

// The default selectors: .asel=.h10 .bsel=.h32, and .b3210/.b7654.
constexpr uint32_t kSel2 = 0x3210;
constexpr uint32_t kSel4 = 0x76543210;

// A merge-form vop with every lane in the mask. `types` spells
// .dtype.atype.btype as three letters, 's' or 'u': "ssu" = .s32.s32.u32.
LiteralSimdOp Vop(int lanes, Op op, const char* types) {
  return LiteralSimdOp{.lanes = lanes,
                       .op = op,
                       .d_signed = types[0] == 's',
                       .a_signed = types[1] == 's',
                       .b_signed = types[2] == 's',
                       .sat = false,
                       .accumulate = false,
                       .cmp = Cmp::kNone,
                       .mask_lanes = lanes == 2 ? 0b11u : 0b1111u};
}
LiteralSimdOp Vop2(Op op, const char* types) { return Vop(2, op, types); }
LiteralSimdOp Vop4(Op op, const char* types) { return Vop(4, op, types); }

// vset2/vset4.atype.btype.cmp: `types` is two letters, atype then btype.
LiteralSimdOp Vset(int lanes, const char* types, Cmp cmp) {
  LiteralSimdOp op = Vop(lanes, Op::kSet, "u??");
  op.a_signed = types[0] == 's';
  op.b_signed = types[1] == 's';
  op.cmp = cmp;
  return op;
}

LiteralSimdOp Sat(LiteralSimdOp op) {
  op.sat = true;
  return op;
}
LiteralSimdOp Add(LiteralSimdOp op) {
  op.accumulate = true;
  return op;
}
LiteralSimdOp Masked(LiteralSimdOp op, uint32_t mask_lanes) {
  op.mask_lanes = mask_lanes;
  return op;
}

// d, with the default selectors.
uint32_t D(const LiteralSimdOp& op, uint32_t a, uint32_t b, uint32_t c) {
  return LiteralSimdVideo(op, a, b, c, op.lanes == 2 ? kSel2 : kSel4);
}
uint32_t D(const LiteralSimdOp& op, uint32_t a, uint32_t b, uint32_t c,
           uint32_t sel) {
  return LiteralSimdVideo(op, a, b, c, sel);
}

// ---------------------------------------------------------------------------
// The Examples blocks, with concrete operands.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, ExampleVadd2SignedPlusUnsignedSat) {
  // vadd2.s32.s32.u32.sat r1, r2, r3, r1; r2 = 0x8000_FFFF, r3 = 0x0001_FFFF.
  // lane 0: Va = -1 (s32), Vb = 65535 (u32): 65534 -> CLAMP to S16_MAX 0x7FFF.
  // lane 1: Va = -32768, Vb = 1: -32767 = 0x8001.
  // Mask .h10: c (r1) is not read.
  EXPECT_EQ(D(Sat(Vop2(Op::kAdd, "ssu")), 0x8000FFFF, 0x0001FFFF, 0x12345678),
            0x80017FFFu);
}

TEST(LiteralSimdVideoTest, ExampleVsub2SatIntoH0) {
  // vsub2.s32.s32.s32.sat r1.h0, r2.h10, r3.h32, r1;
  // lane 0: -32768 - 1 = -32769 -> S16_MIN 0x8000; lane 1 from c = r1.
  EXPECT_EQ(D(Masked(Sat(Vop2(Op::kSub, "sss")), 0b01), 0x12348000, 0x56780001,
              0xCAFEBABE),
            0xCAFE8000u);
}

TEST(LiteralSimdVideoTest, ExampleVmin2AddSameHalfWordTwice) {
  // vmin2.s32.u32.u32.add r1.h10, r2.h00, r3.h22, r1;
  // asel .h00 -> both lanes a.h0 = 3; bsel .h22 -> both lanes half-word 2 of
  // {b, a} = b.h0 = 7. t = {3, 3}; d = r1 + 3 + 3 = 100 + 6 = 106.
  EXPECT_EQ(D(Add(Vop2(Op::kMin, "suu")), 0xFFFF0003, 0x00000007, 100, 0x2200),
            106u);
}

TEST(LiteralSimdVideoTest, ExampleVadd4SignedPlusUnsignedSat) {
  // vadd4.s32.s32.u32.sat r1, r2, r3, r1; r2 = 0x80_7F_FF_01 (signed:
  // -128, 127, -1, 1), r3 = 0x00_01_FF_02 (unsigned: 0, 1, 255, 2).
  // lane 0: 1 + 2 = 3; lane 1: -1 + 255 = 254 -> S8_MAX 0x7F;
  // lane 2: 127 + 1 = 128 -> 0x7F; lane 3: -128 + 0 = -128 = 0x80.
  EXPECT_EQ(D(Sat(Vop4(Op::kAdd, "ssu")), 0x807FFF01, 0x0001FF02, 0xFFFFFFFF),
            0x807F7F03u);
}

TEST(LiteralSimdVideoTest, ExampleVsub4SatIntoB0) {
  // vsub4.s32.s32.s32.sat r1.b0, r2.b3210, r3.b7654, r1;
  // lane 0: 0x80 - 0x01 = -128 - 1 = -129 -> S8_MIN 0x80; bytes 3..1 from c.
  EXPECT_EQ(D(Masked(Sat(Vop4(Op::kSub, "sss")), 0b0001), 0x11223380,
              0x44556601, 0xDEADBEEF),
            0xDEADBE80u);
}

TEST(LiteralSimdVideoTest, ExampleVmin4AddWithBselFromA) {
  // vmin4.s32.u32.u32.add r1.b00, r2.b0000, r3.b2222, r1;
  // .b2222 is byte 2 of {b, a}, i.e. of a (r2), not of b. r2 = 0x00_09_00_05:
  // Va = {5, 5, 5, 5}, Vb = {9, 9, 9, 9}, t = {5, 5, 5, 5}.
  // The mask .b00 is not in the .mask list; read as .b0: d = 1000 + 5.
  const uint32_t sel = 0x22220000;
  EXPECT_EQ(D(Masked(Add(Vop4(Op::kMin, "suu")), 0b0001), 0x00090005,
              0xFFFFFFFF, 1000, sel),
            1005u);
  // With .b3210: 1000 + 4 * 5.
  EXPECT_EQ(D(Add(Vop4(Op::kMin, "suu")), 0x00090005, 0xFFFFFFFF, 1000, sel),
            1020u);
}

TEST(LiteralSimdVideoTest, ExampleVset2SignedLessThanUnsigned) {
  // vset2.s32.u32.lt r1, r2, r3, r0; r2 = 0xFFFF_0005, r3 = 0x0000_0005.
  // lane 0: 5 < 5 = 0; lane 1: -1 (s32) < 0 = 1.
  EXPECT_EQ(D(Vset(2, "su", Cmp::kLt), 0xFFFF0005, 0x00000005, 0xABCDABCD),
            0x00010000u);
}

TEST(LiteralSimdVideoTest, ExampleVset2NotEqualAdd) {
  // vset2.u32.u32.ne.add r1, r2, r3, r0; lane 0 differs (1), lane 1 equal (0).
  // d = r0 + 1 = 0x7FFFFFFF + 1.
  EXPECT_EQ(D(Add(Vset(2, "uu", Cmp::kNe)), 0x12345678, 0x12340000, 0x7FFFFFFF),
            0x80000000u);
}

TEST(LiteralSimdVideoTest, ExampleVset4SignedLessThanUnsigned) {
  // vset4.s32.u32.lt r1, r2, r3, r0; r2 = 0x80_01_FF_7F (signed: -128, 1, -1,
  // 127), r3 = 0x00_01_FF_80 (unsigned: 0, 1, 255, 128).
  // lane 0: 127 < 128 = 1; lane 1: -1 < 255 = 1; lane 2: 1 < 1 = 0;
  // lane 3: -128 < 0 = 1.
  EXPECT_EQ(D(Vset(4, "su", Cmp::kLt), 0x8001FF7F, 0x0001FF80, 0), 0x01000101u);
}

TEST(LiteralSimdVideoTest, ExampleVset4NotEqualAdd) {
  // The spec's second vset4 example uses `.max`, which its syntax does not
  // have; the .add form instead: only lane 0 differs, d = 10 + 1.
  EXPECT_EQ(D(Add(Vset(4, "uu", Cmp::kNe)), 0x01020304, 0x01020305, 10), 11u);
}

// ---------------------------------------------------------------------------
// Per-lane wrap and saturation at the signed and unsigned bounds.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, Vadd2UnsignedWrapsPerLaneWithoutCarry) {
  // lane 0: 1 + 65535 = 65536 -> low 16 bits 0; lane 1: 65535 + 1 -> 0. The
  // carry out of lane 0 does not reach lane 1.
  EXPECT_EQ(D(Vop2(Op::kAdd, "uuu"), 0xFFFF0001, 0x0001FFFF, 0), 0x00000000u);
}

TEST(LiteralSimdVideoTest, Vadd2UnsignedSaturates) {
  EXPECT_EQ(D(Sat(Vop2(Op::kAdd, "uuu")), 0xFFFF0001, 0x0001FFFF, 0),
            0xFFFFFFFFu);
}

TEST(LiteralSimdVideoTest, Vadd2SignedWraps) {
  // lane 0: -32768 + -1 = -32769 -> 0x7FFF; lane 1: 32767 + 1 = 32768 ->
  // 0x8000.
  EXPECT_EQ(D(Vop2(Op::kAdd, "sss"), 0x7FFF8000, 0x0001FFFF, 0), 0x80007FFFu);
}

TEST(LiteralSimdVideoTest, Vadd2SignedSaturates) {
  EXPECT_EQ(D(Sat(Vop2(Op::kAdd, "sss")), 0x7FFF8000, 0x0001FFFF, 0),
            0x7FFF8000u);
}

TEST(LiteralSimdVideoTest, Vsub2UnsignedWrapsAndSaturatesAtZero) {
  // lane 0: 5 - 6 = -1; lane 1: 0 - 1 = -1.
  EXPECT_EQ(D(Vop2(Op::kSub, "uuu"), 0x00000005, 0x00010006, 0), 0xFFFFFFFFu);
  EXPECT_EQ(D(Sat(Vop2(Op::kSub, "uuu")), 0x00000005, 0x00010006, 0),
            0x00000000u);
}

TEST(LiteralSimdVideoTest, Vsub2NoBorrowAcrossLanes) {
  // lane 0: 3 - 4 = -1 -> 0xFFFF; lane 1: 5 - 2 = 3, no borrow from lane 0.
  EXPECT_EQ(D(Vop2(Op::kSub, "uuu"), 0x00050003, 0x00020004, 0), 0x0003FFFFu);
}

TEST(LiteralSimdVideoTest, Vsub2SignedDtypeUnsignedSourcesSat) {
  // vsub2.s32.u32.u32.sat: lane 0: 65535 - 0 -> S16_MAX; lane 1:
  // 0 - 65535 = -65535 -> S16_MIN.
  EXPECT_EQ(D(Sat(Vop2(Op::kSub, "suu")), 0x0000FFFF, 0xFFFF0000, 0),
            0x80007FFFu);
}

TEST(LiteralSimdVideoTest, Vadd2UnsignedDtypeSignedSourcesSat) {
  // vadd2.u32.s32.s32.sat: lane 0: 5 + -1 = 4; lane 1: -32768 + -1 -> U16_MIN.
  EXPECT_EQ(D(Sat(Vop2(Op::kAdd, "uss")), 0x80000005, 0xFFFFFFFF, 0),
            0x00000004u);
}

TEST(LiteralSimdVideoTest, Vadd4UnsignedWrapsAndSaturates) {
  // a = 0xFF_80_7F_01, b = 0x01_80_01_FF. lane 0: 1 + 255 = 256; lane 1:
  // 127 + 1 = 128; lane 2: 128 + 128 = 256; lane 3: 255 + 1 = 256.
  EXPECT_EQ(D(Vop4(Op::kAdd, "uuu"), 0xFF807F01, 0x018001FF, 0), 0x00008000u);
  EXPECT_EQ(D(Sat(Vop4(Op::kAdd, "uuu")), 0xFF807F01, 0x018001FF, 0),
            0xFFFF80FFu);
}

TEST(LiteralSimdVideoTest, Vadd4SignedWrapsAndSaturates) {
  // Signed lanes: a = {1, 127, -128, -1}, b = {-1, 1, -128, 1}.
  // t = {0, 128, -256, 0}: wrapped {0x00, 0x80, 0x00, 0x00}; clamped
  // {0, 127, -128, 0}.
  EXPECT_EQ(D(Vop4(Op::kAdd, "sss"), 0xFF807F01, 0x018001FF, 0), 0x00008000u);
  EXPECT_EQ(D(Sat(Vop4(Op::kAdd, "sss")), 0xFF807F01, 0x018001FF, 0),
            0x00807F00u);
}

TEST(LiteralSimdVideoTest, Vsub4SignedWrapsAndSaturates) {
  // a = {5, 0, -128, 127}, b = {3, 1, 1, -128}:
  // t = {2, -1, -129, 255}. Wrapped: {0x02, 0xFF, 0x7F, 0xFF};
  // clamped: {2, -1, -128, 127} = {0x02, 0xFF, 0x80, 0x7F}.
  EXPECT_EQ(D(Vop4(Op::kSub, "sss"), 0x7F800005, 0x80010103, 0), 0xFF7FFF02u);
  EXPECT_EQ(D(Sat(Vop4(Op::kSub, "sss")), 0x7F800005, 0x80010103, 0),
            0x7F80FF02u);
}

TEST(LiteralSimdVideoTest, Vsub4UnsignedSaturatesAtZero) {
  // {3-1, 2-1, 1-1, 0-1} = {2, 1, 0, -1 -> 0}.
  EXPECT_EQ(D(Sat(Vop4(Op::kSub, "uuu")), 0x00010203, 0x01010101, 0),
            0x00000102u);
}

TEST(LiteralSimdVideoTest, Vsub4UnsignedWrapsPerByte) {
  // lanes 0 and 3: 0 - 1 = -1 -> 0xFF; lanes 1, 2: 0.
  EXPECT_EQ(D(Vop4(Op::kSub, "uuu"), 0x00000000, 0x01000001, 0), 0xFF0000FFu);
}

// ---------------------------------------------------------------------------
// Mixed atype/btype signedness.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, Vmin2SignedAAgainstUnsignedB) {
  // vmin2.u32.s32.u32: lane 0: MIN(1, 65535) = 1; lane 1: MIN(-1, 0) = -1 ->
  // 0xFFFF (no .sat: the low 16 bits).
  EXPECT_EQ(D(Vop2(Op::kMin, "usu"), 0xFFFF0001, 0x0000FFFF, 0), 0xFFFF0001u);
  // All unsigned: lane 1: MIN(65535, 0) = 0.
  EXPECT_EQ(D(Vop2(Op::kMin, "uuu"), 0xFFFF0001, 0x0000FFFF, 0), 0x00000001u);
}

TEST(LiteralSimdVideoTest, Vmax2UnsignedAAgainstSignedB) {
  // vmax2.s32.u32.s32: lane 0: MAX(1, -1) = 1; lane 1: MAX(32768, 32767) =
  // 32768 = 0x8000; with .sat (dtype s32) 32768 -> 32767.
  EXPECT_EQ(D(Vop2(Op::kMax, "sus"), 0x80000001, 0x7FFFFFFF, 0), 0x80000001u);
  EXPECT_EQ(D(Sat(Vop2(Op::kMax, "sus")), 0x80000001, 0x7FFFFFFF, 0),
            0x7FFF0001u);
}

TEST(LiteralSimdVideoTest, Vmax4SignedAAgainstUnsignedB) {
  // vmax4.u32.s32.u32: a = {127, 1, -1, -128}, b = {128, 2, 0, 127}:
  // {128, 2, 0, 127}.
  EXPECT_EQ(D(Vop4(Op::kMax, "usu"), 0x80FF017F, 0x7F000280, 0), 0x7F000280u);
}

TEST(LiteralSimdVideoTest, Vmin4UnsignedAAgainstSignedB) {
  // vmin4.s32.u32.s32: a = {127, 1, 255, 128}, b = {-128, 2, 0, 127}:
  // {-128, 1, 0, 127} = {0x80, 0x01, 0x00, 0x7F}.
  EXPECT_EQ(D(Vop4(Op::kMin, "sus"), 0x80FF017F, 0x7F000280, 0), 0x7F000180u);
}

TEST(LiteralSimdVideoTest, MinMaxOfSignedMinimum) {
  // vmin2.s32.s32.s32: lane 0: MIN(1, 2) = 1; lane 1: MIN(-32768, 32767).
  EXPECT_EQ(D(Vop2(Op::kMin, "sss"), 0x80000001, 0x7FFF0002, 0), 0x80000001u);
  // vmax2.u32.u32.u32: lane 0: 2; lane 1: MAX(32768, 32767) = 0x8000.
  EXPECT_EQ(D(Vop2(Op::kMax, "uuu"), 0x80000001, 0x7FFF0002, 0), 0x80000002u);
}

// ---------------------------------------------------------------------------
// vavrg: rounding of odd sums, negative lanes.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, Vavrg2UnsignedRoundsHalfUp) {
  // lane 0: (1 + 2 + 1) >> 1 = 2; lane 1: (4 + 2 + 1) >> 1 = 3.
  EXPECT_EQ(D(Vop2(Op::kAvrg, "uuu"), 0x00040001, 0x00020002, 0), 0x00030002u);
}

TEST(LiteralSimdVideoTest, Vavrg2UnsignedAtMaximumDoesNotOverflow) {
  // lane 0: (65535 + 65535 + 1) >> 1 = 65535; lane 1: (65534 + 65535 + 1)
  // >> 1 = 65535. The 17-bit sum is not truncated.
  EXPECT_EQ(D(Vop2(Op::kAvrg, "uuu"), 0xFFFFFFFF, 0xFFFEFFFF, 0), 0xFFFFFFFFu);
}

TEST(LiteralSimdVideoTest, Vavrg2SignedNegativeOddRoundsAwayFromZero) {
  // lane 0: -3 + 0 < 0: -3 >> 1 = floor(-1.5) = -2 = 0xFFFE;
  // lane 1: -1 + 0 < 0: -1 >> 1 = -1 = 0xFFFF.
  EXPECT_EQ(D(Vop2(Op::kAvrg, "sss"), 0xFFFFFFFD, 0x00000000, 0), 0xFFFFFFFEu);
}

TEST(LiteralSimdVideoTest, Vavrg2SignedPositiveOddRoundsUp) {
  // lane 0: (3 + 0 + 1) >> 1 = 2; lane 1: (1 + 0 + 1) >> 1 = 1.
  EXPECT_EQ(D(Vop2(Op::kAvrg, "sss"), 0x00010003, 0x00000000, 0), 0x00010002u);
}

TEST(LiteralSimdVideoTest, Vavrg2SignedNegativeEven) {
  // lane 0: -4 + 0 = -4 >> 1 = -2 = 0xFFFE; lane 1: -32768 + -32768 = -65536
  // >> 1 = -32768 = 0x8000.
  EXPECT_EQ(D(Vop2(Op::kAvrg, "sss"), 0x8000FFFC, 0x80000000, 0), 0x8000FFFEu);
}

TEST(LiteralSimdVideoTest, Vavrg2MixedSignedness) {
  // vavrg2.u32.s32.u32: lane 0: -32768 + 1 = -32767 < 0: floor(-16383.5) =
  // -16384 = 0xC000; lane 1: -1 + 0 = -1 -> -1 = 0xFFFF.
  EXPECT_EQ(D(Vop2(Op::kAvrg, "usu"), 0xFFFF8000, 0x00000001, 0), 0xFFFFC000u);
  // With .sat (dtype u32) both negative lanes clamp to 0.
  EXPECT_EQ(D(Sat(Vop2(Op::kAvrg, "usu")), 0xFFFF8000, 0x00000001, 0),
            0x00000000u);
}

TEST(LiteralSimdVideoTest, Vavrg4Signed) {
  // a = {1, -1, -128, -128}, b = {0, -2, 127, -128}:
  // lane 0: (1 + 1) >> 1 = 1; lane 1: -3 >> 1 = -2 = 0xFE;
  // lane 2: -1 >> 1 = -1 = 0xFF; lane 3: -256 >> 1 = -128 = 0x80.
  EXPECT_EQ(D(Vop4(Op::kAvrg, "sss"), 0x8080FF01, 0x807FFE00, 0), 0x80FFFE01u);
}

TEST(LiteralSimdVideoTest, Vavrg4Unsigned) {
  // a = {0, 1, 255, 255}, b = {1, 2, 254, 255}:
  // (0+1+1)>>1 = 1; (1+2+1)>>1 = 2; (509+1)>>1 = 255; (510+1)>>1 = 255.
  EXPECT_EQ(D(Vop4(Op::kAvrg, "uuu"), 0xFFFF0100, 0xFFFE0201, 0), 0xFFFF0201u);
}

// ---------------------------------------------------------------------------
// vabsdiff of MIN and MAX lanes.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, Vabsdiff2SignedMinMax) {
  // lane 0: |32767 - (-32768)| = 65535; lane 1: |-32768 - 32767| = 65535.
  EXPECT_EQ(D(Vop2(Op::kAbsdiff, "sss"), 0x80007FFF, 0x7FFF8000, 0),
            0xFFFFFFFFu);
  // .sat with dtype s32: 65535 -> 32767.
  EXPECT_EQ(D(Sat(Vop2(Op::kAbsdiff, "sss")), 0x80007FFF, 0x7FFF8000, 0),
            0x7FFF7FFFu);
  // .sat with dtype u32: 65535 fits.
  EXPECT_EQ(D(Sat(Vop2(Op::kAbsdiff, "uss")), 0x80007FFF, 0x7FFF8000, 0),
            0xFFFFFFFFu);
}

TEST(LiteralSimdVideoTest, Vabsdiff2Unsigned) {
  EXPECT_EQ(D(Vop2(Op::kAbsdiff, "uuu"), 0xFFFF0000, 0x0000FFFF, 0),
            0xFFFFFFFFu);
  EXPECT_EQ(D(Vop2(Op::kAbsdiff, "uuu"), 0x00030005, 0x00050003, 0),
            0x00020002u);
}

TEST(LiteralSimdVideoTest, Vabsdiff2SignedMinAgainstUnsignedMax) {
  // vabsdiff2.u32.s32.u32: lane 1: |-32768 - 65535| = 98303 = 0x17FFF:
  // without .sat its low 16 bits 0x7FFF; with .sat U16_MAX. lane 0: 0.
  EXPECT_EQ(D(Vop2(Op::kAbsdiff, "usu"), 0x80000000, 0xFFFF0000, 0),
            0x7FFF0000u);
  EXPECT_EQ(D(Sat(Vop2(Op::kAbsdiff, "usu")), 0x80000000, 0xFFFF0000, 0),
            0xFFFF0000u);
}

TEST(LiteralSimdVideoTest, Vabsdiff4SignedMinMax) {
  // a = {0, -128, 127, -128}, b = {1, -128, -128, 127}:
  // {1, 0, 255, 255}; with .sat (s8) {1, 0, 127, 127}.
  EXPECT_EQ(D(Vop4(Op::kAbsdiff, "sss"), 0x807F8000, 0x7F808001, 0),
            0xFFFF0001u);
  EXPECT_EQ(D(Sat(Vop4(Op::kAbsdiff, "sss")), 0x807F8000, 0x7F808001, 0),
            0x7F7F0001u);
}

TEST(LiteralSimdVideoTest, Vabsdiff4AddIsSumOfAbsoluteDifferences) {
  // |4-1| + |3-2| + |2-3| + |1-4| = 3 + 1 + 1 + 3 = 8; d = 100 + 8.
  EXPECT_EQ(D(Add(Vop4(Op::kAbsdiff, "uuu")), 0x01020304, 0x04030201, 100),
            108u);
}

// ---------------------------------------------------------------------------
// vset: every comparison on equal, less and greater lanes; signed and
// unsigned readings of 0x80 and 0x8000.
// ---------------------------------------------------------------------------

// a = 0x80_05_03_07, b = 0x01_04_04_07: lane 0 equal (7, 7), lane 1 less
// (3 < 4), lane 2 greater (5 > 4), lane 3 0x80 against 1: 128 > 1 unsigned,
// -128 < 1 signed.
constexpr uint32_t kSetA = 0x80050307, kSetB = 0x01040407;

TEST(LiteralSimdVideoTest, Vset4UnsignedEveryComparison) {
  const struct {
    Cmp cmp;
    uint32_t d;  // lanes {0, 1, 2, 3}
  } cases[] = {
      {Cmp::kEq, 0x00000001},  // {1, 0, 0, 0}
      {Cmp::kNe, 0x01010100},  // {0, 1, 1, 1}
      {Cmp::kLt, 0x00000100},  // {0, 1, 0, 0}
      {Cmp::kLe, 0x00000101},  // {1, 1, 0, 0}
      {Cmp::kGt, 0x01010000},  // {0, 0, 1, 1}
      {Cmp::kGe, 0x01010001},  // {1, 0, 1, 1}
  };
  for (const auto& test : cases) {
    SCOPED_TRACE(static_cast<int>(test.cmp));
    EXPECT_EQ(D(Vset(4, "uu", test.cmp), kSetA, kSetB, 0), test.d);
  }
}

TEST(LiteralSimdVideoTest, Vset4SignedEveryComparison) {
  const struct {
    Cmp cmp;
    uint32_t d;
  } cases[] = {
      {Cmp::kEq, 0x00000001},  // {1, 0, 0, 0}
      {Cmp::kNe, 0x01010100},  // {0, 1, 1, 1}
      {Cmp::kLt, 0x01000100},  // {0, 1, 0, 1}: -128 < 1
      {Cmp::kLe, 0x01000101},  // {1, 1, 0, 1}
      {Cmp::kGt, 0x00010000},  // {0, 0, 1, 0}
      {Cmp::kGe, 0x00010001},  // {1, 0, 1, 0}
  };
  for (const auto& test : cases) {
    SCOPED_TRACE(static_cast<int>(test.cmp));
    EXPECT_EQ(D(Vset(4, "ss", test.cmp), kSetA, kSetB, 0), test.d);
  }
}

TEST(LiteralSimdVideoTest, Vset2SignedAndUnsigned0x8000) {
  // a = 0x8000_0001, b = 0x0001_0001: lane 0 equal; lane 1 0x8000 against 1.
  // .u32.u32.ge: lane 1: 32768 >= 1.
  EXPECT_EQ(D(Vset(2, "uu", Cmp::kGe), 0x80000001, 0x00010001, 0), 0x00010001u);
  // .s32.s32.ge: lane 1: -32768 >= 1 is false.
  EXPECT_EQ(D(Vset(2, "ss", Cmp::kGe), 0x80000001, 0x00010001, 0), 0x00000001u);
  // .s32.u32.le: lane 1: -32768 <= 1.
  EXPECT_EQ(D(Vset(2, "su", Cmp::kLe), 0x80000001, 0x00010001, 0), 0x00010001u);
  // .u32.s32.gt: lane 1: 32768 > 1; lane 0: 1 > 1 is false.
  EXPECT_EQ(D(Vset(2, "us", Cmp::kGt), 0x80000001, 0x00010001, 0), 0x00010000u);
}

TEST(LiteralSimdVideoTest, VsetEqualBitsUnequalUnderMixedSignedness) {
  // vset2.u32.s32.eq: lane 1: 0xFFFF is 65535 against -1; lane 0: 0 == 0.
  EXPECT_EQ(D(Vset(2, "us", Cmp::kEq), 0xFFFF0000, 0xFFFF0000, 0), 0x00000001u);
  // vset4.u32.s32.gt: lane 0: 255 > -1; lanes 1..3: 0 > 0 is false.
  EXPECT_EQ(D(Vset(4, "us", Cmp::kGt), 0x000000FF, 0x000000FF, 0), 0x00000001u);
  // vset4.s32.s32.ne on the same bits: all equal.
  EXPECT_EQ(D(Vset(4, "ss", Cmp::kNe), 0x000000FF, 0x000000FF, 0), 0x00000000u);
}

// ---------------------------------------------------------------------------
// Selectors: lanes from b (index >= 2, >= 4), from a for Vb, the same lane
// twice; the unused high bits of each nibble.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, SelectorsSwapOperandsAndHalves) {
  // asel .h23 (lane 1: half-word 2 = b.h0, lane 0: half-word 3 = b.h1),
  // bsel .h01 (lane 1: a.h0, lane 0: a.h1): sel = 0x0123.
  // Va = {0x20, 0x10}, Vb = {2, 1}: d = {0x22, 0x11}.
  EXPECT_EQ(D(Vop2(Op::kAdd, "uuu"), 0x00020001, 0x00200010, 0, 0x0123),
            0x00110022u);
}

TEST(LiteralSimdVideoTest, SelectorsSameHalfWordTwice) {
  // asel .h11: Va = {a.h1, a.h1} = {5, 5}; bsel .h33: Vb = {b.h1, b.h1} =
  // {3, 3}. a.h0 and b.h0 are not read. d = {2, 2}.
  EXPECT_EQ(D(Vop2(Op::kSub, "sss"), 0x00050009, 0x00030001, 0, 0x3311),
            0x00020002u);
}

TEST(LiteralSimdVideoTest, SelectorsHighNibbleBitsIgnored2) {
  // Only the low 2 bits of each nibble count: 0x7654 selects as 0x3210.
  EXPECT_EQ(D(Vop2(Op::kAdd, "uuu"), 0x00010002, 0x00100020, 0, 0x7654),
            0x00110022u);
}

TEST(LiteralSimdVideoTest, SelectorsSignFollowsOperandPosition) {
  // vadd2.s32.s32.u32 with asel .h32 (b's halves, extended as atype = s32)
  // and bsel .h10 (a's halves, extended as btype = u32): sel = 0x1032.
  // Va = {-1, -1} from b = 0xFFFF_FFFF; Vb = {1, 65535} from a = 0xFFFF_0001.
  // t = {0, 65534}: d = 0xFFFE_0000; with .sat lane 1 -> 32767.
  EXPECT_EQ(D(Vop2(Op::kAdd, "ssu"), 0xFFFF0001, 0xFFFFFFFF, 0, 0x1032),
            0xFFFE0000u);
  EXPECT_EQ(D(Sat(Vop2(Op::kAdd, "ssu")), 0xFFFF0001, 0xFFFFFFFF, 0, 0x1032),
            0x7FFF0000u);
}

TEST(LiteralSimdVideoTest, Selectors4SwapOperands) {
  // vmax4.u32.u32.u32 with asel .b7654 (b's bytes) and bsel .b3210 (a's):
  // Va = b = {0x00, 0x30, 0x00, 0x10}, Vb = a = {0x04, 0x03, 0x02, 0x01}:
  // {0x04, 0x30, 0x02, 0x10}.
  EXPECT_EQ(D(Vop4(Op::kMax, "uuu"), 0x01020304, 0x10003000, 0, 0x32107654),
            0x10023004u);
}

TEST(LiteralSimdVideoTest, Selectors4ReverseAndBroadcast) {
  // asel .b0123: lane 0 byte 3 of a, ..., lane 3 byte 0: Va = {1, 2, 3, 4};
  // bsel .b4444: b's byte 0 in every lane: Vb = {0x10, ...}.
  EXPECT_EQ(D(Vop4(Op::kAdd, "uuu"), 0x01020304, 0x00000010, 0, 0x44440123),
            0x14131211u);
}

TEST(LiteralSimdVideoTest, SelectorsHighNibbleBitsIgnored4) {
  // Only the low 3 bits of each nibble count: 0xFEDC_BA98 selects as
  // 0x7654_3210.
  EXPECT_EQ(D(Vop4(Op::kAdd, "uuu"), 0x01020304, 0x10203040, 0, 0xFEDCBA98),
            0x11223344u);
}

TEST(LiteralSimdVideoTest, Vset4SelectsFromB) {
  // vset4.u32.u32.eq with asel .b7654 (b) and bsel .b7654 (b): every lane
  // compares a byte of b with itself.
  EXPECT_EQ(D(Vset(4, "uu", Cmp::kEq), 0x01020304, 0xAABBCCDD, 0, 0x76547654),
            0x01010101u);
}

// ---------------------------------------------------------------------------
// Masks with the SIMD merge: the other lanes come from c.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, Vadd2MaskH1KeepsCLow) {
  // lane 1: 1 + 0x10 = 0x11; lane 0 from c: 0xBBBB.
  EXPECT_EQ(D(Masked(Vop2(Op::kAdd, "uuu"), 0b10), 0x00010002, 0x00100020,
              0xAAAABBBB),
            0x0011BBBBu);
}

TEST(LiteralSimdVideoTest, Vadd2MaskH0KeepsCHigh) {
  // lane 0: 2 + 0x20 = 0x22; lane 1 from c: 0xAAAA.
  EXPECT_EQ(D(Masked(Vop2(Op::kAdd, "uuu"), 0b01), 0x00010002, 0x00100020,
              0xAAAABBBB),
            0xAAAA0022u);
}

TEST(LiteralSimdVideoTest, Vadd4MaskB20) {
  // lanes 0, 2: 0x04 + 0x40 = 0x44, 0x02 + 0x20 = 0x22; lanes 1, 3 from c:
  // 0xCC, 0xAA.
  EXPECT_EQ(D(Masked(Vop4(Op::kAdd, "uuu"), 0b0101), 0x01020304, 0x10203040,
              0xAABBCCDD),
            0xAA22CC44u);
}

TEST(LiteralSimdVideoTest, Vadd4MaskB31) {
  // lanes 1, 3: 0x33, 0x11; lanes 0, 2 from c: 0xDD, 0xBB.
  EXPECT_EQ(D(Masked(Vop4(Op::kAdd, "uuu"), 0b1010), 0x01020304, 0x10203040,
              0xAABBCCDD),
            0x11BB33DDu);
}

TEST(LiteralSimdVideoTest, Vmin4NegativeLanesDoNotSpillIntoMergedBytes) {
  // vmin4.s32.s32.s32 d.b10: lane 0: MIN(-1, 1) = -1 = 0xFF; lane 1:
  // MIN(-128, 1) = 0x80; lanes 2, 3 from c (0x34, 0x12).
  EXPECT_EQ(D(Masked(Vop4(Op::kMin, "sss"), 0b0011), 0x000080FF, 0x00000101,
              0x12345678),
            0x123480FFu);
}

TEST(LiteralSimdVideoTest, SaturateThenMerge) {
  // vsub2.u32.u32.u32.sat d.h1: lane 1: 1 - 2 -> 0; lane 0 from c.
  EXPECT_EQ(D(Masked(Sat(Vop2(Op::kSub, "uuu")), 0b10), 0x00010000, 0x00020000,
              0xDEADBEEF),
            0x0000BEEFu);
}

TEST(LiteralSimdVideoTest, Vset2MergeTakesOtherLaneFromC) {
  // vset2.u32.u32.eq d.h1: lane 1: 5 == 5 -> 1; lane 0 from c (0x5678), by
  // the pseudocode's Vc[i] (the Description says b, which would give 0x0006).
  EXPECT_EQ(D(Masked(Vset(2, "uu", Cmp::kEq), 0b10), 0x00050005, 0x00050006,
              0x12345678),
            0x00015678u);
}

TEST(LiteralSimdVideoTest, Vset4MergeB3) {
  // vset4.s32.s32.lt d.b3: lane 3: -128 < 0 -> 1; bytes 2..0 from c.
  EXPECT_EQ(D(Masked(Vset(4, "ss", Cmp::kLt), 0b1000), 0x80000000, 0x00000000,
              0xFFFFFFFF),
            0x01FFFFFFu);
}

TEST(LiteralSimdVideoTest, FullMaskIgnoresC) {
  // .b3210: every byte is a result; c is not read.
  EXPECT_EQ(D(Vop4(Op::kAdd, "uuu"), 0x01020304, 0x10203040, 0xDEADBEEF),
            0x11223344u);
}

TEST(LiteralSimdVideoTest, MaskBitsAboveTheLanesAreNotRead) {
  // vadd2 with mask_lanes 0b1110: only bit 1 names a lane (.h1); lane 0 from
  // c (0xBBBB), lane 1: 0x11.
  EXPECT_EQ(D(Masked(Vop2(Op::kAdd, "uuu"), 0b1110), 0x00010002, 0x00100020,
              0xAAAABBBB),
            0x0011BBBBu);
}

// ---------------------------------------------------------------------------
// Masks with .add, and accumulation overflow.
// ---------------------------------------------------------------------------

TEST(LiteralSimdVideoTest, Vadd2AddMaskH1) {
  // lane 1: 0x11 = 17 is added; lane 0 (0x22 = 34) is not: 1000 + 17.
  EXPECT_EQ(
      D(Masked(Add(Vop2(Op::kAdd, "uuu")), 0b10), 0x00010002, 0x00100020, 1000),
      1017u);
}

TEST(LiteralSimdVideoTest, Vadd2AddMaskH0) {
  // 1000 + 34.
  EXPECT_EQ(
      D(Masked(Add(Vop2(Op::kAdd, "uuu")), 0b01), 0x00010002, 0x00100020, 1000),
      1034u);
}

TEST(LiteralSimdVideoTest, Vadd4AddMaskB20) {
  // lanes 0, 2: 0x44 + 0x22 = 68 + 34 = 102 = 0x66; c = 0.
  EXPECT_EQ(
      D(Masked(Add(Vop4(Op::kAdd, "uuu")), 0b0101), 0x01020304, 0x10203040, 0),
      0x66u);
}

TEST(LiteralSimdVideoTest, Vset4AddMaskB31CountsMaskedLanes) {
  // Every lane differs (t = 1), but only lanes 1 and 3 are added: 5 + 2.
  EXPECT_EQ(D(Masked(Add(Vset(4, "uu", Cmp::kNe)), 0b1010), 0x01020304, 0, 5),
            7u);
}

TEST(LiteralSimdVideoTest, Vset2AddMaskH0) {
  // vset2.s32.s32.lt.add d.h0: both lanes are less (-1 < 0, -2 < 0), but only
  // lane 0 is added: 41 + 1.
  EXPECT_EQ(D(Masked(Add(Vset(2, "ss", Cmp::kLt)), 0b01), 0xFFFEFFFF, 0, 41),
            42u);
}

TEST(LiteralSimdVideoTest, Vadd2AddAccumulatesExactLaneSums) {
  // t = {65535 + 65535, 65535 + 65535} = {131070, 131070}, added exactly
  // (not truncated to 0xFFFE): 0 + 262140 = 0x3FFFC.
  EXPECT_EQ(D(Add(Vop2(Op::kAdd, "uuu")), 0xFFFFFFFF, 0xFFFFFFFF, 0),
            0x0003FFFCu);
}

TEST(LiteralSimdVideoTest, Vadd2AddWrapsAt32Bits) {
  // t = {2, 2}; 0xFFFFFFFE + 4 = 0x1_00000002 -> 0x00000002.
  EXPECT_EQ(D(Add(Vop2(Op::kAdd, "uuu")), 0x00010001, 0x00010001, 0xFFFFFFFE),
            0x00000002u);
}

TEST(LiteralSimdVideoTest, Vsub2AddNegativeLanesSubtract) {
  // vsub2.s32.s32.s32.add: t = {-1, -1}: c - 2.
  EXPECT_EQ(D(Add(Vop2(Op::kSub, "sss")), 0, 0x00010001, 0), 0xFFFFFFFEu);
  EXPECT_EQ(D(Add(Vop2(Op::kSub, "sss")), 0, 0x00010001, 5), 3u);
}

TEST(LiteralSimdVideoTest, Vsub4AddUnsignedDtypeStillAddsNegativeLanes) {
  // vsub4.u32.u32.u32.add: t = {-1, -1, -1, -1} (dtype is read only by
  // .sat): 2 - 4 = -2 -> 0xFFFFFFFE.
  EXPECT_EQ(D(Add(Vop4(Op::kSub, "uuu")), 0, 0x01010101, 2), 0xFFFFFFFEu);
}

TEST(LiteralSimdVideoTest, Vset2AddWraps) {
  // Both lanes equal: 0xFFFFFFFF + 2 -> 1.
  EXPECT_EQ(D(Add(Vset(2, "uu", Cmp::kEq)), 0x12345678, 0x12345678, 0xFFFFFFFF),
            1u);
}

TEST(LiteralSimdVideoTest, Vabsdiff4AddSignedExtremes) {
  // |-128 - 127| = 255 in each lane: 4 * 255 = 1020 = 0x3FC.
  EXPECT_EQ(D(Add(Vop4(Op::kAbsdiff, "sss")), 0x80808080, 0x7F7F7F7F, 0),
            0x3FCu);
}

TEST(LiteralSimdVideoTest, Vmax2AddSignedLanesSum) {
  // lane 0: MAX(32767, 0) = 32767; lane 1: MAX(-32768, -32768) = -32768.
  // 0 + 32767 - 32768 = -1 -> 0xFFFFFFFF.
  EXPECT_EQ(D(Add(Vop2(Op::kMax, "sss")), 0x80007FFF, 0x80000000, 0),
            0xFFFFFFFFu);
}

}  // namespace
}  // namespace ptxdiff
