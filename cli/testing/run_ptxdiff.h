// What the CLI tests share: a `ptxdiff` command line run in this process,
// and a fresh directory per test.

#ifndef PTXDIFF_CLI_TESTING_RUN_PTXDIFF_H_
#define PTXDIFF_CLI_TESTING_RUN_PTXDIFF_H_

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "gtest/gtest.h"

namespace ptxdiff {

struct CliRun {
  int code;
  std::string out, err;
};

// `ptxdiff ARGS` through RunMain: its exit status and what it printed.
inline CliRun Ptxdiff(std::vector<std::string> args) {
  args.insert(args.begin(), "ptxdiff");
  std::ostringstream out, err;
  const int code = RunMain(args, out, err);
  return {code, out.str(), err.str()};
}

// An empty directory under the test's temporary directory, named after
// `name` and this process.
inline std::string TempDirFor(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/cli_" + name + "_" + std::to_string(getpid());
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_TESTING_RUN_PTXDIFF_H_
