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

// A key with bit 32 set: as an int's remainder, its victim way was -2, a
// slot outside its bucket; in bucket 0, memory before the table (the
// campaign's intermittent SEGV in Insert, or a silent write into whatever
// is mapped below). Its own way 2 must go.
TEST(SeenFilterTest,
     AFullFirstBucketEvictsOneOfItsOwnWaysWhateverTheKeysHighBits) {
  constexpr uint64_t kBit32 = uint64_t{1} << 32;
  SeenFilter f(SeenFilter::kWays);
  for (uint64_t fp : {4, 8, 12, 16}) ASSERT_TRUE(f.Insert(fp)) << fp;
  EXPECT_TRUE(f.Insert(kBit32 | 4));  // key 2^32 | 5: way (2^31 | 2) % 4 = 2
  EXPECT_FALSE(f.Insert(kBit32 | 4));
  for (uint64_t fp : {4, 8, 16}) EXPECT_FALSE(f.Insert(fp)) << fp;
  EXPECT_TRUE(f.Insert(12));  // it was in way 2
}

// The same in a later bucket: the victim was a slot of the bucket before,
// whose keys were then forgotten (and the new key put where it is never
// looked for). Two buckets, split by the top bit.
TEST(SeenFilterTest, AFullBucketLeavesTheBucketBeforeAlone) {
  constexpr uint64_t kBucket1 = uint64_t{1} << 63, kBit32 = uint64_t{1} << 32;
  SeenFilter f(2 * SeenFilter::kWays);
  for (uint64_t i = 1; i <= 4; ++i) ASSERT_TRUE(f.Insert(i << 2)) << i;
  for (uint64_t i = 1; i <= 4; ++i)
    ASSERT_TRUE(f.Insert(kBucket1 | i << 2)) << i;
  EXPECT_TRUE(f.Insert(kBucket1 | kBit32 | 4));  // takes bucket 1's way 2
  for (uint64_t i = 1; i <= 4; ++i)
    EXPECT_FALSE(f.Insert(i << 2)) << "bucket 0 forgot " << i;
  EXPECT_FALSE(f.Insert(kBucket1 | kBit32 | 4));
  for (uint64_t i : {1, 2, 4}) EXPECT_FALSE(f.Insert(kBucket1 | i << 2)) << i;
  EXPECT_TRUE(f.Insert(kBucket1 | 3 << 2));  // it was in way 2
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
      for (uint64_t i = 0; i < kFingerprints; ++i)
        firsts[t] += f.Insert(i * 0x9e3779b97f4a7c15ull);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(firsts[0] + firsts[1] + firsts[2] + firsts[3],
            static_cast<int>(kFingerprints));
}

}  // namespace
}  // namespace ptxdiff
