// libFuzzer target: the parsers of text a user or a file gives ptxdiff —
// instruction spellings (and PTX lines) and operand values. Garbage must be
// rejected with a status; an accepted spelling must round-trip.

#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Longer text adds nothing but time in the edit distances of the error
  // message (the nearest valid spellings).
  if (size > 64) return -1;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto variant = ptxdiff::ParseVariant(text);
  if (variant.ok()) {
    if (!ptxdiff::IsLegal(*variant)) std::abort();
    auto again = ptxdiff::ParseVariant(ptxdiff::Spell(*variant));
    if (!again.ok() || !(*again == *variant)) std::abort();
  }
  for (int width : {8, 16, 32, 64}) {
    auto value = ptxdiff::ParseOperand(text, width);
    if (value.ok() && width < 64 && (*value >> width) != 0) std::abort();
  }
  return 0;
}
