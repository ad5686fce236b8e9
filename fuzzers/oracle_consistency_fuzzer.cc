// libFuzzer target: the fast oracle against the literal transcription of the
// spec pseudocode. A disagreement aborts with a one-line signature so that
// libFuzzer writes crash-<sha1>; replay it with
//   build/fuzz/fuzzers/oracle_consistency_fuzzer crash-<sha1>

#include <cstdio>
#include <cstdlib>

#include "fuzzers/oracle_consistency.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto batch = ptxdiff::DecodeBatch(data, size);
  if (!batch) return -1;  // too short to hold a tuple: not worth keeping
  if (auto disagreement = ptxdiff::FindOracleDisagreement(*batch)) {
    std::fprintf(stderr, "%s\n", disagreement->c_str());
    std::abort();
  }
  return 0;
}
