// `ptxdiff fuzz` with a stand-in for differential_fuzzer (PTXDIFF_FUZZER),
// for the tests of cli_test (PTXDIFF_WORKER_PATH is theirs).

#ifndef PTXDIFF_CLI_TESTING_FAKE_FUZZER_H_
#define PTXDIFF_CLI_TESTING_FAKE_FUZZER_H_

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli/testing/run_ptxdiff.h"

namespace ptxdiff {

// RunFuzz hands its settings to the fuzzer through this process's
// environment: a test leaves none behind for the others.
inline void ForgetFuzzSettings() {
  for (const char* name :
       {"PTXDIFF_FUZZER", "PTXDIFF_WORKER", "PTXDIFF_BACKEND", "PTXDIFF_ARCH",
        "PTXDIFF_CUDA_DRIVER", "PTXDIFF_TRIAGE_DIR", "PTXDIFF_MODE",
        "PTXDIFF_FAMILIES", "PTXDIFF_EXCLUDE_FAMILIES", "PTXDIFF_TIMEOUT",
        "PTXDIFF_STATS", "PTXDIFF_IN_FLIGHT", "PTXDIFF_BATCH",
        "PTXDIFF_SYSTEMATIC", "PTXDIFF_READING", "PTXDIFF_DEADLINE",
        "PTXDIFF_FINDINGS", "PTXDIFF_PROGRAMS"}) {
    unsetenv(name);
  }
}

// `ptxdiff fuzz ARGS` with a stand-in for differential_fuzzer
// (PTXDIFF_FUZZER): a script that writes `stats` as the fuzz process's stats
// file, says "fake fuzzer ran", then runs `more` (its corpus is $1), and
// exits 0, as a campaign that ran to its time limit does.
inline CliRun FuzzWith(const std::string& dir, const std::string& stats,
                       const std::string& more,
                       const std::vector<std::string>& args) {
  std::ofstream(dir + "/stats.txt") << stats;
  const std::string fuzzer = dir + "/fake_fuzzer.sh";
  std::ofstream(fuzzer) << "#!/bin/sh\ncp '" << dir
                        << "/stats.txt' \"$PTXDIFF_STATS/1.stats\"\n"
                        << "echo fake fuzzer ran\n"
                        << more << "\n";
  chmod(fuzzer.c_str(), 0755);
  setenv("PTXDIFF_FUZZER", fuzzer.c_str(), 1);
  setenv("PTXDIFF_WORKER", PTXDIFF_WORKER_PATH, 1);
  std::vector<std::string> command = {"fuzz", "--max-time", "5"};
  command.insert(command.end(), args.begin(), args.end());
  CliRun r = Ptxdiff(command);
  ForgetFuzzSettings();
  return r;
}

inline CliRun FuzzWithStats(const std::string& dir, const std::string& stats,
                            const std::string& more = "") {
  return FuzzWith(
      dir, stats, more,
      {"--backend", "oracle", "--out", dir + "/out", "--dir", dir + "/triage"});
}

inline constexpr char kSomeStats[] =
    "inputs=10\ntuples=100\nagreed=100\nsupported_variants=495\nreached=f\n";

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_TESTING_FAKE_FUZZER_H_
