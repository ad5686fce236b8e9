// The tables every process derives from the family table: every legal
// variant, its canonical spelling, its stable id, and the way back from an
// id (or a spelling) to the variant.
//
// They are computed at build time: gen_isa_tables runs ComputeIsaTables()
// and writes them out as data (baked_isa_tables.cc in the build tree), which
// the `isa` library links. Composing them at start cost every process
// time (startup_benchmark), and a campaign starts four (the CLI, the fuzzer,
// two workers) on two cores; baked, they are pages of the binary, read when
// touched. The generator itself links `isa_computed`, whose TheIsaTables()
// computes them once per process instead. Both are the same function of the
// family table; a test compares them.

#ifndef PTXDIFF_ISA_ISA_TABLES_H_
#define PTXDIFF_ISA_ISA_TABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "isa/variant.h"

namespace ptxdiff {

struct IsaTables {
  // Every legal variant of every family, family by family in ForEachVariant
  // order: AllVariants(), whose index is VariantIndex.
  absl::Span<const Variant> variants;
  // Their canonical spellings, back to back; variant i's ends at
  // spelling_ends[i] and begins where variant i - 1's ends.
  absl::string_view spelling_text;
  absl::Span<const uint32_t> spelling_ends;
  // Fnv1a64 of each spelling (StableId).
  absl::Span<const uint64_t> stable_ids;
  // Open addressing by stable id: slot IdSlot(id, bits) holds variant
  // index + 1 (0 is empty), probed linearly; its size is a power of two.
  absl::Span<const uint32_t> by_stable_id;

  absl::string_view SpellingAt(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : spelling_ends[i - 1];
    return spelling_text.substr(begin, spelling_ends[i] - begin);
  }
  // The index of the variant with stable id `id` whose spelling is
  // `spelling` (any spelling if empty), or -1.
  int FindByStableId(uint64_t id, absl::string_view spelling = {}) const;
};

// The home slot of `id` in a table of 2^bits slots.
inline size_t IdSlot(uint64_t id, int bits) {
  return static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

// The process's tables: baked (library `isa`) or computed on first use
// (library `isa_computed`, for the generator).
const IsaTables& TheIsaTables();

// The tables with the storage behind them, composed from the family table.
struct ComputedIsaTables {
  std::vector<Variant> variants;
  std::string spelling_text;
  std::vector<uint32_t> spelling_ends;
  std::vector<uint64_t> stable_ids;
  std::vector<uint32_t> by_stable_id;

  IsaTables View() const;
};
ComputedIsaTables ComputeIsaTables();

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_ISA_TABLES_H_
