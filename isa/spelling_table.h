// The spelling tables behind isa/spelling.h, for its parser: every legal
// variant by its canonical spelling, and the suffix a destination is
// written with. isa/spelling_table.cc composes spellings and builds the
// tables once per process; isa/spelling.cc parses. They are apart so that
// the fuzz builds instrument the parser (the text fuzzer's signal) and not
// the tables: building them is start-up work of every process, and the
// campaign's threads spell and id every batch beside the fuzz loop.

#ifndef PTXDIFF_ISA_SPELLING_TABLE_H_
#define PTXDIFF_ISA_SPELLING_TABLE_H_

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

// Every legal variant by its canonical spelling (views of a buffer that
// lives as long as the process).
const absl::flat_hash_map<absl::string_view, const Variant*>& SpellingIndex();

// What the destination operand is decorated with: its selector (scalar
// video, "h0") or lane mask (SIMD video), or "".
absl::string_view DestinationSuffix(const Variant& v);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_SPELLING_TABLE_H_
