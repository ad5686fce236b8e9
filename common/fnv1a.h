// FNV-1a, 64-bit: the stable hash behind variant identities (as Cryptofuzz
// hashes operation names), so identities do not depend on enum order.

#ifndef PTXDIFF_COMMON_FNV1A_H_
#define PTXDIFF_COMMON_FNV1A_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace ptxdiff {

constexpr uint64_t Fnv1a64(absl::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// The published test vectors of FNV-1a 64.
static_assert(Fnv1a64("") == 0xcbf29ce484222325ull);
static_assert(Fnv1a64("a") == 0xaf63dc4c8601ec8cull);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_FNV1A_H_
