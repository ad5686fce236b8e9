// Whole-file reads and writes, and private temporary directories.
//
// Small and synchronous: for the files a backend hands to a tool (a PTX
// module, an input buffer) and reads back (an output buffer, a log).

#ifndef PTXDIFF_COMMON_FILES_H_
#define PTXDIFF_COMMON_FILES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {

// The bytes of `path`; NotFound if it does not exist, FailedPrecondition for
// a directory, Internal otherwise.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// The same for a file a user names, which may be endless (/dev/zero, a
// pipe) or huge: InvalidArgument, without reading on, past `max_bytes`.
absl::StatusOr<std::string> ReadFileAtMost(const std::string& path,
                                           size_t max_bytes);

// The bytes of a record a run left in a directory (a pending journal, a
// tool's refusal memory, a triage entry's file), which is a regular file of
// at most `max_bytes` (a link to one is read): anything else (a FIFO, a
// link to /dev/zero, a file grown huge) is damage, refused without reading
// it (InvalidArgument, naming the file), so that it can neither block nor
// take the memory. NotFound if missing; FailedPrecondition for a directory
// ("is a directory, not a file", as ReadFile says), which is no damage of
// the file but a name taken by something else.
absl::StatusOr<std::string> ReadRecordFile(const std::string& path,
                                           size_t max_bytes);

// `path` opened to write in place (`flags`: O_TRUNC or O_APPEND; created,
// mode 0644, if missing), a descriptor the caller closes. It does not block:
// a FIFO or a socket there is refused (FailedPrecondition, naming it) whether
// or not something reads it, since a file a command writes in place (a log, a
// dictionary) is a file; opening a FIFO nobody reads would wait for ever.
// A character device (/dev/null) is written.
absl::StatusOr<int> OpenToWrite(const std::string& path, int flags);

// Replaces `path` with `bytes` (OpenToWrite's refusals hold).
absl::Status WriteFile(const std::string& path, absl::string_view bytes);

// Adds `bytes` at the end of `path` (created if missing), in one write:
// lines appended by several processes at once do not interleave.
// OpenToWrite's refusals hold.
absl::Status AppendToFile(const std::string& path, absl::string_view bytes);

// The paths of the files in `dir` whose names end in `suffix`, hidden ones
// (a leading '.') left out, in no particular order; none if it cannot be read.
std::vector<std::string> FilesIn(const std::string& dir,
                                 absl::string_view suffix = "");

// Replaces `path` through a temporary file in its directory, synced, and a
// rename: a reader sees the old content or the new, never a part. A device,
// FIFO, socket or directory there is not replaced (FailedPrecondition).
absl::Status WriteFileAtomic(const std::string& path, absl::string_view bytes);

// A file the user named to write (`report --html FILE`): replaced as
// WriteFileAtomic does where it is a file or missing, else written in place
// through it (a link, /dev/stdout, a device; OpenToWrite's refusals hold):
// never a device replaced by a file.
absl::Status WriteOutputFile(const std::string& path, absl::string_view bytes);

// A name in `dir` that no other process or thread uses at the same time:
// <dir>/.tmp-<what>-<pid>-<n>.
std::string TempNameIn(const std::string& dir, absl::string_view what);

// Removes the TempNameIn files and directories in `dir` whose process is
// gone (a run killed while it replaced a file or wrote an entry left them).
void RemoveOrphanedTempFiles(const std::string& dir);

// Creates `path` and every missing parent (mode 0755); OK if it exists as a
// directory (or a link to one), FailedPrecondition if something else has
// its name.
absl::Status MakeDirs(const std::string& path);

// Whether `path` is a directory (or a link to one).
bool IsDirectory(const std::string& path);

// At most the last `max_bytes` of `path` (all of a shorter file), prefixed
// with "..." when cut; "" when it cannot be read or is no regular file.
std::string ReadFileTail(const std::string& path, size_t max_bytes);

// $TMPDIR, else /tmp.
std::string TempRoot();

// The harness's own temporary files failed on this machine (TMPDIR full,
// read-only, over quota, gone): `cause`, same code and message, marked so
// that whoever reports it can tell it from a verdict on the implementation
// (ptxdiff-worker says so in its ERROR, docs/worker-protocol.md).
absl::Status EnvironmentFailure(absl::Status cause);
bool IsEnvironmentFailure(const absl::Status& status);

// Removes `path` and everything in it, never following a symbolic link out
// of it; nothing if it does not exist.
void RemoveTree(const std::string& path);

// TempRoot()/<prefix>-<pid>: the directory a process keeps its temporary
// files under, named so that whoever reaps the process (or a later process
// finding `pid` dead) can remove what a killed process left behind.
std::string ProcessTempDir(absl::string_view prefix, int pid);
// Removes every ProcessTempDir(prefix, pid) whose process is gone.
void RemoveOrphanedProcessTempDirs(absl::string_view prefix);

// ProcessTempDir("ptxdiff", this process's pid), created (mode 0700) on
// first use with a process, its remover, that removes it and everything in
// it once this process has ended, however it ends (a `kill -9` included):
// where TempDir::Create makes its directories. It is removed whenever it
// empties (so that $TMPDIR holds nothing of a process that holds no
// TempDir) and made again when used. TempRoot() if it cannot be made.
std::string ProcessTempRoot();

// The process groups this process runs commands in (RunProcess) are
// recorded under ProcessTempRoot() while they run: the remover kills those
// still recorded when this process ends first. Record a group as soon as it
// is started, and forget it before its leader is reaped (while its id
// cannot be another group's).
void RecordProcessGroup(int pgid);
void ForgetProcessGroup(int pgid);

// A private directory (mode 0700), removed with everything in it when
// destroyed, whatever happened in between (a tool run inside it may leave
// files and directories of its own).
class TempDir {
 public:
  // `prefix` names the directory: ProcessTempRoot()/<prefix>-XXXXXX (under
  // $TMPDIR, else /tmp), gone with this process if it is killed first.
  static absl::StatusOr<std::unique_ptr<TempDir>> Create(
      absl::string_view prefix);
  // The same under `parent` instead of TempRoot(): <parent>/<prefix>-XXXXXX.
  static absl::StatusOr<std::unique_ptr<TempDir>> CreateIn(
      const std::string& parent, absl::string_view prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The absolute path of `name` inside the directory.
  std::string File(absl::string_view name) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool in_root_ = false;  // made in ProcessTempRoot(), removed when empty
};

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_FILES_H_
