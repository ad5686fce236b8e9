// Writes docs/isa-coverage.md (the path is the only argument).

#include <cstdio>
#include <fstream>

#include "isa/coverage_doc.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_isa_coverage OUTPUT.md\n");
    return 2;
  }
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << ptxdiff::RenderIsaCoverage();
  out.close();
  if (!out) {
    std::fprintf(stderr, "gen_isa_coverage: cannot write %s\n", argv[1]);
    return 2;
  }
  return 0;
}
