#include "common/zeroed_pages.h"

#include <atomic>
#include <cstdint>

#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

TEST(ZeroedArrayTest, StartsZeroedAndKeepsWhatIsWritten) {
  ZeroedArray<uint64_t> a(size_t{1} << 22);  // 32 MB: huge pages where granted
  ASSERT_EQ(a.size(), size_t{1} << 22);
  EXPECT_EQ(a[0], 0u);
  EXPECT_EQ(a[a.size() - 1], 0u);
  EXPECT_EQ(a[12345], 0u);
  a[12345] = 7;
  std::atomic_ref<uint64_t>(a[a.size() - 1]).fetch_add(3);
  EXPECT_EQ(a[12345], 7u);
  EXPECT_EQ(a[a.size() - 1], 3u);
  EXPECT_EQ(a[12346], 0u);
}

TEST(ZeroedArrayTest, AnEmptyArrayMapsNothing) {
  ZeroedArray<uint32_t> a(0);
  EXPECT_EQ(a.size(), 0u);
}

}  // namespace
}  // namespace ptxdiff
