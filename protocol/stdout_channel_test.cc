#include "protocol/stdout_channel.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "gtest/gtest.h"
#include "protocol/frame_io.h"

namespace ptxdiff {
namespace {

std::string ReadToEnd(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, n);
  return text;
}

// The child's side: stdout and stderr are the pipes `out` and `err`, as a
// worker's are. Prints before and after the move in every way a library
// can, sends one frame on the channel, and exits 0 if the channel is
// close-on-exec.
[[noreturn]] void MoveInAChild(int out, int err) {
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  // Buffered as stdout on a pipe is in a freshly started worker, whatever
  // this test's stdout is.
  std::setvbuf(stdout, nullptr, _IOFBF, BUFSIZ);
  std::printf("buffered before the move\n");
  absl::StatusOr<int> frames = MoveFramesOffStdout();
  if (!frames.ok()) _exit(2);
  std::printf("printf after\n");
  std::cout << "cout after" << std::endl;
  (void)!write(STDOUT_FILENO, "write after\n", 12);
  if (!WriteFrame(*frames, MessageType::kHelloReply, "name=x").ok()) _exit(3);
  _exit((fcntl(*frames, F_GETFD) & FD_CLOEXEC) ? 0 : 4);
}

TEST(StdoutChannelTest, FramesStayOnTheOldStdoutAndTextGoesToStderr) {
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  std::fflush(nullptr);  // nothing of this test's own output in the child's
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) MoveInAChild(out[1], err[1]);
  close(out[1]);
  close(err[1]);
  absl::StatusOr<Frame> frame = ReadFrame(out[0]);
  ASSERT_TRUE(frame.ok()) << frame.status();
  EXPECT_EQ(frame->type, MessageType::kHelloReply);
  EXPECT_EQ(frame->payload, "name=x");
  EXPECT_EQ(ReadToEnd(out[0]), "");  // nothing but the frame
  // Every line on stderr, each as soon as it was printed (the child left
  // with _exit, which flushes nothing).
  EXPECT_EQ(ReadToEnd(err[0]),
            "buffered before the move\nprintf after\ncout after\n"
            "write after\n");
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no move, 3: no frame, 4: inherited";
  close(out[0]);
  close(err[0]);
}

}  // namespace
}  // namespace ptxdiff
