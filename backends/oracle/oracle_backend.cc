#include "backends/oracle/oracle_backend.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

class OracleBackend : public Backend {
 protected:
  WorkerIdentity Describe() const override {
    return {.name = std::string(kOracleBackend),
            .version = "1",
            .toolchain = "ptxdiff CPU oracle",
            .carry = true,
            // The spec's answer is the same whatever a compiler knows.
            .forms = true};
  }

  absl::Status RunSupported(const ResolvedBatch& batch,
                            RunReply& reply) override {
    reply.results.reserve(batch.tuples.size());
    std::vector<Operands> run;
    std::vector<Result> results;
    // Consecutive tuples of one variant go through the batch oracle together.
    for (size_t begin = 0; begin < batch.tuples.size();) {
      const uint32_t index = batch.tuples[begin].variant_index;
      size_t end = begin;
      while (end < batch.tuples.size() &&
             batch.tuples[end].variant_index == index) {
        ++end;
      }
      run.clear();
      for (size_t i = begin; i < end; ++i)
        run.push_back(batch.tuples[i].operands);
      results.resize(run.size());
      EvaluateBatch(batch.variants[index], run, results);
      for (const Result& r : results) reply.AddValue(r.bits, r.carry);
      begin = end;
    }
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<Backend> MakeOracleBackend() {
  return std::make_unique<OracleBackend>();
}

}  // namespace ptxdiff
