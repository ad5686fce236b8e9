// One name for one run of a command and every process it starts (the
// fuzzer, its forks, their workers): $PTXDIFF_RUN, inherited. What is done
// once a run across processes keys on it (a tool's remembered refusals are
// re-checked once a run, not at each worker's start or restart).

#ifndef PTXDIFF_COMMON_RUN_ID_H_
#define PTXDIFF_COMMON_RUN_ID_H_

#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxdiff {

inline constexpr char kRunVariable[] = "PTXDIFF_RUN";

// Names this process's run "<pid>-<unix seconds>", unless a process that
// started it already did.
inline void NameThisRun() {
  const std::string name =
      absl::StrCat(getpid(), "-", absl::ToUnixSeconds(absl::Now()));
  setenv(kRunVariable, name.c_str(), /*overwrite=*/0);
}

// The run this process is part of; "" where none was named.
inline std::string ThisRun() {
  const char* name = getenv(kRunVariable);
  return name == nullptr ? "" : name;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_RUN_ID_H_
