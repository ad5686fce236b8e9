#include "campaign/seen_filter.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// One bucket of four slots, fingerprints chosen by hand: a fingerprint's
// key is fingerprint | 1, and a full bucket's victim is way (key >> 1) % 4.
TEST(SeenFilterTest, ABucketRemembersFourAndThenEvictsTheWayTheKeyPicks) {
  SeenFilter f(SeenFilter::kWays);
  for (uint64_t fp : {2, 4, 6, 8}) EXPECT_TRUE(f.Insert(fp)) << fp;
  for (uint64_t fp : {2, 4, 6, 8}) EXPECT_FALSE(f.Insert(fp)) << fp;
  EXPECT_TRUE(f.Insert(10));  // key 11: way 1, where 4 was
  EXPECT_TRUE(f.Insert(4));   // forgotten; key 5 takes way 2, where 6 was
  EXPECT_FALSE(f.Insert(2));
  EXPECT_FALSE(f.Insert(8));
  EXPECT_FALSE(f.Insert(10));
  EXPECT_TRUE(f.Insert(6));
}

TEST(SeenFilterTest, AnErasedFingerprintMayComeAgainAndItsHoleHidesNoOther) {
  SeenFilter f(SeenFilter::kWays);
  EXPECT_TRUE(f.Insert(2));
  EXPECT_TRUE(f.Insert(4));
  f.Erase(2);
  EXPECT_FALSE(f.Insert(4));  // found past the free slot 2 left
  EXPECT_TRUE(f.Insert(2));
  EXPECT_FALSE(f.Insert(2));
  f.Erase(12);  // never inserted: nothing changes
  EXPECT_FALSE(f.Insert(4));
}

TEST(SeenFilterTest, OfThreadsInsertingTheSameFingerprintsEachIsNewOnce) {
  SeenFilter f(size_t{1} << 20);  // no bucket overflows: no evictions
  constexpr uint64_t kFingerprints = 20000;
  std::vector<int> firsts(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 0; i < kFingerprints; ++i) firsts[t] += f.Insert(i * 0x9e3779b97f4a7c15ull);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(firsts[0] + firsts[1] + firsts[2] + firsts[3], static_cast<int>(kFingerprints));
}

}  // namespace
}  // namespace ptxdiff
