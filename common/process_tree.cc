#include "common/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>

#include "absl/strings/numbers.h"

namespace ptxdiff {
namespace {

// The parent of process `pid` (/proc/PID/stat's fourth field, after the
// command name, which may hold spaces and parentheses), or -1.
pid_t ParentOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t name_end = stat.rfind(')');
  if (name_end == std::string::npos) return -1;
  std::istringstream rest(stat.substr(name_end + 1));
  char state = 0;
  pid_t parent = -1;
  rest >> state >> parent;
  return rest ? parent : -1;
}

// Whether `pid` is a remover (common/files.h's StartRootRemover, $0
// "ptxdiff-remover"): it must outlive the process it cleans up after, or
// that process's temporary files stay behind.
bool IsRemover(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string cmdline((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
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
    const pid_t parent = ParentOf(e->d_name);
    if (parent > 0) children[parent].push_back(pid);
  }
  closedir(proc);
  return children;
}

}  // namespace

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
