#include "fuzzers/oracle_consistency.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/literal/literal_oracle.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

uint64_t LoadLittleEndian(const uint8_t* p, size_t n) {
  uint64_t x = 0;
  for (size_t i = 0; i < n; ++i) x |= uint64_t{p[i]} << (8 * i);
  return x;
}


}  // namespace

std::optional<DecodedBatch> DecodeBatch(const uint8_t* data, size_t size) {
  if (size < 4) return std::nullopt;
  const std::vector<Variant>& all = AllVariants();
  DecodedBatch batch;
  batch.variant = all[LoadLittleEndian(data, 4) % all.size()];
  const size_t sources = NumSources(batch.variant);
  const size_t tuple_bytes = 8 * sources;
  for (size_t at = 4; at + tuple_bytes <= size &&
                      batch.tuples.size() < kMaxTuplesPerInput;
       at += tuple_bytes) {
    Operands o;
    for (size_t i = 0; i < sources; ++i) {
      o.v[i] = Low(LoadLittleEndian(data + at + 8 * i, 8),
                   SourceWidth(batch.variant, i));
    }
    batch.tuples.push_back(o);
  }
  if (batch.tuples.empty()) return std::nullopt;
  return batch;
}

std::optional<std::string> FindOracleDisagreement(const DecodedBatch& batch) {
  std::vector<Result> fast(batch.tuples.size());
  EvaluateBatch(batch.variant, batch.tuples, fast);
  for (size_t i = 0; i < batch.tuples.size(); ++i) {
    const Result literal = LiteralEvaluate(batch.variant, batch.tuples[i]);
    if (fast[i] != literal) {
      return absl::StrCat("oracle disagreement:\n  fast:    ",
                          ReplayLine(batch.variant, batch.tuples[i], fast[i]),
                          "\n  literal: ",
                          ReplayLine(batch.variant, batch.tuples[i], literal));
    }
  }
  return std::nullopt;
}

}  // namespace ptxdiff
