#include "fuzzers/seed_corpus.h"

#include <fstream>
#include <sstream>

#include "isa/fuzz_input.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"

namespace ptxdiff {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SeedCorpusTest, OneDecodableInputPerFamily) {
  const auto corpus = SeedCorpus();
  EXPECT_EQ(corpus.size(), static_cast<size_t>(kNumFamilies));
  for (const auto& [name, bytes] : corpus) {
    auto tuples = DecodeFuzzInput(bytes);
    ASSERT_TRUE(tuples.ok()) << name << ": " << tuples.status();
    EXPECT_LE(bytes.size(), 8u + 8 * 4 * 8) << name;
  }
}

// The checked-in corpus/ is what the generator writes; regenerate with
// `ptxdiff seed-corpus corpus`.
TEST(SeedCorpusTest, CheckedInCorpusIsCurrent) {
  const std::string dir = std::string(PTXDIFF_SOURCE_DIR) + "/corpus";
  for (const auto& [name, bytes] : SeedCorpus()) {
    EXPECT_EQ(Read(dir + "/differential/" + name), bytes)
        << name << " is stale: run `ptxdiff seed-corpus corpus`";
  }
  EXPECT_EQ(Read(dir + "/differential.dict"), FuzzDictionary())
      << "corpus/differential.dict is stale: run `ptxdiff seed-corpus corpus`";
}

}  // namespace
}  // namespace ptxdiff
