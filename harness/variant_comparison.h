// Two variants judged against each other through the oracle: on the same
// operands, where do they compute different results?
//
// This is for translator authors: `shl.b32` against `visa.shl.ud.ud.ud` shows
// that Intel vISA takes the shift amount modulo 32 where PTX gives 0 from 32
// on, so a PTX-to-vISA translator needs a clamp there. Any two variants with
// the same number of sources compare (`shl.b32` against `shf.l.clamp.b32`
// too); no backend is involved, both sides are the specification.

#ifndef PTXDIFF_HARNESS_VARIANT_COMPARISON_H_
#define PTXDIFF_HARNESS_VARIANT_COMPARISON_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "isa/variant.h"

namespace ptxdiff {

// The tuples whose amount source (a shift amount, a position) lies in
// [lo, hi], and how many of them differ.
struct AmountRange {
  int source = 0;
  uint64_t lo = 0, hi = 0;
  int tuples = 0;
  int differ = 0;
};

struct VariantComparison {
  int tuples = 0;
  int agree = 0;
  int differ = 0;
  // Undefined by the spec in either variant: neither answer is wrong.
  int unspecified = 0;
  // Results are compared on this many low bits (the narrower destination).
  int compared_bits = 0;
  // True when both variants write CC.CF (`.cc`): then the flags are compared
  // too, and a tuple whose values agree but whose flags differ differs.
  bool compared_carry = false;
  // For each amount source of the first variant, the tuples by range of its
  // value (empty ranges left out): where a mask or clamp differs, the
  // differences gather in the ranges past the narrower one's width.
  std::vector<AmountRange> amount_ranges;
  // Differing tuples: the first met in each range of the first amount
  // source, smallest range first (where the differences begin), then more.
  std::vector<Operands> examples;
};

// Evaluates `num_tuples` tuples of edge and random operands (drawn for `a`'s
// source widths; `b` reads the low bits of its own) on both variants.
// InvalidArgument if their numbers of sources differ.
absl::StatusOr<VariantComparison> CompareVariants(const Variant& a,
                                                  const Variant& b,
                                                  int num_tuples, uint64_t seed,
                                                  int max_examples = 4);

}  // namespace ptxdiff

#endif  // PTXDIFF_HARNESS_VARIANT_COMPARISON_H_
