// The pipeline's pure parts: how a stage lays out its launches' output, and
// the grid of a register-mode launch. The double buffering itself runs on
// the fake driver in cuda_backend_test.cc.

#include "backends/cuda/pipeline.h"

#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

Variant V(absl::string_view spelling) { return *ParseVariant(spelling); }

// Each launch's output follows the previous one's: 8 bytes a tuple, 16 for
// a variant that writes CC.CF and for tuples as written (kernel ABI 2's
// slots, whatever the variant).
TEST(StageTest, LaunchesOutputsFollowEachOtherBySlotSize) {
  Stage stage;
  stage.AddLaunch({.first = 0, .count = 5, .variant = V("add.s32")});
  stage.AddLaunch({.first = 5, .count = 3, .variant = V("addc.cc.u32")});
  stage.AddLaunch(
      {.first = 8, .count = 2, .variant = V("add.s32"), .written = true});
  ASSERT_EQ(stage.launches.size(), 3u);
  EXPECT_EQ(stage.launches[0].out_offset, 0u);
  EXPECT_EQ(stage.launches[1].out_offset, 5u * kResultBytes);
  EXPECT_EQ(stage.launches[2].out_offset,
            5u * kResultBytes + 3u * kCarryResultBytes);
  EXPECT_EQ(stage.out_bytes, 5u * 8 + 3u * 16 + 2u * 16);
  EXPECT_EQ(stage.launches[2].ResultSlotBytes(), kBatchResultBytes);
  EXPECT_EQ(stage.launches[0].ResultSlotBytes(), kResultBytes);
}

// Enough blocks of kBlockSize threads for every tuple, at least one, at
// most the limit (the kernel's grid-stride loop covers the rest).
TEST(GridSizeTest, CoversTheTuplesWithinTheLimit) {
  EXPECT_EQ(GridSize(0, 128), 1u);
  EXPECT_EQ(GridSize(1, 128), 1u);
  EXPECT_EQ(GridSize(kBlockSize, 128), 1u);
  EXPECT_EQ(GridSize(kBlockSize + 1, 128), 2u);
  EXPECT_EQ(GridSize(1u << 20, 128), 128u);
}

}  // namespace
}  // namespace ptxdiff
