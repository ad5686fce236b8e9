#include "triage/triage_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "triage/repro_ptx.h"
#include "triage/text_case.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kPtxdiffVersion = "0.1";

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

std::string Now() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::map<std::string, std::string> ParseMeta(absl::string_view text) {
  std::map<std::string, std::string> meta;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    meta[std::string(absl::StripAsciiWhitespace(line.substr(0, colon)))] =
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return meta;
}

std::string FormatMeta(const std::map<std::string, std::string>& meta) {
  std::string out;
  for (const auto& [key, value] : meta) absl::StrAppend(&out, key, ": ", value, "\n");
  return out;
}

void RemoveTree(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

// Builds a directory of `files` under a temporary name, then renames it to
// `path` in one step.
absl::Status WriteDirectoryAtomic(const std::string& path,
                                  const std::map<std::string, std::string>& files) {
  const std::string tmp = TempNameIn(path.substr(0, path.rfind('/')), "entry");
  if (mkdir(tmp.c_str(), 0755) != 0) return ErrnoError("cannot create", tmp);
  absl::Status status;
  for (const auto& [name, content] : files) {
    status = WriteFileAtomic(tmp + "/" + name, content);
    if (!status.ok()) break;
  }
  if (status.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("cannot rename into", path);
  }
  if (!status.ok()) RemoveTree(tmp);
  return status;
}

// An exclusive lock on the directory's .lock file, held for its lifetime.
class DirectoryLock {
 public:
  static absl::StatusOr<DirectoryLock> Acquire(const std::string& dir) {
    const std::string path = dir + "/.lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("cannot create the lock file", path);
    while (flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) {
        close(fd);
        return ErrnoError("cannot lock", path);
      }
    }
    return DirectoryLock(fd);
  }
  DirectoryLock(DirectoryLock&& other) : fd_(other.fd_) { other.fd_ = -1; }
  ~DirectoryLock() {
    if (fd_ >= 0) close(fd_);  // closing releases the flock
  }

 private:
  explicit DirectoryLock(int fd) : fd_(fd) {}
  int fd_;
};

// meta's `found_as`: the spellings a root cause was found as before
// minimizing, comma-separated, each once.
void AddFoundAs(const Finding& f, std::map<std::string, std::string>& meta) {
  std::vector<std::string> all = absl::StrSplit(meta["found_as"], ", ", absl::SkipEmpty());
  for (const std::string& s : f.found_as) {
    if (std::find(all.begin(), all.end(), s) == all.end()) all.push_back(s);
  }
  if (all.empty()) {
    meta.erase("found_as");
  } else {
    meta["found_as"] = absl::StrJoin(all, ", ");
  }
}

// How a crash or hang ended, in a few words, from its detail's first line:
// "killed by signal 11 (SIGSEGV)" from "ptx-cmd: command '...' failed on
// div.u32 (1 tuple): killed by signal 11 (SIGSEGV); its output ends: ...".
std::string HowItEnded(absl::string_view detail) {
  absl::string_view line = detail.substr(0, detail.find('\n'));
  for (absl::string_view marker : {" tuple): ", " tuples): "}) {
    if (const size_t at = line.find(marker); at != absl::string_view::npos) {
      line = line.substr(at + marker.size());
      break;
    }
  }
  for (absl::string_view tail : {"; its output ends:", "; it printed nothing"}) {
    line = line.substr(0, line.find(tail));
  }
  return std::string(line.substr(0, 120));
}

std::map<std::string, std::string> NewMeta(const Finding& f) {
  const std::string now = Now();
  std::map<std::string, std::string> meta = {
      {"first_seen", now},
      {"last_seen", now},
      {"count", absl::StrCat(f.occurrences)},
      {"backend", f.backend_identity},
      {"ptxdiff_version", std::string(kPtxdiffVersion)},
      {"reading", std::string(ReadingName(f.reading))},
      {"minimize_backend_calls", absl::StrCat(f.minimize_backend_calls)},
      {"minimize_seconds", absl::StrCat(f.minimize_seconds)},
  };
  if (f.flaky) meta["flaky"] = "the minimized case did not reproduce";
  if (f.kind != FindingKind::kValueMismatch && !f.detail.empty()) {
    meta["how"] = HowItEnded(f.detail);  // for `triage list` and summaries
  }
  AddFoundAs(f, meta);
  return meta;
}

absl::Status ValidateEntryName(absl::string_view entry) {
  if (entry.find('/') != absl::string_view::npos || entry.empty() || entry[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat("'", entry, "' is not an entry name"));
  }
  return ParseEntryName(entry).status();
}

}  // namespace

int64_t EntryInfo::count() const {
  int64_t n = 0;
  auto it = meta.find("count");
  return it != meta.end() && absl::SimpleAtoi(it->second, &n) ? n : 0;
}

bool RootCause::explained() const {
  for (const EntryInfo* e : entries) {
    if (!e->explained()) return false;
  }
  return true;
}

std::vector<RootCause> GroupByRootCause(const std::vector<EntryInfo>& entries) {
  std::vector<RootCause> causes;
  for (const EntryInfo& e : entries) {
    const Signature& s = e.signature;
    auto it = std::find_if(causes.begin(), causes.end(), [&](const RootCause& c) {
      return c.kind == s.kind && c.backend == s.backend && c.spelling == s.spelling;
    });
    if (it == causes.end()) {
      it = causes.insert(causes.end(), {.kind = s.kind, .backend = s.backend, .spelling = s.spelling});
    }
    it->entries.push_back(&e);
    it->count += e.count();
  }
  return causes;
}

std::string EntriesAndCauses(size_t entries, size_t causes) {
  return absl::StrCat(entries, entries == 1 ? " entry, " : " entries, ", causes,
                      causes == 1 ? " root cause" : " root causes");
}

absl::StatusOr<TriageStore> TriageStore::Open(const std::string& dir, bool create) {
  if (!IsDirectory(dir)) {
    if (!create) {
      return absl::FailedPreconditionError(
          absl::StrCat("triage directory ", dir, " does not exist"));
    }
    std::string partial;
    for (absl::string_view part : absl::StrSplit(dir, '/')) {
      absl::StrAppend(&partial, part, "/");
      if (!part.empty()) mkdir(partial.c_str(), 0755);
    }
    if (!IsDirectory(dir)) return ErrnoError("cannot create triage directory", dir);
  }
  // Proves the directory writable (access() says yes to root on read-only
  // mounts too): the lock file is needed for every change anyway.
  auto lock = DirectoryLock::Acquire(dir);
  if (!lock.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "triage directory ", dir, " is not writable: ", lock.status().message()));
  }
  return TriageStore(dir);
}

absl::StatusOr<FileResult> TriageStore::File(const Finding& finding) {
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  const std::string name = EntryName(SignatureOf(finding));
  if (name.size() > 240) {
    return absl::InvalidArgumentError(absl::StrCat("entry name too long: ", name));
  }
  const std::string path = dir_ + "/" + name;
  if (IsDirectory(path)) {
    PTXDIFF_ASSIGN_OR_RETURN(std::string text, ReadFile(path + "/meta.txt"));
    std::map<std::string, std::string> meta = ParseMeta(text);
    int64_t count = 0;
    (void)absl::SimpleAtoi(meta["count"], &count);
    meta["count"] = absl::StrCat(count + finding.occurrences);
    meta["last_seen"] = Now();
    AddFoundAs(finding, meta);
    PTXDIFF_RETURN_IF_ERROR(WriteFileAtomic(path + "/meta.txt", FormatMeta(meta)));
    return FileResult{name, false, meta.count("explained") > 0, IndexError()};
  }
  std::map<std::string, std::string> files = {
      {"case.txt", FormatTextCase(finding)},
      {"repro.ptx", ReproPtx(finding.tuple)},
      {"meta.txt", FormatMeta(NewMeta(finding))},
  };
  if (!finding.raw_input.empty()) files["input.bin"] = finding.raw_input;
  PTXDIFF_RETURN_IF_ERROR(WriteDirectoryAtomic(path, files));
  return FileResult{name, true, false, IndexError()};
}

std::string TriageStore::IndexError() const {
  const absl::Status index = RewriteIndex();
  return index.ok() ? "" : absl::StrCat("INDEX.md was not rewritten: ", index.message());
}

absl::StatusOr<std::vector<EntryInfo>> TriageStore::List() const {
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return ErrnoError("cannot list", dir_);
  std::vector<EntryInfo> entries;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    auto signature = ParseEntryName(name);
    if (name[0] == '.' || !signature.ok() || !IsDirectory(dir_ + "/" + name)) continue;
    auto meta = ReadFile(dir_ + "/" + name + "/meta.txt");
    entries.push_back({name, *signature, meta.ok() ? ParseMeta(*meta) : decltype(EntryInfo::meta){}});
  }
  closedir(d);
  std::sort(entries.begin(), entries.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.name < b.name; });
  return entries;
}

absl::StatusOr<std::string> TriageStore::Show(absl::string_view entry) const {
  PTXDIFF_RETURN_IF_ERROR(ValidateEntryName(entry));
  const std::string path = absl::StrCat(dir_, "/", entry);
  if (!IsDirectory(path)) {
    return absl::NotFoundError(absl::StrCat("no entry ", entry, " in ", dir_));
  }
  PTXDIFF_ASSIGN_OR_RETURN(std::string text, ReadFile(path + "/case.txt"));
  PTXDIFF_ASSIGN_OR_RETURN(std::string meta, ReadFile(path + "/meta.txt"));
  return absl::StrCat(text, "\n# meta.txt\n", meta, "\n# files: ", path, "/\n");
}

absl::Status TriageStore::MarkExplained(absl::string_view entry,
                                        absl::string_view reason) {
  PTXDIFF_RETURN_IF_ERROR(ValidateEntryName(entry));
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  const std::string path = absl::StrCat(dir_, "/", entry, "/meta.txt");
  PTXDIFF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  std::map<std::string, std::string> meta = ParseMeta(text);
  meta["explained"] = std::string(reason);
  PTXDIFF_RETURN_IF_ERROR(WriteFileAtomic(path, FormatMeta(meta)));
  return RewriteIndex();
}

absl::StatusOr<int> TriageStore::MergeFrom(const std::string& other_dir) {
  PTXDIFF_ASSIGN_OR_RETURN(TriageStore other, Open(other_dir, /*create=*/false));
  PTXDIFF_ASSIGN_OR_RETURN(std::vector<EntryInfo> theirs, other.List());
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  int added = 0;
  for (const EntryInfo& e : theirs) {
    const std::string mine = dir_ + "/" + e.name;
    if (!IsDirectory(mine)) {
      std::map<std::string, std::string> files;
      for (const char* f : {"case.txt", "repro.ptx", "meta.txt", "input.bin"}) {
        auto content = ReadFile(other_dir + "/" + e.name + "/" + f);
        if (content.ok()) files[f] = *content;
      }
      PTXDIFF_RETURN_IF_ERROR(WriteDirectoryAtomic(mine, files));
      ++added;
      continue;
    }
    PTXDIFF_ASSIGN_OR_RETURN(std::string text, ReadFile(mine + "/meta.txt"));
    std::map<std::string, std::string> meta = ParseMeta(text);
    int64_t count = 0;
    (void)absl::SimpleAtoi(meta["count"], &count);
    meta["count"] = absl::StrCat(count + e.count());
    // RFC 3339 UTC timestamps order as strings.
    auto theirs_at = [&e](const char* key) {
      auto it = e.meta.find(key);
      return it == e.meta.end() ? std::string() : it->second;
    };
    if (!theirs_at("first_seen").empty() && theirs_at("first_seen") < meta["first_seen"]) {
      meta["first_seen"] = theirs_at("first_seen");
    }
    meta["last_seen"] = std::max(meta["last_seen"], theirs_at("last_seen"));
    if (e.explained() && !meta.count("explained")) meta["explained"] = theirs_at("explained");
    PTXDIFF_RETURN_IF_ERROR(WriteFileAtomic(mine + "/meta.txt", FormatMeta(meta)));
  }
  PTXDIFF_RETURN_IF_ERROR(RewriteIndex());
  return added;
}

absl::Status TriageStore::RewriteIndex() const {
  PTXDIFF_ASSIGN_OR_RETURN(std::vector<EntryInfo> entries, List());
  std::string out =
      "# Triage index\n\nRegenerated by ptxdiff on every change; see "
      "triage/README.md for the format.\n\n"
      "| kind | backend | class | variant | count | first seen | last seen | "
      "explained |\n|---|---|---|---|---:|---|---|---|\n";
  for (const EntryInfo& e : entries) {
    auto at = [&e](const char* key) {
      auto it = e.meta.find(key);
      return it == e.meta.end() ? std::string("-") : it->second;
    };
    absl::StrAppend(&out, "| ", FindingKindName(e.signature.kind), " | ",
                    e.signature.backend, " | ", e.signature.disagreement_class, " | `",
                    e.signature.spelling, "` | ", e.count(), " | ", at("first_seen"),
                    " | ", at("last_seen"), " | ", e.explained() ? at("explained") : "",
                    " |\n");
  }
  return WriteFileAtomic(dir_ + "/INDEX.md", out);
}

}  // namespace ptxdiff
