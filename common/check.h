// PTXDIFF_CHECK: an invariant that must hold, or the process stops.
//
// For the places where a broken invariant is a bug of ptxdiff itself (or,
// in a fuzz target, the very thing being searched for) and no caller could
// do anything with a Status: it prints where and what failed, then aborts,
// so that libFuzzer files a crash and a person sees the reason. Errors that
// input can cause go through absl::Status instead.
//
//   PTXDIFF_CHECK(IsLegal(v), "parsed an illegal variant: ", Spell(v));

#ifndef PTXDIFF_COMMON_CHECK_H_
#define PTXDIFF_COMMON_CHECK_H_

#include <string>

#include "absl/strings/str_cat.h"

namespace ptxdiff::internal {

// Prints "ptxdiff: CHECK failed at <file>:<line>: <condition>: <message>"
// to stderr and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);

}  // namespace ptxdiff::internal

// The message arguments (absl::StrCat's) are evaluated only on failure.
#define PTXDIFF_CHECK(condition, ...)                                  \
  do {                                                                 \
    if (!(condition)) {                                                \
      ::ptxdiff::internal::CheckFailed(__FILE__, __LINE__, #condition, \
                                       ::absl::StrCat(__VA_ARGS__));   \
    }                                                                  \
  } while (false)

#endif  // PTXDIFF_COMMON_CHECK_H_
