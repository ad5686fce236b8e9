// `ptxdiff fuzz`'s fuzzer as a child process: started in a process group of
// its own (libFuzzer's -fork=N jobs go in it too), killed with this process
// however it ends, its temporary files (-fork=N's libFuzzerTemp.*.dir) in a
// directory that goes with this process. Asked to stop (SIGINT to the
// group) on a Ctrl-C, a failed write or an overrun of --max-time, and
// killed if it does not stop within its grace: a fork job busy reading a
// 3 GB corpus file, deaf to the stop, cannot hold the run past its end.
// A Ctrl-Z stops its group with this process, and `fg` continues both.

#ifndef PTXDIFF_CLI_FUZZER_PROCESS_H_
#define PTXDIFF_CLI_FUZZER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cli/fuzzer_output.h"
#include "common/files.h"

namespace ptxdiff {

class FuzzerProcess {
 public:
  // How long a fuzzer asked to stop may take before it is killed: a
  // campaign stopping in order finishes its batches in flight, files, and
  // writes its repeat counts and journal (20 s past --max-time under ASan,
  // on a faulty worker with 47,000 findings unfiled).
  static constexpr absl::Duration kStopGrace = absl::Seconds(60);

  // What -fork=N's jobs need in the fuzzer's TMPDIR at the least (a merge
  // list of the corpus, each job's inputs): a disk with less is full to them.
  static constexpr int64_t kForkJobsRoom = int64_t{1} << 20;

  // Starts `argv` with its stdout and stderr into `log`, once `room` bytes
  // could be written in its TMPDIR (none tried for 0): on a full disk
  // libFuzzer's -fork parent waits on jobs that never start, or ends saying
  // only "MERGE: failed to parse the control file".
  static absl::StatusOr<std::unique_ptr<FuzzerProcess>> Start(
      const std::vector<std::string>& argv, FuzzerLog& log, int64_t room = 0,
      absl::Duration stop_grace = kStopGrace);
  // Kills what is still running of it and reaps it.
  ~FuzzerProcess();
  FuzzerProcess(const FuzzerProcess&) = delete;
  FuzzerProcess& operator=(const FuzzerProcess&) = delete;

  // Whether the fuzzer (the group's leader) has ended; it is not reaped.
  bool Ended() const;
  // Sends SIGINT to the group (and SIGTERM to a -fork parent), the first
  // time only: true if it did.
  bool AskToStop();
  // Asks again, every 2 s after the first ask until it ends or is
  // killed: a -fork parent ignores SIGINT while its jobs run, and a job it
  // starts after the first ask never got it.
  void AskAgainIfDue();
  // Kills the group if it was asked to stop its grace ago or more and
  // still runs: true if it did.
  bool KillIfOverdue();
  // Kills the group now (a second Ctrl-C).
  void Kill();

  // Once Ended: kills what the fuzzer left running in its group and reaps
  // it. Its wait status.
  int Reap();

  bool asked_to_stop() const { return asked_at_ != absl::InfiniteFuture(); }
  bool killed() const { return killed_; }
  absl::Duration stop_grace() const { return stop_grace_; }

 private:
  FuzzerProcess(pid_t pid, std::unique_ptr<TempDir> temp,
                absl::Duration stop_grace)
      : pid_(pid), temp_(std::move(temp)), stop_grace_(stop_grace) {}
  void Ask();  // the signals of AskToStop

  pid_t pid_;
  std::unique_ptr<TempDir> temp_;  // the fuzzer's TMPDIR
  absl::Duration stop_grace_;
  bool forks_ = false;  // a libFuzzer -fork parent (--jobs N)
  absl::Time asked_at_ = absl::InfiniteFuture();
  absl::Time last_asked_at_ = absl::InfinitePast();
  bool killed_ = false;
  bool reaped_ = false;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_FUZZER_PROCESS_H_
