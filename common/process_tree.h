// A command's whole process tree, whatever groups it made: GNU `timeout`
// and `setsid` move a child out of the command's process group, where
// kill(-pgid) does not reach it (the fifteenth fault run: a tool run as
// `timeout 100 TOOL` ran on for 100 s after its run was said killed).

#ifndef PTXDIFF_COMMON_PROCESS_TREE_H_
#define PTXDIFF_COMMON_PROCESS_TREE_H_

#include <sys/types.h>

#include <optional>
#include <vector>

namespace ptxdiff {

// What /proc/PID/stat says of a process: its state letter ('R', 'S', 'T',
// 'Z', ...) and its parent.
struct ProcessStatus {
  char state = '?';
  pid_t parent = -1;
};
// nullopt once the process is gone (or /proc cannot be read).
std::optional<ProcessStatus> StatusOf(pid_t pid);
// Whether `pid` has ended: gone, or a zombie nobody has reaped yet.
bool HasEnded(pid_t pid);

// The processes descended from `root` now (children, their children, ...),
// read from /proc; none where /proc cannot be read. A remover of temporary
// files (common/files.h) and what it runs are left out: it must outlive
// the process it is for.
std::vector<pid_t> DescendantsOf(pid_t root);

// SIGKILL to `root`'s process group and to every process descended from
// it, and to the groups such a process leads. They are stopped first, so
// that none forks a child out of reach between the look and the kill.
// `root` itself stays unreaped (its caller waits for it).
void KillProcessTree(pid_t root);

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_PROCESS_TREE_H_
