// Starting the faulty worker (faulty_worker.cc: the oracle over the protocol,
// wrong as its flags say) from a test whose target has
// ptxdiff_uses_test_workers (PTXDIFF_FAULTY_WORKER_PATH).

#ifndef PTXDIFF_WORKER_TESTING_FAULTY_WORKER_CLIENT_H_
#define PTXDIFF_WORKER_TESTING_FAULTY_WORKER_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/worker_client.h"
#include "gtest/gtest.h"

namespace ptxdiff {

// The command of the faulty worker with `flags`, its replies awaited up to
// `timeout` (WorkerCommand's own by default).
inline WorkerCommand FaultyWorkerCommand(
    const std::vector<std::string>& flags = {},
    absl::Duration timeout = WorkerCommand().timeout) {
  WorkerCommand command;
  command.argv = {PTXDIFF_FAULTY_WORKER_PATH};
  command.argv.insert(command.argv.end(), flags.begin(), flags.end());
  command.timeout = timeout;
  return command;
}

// The faulty worker started with `flags`; nullptr (and a test failure) if
// it did not start.
inline std::unique_ptr<WorkerClient> StartFaultyWorker(
    const std::vector<std::string>& flags = {}) {
  auto client = WorkerClient::Start(FaultyWorkerCommand(flags));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_TESTING_FAULTY_WORKER_CLIENT_H_
