// What the CLI tests share: a `ptxdiff` command line run in this process,
// and a fresh directory per test.

#ifndef PTXDIFF_CLI_TESTING_RUN_PTXDIFF_H_
#define PTXDIFF_CLI_TESTING_RUN_PTXDIFF_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
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

#ifdef PTXDIFF_WORKER_PATH
// A PTXDIFF_WORKER script in `dir`: the test worker with no room to write
// its own files (a file size limit of 0, SIGXFSZ ignored: each write fails
// "File too large", as in a TMPDIR over quota or full).
inline std::string NoRoomToWriteWorker(const std::string& dir) {
  const std::string path = dir + "/no_room_worker.sh";
  std::ofstream(path) << "#!/bin/sh\ntrap '' XFSZ\nulimit -f 0\nexec "
                      << PTXDIFF_WORKER_PATH << " \"$@\"\n";
  chmod(path.c_str(), 0755);
  return path;
}
#endif

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_TESTING_RUN_PTXDIFF_H_
