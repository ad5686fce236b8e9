// What a tool printed, or a damaged file held, made safe to quote to a
// user: a terminal acts on control bytes (an escape sequence may clear the
// screen or retitle the window), and a binary's bytes past ASCII are no text.

#ifndef PTXDIFF_COMMON_PRINTABLE_H_
#define PTXDIFF_COMMON_PRINTABLE_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {

// `bytes` with every byte that is not printable ASCII shown as \xNN
// (lowercase hex); newlines and tabs kept, so that lines stay lines.
inline std::string PrintableBytes(absl::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\t' || (u >= 0x20 && u < 0x7f)) {
      out += c;
    } else {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    }
  }
  return out;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_PRINTABLE_H_
