#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace ptxdiff::internal {

void CheckFailed(const char* file, int line, const char* condition,
                 const std::string& message) {
  std::fprintf(stderr, "ptxdiff: CHECK failed at %s:%d: %s%s%s\n", file, line,
               condition, message.empty() ? "" : ": ", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace ptxdiff::internal
