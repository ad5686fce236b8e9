// ptxdiff-worker: the persistent worker process (docs/worker-protocol.md).
//
//   ptxdiff-worker --backend=NAME
//
// Speaks the protocol on stdin/stdout; diagnostics go to stderr. Before
// anything is loaded, the channel moves off fd 1, which then goes to stderr
// too (protocol/stdout_channel.h): what a driver library prints cannot
// corrupt it. Exit codes: 0 after BYE or end of input, 2 bad command line,
// 3 the backend cannot start here, 4 a protocol error on stdin.
//
//   ptxdiff-worker --backend=cuda --run-module PTX IN OUT N [KEY=VALUE...]
//
// Runs one module on the GPU and exits (backends/cuda/module_run.h):
// the program backend's runs, one process each.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backends/backend.h"
#include "common/batch_heap.h"
#include "common/call_within.h"
#include "common/files.h"
#include "common/progress.h"
#include "protocol/backend_names.h"
#include "protocol/frame_io.h"
#include "protocol/stdout_channel.h"
#include "worker/program_service.h"
#if defined(PTXDIFF_HAVE_CUDA_BACKEND)
#include "backends/cuda/module_run.h"
#endif

namespace ptxdiff {
namespace {

int Fatal(int code, absl::string_view message) {
  std::fprintf(stderr, "ptxdiff-worker: %.*s\n",
               static_cast<int>(message.size()), message.data());
  return code;
}

// The ERROR that says `failed`: the harness's own failure on this machine
// (its temporary files) begins with kEnvironmentErrorPrefix and names
// TMPDIR, for the client to stop instead of blaming the implementation.
std::string ErrorPayload(const absl::Status& failed) {
  if (!IsEnvironmentFailure(failed)) return failed.ToString();
  return absl::StrCat(kEnvironmentErrorPrefix, failed.message(),
                      " (the worker's temporary files, under TMPDIR ",
                      TempRoot(), ")");
}

// Answers one RUN frame on `frames`: RESULTS, or ERROR when it cannot be
// processed.
absl::Status Answer(Backend& backend, const Frame& frame, int frames) {
  auto request = DecodeRunRequest(frame.payload);
  if (!request.ok()) {
    return WriteFrame(
        frames, MessageType::kError,
        absl::StrCat("malformed RUN: ", request.status().message()));
  }
  RunReply reply;
  const absl::Status run = backend.Run(*request, reply);
  if (!run.ok()) {
    return WriteFrame(frames, MessageType::kError, ErrorPayload(run));
  }
  return WriteFrame(frames, MessageType::kResults, EncodeRunReply(reply));
}

// How often at most a PROGRESS frame goes out while a batch is answered.
constexpr absl::Duration kProgressEvery = absl::Seconds(1);

// `programs`'s answer to `payload`, with PROGRESS frames on `frames` while
// it works (none where `frames` is -1: the client did not ask for them).
// They stop before the answer goes out.
absl::StatusOr<std::string> AnswerSayingProgress(ProgramService& programs,
                                                 absl::string_view payload,
                                                 int frames) {
  if (frames < 0) return programs.Answer(payload);
  const ScopedProgressListener listener(
      [frames] { (void)WriteFrame(frames, MessageType::kProgress, ""); },
      kProgressEvery);
  return programs.Answer(payload);
}

// Answers one RUN_PROGRAMS frame on `frames`: PROGRAM_RESULTS, or ERROR when
// it cannot be processed (or the backend runs no programs: the client sends
// none then).
absl::Status AnswerPrograms(ProgramService* programs, const Frame& frame,
                            int frames, bool say_progress) {
  if (programs == nullptr) {
    return WriteFrame(frames, MessageType::kError,
                      "this backend runs no programs (HELLO_REPLY has no "
                      "programs=1)");
  }
  absl::StatusOr<std::string> reply = AnswerSayingProgress(
      *programs, frame.payload, say_progress ? frames : -1);
  if (!reply.ok()) {
    return WriteFrame(frames, MessageType::kError,
                      ErrorPayload(reply.status()));
  }
  return WriteFrame(frames, MessageType::kProgramResults, *reply);
}

// Whether the client's HELLO said progress=1.
bool AskedForProgress(const KeyValues& hello) {
  for (const auto& [key, value] : hello) {
    if (key == kProgressKey) return value == "1";
  }
  return false;
}

// The handshake, then RUN and RUN_PROGRAMS frames until BYE; replies go to
// `frames`.
int ServeOn(int frames, absl::string_view backend_name) {
  auto hello = ReadFrame(STDIN_FILENO);
  if (!hello.ok() || hello->type != MessageType::kHello) {
    return Fatal(4, "expected HELLO on stdin");
  }
  auto backend = MakeBackend(backend_name, DecodeKeyValues(hello->payload));
  if (!backend.ok()) {
    (void)WriteFrame(frames, MessageType::kError, backend.status().message());
    return Fatal(3, backend.status().message());
  }
  const KeyValues options = DecodeKeyValues(hello->payload);
  auto programs = ProgramService::Make(backend_name, options, **backend);
  if (!programs.ok()) {
    (void)WriteFrame(frames, MessageType::kError, programs.status().message());
    return Fatal(3, programs.status().message());
  }
  WorkerIdentity identity = (*backend)->Identity();
  identity.programs = *programs != nullptr;
  // PROGRESS frames only to a client that reads them (an older one would
  // take the unknown type for a broken stream).
  identity.progress = identity.programs && AskedForProgress(options);
  if (!WriteFrame(frames, MessageType::kHelloReply,
                  EncodeKeyValues(IdentityToKeyValues(identity)))
           .ok()) {
    return Fatal(4, "cannot write HELLO_REPLY");
  }
  while (true) {
    auto frame = ReadFrame(STDIN_FILENO);
    if (absl::IsUnavailable(frame.status())) return 0;  // client went away
    if (!frame.ok()) return Fatal(4, frame.status().message());
    if (frame->type == MessageType::kBye) return 0;
    if (frame->type == MessageType::kRunPrograms) {
      if (!AnswerPrograms(programs->get(), *frame, frames, identity.progress)
               .ok()) {
        return 0;  // client went away
      }
      continue;
    }
    if (frame->type != MessageType::kRun)
      return Fatal(4, "expected RUN, RUN_PROGRAMS or BYE");
    if (!Answer(**backend, *frame, frames).ok()) return 0;  // client went away
  }
}

// The channel moves off stdout before the backend (and any library it
// loads, any command it runs) exists.
int Serve(absl::string_view backend_name) {
  const absl::StatusOr<int> frames = MoveFramesOffStdout();
  if (!frames.ok()) return Fatal(3, frames.status().message());
  return ServeOn(*frames, backend_name);
}

// The arguments after --run-module, run as one module.
int RunModule(absl::string_view backend, const std::vector<std::string>& args) {
  if (backend != kCudaBackend) {
    return Fatal(2, "--run-module runs a module on --backend=cuda only");
  }
#if defined(PTXDIFF_HAVE_CUDA_BACKEND)
  return RunModuleCommand(args);
#else
  return Fatal(3,
               "this ptxdiff-worker was built without the CUDA toolkit's "
               "headers (find_package(CUDAToolkit) failed)");
#endif
}

}  // namespace
}  // namespace ptxdiff

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);  // a vanished client shows up as EPIPE instead
  ptxdiff::KeepBatchMemoryInTheHeap();
  std::string backend;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--backend=")) {
      backend = std::string(arg);
    } else if (arg == "--run-module") {
      return ptxdiff::RunModule(
          backend, std::vector<std::string>(argv + i + 1, argv + argc));
    } else {
      return ptxdiff::Fatal(
          2, absl::StrCat("unknown argument '", arg,
                          "'; usage: ptxdiff-worker --backend=NAME"));
    }
  }
  if (backend.empty()) {
    return ptxdiff::Fatal(2, "usage: ptxdiff-worker --backend=NAME");
  }
  // A compile left to run on past its timeout must not see exit's handlers.
  ptxdiff::EndProcess(ptxdiff::Serve(backend));
}
