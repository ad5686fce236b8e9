#include "client/worker_client.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/printable.h"
#include "common/process_tree.h"
#include "common/run_by_halves.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"
#include "protocol/frame_io.h"

namespace ptxdiff {
namespace {

constexpr size_t kStderrTailBytes = 2000;
// What is kept of a worker's stderr, of which only the tail is read.
constexpr size_t kStderrKeptBytes = size_t{1} << 20;

std::string Errno(absl::string_view what) {
  return absl::StrCat(what, ": ", std::strerror(errno));
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status))
    return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return absl::StrCat("killed by signal ", sig, " (SIG", name ? name : "?",
                        ")");
  }
  return "ended";
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace

absl::StatusOr<WorkerCommand> CommandForBackend(
    absl::string_view backend, absl::string_view worker_binary) {
  WorkerCommand command;
  if (absl::ConsumePrefix(&backend, kExecPrefix)) {
    if (backend.empty()) {
      return absl::InvalidArgumentError(
          "exec: needs a path, e.g. exec:/opt/my-worker");
    }
    command.argv = {std::string(backend)};
  } else if (absl::ConsumePrefix(&backend, kPtxCmdPrefix)) {
    // The template goes in HELLO (one key-value line): the worker runs it.
    // Checked here too, so that a command says what is wrong with it before
    // it makes a directory or starts a process.
    if (absl::Status s = CheckPtxCmdCommand(backend); !s.ok()) return s;
    command.argv = {std::string(worker_binary),
                    absl::StrCat("--backend=", kPtxCmdBackend)};
    command.hello_options.emplace_back("command", std::string(backend));
  } else if (FindBuiltinBackend(backend) != nullptr) {  // but ptx-cmd, above
    command.argv = {std::string(worker_binary),
                    absl::StrCat("--backend=", backend)};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown backend '", backend,
                     "'; use oracle, ptxas, cuda, or exec:/path/to/worker "
                     "(or ptx-cmd:'my-tool {ptx} {in} {out}' for a tool that "
                     "runs PTX modules)"));
  }
  return command;
}

absl::StatusOr<std::unique_ptr<WorkerClient>> WorkerClient::Start(
    WorkerCommand command) {
  if (command.argv.empty())
    return absl::InvalidArgumentError("empty worker command");
  signal(SIGPIPE, SIG_IGN);  // a dead worker shows up as EPIPE, not a signal
  std::unique_ptr<WorkerClient> client(new WorkerClient(std::move(command)));
  const absl::Time start_deadline = client->command_.start_deadline;
  PTXDIFF_RETURN_IF_ERROR(client->Launch(
      start_deadline > absl::Now() ? start_deadline : absl::InfiniteFuture()));
  return client;
}

WorkerClient::~WorkerClient() {
  if (pid_ > 0) {
    (void)WriteFrame(to_worker_, MessageType::kBye, "",
                     absl::Now() + absl::Seconds(1));
    CloseFd(to_worker_);
  }
  // Up to 1 s to exit on its own; then its group is killed (whatever it
  // left running) and it is reaped.
  Kill(absl::Seconds(1));
  stderr_trimmer_.reset();
  CloseFd(stderr_file_);
}

absl::Status WorkerClient::Launch(absl::Time no_later_than) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe2"));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return absl::InternalError(Errno("pipe2"));
  }
  stderr_trimmer_.reset();
  CloseFd(stderr_file_);
  stderr_file_ = memfd_create("ptxdiff-worker-stderr", MFD_CLOEXEC);
  if (stderr_file_ < 0) return absl::InternalError(Errno("memfd_create"));
  // A worker (or a child of it) that prints without end would fill memory.
  stderr_trimmer_ =
      std::make_unique<OutputTrimmer>(stderr_file_, kStderrKeptBytes);

  absl::StatusOr<pid_t> pid = StartProcess(
      command_.argv,
      // A worker whose client is killed ends too, busy or not (an idle one
      // would at its pipe's end, a busy or hung one only at its next read).
      // A Ctrl-C is its client's to act on: a campaign stops in order, and
      // a worker killed by it would fault the batches it is to finish.
      {.stdin_fd = in[0],
       .stdout_fd = out[1],
       .stderr_fd = stderr_file_,
       .dies_with_caller = true,
       .ignores_interrupt = true,
       // What it starts (a simulator run per request) ends with it.
       .own_group = true},
      "worker");
  close(in[0]), close(out[1]);
  to_worker_ = in[1], from_worker_ = out[0];
  if (!pid.ok()) {
    pid_ = -1;
    CloseFd(to_worker_), CloseFd(from_worker_);
    return pid.status();
  }
  pid_ = *pid;
  running_pid_ = pid_;
  fcntl(to_worker_, F_SETFL, O_NONBLOCK);
  fcntl(from_worker_, F_SETFL, O_NONBLOCK);

  const absl::Time started = absl::Now();
  const absl::Duration wait =
      std::max(command_.handshake_timeout > absl::ZeroDuration()
                   ? command_.handshake_timeout
                   : command_.timeout,
               kMinHandshakeTimeout);
  const absl::Time deadline = std::min(started + wait, no_later_than);
  // progress=1: this client reads PROGRESS frames (ReadReply).
  KeyValues hello = {
      {"protocol", absl::StrCat(kProtocolVersion)},
      {kProgressKey, "1"},
      {kReplyTimeoutKey, absl::StrCat(absl::ToInt64Milliseconds(
                             std::min(command_.timeout, absl::Hours(24))))}};
  hello.insert(hello.end(), command_.hello_options.begin(),
               command_.hello_options.end());
  absl::Status status = WriteFrame(to_worker_, MessageType::kHello,
                                   EncodeKeyValues(hello), deadline);
  absl::StatusOr<Frame> reply = status.ok() ? ReadFrame(from_worker_, deadline)
                                            : absl::StatusOr<Frame>(status);
  if (reply.ok() && reply->type == MessageType::kHelloReply) {
    auto identity = IdentityFromKeyValues(DecodeKeyValues(reply->payload));
    if (identity.ok()) {
      identity_ = *std::move(identity);
      supported_ = SupportedVariants(identity_);
      return absl::OkStatus();
    }
    status = identity.status();
  } else if (reply.ok()) {
    status = absl::FailedPreconditionError(
        reply->type == MessageType::kError
            ? reply->payload
            : absl::StrCat("expected HELLO_REPLY, got message type ",
                           static_cast<int>(reply->type)));
  } else if (absl::IsDeadlineExceeded(reply.status())) {
    // "No answer before the deadline" did not say which, nor what to do.
    status = absl::DeadlineExceededError(
        deadline < started + wait
            ? absl::StrCat(
                  kNoAnswerToHello, " before the run's deadline (--max-time), ",
                  absl::FormatDuration(absl::Trunc(absl::Now() - started,
                                                   absl::Milliseconds(100))),
                  " after it started: it hangs at start-up, or starts slower "
                  "than the run is long")
            : absl::StrCat(
                  kNoAnswerToHello, " within ", absl::FormatDuration(wait),
                  ": it hangs at start-up, or starts slower than that (the "
                  "wait is the reply timeout, --timeout, at least ",
                  absl::FormatDuration(kMinHandshakeTimeout), ")"));
  } else {
    status = reply.status();
  }
  // A worker whose output ended is usually exiting: its exit status says
  // why. One that did not answer in time is not.
  Kill(absl::IsDeadlineExceeded(status) ? absl::ZeroDuration()
                                        : absl::Seconds(2));
  std::string tail = StderrTail();
  // A worker that explains itself in ERROR usually says the same on stderr.
  if (absl::StrContains(tail, status.message())) tail.clear();
  return absl::FailedPreconditionError(absl::StrCat(
      "worker '", absl::StrJoin(command_.argv, " "),
      "' failed its handshake: ", status.message(), " (", exit_description_,
      ")", tail.empty() ? "" : "; its stderr: ", tail));
}

void WorkerClient::Kill(absl::Duration grace) {
  if (pid_ > 0) {
    // A worker whose output just ended is usually exiting: give it `grace`
    // to finish, so that its own exit status or signal can be reported.
    const absl::Time give_up = absl::Now() + grace;
    bool ended = ChildHasEnded(pid_);
    while (!ended && absl::Now() < give_up) {
      usleep(5000);
      ended = ChildHasEnded(pid_);
    }
    // Its group too, before it is reaped (while the group's id cannot be
    // another's): whatever it started, and left running, ends with it. A
    // worker still running (a hang) has its tool's run in a group of the
    // tool's own, perhaps a child of that in another (`timeout TOOL`): its
    // whole tree.
    if (!ended) KillProcessTree(pid_);
    kill(-pid_, SIGKILL);
    if (!ended) kill(pid_, SIGKILL);
    ForgetProcessGroup(pid_);
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_status_ = -1;
    if (ended) {
      exit_description_ = DescribeWaitStatus(status);  // it had ended itself
      if (WIFEXITED(status)) exit_status_ = WEXITSTATUS(status);
    } else {
      exit_description_ = "killed by the client";
    }
    running_pid_ = -1;
    pid_ = -1;
  }
  CloseFd(to_worker_);
  CloseFd(from_worker_);
}

std::string WorkerClient::StderrTail() const {
  struct stat st;
  if (stderr_file_ < 0 || fstat(stderr_file_, &st) != 0) return "";
  const off_t size = st.st_size;
  const off_t begin = size > static_cast<off_t>(kStderrTailBytes)
                          ? size - static_cast<off_t>(kStderrTailBytes)
                          : 0;
  std::string tail(size - begin, '\0');
  const ssize_t n = pread(stderr_file_, tail.data(), tail.size(), begin);
  tail.resize(n > 0 ? n : 0);
  // Quoted to the user: an exec: worker may print anything.
  return PrintableBytes(absl::StripAsciiWhitespace(tail));
}

namespace {

// A RUN of `part` naming only its own variants: a worker may do something
// for every variant a request names (compile it, or fault on it).
std::string EncodeOwnRequest(std::span<const absl::string_view> spellings,
                             std::span<const WireTuple> part) {
  std::vector<absl::string_view> own;
  absl::flat_hash_map<uint32_t, uint32_t> index;  // batch's -> part's
  std::vector<WireTuple> tuples(part.begin(), part.end());
  for (WireTuple& t : tuples) {
    auto [it, is_new] = index.try_emplace(t.variant_index, own.size());
    if (is_new) own.push_back(spellings[t.variant_index]);
    t.variant_index = it->second;
  }
  return EncodeRunRequest(own, tuples);
}

// True if result `i` of `reply` was not run (isolation's budget or the
// worker's was spent: a decline under kNotRunPrefix).
bool NotRunIn(const RunReply& reply, size_t i) {
  const TupleResult& r = reply.results[i];
  return r.kind == ResultKind::kDecline && r.message < reply.messages.size() &&
         absl::StartsWith(reply.messages[r.message], kNotRunPrefix);
}

// True if isolation left a tuple of `reply` not run (its budget was spent).
bool AnyNotRun(const absl::StatusOr<RunReply>& reply) {
  if (!reply.ok()) return false;
  for (size_t i = 0; i < reply->results.size(); ++i) {
    if (NotRunIn(*reply, i)) return true;
  }
  return false;
}

// Result `i` of a part's reply, as a result of `whole`: its message (a
// decline's or fault's reason, a value's note) interned there, each reply
// numbering its own.
TupleResult ResultOfPart(const RunReply& part, size_t i, RunReply& whole) {
  TupleResult r = part.results[i];
  if (r.kind != ResultKind::kValue || r.has_note) {
    r.message = whole.InternMessage(part.messages[r.message]);
  }
  return r;
}

}  // namespace

absl::Duration WorkerClient::LeafTimeout() const {
  if (!fastest_reply_seconds_) return command_.timeout;
  const double expected = *fastest_reply_seconds_ + reply_seconds_per_tuple_;
  return std::min(command_.timeout,
                  std::max(absl::Seconds(2), absl::Seconds(10 * expected)));
}

absl::Duration WorkerClient::IsolationTimeout(size_t n) const {
  if (!fastest_reply_seconds_) return command_.timeout;
  const double expected =
      *fastest_reply_seconds_ + reply_seconds_per_tuple_ * n;
  // A short floor: a part that times out is split, not blamed (a single
  // tuple gets the full timeout).
  return std::min(command_.timeout,
                  absl::Seconds(4 * expected) + absl::Milliseconds(250));
}

std::string WorkerClient::NotRunReason(const BackendFault& fault,
                                       absl::Time deadline,
                                       absl::string_view no_worker) const {
  const std::string isolating =
      absl::StrCat("isolating a ", FaultKindName(fault.kind), " of the worker");
  std::string why;
  if (!no_worker.empty()) {
    why = absl::StrCat(isolating, " stopped: ", no_worker);
  } else if (interrupted_) {
    why =
        absl::StrCat(isolating, " was cut short: the client was told to stop");
  } else if (deadline == command_.isolation_deadline) {
    why = absl::StrCat(isolating, " reached the campaign's deadline");
  } else {
    why = absl::StrCat(isolating, " took the whole budget (",
                       absl::FormatDuration(command_.isolation_budget), ")");
  }
  return absl::StrCat(kNotRunPrefix, why, ": ", fault.detail);
}

RunReply WorkerClient::Isolate(std::span<const absl::string_view> spellings,
                               std::span<const WireTuple> sent,
                               const BackendFault& fault) {
  RunReply reply;
  reply.results.assign(sent.size(), TupleResult{});
  const absl::Time deadline = std::min(absl::Now() + command_.isolation_budget,
                                       command_.isolation_deadline);
  // Set when no worker could be started to go on: the parts left are not
  // run, and none is blamed.
  std::string no_worker;
  const auto not_run = [&](size_t begin, size_t end) {
    const uint32_t message =
        reply.InternMessage(NotRunReason(fault, deadline, no_worker));
    for (size_t i = begin; i < end; ++i) {
      reply.results[i] = {.kind = ResultKind::kDecline,
                          .code = DeclineCode::kOther,
                          .message = message};
    }
  };
  // A part [begin, end) of `sent`, run by halves down to the tuples that
  // fault alone (one culprit is found in log2(n) runs).
  const auto run_part = [&](size_t begin,
                            size_t end) -> absl::StatusOr<PartEnd> {
    const std::span<const WireTuple> part = sent.subspan(begin, end - begin);
    if (absl::Now() >= deadline || interrupted_ || !no_worker.empty()) {
      not_run(begin, end);
      return PartEnd::kDone;
    }
    // A single tuple gets a longer timeout: a hang must be one, not a
    // loaded machine's slow reply.
    const absl::Duration wanted =
        part.size() == 1 ? LeafTimeout() : IsolationTimeout(part.size());
    const absl::Duration left = deadline - absl::Now();
    absl::StatusOr<RunReply> got = RunOnce(EncodeOwnRequest(spellings, part),
                                           part.size(), std::min(wanted, left));
    if (got.ok()) {
      for (size_t i = 0; i < part.size(); ++i) {
        reply.results[begin + i] = ResultOfPart(*got, i, reply);
      }
      return PartEnd::kDone;
    }
    if (relaunch_failed_) {  // no worker to run the part on: not its fault
      no_worker = std::string(got.status().message());
      not_run(begin, end);
      return PartEnd::kDone;
    }
    const BackendFault part_fault = Classify(got.status());
    if (part_fault.kind == FaultKind::kEnvironment) {  // Run says it
      environment_fault_ = part_fault;
      no_worker = part_fault.detail;
      not_run(begin, end);
      return PartEnd::kDone;
    }
    // A run cut short (by Interrupt's kill, or by a timeout shortened to
    // the deadline) says nothing about its tuples: not run, not blamed.
    if (interrupted_ ||
        (part_fault.kind == FaultKind::kHang && left < wanted)) {
      not_run(begin, end);
      return PartEnd::kDone;
    }
    if (part.size() == 1) {
      // The tuple alone faults the worker: the implementation's fault.
      reply.results[begin] = {
          .kind = ResultKind::kFault,
          .message = reply.InternMessage(absl::StrCat(
              WorkerFaultSaid(part_fault.kind), ": ", part_fault.detail)),
          .fault = part_fault.kind == FaultKind::kHang ? CaseFault::kHang
                                                       : CaseFault::kCrash};
      return PartEnd::kDone;
    }
    return PartEnd::kHalve;
  };
  // The first tuple alone goes first: unless it is a culprit, it prices a
  // run for the timeouts. No part fails: a fault is a result.
  const size_t half = sent.size() / 2;
  RunByHalves(0, 1, run_part).IgnoreError();
  RunByHalves(1, half, run_part).IgnoreError();
  RunByHalves(half, sent.size(), run_part).IgnoreError();
  return reply;
}

absl::Duration WorkerClient::RecheckTimeout(size_t n) const {
  // 4 times what a batch of n has cost per tuple (the largest reply's rate,
  // slow on a loaded machine), where that is longer.
  const absl::Duration expected =
      largest_reply_tuples_ == 0
          ? absl::ZeroDuration()
          : absl::Seconds(4 * largest_reply_seconds_ / largest_reply_tuples_ *
                          static_cast<double>(n));
  return std::min(
      std::max({4 * command_.timeout, kMinHandshakeTimeout, expected}),
      std::max(command_.timeout, absl::Minutes(2)));
}

absl::StatusOr<RunReply> WorkerClient::RunOnceGivenLonger(
    absl::string_view payload, size_t num_tuples, absl::Duration timeout) {
  // A worker told the longer timeout in HELLO, and given it to start: the
  // restarts of isolation may have failed their handshake on a loaded
  // machine, and a ptxas worker budgets a batch by the reply timeout.
  Kill();
  const absl::Duration own = command_.timeout;
  command_.timeout = timeout;
  absl::StatusOr<RunReply> got = RunOnce(payload, num_tuples, timeout);
  command_.timeout = own;
  Kill();  // the next batch's worker budgets by the client's own timeout
  return got;
}

bool WorkerClient::AnsweredGivenLonger(
    std::span<const absl::string_view> spellings,
    std::span<const WireTuple> sent, const BackendFault& fault,
    RunReply& reply) {
  // A crash is no slowness; a run interrupted or past the campaign's end
  // is not run again.
  if (fault.kind != FaultKind::kHang || interrupted_) return false;
  const absl::Duration until_end = command_.isolation_deadline - absl::Now();
  if (until_end <= absl::ZeroDuration()) return false;
  std::vector<size_t> left;
  std::vector<WireTuple> part;
  for (size_t i = 0; i < reply.results.size(); ++i) {
    if (!NotRunIn(reply, i)) continue;
    left.push_back(i);
    part.push_back(sent[i]);
  }
  if (left.empty()) return false;
  const absl::Duration wanted = RecheckTimeout(part.size());
  const absl::Duration timeout = std::min(wanted, until_end);
  absl::StatusOr<RunReply> got = RunOnceGivenLonger(
      EncodeOwnRequest(spellings, part), part.size(), timeout);
  if (got.ok()) {
    for (size_t k = 0; k < left.size(); ++k) {
      reply.results[left[k]] = ResultOfPart(*got, k, reply);
    }
    ++answered_given_longer_;
    return true;
  }
  const BackendFault again = Classify(got.status());
  if (again.kind == FaultKind::kEnvironment) {
    environment_fault_ = again;
    return false;
  }
  const std::string seen = absl::StrCat(
      "; run again on a fresh worker given ", absl::FormatDuration(timeout),
      timeout < wanted ? " (the campaign's end was near)" : "", ": ",
      interrupted_ ? "cut short by the stop" : again.detail);
  for (size_t i : left) {
    reply.results[i].message = reply.InternMessage(
        absl::StrCat(reply.messages[reply.results[i].message], seen));
  }
  return false;
}

void WorkerClient::Interrupt() {
  interrupted_ = true;
  const pid_t pid = running_pid_.load();
  if (pid <= 0) return;
  KillProcessTree(pid);  // its tool's run too, whatever group it is in
  kill(pid, SIGKILL);
}

absl::StatusOr<RunReply> WorkerClient::RunOnce(
    absl::string_view payload, size_t num_tuples,
    std::optional<absl::Duration> timeout) {
  const absl::Time start = absl::Now();
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::string reply,
      Exchange(MessageType::kRun, payload, MessageType::kResults,
               timeout.value_or(command_.timeout)));
  const double took = absl::ToDoubleSeconds(absl::Now() - start);
  fastest_reply_seconds_ =
      std::min(fastest_reply_seconds_.value_or(took), took);
  reply_seconds_per_tuple_ =
      std::max(reply_seconds_per_tuple_, took / num_tuples);
  if (num_tuples >= largest_reply_tuples_) {
    largest_reply_tuples_ = num_tuples;
    largest_reply_seconds_ = took;
  }
  return DecodeRunReply(reply, num_tuples);
}

std::string WorkerClient::AsInterrupted(absl::string_view detail) {
  if (absl::StartsWith(detail, kInterrupted)) return std::string(detail);
  return absl::StrCat(kInterrupted, ": ", detail);
}

absl::StatusOr<Frame> WorkerClient::ReadReply(absl::Time deadline,
                                              absl::Duration silence) {
  while (true) {
    const absl::Time until = std::min(deadline, absl::Now() + silence);
    absl::StatusOr<Frame> frame = ReadFrame(from_worker_, until);
    if (absl::IsDeadlineExceeded(frame.status()) && until < deadline)
      fell_silent_for_ = silence;
    if (!frame.ok() || frame->type != MessageType::kProgress) return frame;
  }
}

absl::StatusOr<std::string> WorkerClient::Exchange(MessageType request_type,
                                                   absl::string_view payload,
                                                   MessageType reply_type,
                                                   absl::Duration timeout,
                                                   absl::Duration silence) {
  if (interrupted_) {
    return absl::FailedPreconditionError(
        absl::StrCat(kInterrupted, ": the client was told to stop"));
  }
  relaunch_failed_ = false;
  if (pid_ < 0) {
    if (absl::Status launched = Launch(); !launched.ok()) {
      relaunch_failed_ = true;
      return launched;
    }
    ++restarts_;
  }
  last_timeout_ = timeout;
  fell_silent_for_.reset();
  const absl::Time deadline = absl::Now() + last_timeout_;
  absl::Status written =
      WriteFrame(to_worker_, request_type, payload, deadline);
  absl::StatusOr<Frame> read =
      written.ok() ? ReadReply(deadline, silence) : written;
  // Also between the trimmer's looks: what it printed for this request.
  TrimOutputFile(stderr_file_, kStderrKeptBytes);
  if (absl::IsCancelled(read.status())) {
    // This process was told to stop (Ctrl-C): as Interrupt() from a thread.
    Interrupt();
    return absl::FailedPreconditionError(
        absl::StrCat(kInterrupted, ": ", read.status().message()));
  }
  PTXDIFF_RETURN_IF_ERROR(read.status());
  Frame& frame = *read;
  if (frame.type == MessageType::kError) {  // Aborted: kErrorAnswer
    absl::string_view said = frame.payload;
    if (absl::ConsumePrefix(&said, kEnvironmentErrorPrefix)) {
      return EnvironmentFailure(
          absl::AbortedError(absl::StrCat(kEnvironmentFailureSaid, said)));
    }
    return absl::AbortedError(
        absl::StrCat("worker answered ERROR: ", frame.payload));
  }
  if (frame.type != reply_type) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected message type ", static_cast<int>(reply_type),
                     ", got ", static_cast<int>(frame.type)));
  }
  return std::move(frame.payload);
}

BackendFault WorkerClient::Classify(const absl::Status& status) {
  // The worker lives on, and is no more at fault than the implementation.
  if (IsEnvironmentFailure(status))
    return {FaultKind::kEnvironment, std::string(status.message())};
  FaultKind kind = absl::IsDeadlineExceeded(status) ? FaultKind::kHang
                   : absl::IsUnavailable(status) || absl::IsNotFound(status) ||
                           absl::IsFailedPrecondition(status)
                       ? FaultKind::kCrash
                       : FaultKind::kProtocol;
  Kill(kind == FaultKind::kCrash ? absl::Seconds(2) : absl::ZeroDuration());
  std::string detail = std::string(status.message());
  if (kind == FaultKind::kHang && fell_silent_for_) {
    detail = absl::StrCat("no word from it for ",
                          absl::FormatDuration(*fell_silent_for_),
                          " while it answered (a worker at work says so "
                          "every second or so)");
  } else if (kind == FaultKind::kHang) {
    detail =
        absl::StrCat("no reply within ", absl::FormatDuration(last_timeout_));
  } else if (!absl::IsFailedPrecondition(status)) {
    absl::StrAppend(&detail, " (", exit_description_, ")");
  }
  const std::string tail = StderrTail();
  if (!tail.empty() && !absl::IsFailedPrecondition(status)) {
    absl::StrAppend(&detail, "; worker stderr: ", tail);
  }
  // ptxdiff-worker exits 5 on a lost context (a device fault: the
  // implementation under test broke, not the worker) and 6 on a kernel past
  // its timeout (the implementation hangs, as a silent worker does;
  // backends/cuda/cuda_backend.h). Read after the detail, which is the
  // worker's exit and its own line either way.
  if (kind == FaultKind::kCrash && exit_status_ == kWorkerExitDeviceFault)
    kind = FaultKind::kDeviceFault;
  if (kind == FaultKind::kCrash && exit_status_ == kWorkerExitKernelTimeout)
    kind = FaultKind::kHang;
  return {kind, detail};
}

bool WorkerClient::Supports(const Variant& v) const {
  const int index = VariantIndex(v);
  // An illegal variant is asked about the supports lines themselves.
  return index >= 0 ? supported_[index] : identity_.Supports(v);
}

bool WorkerClient::SupportsForm(const Tuple& t) const {
  return t.runtime == 0 || identity_.forms;
}

void WorkerClient::DeclineUnsent(std::span<const Tuple> tuples,
                                 const std::vector<int64_t>& sent_index,
                                 const RunReply& reply,
                                 BatchOutcome& outcome) const {
  // Message indices of the two reasons, appended once used.
  std::optional<uint32_t> variant_message, form_message;
  auto message = [&](std::optional<uint32_t>& index, std::string text) {
    if (!index) {
      index = outcome.messages.size();
      outcome.messages.push_back(std::move(text));
    }
    return *index;
  };
  outcome.results.reserve(tuples.size());
  for (size_t i = 0; i < tuples.size(); ++i) {
    if (sent_index[i] >= 0) {
      outcome.results.push_back(reply.results[sent_index[i]]);
    } else if (!Supports(tuples[i].variant)) {
      outcome.results.push_back(
          {.kind = ResultKind::kDecline,
           .code = DeclineCode::kUnsupportedVariant,
           .message = message(variant_message,
                              absl::StrCat("variant not supported by ",
                                           identity_.Describe()))});
    } else {
      outcome.results.push_back(
          {.kind = ResultKind::kDecline,
           .code = DeclineCode::kOperandForm,
           .message = message(form_message,
                              absl::StrCat("runtime operands are not run by ",
                                           identity_.Describe(),
                                           " (it does not say forms=1)"))});
    }
  }
}

BatchOutcome WorkerClient::Run(std::span<const Tuple> tuples) {
  BatchOutcome outcome;
  // Tuples of supported variants go to the worker; the rest are declined.
  // Spellings are views of the spelling table (an illegal variant's, asked
  // about the supports lines, is composed into `composed`).
  std::vector<absl::string_view> spellings;
  std::deque<std::string> composed;
  std::vector<WireTuple> sent;
  sent.reserve(tuples.size());
  std::vector<int64_t> sent_index(tuples.size(), -1);
  // Per variant: its index in `spellings`, or -1 if unsupported.
  absl::flat_hash_map<Variant, int64_t> variant_index;
  for (size_t i = 0; i < tuples.size(); ++i) {
    auto [it, inserted] = variant_index.try_emplace(tuples[i].variant, -1);
    if (inserted && Supports(tuples[i].variant)) {
      it->second = spellings.size();
      absl::string_view spelling = SpellingInTable(tuples[i].variant);
      if (spelling.empty()) {
        spelling = composed.emplace_back(SpellWithoutTables(tuples[i].variant));
      }
      spellings.push_back(spelling);
    }
    if (it->second < 0 || !SupportsForm(tuples[i])) continue;
    sent_index[i] = sent.size();
    sent.push_back({static_cast<uint32_t>(it->second), tuples[i].operands,
                    tuples[i].runtime});
  }
  RunReply reply;
  if (!sent.empty()) {
    const std::string payload = EncodeRunRequest(spellings, sent);
    absl::StatusOr<RunReply> attempt = RunOnce(payload, sent.size());
    if (!attempt.ok()) {
      const BackendFault first = Classify(attempt.status());
      if (first.kind == FaultKind::kEnvironment) {  // no retry can mend it
        outcome.fault = first;
        return outcome;
      }
      if (interrupted_) {  // no retry: the caller is stopping
        outcome.fault = first;
        outcome.fault->detail = AsInterrupted(first.detail);
        return outcome;
      }
      if (command_.isolate_faults && sent.size() > 1 &&
          first.kind != FaultKind::kDeviceFault) {
        attempt = Isolate(spellings, sent, first);  // its halves are the retry
        if (environment_fault_) {  // met while isolating: nothing is judged
          outcome.fault = *std::exchange(environment_fault_, std::nullopt);
          return outcome;
        }
        // Not narrowed: perhaps not a hang, but a worker slower than
        // --timeout on a loaded machine; given longer, it may answer.
        if (AnyNotRun(*attempt) &&
            !AnsweredGivenLonger(spellings, sent, first, *attempt)) {
          if (environment_fault_) {
            outcome.fault = *std::exchange(environment_fault_, std::nullopt);
            return outcome;
          }
          outcome.unisolated = first;
        }
      } else {
        attempt = RunOnce(payload, sent.size());  // on a fresh worker
      }
      if (!attempt.ok()) {
        outcome.fault = Classify(attempt.status());
        if (outcome.fault->kind == FaultKind::kEnvironment) return outcome;
        outcome.fault->detail = absl::StrCat(
            outcome.fault->detail,
            "; first attempt: ", FaultKindName(first.kind), ": ", first.detail);
        return outcome;
      }
    }
    reply = *std::move(attempt);
  }
  outcome.messages = std::move(reply.messages);
  DeclineUnsent(tuples, sent_index, reply, outcome);
  return outcome;
}

}  // namespace ptxdiff
