// Text checks the tests share.

#ifndef PTXDIFF_COMMON_TESTING_TEXT_H_
#define PTXDIFF_COMMON_TESTING_TEXT_H_

#include <string>

namespace ptxdiff {

// How many times `what` occurs in `text` (overlapping occurrences counted).
inline int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_TESTING_TEXT_H_
