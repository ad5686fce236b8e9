// The `ptxdiff` command line; see cli/commands.h.

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return ptxdiff::RunMain(args, std::cout, std::cerr);
}
