// The literal oracle for the SIMD video instructions (PTX ISA 9.7.18.2):
// vadd2, vsub2, vavrg2, vabsdiff2, vmin2, vmax2 (vop2), vset2, and their
// four-lane vop4 and vset4 counterparts.
//
// Like LiteralEvaluate() (literal_oracle.h), this is a line-by-line
// transcription of the spec's Semantics block, slow on purpose:
// extractAndSignExt_2/_4 and extractMaskBits are their own functions, the
// per-lane loop is the spec's `for (i=0; i<N; i++)` with its switch, every
// intermediate (Va[i], Vb[i], t[i], the accumulated d) is a mathematical
// integer, bits are moved one at a time through an explicit Bit() helper, and
// the only truncation is the final write of the 32-bit register (and, in the
// SIMD merge, the placing of each lane's result into its half-word or byte).
//
// It was written from the spec text only, never from the fast oracle.
// The judgement calls are marked `AMBIGUOUS:` in the .cc file and explained,
// with the spec's own words as evidence, in SIMD_VIDEO_NOTES.md.
//
// No input leaves the result undefined: the pseudocode gives a value for every
// operand and selector, so the function returns the value itself.

#ifndef PTXDIFF_ORACLE_LITERAL_LITERAL_SIMD_VIDEO_H_
#define PTXDIFF_ORACLE_LITERAL_LITERAL_SIMD_VIDEO_H_

#include <cstdint>

#include "isa/axes.h"
#include "oracle/copy.h"

namespace ptxdiff {

// One SIMD video instruction variant.
struct LiteralSimdOp {
  // 2 (vop2/vset2: half-words) or 4 (vop4/vset4: bytes).
  int lanes;
  // The primary operation; kSet is vset2/vset4.
  enum class Op { kAdd, kSub, kAvrg, kAbsdiff, kMin, kMax, kSet } op;
  // .dtype/.atype/.btype == .s32 (d_signed is false for vset, which has no
  // dtype; it is not read for vset).
  bool d_signed, a_signed, b_signed;
  // .sat. The syntax never combines it with .add ("Saturation cannot be used
  // with the secondary accumulate operation"); if both are set anyway, the
  // pseudocode is followed as written (clamp each lane, then accumulate). vset
  // has no .sat, and its pseudocode no clamp: `sat` is not read for kSet.
  bool sat;
  // .add: the secondary accumulate operation, which sums the masked lanes'
  // results into the scalar c. Otherwise the secondary SIMD merge: masked
  // lanes take their result, the others c's half-word or byte.
  bool accumulate;
  // The comparison for kSet (kEq .. kGe); Cmp::kNone otherwise.
  Cmp cmp;
  // The .mask of d: bit i set = lane i is written (.h10 = 0b11,
  // .b3210 = 0b1111, .h0 = 0b01, .b20 = 0b0101, ...). Bits at and above
  // `lanes` are not read.
  uint32_t mask_lanes;
};

// Returns d. `sel` carries the operand selectors, one nibble per lane, asel in
// the low half, bsel in the high half:
//  2-lane: sel bits[7:0] = asel .hxy as 0xXY (bits[3:0] = y, the half-word
//          index for lane 0; bits[7:4] = x for lane 1), bits[15:8] = bsel .hxy
//          likewise; the defaults .asel=.h10 .bsel=.h32 are 0x3210. Only the
//          low 2 bits of each nibble count (an index 0..3 into the four
//          half-words of the 64-bit {b, a}: 0 and 1 are a's, 2 and 3 b's).
//  4-lane: sel bits[15:0] = asel .bxyzw as 0xXYZW (w in bits[3:0] is lane 0's
//          byte), bits[31:16] = bsel; defaults .b3210/.b7654 = 0x76543210.
//          Only the low 3 bits of each nibble count (an index 0..7 into the
//          eight bytes of {b, a}: 0..3 are a's, 4..7 b's).
// The selected lane is sign- or zero-extended by the type of the operand
// position it feeds (atype for Va, btype for Vb), whichever register it came
// from.
inline namespace PTXDIFF_ORACLE_COPY {
uint32_t LiteralSimdVideo(const LiteralSimdOp& op, uint32_t a, uint32_t b,
                          uint32_t c, uint32_t sel);
}  // namespace PTXDIFF_ORACLE_COPY

}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_LITERAL_LITERAL_SIMD_VIDEO_H_
