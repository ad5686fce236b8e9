// The `ptxdiff` command line; see cli/commands.h.

#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/batch_heap.h"
#include "common/call_within.h"
#include "common/output_status.h"
#include "common/run_id.h"

int main(int argc, char** argv) {
  ptxdiff::KeepBatchMemoryInTheHeap();
  ptxdiff::NameThisRun(/*new_run=*/true);  // for what it starts (run_id.h)
  std::vector<std::string> args(argv, argv + argc);
  // An in-process compile left to run on past its timeout or a stop must
  // not see exit's handlers free its library's state (a double free).
  // Output lost (stdout closed, a full disk) is no success.
  ptxdiff::EndProcess(
      ptxdiff::StatusAfterOutput(ptxdiff::RunMain(args, std::cout, std::cerr),
                                 std::cout, std::cerr, STDOUT_FILENO));
}
