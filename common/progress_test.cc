#include "common/progress.h"

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

TEST(ProgressTest, NobodyListeningHearsNothing) {
  int said = 0;
  {
    const ScopedProgressListener listener([&said] { ++said; },
                                          absl::ZeroDuration());
    NoteProgress();
  }
  NoteProgress();  // after the listener went
  EXPECT_EQ(said, 1);
}

TEST(ProgressTest, ItIsSaidAtMostOncePerInterval) {
  int said = 0;
  const ScopedProgressListener listener([&said] { ++said; },
                                        absl::Milliseconds(200));
  for (int i = 0; i < 1000; ++i) NoteProgress();
  EXPECT_EQ(said, 1);
  absl::SleepFor(absl::Milliseconds(250));
  NoteProgress();
  NoteProgress();
  EXPECT_EQ(said, 2);
}

}  // namespace
}  // namespace ptxdiff
