// WorkerClient::RunPrograms: program cases on a worker (RUN_PROGRAMS),
// with the tuple path's restart: a batch that faults the worker is sent
// again to a fresh one, and halved down to the program that faults it.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/worker_client.h"
#include "common/files.h"
#include "common/run_by_halves.h"
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

// How long the worker may say nothing while it answers: unbounded (but for
// the reply's timeout) unless it says it tells its progress.
absl::Duration SilenceTimeout(const WorkerIdentity& worker,
                              const WorkerCommand& command) {
  if (!worker.progress || command.silence_timeout <= absl::ZeroDuration())
    return absl::InfiniteDuration();
  return command.silence_timeout;
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
  const size_t n = request.programs.size();
  std::vector<ProgramOutcome> out(n);
  const absl::Time deadline = DeadlineOf(request.time_limit_ms, absl::Now());
  const auto run_part = [&](size_t begin,
                            size_t end) -> absl::StatusOr<PartEnd> {
    std::optional<BackendFault> fault =
        RunProgramPart(request, begin, end, deadline, out);
    // The first fault of the batch is retried whole on a fresh worker: a
    // flake is not a finding. A part that faults a fresh worker too needs
    // no second try to be believed.
    if (fault && begin == 0 && end == n) {
      fault = RunProgramPart(request, begin, end, deadline, out);
    }
    if (!fault) return PartEnd::kDone;
    if (end - begin > 1) return PartEnd::kHalve;
    out[begin] = {.kind = ProgramOutcome::kFaulted, .fault = *fault};
    return PartEnd::kDone;
  };
  RunByHalves(0, n, run_part).IgnoreError();  // a fault is an outcome
  return out;
}

std::optional<BackendFault> WorkerClient::RunProgramPart(
    const ProgramRunRequest& request, size_t begin, size_t end,
    absl::Time deadline, std::vector<ProgramOutcome>& out) {
  const size_t n = end - begin;
  const ProgramRunRequest part = Range(request, begin, end, deadline);
  absl::StatusOr<std::string> reply = Exchange(
      MessageType::kRunPrograms, EncodeProgramRunRequest(part),
      MessageType::kProgramResults, ReplyTimeout(deadline, command_.timeout),
      SilenceTimeout(identity_, command_));
  absl::StatusOr<ProgramRunReply> checks =
      reply.ok() ? DecodeProgramRunReply(*reply, n)
                 : absl::StatusOr<ProgramRunReply>(reply.status());
  if (checks.ok()) {
    for (size_t i = 0; i < n; ++i) {
      out[begin + i] = {.kind = ProgramOutcome::kChecked,
                        .check = std::move(checks->checks[i])};
    }
    return std::nullopt;
  }
  if (absl::IsAborted(checks.status())) {  // an ERROR: the worker lives on
    for (size_t i = begin; i < end; ++i) {
      out[i] = {.kind = ProgramOutcome::kError,
                .fault = {IsEnvironmentFailure(checks.status())
                              ? FaultKind::kEnvironment
                              : FaultKind::kProtocol,
                          std::string(checks.status().message())}};
    }
    return std::nullopt;
  }
  const BackendFault fault = Classify(checks.status());
  const bool stop =
      interrupted_ || relaunch_failed_ ||
      (deadline != absl::InfiniteFuture() && absl::Now() >= deadline);
  if (stop) {
    const std::string why =
        interrupted_ ? AsInterrupted(fault.detail)
        : relaunch_failed_
            ? absl::StrCat("no worker could be started: ", fault.detail)
            : absl::StrCat("not run: the deadline passed while pinning a ",
                           FaultKindName(fault.kind), " (", fault.detail, ")");
    for (size_t i = begin; i < end; ++i) {
      out[i] = {.kind = ProgramOutcome::kNotRun, .fault = {fault.kind, why}};
    }
    return std::nullopt;
  }
  return fault;
}

}  // namespace ptxdiff
