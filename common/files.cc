#include "common/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ptxdiff {
namespace {

absl::Status ErrnoError(absl::string_view what, absl::string_view path) {
  const std::string message =
      absl::StrCat(what, " ", path, ": ", std::strerror(errno));
  return errno == ENOENT ? absl::NotFoundError(message)
                         : absl::InternalError(message);
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("cannot write", path);
    data.remove_prefix(n);
  }
  return absl::OkStatus();
}

}  // namespace

std::string TempNameIn(const std::string& dir, absl::string_view what) {
  static std::atomic<int> counter{0};
  return absl::StrCat(dir, "/.tmp-", what, "-", getpid(), "-", counter++);
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view bytes) {
  const size_t slash = path.rfind('/');
  const std::string tmp = TempNameIn(
      slash == std::string::npos ? "." : path.substr(0, slash), "file");
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", tmp);
  absl::Status status = WriteAll(fd, bytes, tmp);
  if (status.ok() && fsync(fd) != 0) status = ErrnoError("cannot sync", tmp);
  if (close(fd) != 0 && status.ok()) status = ErrnoError("cannot close", tmp);
  if (status.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot rename into", path);
  }
  if (!status.ok()) unlink(tmp.c_str());
  return status;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError("cannot read", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return ErrnoError("cannot write", path);
  return absl::OkStatus();
}

absl::Status MakeDirs(const std::string& path) {
  std::string partial;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    absl::StrAppend(&partial, part, "/");
    if (!part.empty() && mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("cannot create", partial);
    }
  }
  return absl::OkStatus();
}

std::string ReadFileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const bool cut = size > static_cast<std::streamoff>(max_bytes);
  in.seekg(cut ? size - static_cast<std::streamoff>(max_bytes) : 0);
  std::string tail(cut ? max_bytes : static_cast<size_t>(size), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<size_t>(in.gcount()));
  return cut ? absl::StrCat("...", tail) : tail;
}

std::string TempRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp ? tmp : "/tmp";
}

void RemoveTree(const std::string& path) {
  // Depth first, never following a symbolic link out of the directory.
  nftw(
      path.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) {
        remove(path);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

std::string ProcessTempDir(absl::string_view prefix, int pid) {
  return absl::StrCat(TempRoot(), "/", prefix, "-", pid);
}

void RemoveOrphanedProcessTempDirs(absl::string_view prefix) {
  DIR* dir = opendir(TempRoot().c_str());
  if (dir == nullptr) return;
  const std::string start = absl::StrCat(prefix, "-");
  std::vector<int> orphans;
  while (const struct dirent* e = readdir(dir)) {
    absl::string_view name = e->d_name;
    int pid = 0;
    if (absl::ConsumePrefix(&name, start) && absl::SimpleAtoi(name, &pid) &&
        pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
      orphans.push_back(pid);
    }
  }
  closedir(dir);
  for (int pid : orphans) RemoveTree(ProcessTempDir(prefix, pid));
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::Create(
    absl::string_view prefix) {
  return CreateIn(TempRoot(), prefix);
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::CreateIn(
    const std::string& parent, absl::string_view prefix) {
  std::string path = absl::StrCat(parent, "/", prefix, "-XXXXXX");
  if (mkdtemp(path.data()) == nullptr) {
    return ErrnoError("cannot create a temporary directory", path);
  }
  return std::unique_ptr<TempDir>(new TempDir(std::move(path)));
}

TempDir::~TempDir() { RemoveTree(path_); }

std::string TempDir::File(absl::string_view name) const {
  return absl::StrCat(path_, "/", name);
}

}  // namespace ptxdiff
