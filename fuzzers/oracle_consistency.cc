#include "fuzzers/oracle_consistency.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/literal/literal_oracle.h"
#include "oracle/oracle.h"

namespace ptxdiff {

std::optional<DecodedBatch> DecodeBatch(const uint8_t* data, size_t size) {
  absl::StatusOr<std::vector<Tuple>> tuples = DecodeFuzzInput(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!tuples.ok()) return std::nullopt;
  DecodedBatch batch{.variant = tuples->front().variant};
  for (const Tuple& t : *tuples) {
    if (batch.tuples.size() == kMaxTuplesPerInput) break;
    batch.tuples.push_back(t.operands);
  }
  return batch;
}

std::optional<std::string> FindOracleDisagreement(const DecodedBatch& batch) {
  std::vector<Result> fast(batch.tuples.size());
  EvaluateBatch(batch.variant, batch.tuples, fast);
  for (size_t i = 0; i < batch.tuples.size(); ++i) {
    const Result literal = LiteralEvaluate(batch.variant, batch.tuples[i]);
    if (fast[i] != literal) {
      return absl::StrCat(
          "oracle disagreement:\n  fast:    ",
          ReplayLine(batch.variant, batch.tuples[i], fast[i]),
          "\n  literal: ", ReplayLine(batch.variant, batch.tuples[i], literal));
    }
  }
  return std::nullopt;
}

}  // namespace ptxdiff
