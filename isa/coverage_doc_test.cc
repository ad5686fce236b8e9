#include "isa/coverage_doc.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

TEST(CoverageDocTest, CheckedInDocIsCurrent) {
  const std::string path =
      std::string(PTXDIFF_SOURCE_DIR) + "/docs/isa-coverage.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream checked_in;
  checked_in << in.rdbuf();
  EXPECT_EQ(checked_in.str(), RenderIsaCoverage())
      << path
      << " is stale: run `cmake --build build/asan --target "
         "update_isa_coverage` and commit the result";
}

TEST(CoverageDocTest, NamesEveryFamily) {
  const std::string doc = RenderIsaCoverage();
  for (const char* opcode :
       {"`add`", "`dp2a`", "`shf`", "`vmad`", "`vset`", "`visa.shl`"}) {
    EXPECT_NE(doc.find(opcode), std::string::npos) << opcode;
  }
}

}  // namespace
}  // namespace ptxdiff
