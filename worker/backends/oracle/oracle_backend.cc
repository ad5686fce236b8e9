#include "worker/backends/oracle/oracle_backend.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

class OracleBackend : public Backend {
 public:
  WorkerIdentity Identity() const override {
    return {.name = "oracle",
            .version = "1",
            .toolchain = "ptxdiff CPU oracle",
            .supports = {"*"}};
  }

  absl::Status Run(const RunRequest& request, RunReply& reply) override {
    const std::vector<std::optional<Variant>> variants = ResolveSpellings(request);
    reply.results.reserve(request.tuples.size());
    std::vector<Operands> run;
    std::vector<Result> results;
    // Consecutive tuples of one variant go through the batch oracle together.
    for (size_t begin = 0; begin < request.tuples.size();) {
      const uint32_t index = request.tuples[begin].variant_index;
      size_t end = begin;
      while (end < request.tuples.size() &&
             request.tuples[end].variant_index == index) {
        ++end;
      }
      if (!variants[index].has_value()) {
        for (size_t i = begin; i < end; ++i) {
          reply.AddDecline(DeclineCode::kUnsupportedVariant,
                           absl::StrCat("unknown variant '",
                                        request.spellings[index], "'"));
        }
      } else {
        run.clear();
        for (size_t i = begin; i < end; ++i) run.push_back(request.tuples[i].operands);
        results.resize(run.size());
        EvaluateBatch(*variants[index], run, results);
        for (const Result& r : results) reply.AddValue(r.bits);
      }
      begin = end;
    }
    return absl::OkStatus();
  }
};

}  // namespace

std::vector<std::optional<Variant>> ResolveSpellings(const RunRequest& request) {
  std::vector<std::optional<Variant>> variants;
  variants.reserve(request.spellings.size());
  for (const std::string& s : request.spellings) {
    auto v = ParseVariant(s);
    variants.push_back(v.ok() ? std::optional<Variant>(*v) : std::nullopt);
  }
  return variants;
}

std::unique_ptr<Backend> MakeOracleBackend() {
  return std::make_unique<OracleBackend>();
}

}  // namespace ptxdiff
