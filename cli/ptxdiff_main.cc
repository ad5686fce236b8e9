// The `ptxdiff` command line; see cli/commands.h.

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/batch_heap.h"

int main(int argc, char** argv) {
  ptxdiff::KeepBatchMemoryInTheHeap();
  std::vector<std::string> args(argv, argv + argc);
  return ptxdiff::RunMain(args, std::cout, std::cerr);
}
