// The harness side of the worker protocol: starts a worker process, keeps it
// alive across batches, and survives it.
//
// Run() never throws a fault at the caller: when the worker crashes, hangs,
// or answers garbage (or the wrong number of results), the client kills it,
// starts a new one, and retries the batch once; if the retry fails too, the
// batch comes back with a BackendFault naming the kind and what was seen, and
// the next batch goes to a fresh worker. The caller files that fault as a
// finding with the batch's tuples; nothing already found is lost.

#ifndef PTXDIFF_CLIENT_WORKER_CLIENT_H_
#define PTXDIFF_CLIENT_WORKER_CLIENT_H_

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "isa/tuple.h"
#include "isa/variant.h"
#include "protocol/fault_kind.h"
#include "protocol/frame_io.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// How to start a worker and talk to it.
struct WorkerCommand {
  std::vector<std::string> argv;  // argv[0] is the executable's path
  KeyValues hello_options;        // sent in HELLO, e.g. {"arch", "sm_90"}
  // Per reply, and per handshake but never less than kMinHandshakeTimeout
  // there: a short timeout is set to catch a tuple's hang quickly, and a
  // worker's start-up on a loaded machine is not one.
  absl::Duration timeout = absl::Seconds(60);
  // The handshake's wait where a reply's is longer than a start-up should
  // take (a program worker's reply holds a batch of compiles); zero: the
  // same as `timeout`. Never less than kMinHandshakeTimeout.
  absl::Duration handshake_timeout = absl::ZeroDuration();
  // The first handshake (Start) ends here at the latest, whatever `timeout`
  // allows: a campaign's end (--max-time), which a worker that hangs at
  // start-up must not hold the run past. Not if it has passed already (a
  // run that started late, a test's): the worker then starts as usual and
  // the run ends at once. A restart's handshake is not held to it: failing
  // that one would make a fault of the batch.
  absl::Time start_deadline = absl::InfiniteFuture();
  // A worker that says progress=1 and is silent this long while it answers
  // a RUN_PROGRAMS hangs, whatever is left of the batch's time limit (a
  // stopped worker would otherwise be waited for until a campaign's end).
  // Zero: no such limit. Longer than one run of the tool or ptxas must be:
  // the worker says it is at work after each.
  absl::Duration silence_timeout = absl::ZeroDuration();
  // When a batch faults the worker twice, split it until the tuples that
  // fault it are alone: each comes back as a ResultKind::kFault result (a
  // finding) and every other tuple with its answer, instead of one
  // BackendFault for the whole batch. At most `isolation_budget` is spent
  // on it, and it ends at `isolation_deadline` (a campaign's end) whatever
  // is left of the budget; tuples not settled by then are declined, saying
  // why, and the batch's fault comes back as BatchOutcome::unisolated. The
  // campaign's senders isolate; one-off runs (minimize, repro) keep the
  // batch fault, which IsolateFault bisects.
  bool isolate_faults = false;
  absl::Duration isolation_budget = absl::Seconds(30);
  absl::Time isolation_deadline = absl::InfiniteFuture();
};

inline constexpr absl::Duration kMinHandshakeTimeout = absl::Seconds(10);
// How a handshake that timed out is said (WorkerClient::Start's error): a
// worker that starts slowly, not one that cannot start.
inline constexpr char kNoAnswerToHello[] = "no answer to HELLO";
// How a worker's environment ERROR (protocol.h) is said: a BackendFault of
// kind kEnvironment, never a finding; the command stops on it.
inline constexpr char kEnvironmentFailureSaid[] =
    "the harness's own temporary files failed (nothing is filed for it: "
    "not the implementation's fault): ";

// The command for a backend name: "oracle" or "ptxas" run `worker_binary
// --backend=NAME`; "exec:/path/to/worker" runs that executable;
// "ptx-cmd:TEMPLATE" runs `worker_binary --backend=ptx-cmd` with the HELLO
// option command=TEMPLATE (docs/kernel-abi.md).
absl::StatusOr<WorkerCommand> CommandForBackend(
    absl::string_view backend, absl::string_view worker_binary);

struct BackendFault {
  FaultKind kind;
  std::string detail;  // exit status or signal, stderr tail, what was wrong
};

struct BatchOutcome {
  // One result per tuple when `fault` is empty; empty otherwise.
  std::vector<TupleResult> results;
  // Decline reasons and values' notes, by TupleResult::message.
  std::vector<std::string> messages;
  // Of kind kEnvironment when the harness's own files failed (the batch was
  // not run; no retry): the caller stops, filing nothing.
  std::optional<BackendFault> fault;
  // The batch faulted the worker and isolating it (isolate_faults) ended
  // before every tuple was settled (its budget or deadline, or Interrupt):
  // this fault, whose cause is among the tuples declined with kNotRunPrefix.
  std::optional<BackendFault> unisolated;

  // The note of result `i` (how the backend obtained its value), or "".
  absl::string_view NoteOf(size_t i) const {
    return results[i].has_note ? messages[results[i].message]
                               : absl::string_view();
  }
};

// Whether the batch was not run because the harness's own temporary files
// failed (FaultKind::kEnvironment): no verdict, and the command stops.
inline bool EnvironmentFailed(const BatchOutcome& outcome) {
  return outcome.fault && outcome.fault->kind == FaultKind::kEnvironment;
}

// What became of one program of a RUN_PROGRAMS batch (RunPrograms).
struct ProgramOutcome {
  enum Kind : uint8_t {
    kChecked,  // `check` holds its check's bytes (program/program_wire.h)
    kFaulted,  // the worker crashed or hung on this program alone: `fault`
    kNotRun,   // not run: the batch's deadline passed, or the client was
               // interrupted, while faults were pinned; `fault` says why
    kError,    // the worker answered ERROR (it could not take the batch: a
               // failure of the harness, not of the implementation):
               // `fault.detail` is its message
  } kind = kNotRun;
  std::string check;
  BackendFault fault;
};

class WorkerClient {
 public:
  // Starts the worker and completes the handshake. Fails with a clear message
  // when the executable cannot be started or does not complete the handshake
  // (including the worker's own stderr, e.g. "ptxas not found").
  static absl::StatusOr<std::unique_ptr<WorkerClient>> Start(
      WorkerCommand command);

  ~WorkerClient();  // BYE, then a short grace period, then SIGKILL
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  const WorkerIdentity& identity() const { return identity_; }
  // identity().Supports(v), answered from a table read at the handshake.
  bool Supports(const Variant& v) const;
  // That table, by VariantIndex (SupportedVariants).
  const std::vector<bool>& supported_variants() const { return supported_; }

  // Runs a batch (1 to kMaxTuplesPerBatch tuples). Tuples of variants the
  // worker does not support, and tuples with runtime sources where it does
  // not run operand forms (WorkerIdentity::forms), are declined here without
  // being sent.
  BatchOutcome Run(std::span<const Tuple> tuples);

  // Runs a batch of program cases (identity().programs; the caller checks).
  // A batch that faults the worker is sent again on a fresh one, then
  // halved until each program that faults it is alone (kFaulted); the
  // others are answered. Halving ends at the request's time limit: what it
  // leaves is kNotRun. One outcome per program, in order.
  std::vector<ProgramOutcome> RunPrograms(const ProgramRunRequest& request);

  // The worker process running now, or -1; from any thread.
  pid_t worker_pid() const { return running_pid_.load(); }

  // Workers started after the first (each fault restarts one); from any
  // thread.
  int restarts() const { return restarts_.load(std::memory_order_relaxed); }

  // Batches whose hang isolation could not narrow, answered when run again
  // given RecheckTimeout (a worker only slower than the timeout: nothing is
  // blamed); from any thread.
  int answered_given_longer() const {
    return answered_given_longer_.load(std::memory_order_relaxed);
  }

  // From another thread: ends the batch in flight at once (SIGKILL to the
  // worker) and every later Run, which return a kCrash fault whose detail
  // starts with kInterrupted. For a campaign that must stop by its deadline
  // whatever the backend is doing; the outcome is not a finding.
  void Interrupt();
  bool interrupted() const { return interrupted_.load(); }
  static constexpr char kInterrupted[] = "interrupted";
  // `detail` under kInterrupted, once (an exchange refused after the stop
  // already says it: "interrupted: interrupted: ..." was seen).
  static std::string AsInterrupted(absl::string_view detail);

 private:
  explicit WorkerClient(WorkerCommand command) : command_(std::move(command)) {}

  // Spawn + handshake, which ends by `no_later_than` at the latest.
  absl::Status Launch(absl::Time no_later_than = absl::InfiniteFuture());
  // Reaps the worker, waiting up to `grace` for it to exit on its own before
  // SIGKILL; records how it ended.
  void Kill(absl::Duration grace = absl::ZeroDuration());
  // Sends one encoded RUN of `num_tuples` tuples and reads its reply
  // within `timeout` (command_.timeout by default), starting a worker
  // first if there is none (relaunch_failed_ says if that failed).
  absl::StatusOr<RunReply> RunOnce(absl::string_view payload, size_t num_tuples,
                                   std::optional<absl::Duration> timeout = {});
  // Sends one encoded `request_type` frame and reads the reply, which must
  // be `reply_type` (ERROR and anything else are errors), within `timeout`,
  // starting a worker first if there is none (relaunch_failed_ says if
  // that failed).
  absl::StatusOr<std::string> Exchange(
      MessageType request_type, absl::string_view payload,
      MessageType reply_type, absl::Duration timeout,
      absl::Duration silence = absl::InfiniteDuration());
  // The reply frame, read past the PROGRESS frames before it: each gives
  // the worker `silence` more, never past `deadline`.
  absl::StatusOr<Frame> ReadReply(absl::Time deadline, absl::Duration silence);
  // One RUN_PROGRAMS of `request`'s programs [begin, end) into `out`: the
  // fault of a run that faulted the worker, its outcomes left for
  // RunPrograms to halve or blame; nullopt when they are recorded (checked,
  // an ERROR, or not run past the deadline or a stop).
  std::optional<BackendFault> RunProgramPart(const ProgramRunRequest& request,
                                             size_t begin, size_t end,
                                             absl::Time deadline,
                                             std::vector<ProgramOutcome>& out);
  // Answers `sent` (which faulted the worker as `fault`) by halves, down to
  // the tuples that fault it alone (isolate_faults).
  RunReply Isolate(std::span<const absl::string_view> spellings,
                   std::span<const WireTuple> sent, const BackendFault& fault);
  // Why isolation that ends at `deadline` (its budget's end, or
  // command_.isolation_deadline if sooner) leaves tuples not run now;
  // `no_worker`, if set, is why no worker could be started to go on.
  std::string NotRunReason(const BackendFault& fault, absl::Time deadline,
                           absl::string_view no_worker) const;
  // The reply timeout of a run of `n` tuples while isolating: a few times
  // what replies have cost so far, never more than command_.timeout.
  absl::Duration IsolationTimeout(size_t n) const;
  // The timeout of one tuple alone while isolating: 10x its expected time,
  // at least 2 s, never more than command_.timeout.
  absl::Duration LeafTimeout() const;
  // What a batch's hang isolation left not run (in `reply`) is run once more
  // on a fresh worker given RecheckTimeout, which a worker only slow on a
  // loaded machine meets. True, and its answers in `reply`, if it answered;
  // otherwise the not-run reasons say what the second run saw.
  bool AnsweredGivenLonger(std::span<const absl::string_view> spellings,
                           std::span<const WireTuple> sent,
                           const BackendFault& fault, RunReply& reply);
  // For a run again of `n` tuples: 4 times command_.timeout, at least
  // kMinHandshakeTimeout and 4 times what n tuples of the largest reply so
  // far cost, at most two minutes (or command_.timeout, if longer).
  absl::Duration RecheckTimeout(size_t n) const;
  // RunOnce on a fresh worker whose reply and handshake get `timeout` (and
  // which is told it, in HELLO, for a budget of its own); the next run
  // starts a worker told command_.timeout again.
  absl::StatusOr<RunReply> RunOnceGivenLonger(absl::string_view payload,
                                              size_t num_tuples,
                                              absl::Duration timeout);
  std::string StderrTail() const;
  BackendFault Classify(const absl::Status& status);
  // True if the worker runs `t`'s operand form (all immediates, or it said
  // forms=1).
  bool SupportsForm(const Tuple& t) const;
  // The results of `tuples` into `outcome`: the reply's for those sent
  // (sent_index >= 0), a decline naming why for the others.
  void DeclineUnsent(std::span<const Tuple> tuples,
                     const std::vector<int64_t>& sent_index,
                     const RunReply& reply, BatchOutcome& outcome) const;

  WorkerCommand command_;
  WorkerIdentity identity_;
  // identity_.Supports by VariantIndex (SupportedVariants), read once per
  // handshake: Run asks about every variant of every batch.
  std::vector<bool> supported_;
  pid_t pid_ = -1;
  std::atomic<pid_t> running_pid_{-1};  // pid_, for Interrupt
  std::atomic<bool> interrupted_{false};
  int to_worker_ = -1;
  int from_worker_ = -1;
  int stderr_file_ = -1;          // the worker's stderr, kept for fault reports
  std::unique_ptr<OutputTrimmer> stderr_trimmer_;  // of stderr_file_
  std::string exit_description_;  // "exit status 3", "signal 11 (SIGSEGV)"
  int exit_status_ = -1;          // the worker's exit status, if it exited
  std::atomic<int> restarts_{0};
  std::atomic<int> answered_given_longer_{0};
  bool relaunch_failed_ = false;  // the last RunOnce could not start a worker
  // The slowest reply so far per tuple, and the fastest reply: the cost
  // model of IsolationTimeout.
  double reply_seconds_per_tuple_ = 0;
  // The reply of the most tuples so far (the latest of that size): a
  // batch's cost per tuple, which a small reply's overhead hides
  // (RecheckTimeout).
  size_t largest_reply_tuples_ = 0;
  double largest_reply_seconds_ = 0;
  absl::Duration last_timeout_;  // of the last RunOnce, for its hang's detail
  // Set when the last reply was given up on for its silence (ReadReply).
  std::optional<absl::Duration> fell_silent_for_;
  std::optional<double> fastest_reply_seconds_;
  // An environment failure met while isolating a batch's fault: the batch's.
  std::optional<BackendFault> environment_fault_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CLIENT_WORKER_CLIENT_H_
