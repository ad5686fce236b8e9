#include "common/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

extern char** environ;

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

namespace {

// What `path` is where it is neither missing nor a regular file nor a link
// ("a device"), else empty.
std::string NoFileThere(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) ||
      S_ISLNK(st.st_mode))
    return "";
  return S_ISDIR(st.st_mode)    ? "a directory"
         : S_ISFIFO(st.st_mode) ? "a FIFO"
         : S_ISSOCK(st.st_mode) ? "a socket"
                                : "a device";
}

}  // namespace

absl::Status WriteOutputFile(const std::string& path, absl::string_view bytes) {
  struct stat st;
  const bool file_or_missing =
      lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode);
  return file_or_missing ? WriteFileAtomic(path, bytes)
                         : WriteFile(path, bytes);
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view bytes) {
  // A rename would put a file where the device was (as root: /dev/null).
  if (const std::string what = NoFileThere(path); !what.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is ", what, ", not a file: not replaced"));
  }
  const size_t slash = path.rfind('/');
  const std::string tmp = TempNameIn(
      slash == std::string::npos ? "." : path.substr(0, slash), "file");
  // Each error names `path`, the file the caller asked for: the temporary
  // name is ours, and means nothing to the user who reads the message.
  const int fd =
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot write", path);
  absl::Status status = WriteAll(fd, bytes, path);
  if (status.ok() && fsync(fd) != 0) status = ErrnoError("cannot sync", path);
  if (close(fd) != 0 && status.ok()) status = ErrnoError("cannot close", path);
  if (status.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot rename into", path);
  }
  if (!status.ok()) unlink(tmp.c_str());
  return status;
}

namespace {

// `path` opened to read, or why not (a directory is named as one).
absl::StatusOr<std::ifstream> OpenToRead(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a directory, not a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError("cannot read", path);
  return in;
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  PTXDIFF_ASSIGN_OR_RETURN(std::ifstream in, OpenToRead(path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

absl::StatusOr<std::string> ReadFileAtMost(const std::string& path,
                                           size_t max_bytes) {
  PTXDIFF_ASSIGN_OR_RETURN(std::ifstream in, OpenToRead(path));
  // In pieces, to one byte more than allowed (which tells a file at the
  // bound from a longer one): a large bound costs a small file nothing.
  std::string bytes;
  // A file's size known, its bytes are not copied as the string grows.
  if (struct stat st; stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    bytes.reserve(std::min(static_cast<size_t>(st.st_size), max_bytes) + 1);
  char piece[1 << 16];
  while (bytes.size() <= max_bytes) {
    const size_t want = std::min(sizeof(piece), max_bytes + 1 - bytes.size());
    in.read(piece, static_cast<std::streamsize>(want));
    bytes.append(piece, static_cast<size_t>(in.gcount()));
    if (static_cast<size_t>(in.gcount()) < want) break;  // its end, or an error
  }
  if (bytes.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is larger than ", max_bytes,
                     " bytes (or endless): not read"));
  }
  if (in.bad()) return ErrnoError("cannot read", path);
  return bytes;
}

absl::StatusOr<std::string> ReadRecordFile(const std::string& path,
                                           size_t max_bytes) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return ErrnoError("cannot read", path);
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a directory, not a file"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file: not read"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is larger than ", max_bytes, " bytes (or endless): not read"));
  }
  return ReadFileAtMost(path, max_bytes);  // it may have grown since
}

absl::StatusOr<int> OpenToWrite(const std::string& path, int flags) {
  const auto not_a_file = [&path](absl::string_view what) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is ", what, ", not a regular file: not written"));
  };
  int fd;
  do {
    fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | flags,
              0644);
  } while (fd < 0 && errno == EINTR);
  // ENXIO: a FIFO without a reader (or a socket), which a blocking open
  // would wait on for ever.
  if (fd < 0 && errno == ENXIO) return not_a_file("a FIFO or a socket");
  if (fd < 0 && errno == EISDIR) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is a directory, not a file"));
  }
  if (fd < 0) return ErrnoError("cannot write", path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const absl::Status status = ErrnoError("cannot write", path);
    close(fd);
    return status;
  }
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    close(fd);
    return not_a_file(S_ISFIFO(st.st_mode) ? "a FIFO" : "a socket");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  PTXDIFF_ASSIGN_OR_RETURN(const int fd, OpenToWrite(path, O_TRUNC));
  absl::Status status = WriteAll(fd, bytes, path);
  if (close(fd) != 0 && status.ok()) status = ErrnoError("cannot write", path);
  return status;
}

absl::Status AppendToFile(const std::string& path, absl::string_view bytes) {
  PTXDIFF_ASSIGN_OR_RETURN(const int fd, OpenToWrite(path, O_APPEND));
  const ssize_t wrote = write(fd, bytes.data(), bytes.size());
  const int error = errno;
  close(fd);
  if (wrote != static_cast<ssize_t>(bytes.size())) {
    return absl::InternalError(absl::StrCat(
        "cannot write to ", path, ": ",
        wrote < 0 ? std::strerror(error) : "short write (a full disk?)"));
  }
  return absl::OkStatus();
}

std::vector<std::string> FilesIn(const std::string& dir,
                                 absl::string_view suffix) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name[0] != '.' && absl::EndsWith(name, suffix))
        files.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  return files;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status MakeDirs(const std::string& path) {
  std::string partial;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    absl::StrAppend(&partial, part, "/");
    if (!part.empty() && mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("cannot create", partial);
    }
  }
  // EEXIST holds for a file of that name too, which is no directory to use.
  if (!path.empty() && !IsDirectory(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", path,
                     ": a file of that name is there, "
                     "not a directory"));
  }
  return absl::OkStatus();
}

std::string ReadFileTail(const std::string& path, size_t max_bytes) {
  // Seeking needs a regular file, and opening a FIFO would block.
  if (struct stat st; stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return "";
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

namespace {
constexpr absl::string_view kEnvironmentFailureUrl = "ptxdiff/environment";
}  // namespace

absl::Status EnvironmentFailure(absl::Status cause) {
  if (!cause.ok()) cause.SetPayload(kEnvironmentFailureUrl, absl::Cord("1"));
  return cause;
}

bool IsEnvironmentFailure(const absl::Status& status) {
  return status.GetPayload(kEnvironmentFailureUrl).has_value();
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

namespace {

// Whether no process has id `pid` (one of another user's is not gone).
bool ProcessIsGone(int pid) {
  return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

void RemoveOrphanedTempFiles(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> orphans;
  while (const struct dirent* e = readdir(d)) {
    // .tmp-<what>-<pid>-<n>, as TempNameIn names them.
    absl::string_view name = e->d_name;
    if (!absl::ConsumePrefix(&name, ".tmp-")) continue;
    const std::vector<absl::string_view> parts = absl::StrSplit(name, '-');
    int pid = 0;
    if (parts.size() >= 3 && absl::SimpleAtoi(parts[parts.size() - 2], &pid) &&
        ProcessIsGone(pid)) {
      orphans.push_back(absl::StrCat(dir, "/", e->d_name));
    }
  }
  closedir(d);
  // A directory too: an entry being written (the sixteenth fault run: one
  // left by a Ctrl-C of `triage merge`, kept by every merge after).
  for (const std::string& path : orphans) RemoveTree(path);
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
        ProcessIsGone(pid)) {
      orphans.push_back(pid);
    }
  }
  closedir(dir);
  for (int pid : orphans) RemoveTree(ProcessTempDir(prefix, pid));
}

namespace {

// Starts the process that removes `root` once this process has ended,
// however it ends, and first kills the process groups recorded in
// `root`/groups (RecordProcessGroup): a shell reading a pipe whose only
// writer is this process (the end is close-on-exec, so no command this
// process runs holds it), which sees end-of-file when the process is gone.
// In a process group of its own, so that a Ctrl-C at the terminal does not
// end it first.
bool StartRootRemover(const std::string& root) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  const char* argv[] = {
      "/bin/sh",
      "-c",
      "read -r _; for g in \"$1\"/groups/*; do [ -e \"$g\" ] && "
      "kill -9 \"-${g##*/}\"; done 2>/dev/null; rm -rf -- \"$1\"",
      "ptxdiff-remover",
      root.c_str(),
      nullptr};
  pid_t pid;
  const int spawned = posix_spawn(&pid, argv[0], &actions, &attr,
                                  const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[0]);
  if (spawned != 0) {
    close(fds[1]);
    return false;
  }
  return true;  // fds[1] stays open, unused, for the life of the process
}

}  // namespace

namespace {

// The roots this process has a remover for, by the TempRoot() they are in
// ($TMPDIR may change), and the pid they are for (a forked copy of the
// process makes its own).
struct Roots {
  std::mutex mu;
  pid_t owner = 0;
  absl::flat_hash_map<std::string, std::string> by_temp_root;
};
Roots& TheRoots() {
  static auto* roots = new Roots;  // never destroyed: removers outlive main
  return *roots;
}

// Removes the root of `path` (a TempDir or a group record in it) once empty:
// the root comes back with the next use, and until then $TMPDIR holds
// nothing of this process.
void RemoveRootIfEmpty(const std::string& root) { rmdir(root.c_str()); }

}  // namespace

std::string ProcessTempRoot() {
  Roots& roots = TheRoots();
  std::lock_guard<std::mutex> lock(roots.mu);
  if (roots.owner != getpid()) {
    roots.by_temp_root.clear();
    roots.owner = getpid();
  }
  const std::string temp_root = TempRoot();
  auto [it, added] = roots.by_temp_root.emplace(temp_root, "");
  if (added) {
    RemoveOrphanedProcessTempDirs("ptxdiff");  // a remover killed too
    const std::string root = ProcessTempDir("ptxdiff", getpid());
    it->second = (mkdir(root.c_str(), 0700) == 0 || errno == EEXIST) &&
                         StartRootRemover(root)
                     ? root
                     : temp_root;  // no better place: as before, unguarded
    if (it->second == temp_root) rmdir(root.c_str());
  }
  // Made again where it was removed when it last emptied.
  if (it->second != temp_root) mkdir(it->second.c_str(), 0700);
  return it->second;
}

namespace {

// `root`/groups/<pgid>, where ProcessTempRoot() has a remover; "" if not.
std::string GroupRecord(const std::string& root, int pgid) {
  if (root == TempRoot()) return "";
  return absl::StrCat(root, "/groups/", pgid);
}

}  // namespace

void RecordProcessGroup(int pgid) {
  // Twice: the root or its groups/ may be removed, emptied, in between.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string root = ProcessTempRoot();
    const std::string record = GroupRecord(root, pgid);
    if (record.empty()) return;
    mkdir((root + "/groups").c_str(), 0700);
    const int fd = open(record.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      close(fd);
      return;
    }
  }
}

void ForgetProcessGroup(int pgid) {
  const std::string root = ProcessTempRoot();
  const std::string record = GroupRecord(root, pgid);
  if (record.empty()) return;
  unlink(record.c_str());
  rmdir((root + "/groups").c_str());
  RemoveRootIfEmpty(root);
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::Create(
    absl::string_view prefix) {
  // Twice: the root may be removed, emptied, between its making and this.
  absl::StatusOr<std::unique_ptr<TempDir>> dir =
      CreateIn(ProcessTempRoot(), prefix);
  if (!dir.ok() && absl::IsNotFound(dir.status()))
    dir = CreateIn(ProcessTempRoot(), prefix);
  if (dir.ok()) (*dir)->in_root_ = true;
  return dir;
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::CreateIn(
    const std::string& parent, absl::string_view prefix) {
  std::string path = absl::StrCat(parent, "/", prefix, "-XXXXXX");
  if (mkdtemp(path.data()) == nullptr) {
    return ErrnoError("cannot create a temporary directory", path);
  }
  return std::unique_ptr<TempDir>(new TempDir(std::move(path)));
}

TempDir::~TempDir() {
  RemoveTree(path_);
  if (in_root_) RemoveRootIfEmpty(path_.substr(0, path_.rfind('/')));
}

std::string TempDir::File(absl::string_view name) const {
  return absl::StrCat(path_, "/", name);
}

}  // namespace ptxdiff
