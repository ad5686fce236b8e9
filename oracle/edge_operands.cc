#include "oracle/edge_operands.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"
#include "isa/family_table.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

std::vector<uint64_t> BuildEdgeValues(int width) {
  const uint64_t mask = LowMask(width);
  std::vector<uint64_t> values;
  auto add = [&](uint64_t x) { values.push_back(x & mask); };
  for (uint64_t x : {0ull, 1ull, 2ull, 3ull}) add(x);
  add(mask);                              // -1
  add(mask - 1);                          // -2
  add(uint64_t{1} << (width - 1));        // MIN
  add((uint64_t{1} << (width - 1)) - 1);  // MAX
  add((uint64_t{1} << (width - 1)) + 1);  // MIN + 1
  for (int i = 1; i < width; ++i) {       // powers of two and their neighbours
    add(uint64_t{1} << i);
    add((uint64_t{1} << i) - 1);
    add((uint64_t{1} << i) + 1);
  }
  // Shift amounts, positions and lengths, including just past the width.
  for (uint64_t x :
       {5ull,   7ull,   8ull,   15ull,  16ull,  17ull,         23ull,
        24ull,  31ull,  32ull,  33ull,  63ull,  64ull,         65ull,
        127ull, 128ull, 255ull, 256ull, 257ull, 0x100000020ull}) {
    add(x);
  }
  // Byte and half-word sign patterns for the video selectors.
  for (uint64_t x : {0x80808080ull, 0x7f7f7f7full, 0x80007fffull, 0x7fff8000ull,
                     0xff00ff00ull, 0x00ff00ffull, 0x01800180ull, 0x807f7f80ull,
                     0xaaaaaaaaull, 0x55555555ull, 0xffff0000ull, 0x0000ffffull,
                     0x00800000ull, 0xff7fffffull}) {
    add(x);
  }
  // f32 special bit patterns: +0, -0, +inf, the first and the last NaN with
  // the sign clear, -inf, the last NaN with the sign set. Integer code that
  // reuses a float comparison goes wrong exactly there (ptxas 13.0 folds
  // slct.s32.s32 as if c were an f32; issue 13). Only where they fit.
  if (width >= 32) {
    for (uint64_t x :
         {0x00000000ull, 0x80000000ull, 0x7f800000ull, 0x7f800001ull,
          0x7fffffffull, 0xff800000ull, 0xffffffffull}) {
      add(x);
    }
  }
  absl::flat_hash_set<uint64_t> seen;
  std::vector<uint64_t> unique;
  for (uint64_t x : values) {
    if (seen.insert(x).second) unique.push_back(x);
  }
  return unique;
}

}  // namespace

const std::vector<uint64_t>& EdgeValues(int width) {
  static const auto* tables = [] {
    auto* t = new std::array<std::vector<uint64_t>, 65>();
    for (int w : {1, 8, 16, 24, 32, 64}) (*t)[w] = BuildEdgeValues(w);
    return t;
  }();
  return (*tables)[width];
}

void FillEdgeTuples(const Variant& v, std::mt19937_64& rng,
                    std::span<Operands> out) {
  const int sources = NumSources(v);
  for (Operands& tuple : out) {
    tuple = {};
    for (int i = 0; i < sources; ++i) {
      const int width = SourceWidth(v, i);
      const std::vector<uint64_t>& edges = EdgeValues(width);
      switch (rng() % 4) {
        case 0:
        case 1:
          tuple.v[i] = edges[rng() % edges.size()];
          break;
        case 2:
          tuple.v[i] = Low(rng(), width);
          break;
        default:
          tuple.v[i] = rng() % 301;
          break;
      }
      // A selector: half the time the default (`.h10`/`.h32`, ...), the
      // plainest and commonest; always in canonical form.
      if (IsSelectorSource(v, i) && rng() % 2 == 0) {
        tuple.v[i] = DefaultSimdSelector(SimdLanes(v.family));
      }
      tuple.v[i] &= SourceMask(v, i);
    }
  }
}

}  // namespace ptxdiff
