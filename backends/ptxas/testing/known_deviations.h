// Where ptxas 13.0's folding and the oracle disagree on a defined result, on
// every arch, and what ptxas gives there: real disagreements, reported (the
// oracle follows the spec's pseudocode, docs/spec-notes.md). The ptxas
// backend's tests insist that nothing else disagrees, and (issue 67) that
// these still do, with ptxas's known value: a deviation ptxas fixed, or one
// the oracle stopped seeing, fails them until it is struck from the list.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_TESTING_KNOWN_DEVIATIONS_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_TESTING_KNOWN_DEVIATIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/ptxas/testing/requests.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"

namespace ptxdiff {

struct KnownDeviation {
  const char* name;  // the list's entry, for the failure text
  uint64_t ptxas;    // what ptxas 13.0 folds
};

//  - 64-bit bfe and bfi take the whole 32-bit position and length where the
//    pseudocode takes their low 8 bits: bfe.u64 0x7465ebb101cfc1ea 0x18
//    0x10001 is 0x7465ebb101 after ptxas, 0x1 in the spec. (32-bit bfe/bfi
//    agree.) ptxas gives the hardware reading's value (erratum
//    bfe-bfi-64-unmasked).
//  - fns with offset INT_MIN (0x80000000) folds to 0 whatever the mask and
//    base; the oracle gives 0xffffffff (no mask has 2^31 set bits).
//  - slct.s32.s32 (only that dtype) folds as if c were an f32: c a positive
//    NaN pattern (0x7f800001..0x7fffffff, positive as an s32) selects b, c =
//    0x80000000 (INT_MIN, -0.0 as an f32) selects a
//    (docs/ptxas-folding-research.md §7).
// nullopt outside them. Where ptxas's value is the oracle's too (a field
// the masking leaves alone, a == b), the tuple does not show the deviation.
inline std::optional<KnownDeviation> KnownPtxasDeviation(const Variant& v,
                                                         const Operands& o) {
  const bool wide = TypeWidth(v.type) == 64;
  const auto hardware = [&] {
    return EvaluateWithReading(Reading::kHardware, v, o).bits;
  };
  switch (v.family) {
    case Family::kSlct: {
      const uint32_t c = static_cast<uint32_t>(o.v[2]);
      if (v.type != Type::kS32 ||
          !(c == 0x80000000 || (c > 0x7f800000 && c <= 0x7fffffff))) {
        return std::nullopt;
      }
      const uint64_t picked = o.v[c == 0x80000000 ? 0 : 1];
      return KnownDeviation{"slct.s32.s32 c read as an f32",
                            picked & 0xffffffff};
    }
    case Family::kBfe:
      if (!wide || (o.v[1] <= 255 && o.v[2] <= 255)) return std::nullopt;
      return KnownDeviation{"64-bit bfe unmasked", hardware()};
    case Family::kBfi:
      if (!wide || (o.v[2] <= 255 && o.v[3] <= 255)) return std::nullopt;
      return KnownDeviation{"64-bit bfi unmasked", hardware()};
    case Family::kFns:
      if (o.v[2] != 0x80000000) return std::nullopt;
      return KnownDeviation{"fns offset INT_MIN", 0};
    default:
      return std::nullopt;
  }
}

// One tuple of each deviation above that shows it, so that a test meets
// every one whatever its other tuples.
inline std::vector<Case> KnownDeviationExamples() {
  return {{"bfe.u64", {{0x7465ebb101cfc1ea, 0x18, 0x10001}}},
          {"bfi.b64", {{0x10000, 0x0000000100000020, 0x100, 0x40}}},
          {"fns.b32", {{0xffffffff, 0, 0x80000000}}},
          {"slct.s32.s32", {{1, 2, 0x7fffffff}}}};
}

// The known deviations a test met, by name: tuples, and those where ptxas's
// known value is not the oracle's (the deviation shows).
class DeviationTally {
 public:
  // A tuple of deviation `d`, where the oracle gives `oracle`.
  void Add(const KnownDeviation& d, uint64_t oracle) {
    auto& [tuples, showing] = met_[d.name];
    ++tuples;
    showing += d.ptxas != oracle;
  }
  int Showing() const {
    int n = 0;
    for (const auto& [name, counts] : met_) n += counts.second;
    return n;
  }
  // Each deviation met showed at least once, and at least `names` did.
  void ExpectEachShows(size_t names) const {
    std::string met;
    for (const auto& [name, counts] : met_) met += name + "; ";
    EXPECT_GE(met_.size(), names) << "too few known deviations met: " << met;
    for (const auto& [name, counts] : met_) {
      EXPECT_GT(counts.second, 0)
          << name << ": on all " << counts.first << " of its tuples the "
          << "oracle now gives ptxas's value: strike it from "
          << "KnownPtxasDeviation";
    }
  }

 private:
  std::map<std::string, std::pair<int, int>> met_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_TESTING_KNOWN_DEVIATIONS_H_
