// The oracle-consistency check behind oracle_consistency_fuzzer: fuzz input
// becomes one variant and a batch of operand tuples, which the fast oracle
// and the literal transcription must agree on, bit for bit and in
// definedness. Everything here runs without libFuzzer (see the unit test).

#ifndef PTXDIFF_FUZZERS_ORACLE_CONSISTENCY_H_
#define PTXDIFF_FUZZERS_ORACLE_CONSISTENCY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/variant.h"

namespace ptxdiff {

struct DecodedBatch {
  Variant variant;
  std::vector<Operands> tuples;
};

// The most tuples one input decodes to.
inline constexpr size_t kMaxTuplesPerInput = 64;

// The differential fuzzer's input format (fuzz_input.h): the variant's stable
// id, then operand tuples, masked to their widths; at most
// kMaxTuplesPerInput are used. So a crash file or corpus entry names its
// variant by spelling and survives the table growing, and the mutator and
// seed corpus of the differential fuzzer serve this one too. An input that
// names no variant or holds no whole tuple is nullopt.
std::optional<DecodedBatch> DecodeBatch(const uint8_t* data, size_t size);

// A replayable description of the first tuple the two oracles disagree on,
// or nullopt when they agree on all.
std::optional<std::string> FindOracleDisagreement(const DecodedBatch& batch);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_ORACLE_CONSISTENCY_H_
