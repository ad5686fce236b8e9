// Bit helpers shared by the oracles: masks, truncation, sign extension.
// Widths are in bits, 0..64 (Low128: 0..128).

#ifndef PTXDIFF_ORACLE_BITS_H_
#define PTXDIFF_ORACLE_BITS_H_

#include <cstdint>

namespace ptxdiff {

// The low `n` bits set.
constexpr uint64_t LowMask(int n) {
  return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

// x truncated to its low `width` bits.
constexpr uint64_t Low(uint64_t x, int width) { return x & LowMask(width); }

constexpr unsigned __int128 Low128(unsigned __int128 x, int width) {
  return width >= 128 ? x
                      : x & ((static_cast<unsigned __int128>(1) << width) - 1);
}

// The low `width` bits of x read as a two's complement number.
constexpr int64_t SignExtend(uint64_t x, int width) {
  const int unused = 64 - width;
  return static_cast<int64_t>(x << unused) >> unused;
}

constexpr uint64_t ReverseBits64(uint64_t x) {
  x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
  x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
  x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
  x = ((x >> 8) & 0x00ff00ff00ff00ffull) | ((x & 0x00ff00ff00ff00ffull) << 8);
  x = ((x >> 16) & 0x0000ffff0000ffffull) | ((x & 0x0000ffff0000ffffull) << 16);
  return (x >> 32) | (x << 32);
}

static_assert(SignExtend(0xff, 8) == -1);
static_assert(SignExtend(0x7f, 8) == 127);
static_assert(ReverseBits64(1) == 0x8000000000000000ull);

}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_BITS_H_
