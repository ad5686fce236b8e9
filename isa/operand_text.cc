#include "isa/operand_text.h"

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "isa/family_table.h"

namespace ptxdiff {
namespace {

uint64_t Mask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

}  // namespace

absl::StatusOr<uint64_t> ParseOperand(absl::string_view text, int width) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  const bool negative = absl::ConsumePrefix(&t, "-");
  uint64_t magnitude = 0;
  bool ok;
  if (absl::ConsumePrefix(&t, "0x") || absl::ConsumePrefix(&t, "0X")) {
    ok = !t.empty() && t.size() <= 16 &&
         absl::c_all_of(t, absl::ascii_isxdigit) &&
         absl::SimpleHexAtoi(t, &magnitude);
  } else {
    ok = !t.empty() && absl::c_all_of(t, absl::ascii_isdigit) &&
         absl::SimpleAtoi(t, &magnitude);
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text,
        "' is not a 64-bit number (use decimal, -decimal or 0x hex)"));
  }
  const uint64_t max_unsigned = Mask(width);
  const uint64_t max_negative = uint64_t{1} << (width - 1);  // |MIN|
  if (negative ? magnitude > max_negative : magnitude > max_unsigned) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s' does not fit in %d bits (range -%u .. 0x%x)",
                        text, width, max_negative, max_unsigned));
  }
  return (negative ? 0 - magnitude : magnitude) & max_unsigned;
}

std::string HexOperand(uint64_t bits, int width) {
  return absl::StrFormat("0x%0*x", (width + 3) / 4, bits);
}

std::string ResultText(const Variant& v, uint64_t bits, bool carry) {
  std::string text = HexOperand(bits, ResultWidth(v));
  if (HasCarryOut(v)) absl::StrAppend(&text, " cf=", carry ? 1 : 0);
  return text;
}

std::vector<std::string> HexOperands(const Variant& v,
                                     const Operands& operands) {
  std::vector<std::string> out;
  for (int i = 0; i < NumSources(v); ++i) {
    // Only the bits the instruction reads: a replay line must parse back
    // (ParseOperand rejects wider values) to the tuple that was evaluated.
    out.push_back(
        HexOperand(operands.v[i] & SourceMask(v, i), SourceWidth(v, i)));
  }
  return out;
}

}  // namespace ptxdiff
