// UTF-8's byte order mark, which an editor may write before a text file's
// first line: the readers of hand-written cases (a program case, a tuple's
// text case) read the text after it, as they would the file without it.

#ifndef PTXDIFF_COMMON_BYTE_ORDER_MARK_H_
#define PTXDIFF_COMMON_BYTE_ORDER_MARK_H_

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ptxdiff {

inline constexpr absl::string_view kUtf8ByteOrderMark = "\xef\xbb\xbf";

// `text` without the kUtf8ByteOrderMark it may start with.
inline absl::string_view WithoutByteOrderMark(absl::string_view text) {
  absl::ConsumePrefix(&text, kUtf8ByteOrderMark);
  return text;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_BYTE_ORDER_MARK_H_
