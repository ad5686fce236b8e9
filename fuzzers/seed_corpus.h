// The differential fuzzer's seed corpus and dictionary, generated from the
// instruction table: one small input per family (a representative variant
// with edge-operand tuples), and the stable ids of every family's variants
// plus the edge values as dictionary entries. `ptxdiff seed-corpus` writes
// them to corpus/; a test fails when the checked-in files are stale.

#ifndef PTXDIFF_FUZZERS_SEED_CORPUS_H_
#define PTXDIFF_FUZZERS_SEED_CORPUS_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/files.h"

namespace ptxdiff {

// File name ("add.s32.bin") to input bytes.
std::map<std::string, std::string> SeedCorpus();

// libFuzzer dictionary text (-dict=).
std::string FuzzDictionary();

// Writes one file (WriteFile; in a test, one that fails as a full disk does).
using FileWriter = std::function<absl::Status(const std::string& path,
                                              absl::string_view bytes)>;

// Writes SeedCorpus() into `dir` (created if missing), all or nothing: the
// seeds go to a temporary directory beside `dir` and are renamed into it
// once every one is written. A failed write (a full disk) leaves `dir`
// without seeds, never a part of them that a later run would take for a
// corpus to resume from.
absl::Status WriteSeedCorpus(const std::string& dir,
                             const FileWriter& write = WriteFile);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_SEED_CORPUS_H_
