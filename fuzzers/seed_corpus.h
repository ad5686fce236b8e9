// The differential fuzzer's seed corpus and dictionary, generated from the
// instruction table: one small input per family (a representative variant
// with edge-operand tuples), and the stable ids of every family's variants
// plus the edge values as dictionary entries. `ptxdiff seed-corpus` writes
// them to corpus/; a test fails when the checked-in files are stale.

#ifndef PTXDIFF_FUZZERS_SEED_CORPUS_H_
#define PTXDIFF_FUZZERS_SEED_CORPUS_H_

#include <map>
#include <string>

namespace ptxdiff {

// File name ("add.s32.bin") to input bytes.
std::map<std::string, std::string> SeedCorpus();

// libFuzzer dictionary text (-dict=).
std::string FuzzDictionary();

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_SEED_CORPUS_H_
