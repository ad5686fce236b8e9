#include "fuzzers/seed_corpus.h"

#include <dirent.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "isa/family_table.h"
#include "isa/fuzz_input.h"

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

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") {
        names.push_back(e->d_name);
      }
    }
    closedir(d);
  }
  return names;
}

// A disk that fills up at the third seed leaves no seeds behind: two seeds
// and an empty file would be taken by the next run for a corpus to resume
// (issue 28, item 2).
TEST(SeedCorpusTest, AFailedWriteLeavesNoSeedsBehind) {
  auto tmp = TempDir::Create("seed_corpus_test");
  ASSERT_TRUE(tmp.ok());
  const std::string corpus = (*tmp)->File("corpus");
  int writes = 0;
  const auto full_at_third = [&](const std::string& path,
                                 absl::string_view bytes) {
    if (++writes < 3) return WriteFile(path, bytes);
    (void)WriteFile(path, "");  // created, then nothing fits
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot write ", path, ": No space left on device"));
  };
  const absl::Status s = WriteSeedCorpus(corpus, full_at_third);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("No space left on device"));
  EXPECT_THAT(Names(corpus), ::testing::IsEmpty());
  EXPECT_THAT(Names((*tmp)->path()),
              ::testing::ElementsAre("corpus"));  // no staging left

  ASSERT_TRUE(WriteSeedCorpus(corpus).ok());  // with room again: every seed
  EXPECT_EQ(Names(corpus).size(), SeedCorpus().size());
  for (const auto& [name, bytes] : SeedCorpus())
    EXPECT_EQ(Read(corpus + "/" + name), bytes);
}

// The twelfth fault run: into a corpus where a seed's name was a directory,
// the seeds moved before it were removed again, and with them the files of
// those names the corpus held: 28 of its 66 files left. Refused first.
TEST(SeedCorpusTest, ASeedsPlaceThatIsADirectoryChangesNothing) {
  auto tmp = TempDir::Create("seed_corpus_test");
  ASSERT_TRUE(tmp.ok());
  const std::string corpus = (*tmp)->File("corpus");
  ASSERT_TRUE(WriteSeedCorpus(corpus).ok());
  const std::string last = SeedCorpus().rbegin()->first;
  ASSERT_EQ(std::remove((corpus + "/" + last).c_str()), 0);
  ASSERT_TRUE(MakeDirs(corpus + "/" + last).ok());
  const size_t before = Names(corpus).size();
  const absl::Status s = WriteSeedCorpus(corpus);
  EXPECT_THAT(s.message(),
              ::testing::HasSubstr(corpus + "/" + last +
                                   " is a directory, where a seed goes"));
  EXPECT_EQ(Names(corpus).size(), before);
  EXPECT_THAT(Names((*tmp)->path()), ::testing::ElementsAre("corpus"));
}

}  // namespace
}  // namespace ptxdiff
