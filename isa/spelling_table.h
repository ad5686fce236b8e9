// What isa/spelling.h's parser reads from the spelling tables
// (isa/isa_tables.h): a variant by its canonical spelling, and the suffix a
// destination is written with. isa/spelling_table.cc composes spellings and
// looks them up; isa/spelling.cc parses. They are apart so that the fuzz
// builds instrument the parser (the text fuzzer's signal) and not the
// lookups, which the campaign's threads make for every batch beside the
// fuzz loop.

#ifndef PTXDIFF_ISA_SPELLING_TABLE_H_
#define PTXDIFF_ISA_SPELLING_TABLE_H_

#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

// The legal variant whose canonical spelling is `spelling` (exactly), or
// nullptr. It lives as long as the process.
const Variant* VariantSpelled(absl::string_view spelling);

// What the destination operand is decorated with: its selector (scalar
// video, "h0") or lane mask (SIMD video), or "".
absl::string_view DestinationSuffix(const Variant& v);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_SPELLING_TABLE_H_
