// Operand values written as text: `0x` hex, decimal, or negative decimal.
// Shared by the CLI, text cases and the known-answer files.

#ifndef PTXDIFF_ISA_OPERAND_TEXT_H_
#define PTXDIFF_ISA_OPERAND_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

// Parses an operand for a source `width` bits wide (1..64). A negative decimal
// is stored as its two's complement. Out-of-range or malformed text is
// InvalidArgument naming the range.
absl::StatusOr<uint64_t> ParseOperand(absl::string_view text, int width);

// `bits` as 0x-prefixed hex with as many digits as `width` needs.
std::string HexOperand(uint64_t bits, int width);

// A result for people: the destination as HexOperand at ResultWidth(v),
// followed for a variant that writes CC.CF (HasCarryOut) by its carry-out
// (sub.cc, subc.cc: the borrow): "0x00000000", "0x00000000 cf=1".
std::string ResultText(const Variant& v, uint64_t bits, bool carry);

// Each source of `operands` as HexOperand at its width, in order (as many as
// NumSources(v)), its bits beyond SourceMask(v, i) dropped: the operand list
// of replay lines and text cases.
std::vector<std::string> HexOperands(const Variant& v,
                                     const Operands& operands);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_OPERAND_TEXT_H_
