#include "common/output_status.h"

#include <unistd.h>

#include <sstream>
#include <streambuf>

#include "gtest/gtest.h"

namespace ptxdiff {
namespace {

// A stream's buffer that takes nothing, as stdout closed or on a full disk.
class FailingBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  int sync() override { return -1; }
};

// Fifth fault run: `ptxdiff eval add.u32 1 2 >&-` (or `> /dev/full`,
// `program`, `sweep`, `triage list`, `report`) exited 0 with all it printed
// lost.
TEST(OutputStatusTest, OutputThatCouldNotBeWrittenIsNoSuccess) {
  FailingBuffer buffer;
  std::ostream out(&buffer);
  out << "verdict: agree\n";
  std::ostringstream err;
  EXPECT_EQ(StatusAfterOutput(0, out, err), 1);
  EXPECT_NE(err.str().find("output could not be written"), std::string::npos);
  // A failure the command said keeps its own status.
  std::ostringstream err3;
  EXPECT_EQ(StatusAfterOutput(3, out, err3), 3);
  EXPECT_FALSE(err3.str().empty());
}

TEST(OutputStatusTest, OutputWrittenKeepsTheStatus) {
  std::ostringstream out, err;
  out << "verdict: agree\n";
  EXPECT_EQ(StatusAfterOutput(0, out, err), 0);
  EXPECT_EQ(StatusAfterOutput(130, out, err), 130);
  EXPECT_TRUE(err.str().empty());
}

// `ptxdiff sweep | head`: the reader left. Not said, and the status SIGPIPE
// would have given (a process that started a worker ignores SIGPIPE).
TEST(OutputStatusTest, APipeWhoseReaderLeftEndsAsSigpipeWouldSilently) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(PipeReaderGone(fds[1]));
  close(fds[0]);
  EXPECT_TRUE(PipeReaderGone(fds[1]));
  FailingBuffer buffer;
  std::ostream out(&buffer);
  out << "add.u16\n";
  std::ostringstream err;
  EXPECT_EQ(StatusAfterOutput(0, out, err, fds[1]), 141);
  EXPECT_EQ(err.str(), "");
  close(fds[1]);
  EXPECT_FALSE(PipeReaderGone(-1));
}

}  // namespace
}  // namespace ptxdiff
