// WorkerClient::RunPrograms: program cases on a worker (RUN_PROGRAMS),
// with the tuple path's restart: a batch that faults the worker is sent
// again to a fresh one, and halved down to the program that faults it.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/worker_client.h"
#include "protocol/protocol.h"

namespace ptxdiff {
namespace {

// How long past a batch's time limit its reply may come: the worker cuts
// its runs there (ptxas killed, the evaluator stopped) and only has to
// answer, so a worker still silent by then hangs, and a campaign's end is
// not held up by more than this.
constexpr absl::Duration kPastTheLimit = absl::Seconds(5);

// The reply's timeout: the batch's time limit and a little, or twice the
// command's timeout for a batch without one.
absl::Duration ReplyTimeout(absl::Time deadline, absl::Duration timeout) {
  if (deadline == absl::InfiniteFuture()) return 2 * timeout;
  return std::max(deadline - absl::Now(), absl::ZeroDuration()) +
         std::min(timeout, kPastTheLimit);
}

// Programs [begin, end) of `request`, with what is left of its time limit.
ProgramRunRequest Range(const ProgramRunRequest& request, size_t begin,
                        size_t end, absl::Time deadline) {
  return {.form = request.form,
          .reading = request.reading,
          .until_fault = request.until_fault,
          .time_limit_ms = TimeLimitMs(deadline, absl::Now()),
          .programs = std::vector<std::string>(request.programs.begin() + begin,
                                               request.programs.begin() + end)};
}

}  // namespace

std::vector<ProgramOutcome> WorkerClient::RunPrograms(
    const ProgramRunRequest& request) {
  std::vector<ProgramOutcome> out(request.programs.size());
  const absl::Time deadline = DeadlineOf(request.time_limit_ms, absl::Now());
  if (!request.programs.empty()) {
    RunProgramRange(request, 0, request.programs.size(), deadline,
                    /*retried=*/false, out);
  }
  return out;
}

void WorkerClient::RunProgramRange(const ProgramRunRequest& request,
                                   size_t begin, size_t end,
                                   absl::Time deadline, bool retried,
                                   std::vector<ProgramOutcome>& out) {
  const size_t n = end - begin;
  const ProgramRunRequest part = Range(request, begin, end, deadline);
  absl::StatusOr<std::string> reply = Exchange(
      MessageType::kRunPrograms, EncodeProgramRunRequest(part),
      MessageType::kProgramResults, ReplyTimeout(deadline, command_.timeout));
  absl::StatusOr<ProgramRunReply> checks =
      reply.ok() ? DecodeProgramRunReply(*reply, n)
                 : absl::StatusOr<ProgramRunReply>(reply.status());
  if (checks.ok()) {
    for (size_t i = 0; i < n; ++i) {
      out[begin + i] = {.kind = ProgramOutcome::kChecked,
                        .check = std::move(checks->checks[i])};
    }
    return;
  }
  if (absl::IsAborted(checks.status())) {  // an ERROR: the worker lives on
    for (size_t i = begin; i < end; ++i) {
      out[i] = {.kind = ProgramOutcome::kError,
                .fault = {FaultKind::kProtocol,
                          std::string(checks.status().message())}};
    }
    return;
  }
  const BackendFault fault = Classify(checks.status());
  const bool stop =
      interrupted_ || relaunch_failed_ ||
      (deadline != absl::InfiniteFuture() && absl::Now() >= deadline);
  if (stop) {
    const std::string why =
        interrupted_ ? absl::StrCat(kInterrupted, ": ", fault.detail)
        : relaunch_failed_
            ? absl::StrCat("no worker could be started: ", fault.detail)
            : absl::StrCat("not run: the deadline passed while pinning a ",
                           FaultKindName(fault.kind), " (", fault.detail, ")");
    for (size_t i = begin; i < end; ++i) {
      out[i] = {.kind = ProgramOutcome::kNotRun, .fault = {fault.kind, why}};
    }
    return;
  }
  // The first fault of a batch is retried whole on a fresh worker: a flake
  // is not a finding.
  if (!retried) {
    RunProgramRange(request, begin, end, deadline, /*retried=*/true, out);
    return;
  }
  if (n == 1) {
    out[begin] = {.kind = ProgramOutcome::kFaulted, .fault = fault};
    return;
  }
  // It faults a fresh worker too: halve it, each half as faulting once
  // already (the one that still faults needs no second try to be believed).
  const size_t mid = begin + n / 2;
  RunProgramRange(request, begin, mid, deadline, /*retried=*/true, out);
  RunProgramRange(request, mid, end, deadline, /*retried=*/true, out);
}

}  // namespace ptxdiff
