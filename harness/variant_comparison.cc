#include "harness/variant_comparison.h"

#include <algorithm>
#include <array>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

// Where shift amounts and positions change meaning: within a byte, a
// half-word, a word, a double word, a byte-wide field, 32 bits, 64 bits.
constexpr std::array<uint64_t, 7> kRangeStarts = {
    0, 8, 16, 32, 64, 256, uint64_t{1} << 32};

int RangeOf(uint64_t value) {
  const auto it =
      std::upper_bound(kRangeStarts.begin(), kRangeStarts.end(), value);
  return static_cast<int>(it - kRangeStarts.begin()) - 1;
}

uint64_t RangeEnd(int range) {
  return range + 1 < static_cast<int>(kRangeStarts.size())
             ? kRangeStarts[range + 1] - 1
             : ~uint64_t{0};
}

}  // namespace

absl::StatusOr<VariantComparison> CompareVariants(const Variant& a,
                                                  const Variant& b,
                                                  int num_tuples, uint64_t seed,
                                                  int max_examples) {
  if (NumSources(a) != NumSources(b)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Spell(a), " takes ", NumSources(a), " operands and ",
                     Spell(b), " takes ", NumSources(b),
                     ": only variants with as many operands "
                     "compare"));
  }
  VariantComparison out;
  out.compared_bits = std::min(ResultWidth(a), ResultWidth(b));
  out.compared_carry = HasCarryOut(a) && HasCarryOut(b);
  std::vector<Operands> tuples(std::max(num_tuples, 0));
  std::mt19937_64 rng(seed);
  FillEdgeTuples(a, rng, tuples);

  // The first differing tuple in each range of the first amount source (or
  // the first differing tuples, if there is none), so that the examples
  // show where the differences begin.
  const int amount = FirstAmountSource(a);
  std::vector<Operands> first_in_range[kRangeStarts.size()];
  // counts[source][range]: tuples and differing tuples.
  std::vector<std::array<std::array<int, 2>, kRangeStarts.size()>> counts(
      NumSources(a));
  for (const Operands& ops : tuples) {
    const Result ra = Evaluate(a, ops), rb = Evaluate(b, ops);
    ++out.tuples;
    const bool differ =
        Low(ra.bits, out.compared_bits) != Low(rb.bits, out.compared_bits) ||
        (out.compared_carry && ra.carry != rb.carry);
    if (!ra.defined() || !rb.defined()) {
      ++out.unspecified;
    } else if (differ) {
      ++out.differ;
      auto& firsts =
          first_in_range[amount < 0 ? 0
                                    : RangeOf(Low(ops.v[amount],
                                                  SourceWidth(a, amount)))];
      if (static_cast<int>(firsts.size()) < max_examples) firsts.push_back(ops);
    } else {
      ++out.agree;
    }
    const bool counted_differ = differ && ra.defined() && rb.defined();
    for (int i = 0; i < NumSources(a); ++i) {
      if (!IsAmountSource(a, i)) continue;
      auto& slot = counts[i][RangeOf(Low(ops.v[i], SourceWidth(a, i)))];
      ++slot[0];
      slot[1] += counted_differ;
    }
  }
  for (const std::vector<Operands>& firsts : first_in_range) {
    if (firsts.empty()) continue;
    // One per range while there are ranges left, then the rest in order.
    out.examples.push_back(firsts.front());
  }
  for (const std::vector<Operands>& firsts : first_in_range) {
    for (size_t j = 1; j < firsts.size(); ++j)
      out.examples.push_back(firsts[j]);
  }
  out.examples.resize(
      std::min<size_t>(out.examples.size(), std::max(max_examples, 0)));
  for (int i = 0; i < NumSources(a); ++i) {
    for (size_t r = 0; r < kRangeStarts.size(); ++r) {
      if (counts[i][r][0] == 0) continue;
      out.amount_ranges.push_back({.source = i,
                                   .lo = kRangeStarts[r],
                                   .hi = RangeEnd(static_cast<int>(r)),
                                   .tuples = counts[i][r][0],
                                   .differ = counts[i][r][1]});
    }
  }
  return out;
}

}  // namespace ptxdiff
