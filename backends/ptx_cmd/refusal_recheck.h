// Remembered refusals re-checked at a run's start (the fifteenth fault run's
// third medium). A tool that failed every module for a while (a licence
// server down, a network mount gone) with a message no machine-failure
// phrase names was remembered refusing whole families, and no later run sent
// them again: its bugs there were never found again.
//
// Before a run sends anything, each message the memory holds refusals by
// (SaidKey; a class's message) is tried once: one of its variants run alone
// in its shape. If the tool runs it, the message no longer holds: every
// refusal remembered with it is forgotten (RefusalMemory::Forget) and sent
// again. Refused, or not run to its end, it is kept. The messages with the
// most refusals are tried first, at most kMaxRechecked a run: a real parser
// refuses with a few messages (one error per class), so that costs a few
// runs. A message kept by a re-check of the same run (common/run_id.h) less
// than kRecheckEvery ago is not tried again: a worker restarted, or another
// of the run's workers starting, does not pay for it; a long run tries it
// again now and then (a tool that failed for a while within the run).

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_RECHECK_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_RECHECK_H_

#include <functional>
#include <vector>

#include "absl/time/time.h"
#include "backends/ptx_cmd/refusal_classes.h"
#include "backends/ptx_cmd/refusal_memory.h"

namespace ptxdiff {

inline constexpr int kMaxRechecked = 8;
inline constexpr absl::Duration kRecheckEvery = absl::Minutes(10);

// Now, in this process's run (common/run_id.h): what a re-check notes as.
Kept NowInThisRun();

// Re-checks what `remembered` (loaded from `memory`) holds, with `run`, on
// variants `runnable` says may be sent; drops from `remembered` and forgets
// in `memory` each message the tool accepts now, and returns those; notes
// in `memory` each it still refuses, as kept `now` (its run "": none, every
// message is tried). A failure to write the memory is put in `error` (the
// refusals are dropped for this run all the same).
std::vector<Forgotten> RecheckRemembered(
    const RefusalMemory& memory, Remembered& remembered,
    const std::function<bool(const Variant&)>& runnable, AloneRunner run,
    const Kept& now, absl::Status* error);

// "2 refusals and 1 class remembered with \"msg\"": a forgetting in a line.
std::string DescribeForgotten(const Forgotten& f);

// What `dir` forgot of the tool `command` at or after `since` (a run's
// start), as a summary's line after `prefix`; "" if nothing.
std::string ForgottenLine(absl::string_view dir, absl::string_view command,
                          int64_t since_unix_seconds, absl::string_view prefix);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_RECHECK_H_
