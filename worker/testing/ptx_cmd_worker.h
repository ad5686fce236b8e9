// Starting a ptx-cmd worker (ptxdiff-worker's ptx-cmd backend) on a tool
// from a test whose target has ptxdiff_uses_test_workers
// (PTXDIFF_WORKER_PATH).

#ifndef PTXDIFF_WORKER_TESTING_PTX_CMD_WORKER_H_
#define PTXDIFF_WORKER_TESTING_PTX_CMD_WORKER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client/worker_client.h"

namespace ptxdiff {

// The command of a worker running `command_template` ("tool {ptx} {in}
// {out}") as its ptx-cmd tool, `options` added to its HELLO.
inline absl::StatusOr<WorkerCommand> PtxCmdWorkerCommand(
    const std::string& command_template, const KeyValues& options = {}) {
  auto command =
      CommandForBackend("ptx-cmd:" + command_template, PTXDIFF_WORKER_PATH);
  if (!command.ok()) return command.status();
  for (const auto& option : options) command->hello_options.push_back(option);
  return command;
}

// `command` with no room to write: a file size limit of 0, SIGXFSZ ignored,
// so that every file the worker writes fails "File too large" (as in a
// TMPDIR over its quota, or full), while its pipes work.
inline WorkerCommand WithNoRoomToWrite(WorkerCommand command) {
  std::vector<std::string> argv = {
      "/bin/sh", "-c", "trap '' XFSZ; ulimit -f 0; exec \"$@\"", "sh"};
  argv.insert(argv.end(), command.argv.begin(), command.argv.end());
  command.argv = std::move(argv);
  return command;
}

// That worker, started: its handshake's error if it refused the options.
inline absl::StatusOr<std::unique_ptr<WorkerClient>> StartPtxCmdWorker(
    const std::string& command_template, const KeyValues& options = {}) {
  auto command = PtxCmdWorkerCommand(command_template, options);
  if (!command.ok()) return command.status();
  return WorkerClient::Start(*command);
}

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_TESTING_PTX_CMD_WORKER_H_
