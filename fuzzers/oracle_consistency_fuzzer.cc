// libFuzzer target: the fast oracle against the literal transcription of the
// spec pseudocode. A disagreement aborts with a one-line signature so that
// libFuzzer writes crash-<sha1>; replay it with
//   build/fuzz/fuzzers/oracle_consistency_fuzzer crash-<sha1>

#include <cstdio>
#include <cstdlib>

#include "fuzzers/mutator.h"
#include "fuzzers/oracle_consistency.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto batch = ptxdiff::DecodeBatch(data, size);
  if (!batch)
    return -1;  // no known variant or no whole tuple: not worth keeping
  if (auto disagreement = ptxdiff::FindOracleDisagreement(*batch)) {
    std::fprintf(stderr, "%s\n", disagreement->c_str());
    std::abort();
  }
  return 0;
}

// The differential fuzzer's structure-aware mutator keeps inputs decodable
// (a stable id, whole tuples) and draws operands from the edge set.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size,
                                          size_t max_size, unsigned int seed) {
  return ptxdiff::MutateFuzzInput(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* a, size_t a_size,
                                            const uint8_t* b, size_t b_size,
                                            uint8_t* out, size_t max_out,
                                            unsigned int seed) {
  return ptxdiff::CrossOverFuzzInputs(a, a_size, b, b_size, out, max_out, seed);
}
