#include "backends/ptxas/ptxas_toolchain.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// Fault run of issue 65: what a tool printed reached the user raw. A log's
// summary (what "ptxas rejected the kernel: ..." quotes) shows its first
// three lines, each bounded, with the bytes a terminal acts on escaped.
TEST(LogSummaryTest, ShowsThreeLinesBoundedAndEscaped) {
  EXPECT_EQ(LogSummary("ptxas: error 1\n\n  \nline 2\nline 3\nline 4\n"),
            "ptxas: error 1 | line 2 | line 3");
  EXPECT_EQ(LogSummary("bad \033[2J\001\377 bytes"),
            "bad \\x1b[2J\\x01\\xff bytes");
  const std::string summary = LogSummary(std::string(100000, 'x'));
  EXPECT_EQ(summary, std::string(400, 'x') + "...");
}

}  // namespace
}  // namespace ptxdiff
