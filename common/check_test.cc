#include "common/check.h"

#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

int calls = 0;
int Counted(int x) {
  ++calls;
  return x;
}

TEST(CheckTest, PassingCheckDoesNotEvaluateItsMessage) {
  calls = 0;
  PTXDIFF_CHECK(1 + 1 == 2, "never built: ", Counted(7));
  EXPECT_EQ(calls, 0);
}

TEST(CheckDeathTest, FailingCheckNamesTheConditionAndTheMessage) {
  const int width = 33;
  EXPECT_DEATH(PTXDIFF_CHECK(width <= 32, "width ", width, " is too wide"),
               "ptxdiff: CHECK failed at .*check_test.cc:[0-9]+: width <= 32: "
               "width 33 is too wide");
}

TEST(CheckDeathTest, AMessageIsOptional) {
  EXPECT_DEATH(PTXDIFF_CHECK(false), "CHECK failed at .*: false\n");
}

}  // namespace
}  // namespace ptxdiff
