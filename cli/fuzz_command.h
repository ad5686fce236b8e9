// `ptxdiff fuzz`: a fuzz campaign. It starts the differential libFuzzer
// target with the right flags (corpus, dictionary, time limit, -fork=N,
// artifact prefix) and its configuration in the environment, prints a
// progress line every few seconds (inputs and tuples checked, tuples/s,
// variants reached, findings, worker restarts) and a summary at the end.
// Ctrl-C stops it without losing anything: the corpus and the triage
// directory are on disk, and running it again resumes from them.
//
// `ptxdiff seed-corpus DIR` writes the seed corpus and dictionary.

#ifndef PTXDIFF_CLI_FUZZ_COMMAND_H_
#define PTXDIFF_CLI_FUZZ_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace ptxdiff {

int RunFuzz(const std::vector<std::string>& args, std::ostream& out,
            std::ostream& err);
int RunSeedCorpus(const std::vector<std::string>& args, std::ostream& out,
                  std::ostream& err);

// Where `ptxdiff fuzz` looks for differential_fuzzer (unless PTXDIFF_FUZZER
// names it), best first, given the directory of the ptxdiff binary: beside
// it and in its own build tree, then the campaign build (optimized) before
// the fuzz build (ASan + UBSan, several times slower), from the ptxdiff
// binary's build tree and from the working directory.
std::vector<std::string> FuzzerSearchPath(const std::string& cli_dir);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_FUZZ_COMMAND_H_
