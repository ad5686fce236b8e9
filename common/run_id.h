// One name for one run of a command and every process it starts (the
// fuzzer, its forks, their workers): $PTXDIFF_RUN, inherited. What is done
// once a run across processes keys on it (a tool's remembered refusals are
// re-checked once a run, not at each worker's start or restart).

#ifndef PTXDIFF_COMMON_RUN_ID_H_
#define PTXDIFF_COMMON_RUN_ID_H_

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ptxdiff {

inline constexpr char kRunVariable[] = "PTXDIFF_RUN";

// The run this process is part of; "" where none was named.
inline std::string ThisRun() {
  const char* name = getenv(kRunVariable);
  return name == nullptr ? "" : name;
}

// Names this process's run "<pid>-<unix seconds>", unless the process that
// started it named it and still runs (a name exported by hand long ago is
// no run's: the seventeenth fault run saw it skip the re-check). `ptxdiff`
// starts a run whatever the environment says (`new_run`).
inline void NameThisRun(bool new_run = false) {
  const std::string named = ThisRun();
  int pid = 0;
  if (!new_run && absl::SimpleAtoi(named.substr(0, named.find('-')), &pid) &&
      pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
    return;
  const std::string name =
      absl::StrCat(getpid(), "-", absl::ToUnixSeconds(absl::Now()));
  setenv(kRunVariable, name.c_str(), /*overwrite=*/1);
}

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_RUN_ID_H_
