#include "common/process_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {
namespace {

// The bytes of /proc file `path` (at most 64 KiB), "" if it cannot be read.
// read(2), not a stream: libstdc++'s filebuf throws when a read fails, and
// reading a process's file as it exits fails with ESRCH (a flake of the
// campaign tests: Stop's interrupt of a worker ended in std::terminate).
std::string ReadProcFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string bytes;
  char piece[4096];
  ssize_t n;
  while (
      bytes.size() < (size_t{64} << 10) &&
      ((n = read(fd, piece, sizeof(piece))) > 0 || (n < 0 && errno == EINTR))) {
    if (n > 0) bytes.append(piece, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

// Whether `pid` is a remover (common/files.h's StartRootRemover, $0
// "ptxdiff-remover"): it must outlive the process it cleans up after, or
// that process's temporary files stay behind.
bool IsRemover(pid_t pid) {
  const std::string cmdline =
      ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline");
  return cmdline.find(std::string("\0ptxdiff-remover\0", 17)) !=
         std::string::npos;
}

// Every process's children now.
std::unordered_map<pid_t, std::vector<pid_t>> ChildrenNow() {
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* e = readdir(proc)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    const std::optional<ProcessStatus> status = StatusOf(pid);
    if (status && status->parent > 0) children[status->parent].push_back(pid);
  }
  closedir(proc);
  return children;
}

}  // namespace

std::optional<ProcessStatus> StatusOf(pid_t pid) {
  // The command name may hold spaces and parentheses: the fields after it
  // are read from its last ')'.
  const std::string stat =
      ReadProcFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  const std::vector<absl::string_view> fields = absl::StrSplit(
      absl::string_view(stat).substr(name_end + 1), ' ', absl::SkipEmpty());
  ProcessStatus status;
  if (fields.size() < 2 || fields[0].size() != 1 ||
      !absl::SimpleAtoi(fields[1], &status.parent))
    return std::nullopt;
  status.state = fields[0][0];
  return status;
}

bool HasEnded(pid_t pid) {
  const std::optional<ProcessStatus> status = StatusOf(pid);
  return !status || status->state == 'Z' || status->state == 'X';
}

std::vector<pid_t> DescendantsOf(pid_t root) {
  const std::unordered_map<pid_t, std::vector<pid_t>> children = ChildrenNow();
  std::vector<pid_t> found;
  std::vector<pid_t> next = {root};
  while (!next.empty()) {
    const pid_t p = next.back();
    next.pop_back();
    const auto it = children.find(p);
    if (it == children.end()) continue;
    for (const pid_t child : it->second) {
      if (IsRemover(child)) continue;  // nor what it runs: it cleans up
      found.push_back(child);
      next.push_back(child);
    }
  }
  return found;
}

void KillProcessTree(pid_t root) {
  kill(-root, SIGSTOP);
  std::vector<pid_t> tree;
  // The second look finds what forked while the first stopped the rest.
  for (int look = 0; look < 2; ++look) {
    for (const pid_t p : DescendantsOf(root)) {
      if (std::find(tree.begin(), tree.end(), p) != tree.end()) continue;
      kill(p, SIGSTOP);
      tree.push_back(p);
    }
  }
  const pid_t own_group = getpgrp();
  for (const pid_t p : tree) {
    const pid_t group = getpgid(p);
    kill(p, SIGKILL);
    if (group == p && group != own_group) kill(-group, SIGKILL);
  }
  kill(-root, SIGKILL);
}

}  // namespace ptxdiff
