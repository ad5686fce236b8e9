// libFuzzer target: every parser of external input — instruction spellings
// (and PTX lines), operand values, text cases, crash files, and campaign
// configuration. Garbage must be rejected with a status, never crash; an
// accepted spelling must round-trip.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/check.h"
#include "fuzzers/differential_target.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "triage/text_case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Longer text adds nothing but time in the edit distances of the error
  // message (the nearest valid spellings).
  if (size > 64) return -1;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto variant = ptxdiff::ParseVariant(text);
  if (variant.ok()) {
    const std::string spelled = ptxdiff::Spell(*variant);
    PTXDIFF_CHECK(ptxdiff::IsLegal(*variant),
                  "parsed an illegal variant: ", spelled);
    auto again = ptxdiff::ParseVariant(spelled);
    PTXDIFF_CHECK(again.ok() && *again == *variant, "'", spelled,
                  "' does not parse back to the variant it spells");
  }
  for (int width : {8, 16, 32, 64}) {
    auto value = ptxdiff::ParseOperand(text, width);
    PTXDIFF_CHECK(!value.ok() || width == 64 || (*value >> width) == 0,
                  "an operand wider than ", width, " bits was accepted");
  }
  (void)ptxdiff::ParseTextCase(std::string(ptxdiff::kTextCaseHeader) + "\n" +
                               text);
  (void)ptxdiff::DecodeFuzzInput(text);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t eq = line.find('=');
    if (eq != absl::string_view::npos) {
      pairs.emplace_back(std::string(line.substr(0, eq)),
                         std::string(line.substr(eq + 1)));
    }
  }
  (void)ptxdiff::FuzzConfigFromPairs(pairs);
  return 0;
}
