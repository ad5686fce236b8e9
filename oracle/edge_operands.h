// Operand values that reach the corners of every family: 0, 1, all ones,
// MIN and MAX of each width, powers of two and their neighbours, the shift,
// position and length values around 0, 31, 32, 33, 63, 64, 255 and 256,
// byte/half-word sign patterns for the video selectors, and (in the 32- and
// 64-bit tables) the f32 special bit patterns: +-0, +-inf and the first and
// last NaNs (0x00000000, 0x80000000, 0x7f800000, 0x7f800001, 0x7fffffff,
// 0xff800000, 0xffffffff).
//
// The oracle cross-check, the fuzzers' mutator and the benchmarks draw their
// operands from here, mixed with random bits.

#ifndef PTXDIFF_ORACLE_EDGE_OPERANDS_H_
#define PTXDIFF_ORACLE_EDGE_OPERANDS_H_

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "isa/variant.h"

namespace ptxdiff {

// The edge values for an operand `width` bits wide (each fits the width):
// widths 1 (the carry-in "cf": 0 and 1), 8, 16, 24, 32 and 64.
const std::vector<uint64_t>& EdgeValues(int width);

// Fills `out` with tuples for `v`: each source an edge value, a random value
// of its width, or a small value (0..300), chosen by `rng`, within its
// SourceMask (a SIMD selector: half the time the default). Deterministic
// for a given seed.
void FillEdgeTuples(const Variant& v, std::mt19937_64& rng,
                    std::span<Operands> out);

}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_EDGE_OPERANDS_H_
