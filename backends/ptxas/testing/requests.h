// Requests for the ptxas backend's tests: cases by spelling, run on a
// backend that must not fail.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_TESTING_REQUESTS_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_TESTING_REQUESTS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "backends/backend.h"
#include "gtest/gtest.h"
#include "protocol/protocol.h"

namespace ptxdiff {

struct Case {
  std::string spelling;
  Operands operands;
  uint8_t runtime = 0;  // the operand form (isa/operand_form.h)
};

inline RunRequest Request(const std::vector<Case>& cases) {
  RunRequest request;
  absl::flat_hash_map<std::string, uint32_t> index;
  for (const Case& c : cases) {
    auto [it, added] = index.try_emplace(c.spelling, request.spellings.size());
    if (added) request.spellings.push_back(c.spelling);
    request.tuples.push_back({it->second, c.operands, c.runtime});
  }
  return request;
}

inline RunReply RunOrDie(Backend& backend, const RunRequest& request) {
  RunReply reply;
  const absl::Status status = backend.Run(request, reply);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(reply.results.size(), request.tuples.size());
  return reply;
}

// A decline's or a fault's message, or "".
inline std::string MessageOf(const RunReply& reply, size_t i) {
  const TupleResult& r = reply.results[i];
  return r.kind == ResultKind::kDecline || r.kind == ResultKind::kFault
             ? reply.messages[r.message]
             : "";
}

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_TESTING_REQUESTS_H_
