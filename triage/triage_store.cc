#include "triage/triage_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "common/version.h"
#include "isa/spelling.h"
#include "triage/entry_files.h"
#include "triage/repro_ptx.h"
#include "triage/text_case.h"

namespace ptxdiff {

// The entry's files, read and mended (entry_files.h).
using triage_internal::AddToCount;
using triage_internal::CheckCase;
using triage_internal::Exists;
using triage_internal::FormatMeta;
using triage_internal::InspectEntry;
using triage_internal::IsMetaValue;
using triage_internal::MetaForUpdate;
using triage_internal::NoteRepairs;
using triage_internal::Now;
using triage_internal::ReadEntryFile;
using triage_internal::SetAside;
using triage_internal::ShowEntry;
using triage_internal::TooLarge;

namespace {

// NotFound unless `dir`/`entry` is a directory.
absl::Status EntryThere(const std::string& dir, absl::string_view entry) {
  if (IsDirectory(absl::StrCat(dir, "/", entry))) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("no entry ", entry, " in ", dir));
}

absl::Status ErrnoError(absl::string_view what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Builds a directory of `files` under a temporary name, then renames it to
// `path` in one step.
absl::Status WriteDirectoryAtomic(
    const std::string& path, const std::map<std::string, std::string>& files) {
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

// How long a change waits for another process's lock on the directory: a
// filing or a merge holds it for milliseconds to seconds; longer, the
// holder is stopped or hung, and waiting on would hang this run silently.
constexpr absl::Duration kLockWait = absl::Seconds(60);
// After this long waiting, it is said on stderr.
constexpr absl::Duration kLockWaitSaid = absl::Seconds(2);

// Takes `fd`'s flock, polling (a blocking flock could not be interrupted or
// given up), within kLockWait of `start`. A lock held by another process
// past it, or a Ctrl-C, is Unavailable, which Open says as such.
absl::Status PollForLock(int fd, const std::string& path, absl::Time start,
                         bool& said) {
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EINTR && errno != EWOULDBLOCK)
      return ErrnoError("cannot lock", path);
    const absl::Duration waited = absl::Now() - start;
    if (Interrupted() || waited >= kLockWait) {
      return absl::UnavailableError(
          Interrupted()
              ? absl::StrCat("interrupted while waiting for ", path)
              : absl::StrCat(path, " has been held by another process for ",
                             absl::FormatDuration(kLockWait),
                             ": not waiting longer (is a process that holds "
                             "it, a ptxdiff or a flock, stopped or hung?)"));
    }
    if (!said && waited >= kLockWaitSaid) {
      std::fprintf(stderr,
                   "ptxdiff: waiting for %s, which another process holds "
                   "(at most %s)\n",
                   path.c_str(), absl::FormatDuration(kLockWait).c_str());
      said = true;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::OkStatus();
}

// An exclusive lock on the directory's .lock file, held for its lifetime.
// Taken through a turnstile, .lock-turn, held from the first try until
// .lock is taken: a process that files repeat after repeat, each under the
// lock, frees it only between two filings, which a polling waiter seldom
// meets, so `fuzz --jobs 2` on a tool wrong everywhere starved one job (the
// eighteenth fault run). The waiter holds the turnstile while it waits, and
// the busy process cannot take the lock again before it.
class DirectoryLock {
 public:
  static absl::StatusOr<DirectoryLock> Acquire(const std::string& dir) {
    const std::string path = dir + "/.lock";
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("cannot create the lock file", path);
    const absl::Time start = absl::Now();
    bool said = false;
    // Without it (a directory where it cannot be created), no turnstile.
    const std::string turn_path = dir + "/.lock-turn";
    const int turn =
        open(turn_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    absl::Status status = turn >= 0 ? PollForLock(turn, turn_path, start, said)
                                    : absl::OkStatus();
    if (status.ok()) status = PollForLock(fd, path, start, said);
    if (turn >= 0) close(turn);  // closing releases the flock
    if (!status.ok()) {
      close(fd);
      return status;
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
  std::vector<std::string> all =
      absl::StrSplit(meta["found_as"], ", ", absl::SkipEmpty());
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
  for (absl::string_view tail :
       {"; its output ends:", "; it said: ", "; it printed nothing"}) {
    line = line.substr(0, line.find(tail));
  }
  return std::string(line.substr(0, 120));
}

}  // namespace

std::string FaultOutput(absl::string_view detail) {
  for (absl::string_view marker : {"; its output ends:\n", "; it said: "}) {
    if (const size_t at = detail.find(marker); at != absl::string_view::npos)
      return std::string(detail.substr(at + marker.size()));
  }
  return "";
}

namespace {

// "3 tuples of add.cc.s32, add.sat.s32": a batch's variants, the first few
// by name.
std::string DescribeBatch(const std::vector<Tuple>& batch) {
  constexpr size_t kNamed = 8;
  std::vector<std::string> named;
  size_t variants = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const bool first = std::none_of(
        batch.begin(), batch.begin() + i,
        [&](const Tuple& t) { return t.variant == batch[i].variant; });
    if (!first) continue;
    if (++variants <= kNamed) named.push_back(Spell(batch[i].variant));
  }
  return absl::StrCat(
      batch.size(), batch.size() == 1 ? " tuple of " : " tuples of ",
      absl::StrJoin(named, ", "),
      variants > kNamed ? absl::StrCat(" and ", variants - kNamed, " more")
                        : "");
}

}  // namespace

std::string FaultCause(const Finding& f) {
  if (f.kind == FindingKind::kValueMismatch || f.unisolated || f.program)
    return "";
  const absl::string_view kind = FindingKindName(f.kind);
  if (!f.oracle.defined()) {
    return absl::StrCat(kind, " where the spec leaves the value open: ",
                        Token(f.oracle.undefined));
  }
  std::string how = HowItEnded(f.detail);
  how = how.substr(0, how.find(" (a shell's"));
  const std::string in_family =
      FaultInFamilyCause(f.kind, f.tuple.variant.family);
  if (f.kind == FindingKind::kHang || how.empty()) return in_family;
  return absl::StrCat(in_family, ": ", how);
}

namespace {

// The cause a backend's note names on a line "cause: ..." (docs/
// worker-protocol.md), or "".
std::string NoteCause(const std::string& note) {
  for (absl::string_view line : absl::StrSplit(note, '\n')) {
    if (absl::ConsumePrefix(&line, "cause: ")) return std::string(line);
  }
  return "";
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
  if (f.unisolated)
    meta["batch"] = DescribeBatch(f.batch);  // what its name hides
  std::string cause = f.cause;
  if (cause.empty()) cause = FaultCause(f);
  if (cause.empty()) cause = NoteCause(f.backend_note);
  if (!cause.empty() && IsMetaValue(cause)) {
    meta["cause"] = std::move(cause);
  }
  if (f.program) {
    meta["what"] = f.program->what;
    meta["shape"] = f.program->shape;
    if (!f.program->assumed.empty() && IsMetaValue(f.program->assumed))
      meta["assumed"] = f.program->assumed;
  }
  if (!f.backend_note.empty()) {
    // Its first line, as a meta value (a worker's text may hold anything);
    // the SASS that ran, if the note has it, is in repro.ptx.
    std::string line = f.backend_note.substr(0, f.backend_note.find('\n'));
    for (char& c : line) {
      if (!IsMetaValue(absl::string_view(&c, 1))) c = ' ';
    }
    meta["obtained"] = std::move(line);
  }
  AddFoundAs(f, meta);
  return meta;
}

// A rebuilt meta.txt (`meta`, its count lost) completed from a repeat of the
// entry's finding; first seen is when the entry's case was written.
void CompleteRebuiltMeta(const std::string& path, const Finding& f,
                         std::map<std::string, std::string>& meta) {
  std::map<std::string, std::string> fresh = NewMeta(f);
  fresh.erase("first_seen");
  struct stat st;
  if (stat((path + "/case.txt").c_str(), &st) == 0) {
    meta.try_emplace(
        "first_seen",
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromTimeT(st.st_mtime),
                         absl::UTCTimeZone()));
  }
  meta.merge(fresh);  // keeps what is there: the count, and its count_lost
}

// The files a finding brings: a program case brings its own.
std::string CaseText(const Finding& f) {
  return f.program ? f.program->case_text : FormatTextCase(f);
}
std::string Repro(const Finding& f) {
  if (f.program) return f.program->repro_ptx;
  if (f.backend_note.empty()) return ReproPtx(f.tuple);
  // How the backend's value came about, and the code that ran, first.
  return absl::StrCat("// ", f.backend, "'s value: ",
                      absl::StrReplaceAll(f.backend_note, {{"\n", "\n// "}}),
                      "\n", ReproPtx(f.tuple));
}

// Rebuilds a damaged or missing case.txt, and a missing repro.ptx, of the
// entry at `path` from `f`, a finding of the same signature (the damaged
// file kept aside). One that cannot be read for another reason is left.
absl::Status RepairCase(const std::string& path, const Signature& signature,
                        const Finding& f,
                        const ProgramCaseCheck& check_program_case,
                        std::vector<std::string>& repairs) {
  const absl::StatusOr<std::string> text = ReadEntryFile(path, "case.txt");
  const std::vector<std::string> damage =
      CheckCase(text, signature, check_program_case);
  if (!damage.empty() && (text.ok() || absl::IsNotFound(text.status()) ||
                          TooLarge(text.status()))) {
    std::string kept;
    if (!absl::IsNotFound(text.status())) {
      PTXDIFF_ASSIGN_OR_RETURN(const std::string aside,
                               SetAside(path, "case.txt", text));
      kept = absl::StrCat(": kept as ", aside);
    }
    PTXDIFF_RETURN_IF_ERROR(WriteFileAtomic(path + "/case.txt", CaseText(f)));
    repairs.push_back(absl::StrCat(absl::StrJoin(damage, "; "), kept,
                                   "; rebuilt from a repeat of the finding"));
  }
  if (!f.unisolated && !Exists(path + "/repro.ptx")) {
    PTXDIFF_RETURN_IF_ERROR(WriteFileAtomic(path + "/repro.ptx", Repro(f)));
    repairs.push_back("repro.ptx was missing: rebuilt");
  }
  return absl::OkStatus();
}

absl::Status ValidateEntryName(absl::string_view entry) {
  if (entry.find('/') != absl::string_view::npos || entry.empty() ||
      entry[0] == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", entry, "' is not an entry name"));
  }
  return ParseEntryName(entry).status();
}

}  // namespace

namespace {

// A `dir` that is there but no directory (a file, a FIFO) is said as that.
absl::Status NoTriageDirectory(const std::string& dir) {
  struct stat st;
  return absl::FailedPreconditionError(absl::StrCat(
      "triage directory ", dir,
      stat(dir.c_str(), &st) == 0 ? " is not a directory" : " does not exist"));
}

}  // namespace

absl::StatusOr<TriageStore> TriageStore::OpenToRead(
    const std::string& dir, ProgramCaseCheck check_program_case) {
  if (!IsDirectory(dir)) return NoTriageDirectory(dir);
  return TriageStore(dir, std::move(check_program_case));
}

absl::StatusOr<TriageStore> TriageStore::Open(
    const std::string& dir, bool create, ProgramCaseCheck check_program_case) {
  if (!IsDirectory(dir)) {
    struct stat st;
    if (!create || stat(dir.c_str(), &st) == 0) return NoTriageDirectory(dir);
    std::string partial;
    int mkdir_error = 0;  // the first mkdir's that failed but EEXIST's
    for (absl::string_view part : absl::StrSplit(dir, '/')) {
      absl::StrAppend(&partial, part, "/");
      if (!part.empty() && mkdir(partial.c_str(), 0755) != 0 &&
          errno != EEXIST && mkdir_error == 0) {
        mkdir_error = errno;
      }
    }
    if (!IsDirectory(dir)) {
      // Its cause (a read-only file system), not the ENOENT of the check.
      if (mkdir_error != 0) errno = mkdir_error;
      return ErrnoError("cannot create triage directory", dir);
    }
  }
  // Proves the directory writable (access() says yes to root on read-only
  // mounts too): the lock file is needed for every change anyway.
  auto lock = DirectoryLock::Acquire(dir);
  if (absl::IsUnavailable(lock.status())) {  // held by another: said so
    return absl::FailedPreconditionError(
        absl::StrCat("triage directory ", dir, ": ", lock.status().message()));
  }
  if (!lock.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("triage directory ", dir,
                     " is not writable: ", lock.status().message()));
  }
  // A run killed while it replaced a file left its temporary copy.
  if (create) RemoveOrphanedTempFiles(dir);
  return TriageStore(dir, std::move(check_program_case));
}

absl::StatusOr<FileResult> TriageStore::File(const Finding& finding) {
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  const std::string name = EntryName(SignatureOf(finding));
  if (name.size() > 240) {
    return absl::InvalidArgumentError(
        absl::StrCat("entry name too long: ", name));
  }
  const std::string path = dir_ + "/" + name;
  if (IsDirectory(path)) return CountIn(name, finding);
  std::map<std::string, std::string> files = {
      {"case.txt", CaseText(finding)},
      {"meta.txt", FormatMeta(NewMeta(finding))},
  };
  // A batch's fault is no one kernel's: `ptxdiff repro` replays its case.
  if (!finding.unisolated) files["repro.ptx"] = Repro(finding);
  if (!finding.raw_input.empty()) files["input.bin"] = finding.raw_input;
  if (finding.kind != FindingKind::kValueMismatch) {
    if (std::string output = FaultOutput(finding.detail); !output.empty())
      files[kFaultOutputFile] = std::move(output);
  }
  PTXDIFF_RETURN_IF_ERROR(WriteDirectoryAtomic(path, files));
  return FileResult{name, true, false, IndexError(), ""};
}

absl::StatusOr<FileResult> TriageStore::CountRepeats(
    absl::string_view entry, int64_t n, absl::string_view found_as) {
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  const std::string name(entry);
  const std::string path = dir_ + "/" + name;
  if (!ParseEntryName(name).ok() || !IsDirectory(path))
    return absl::NotFoundError(absl::StrCat("no entry ", name, " in ", dir_));
  std::vector<std::string> repairs;
  PTXDIFF_ASSIGN_OR_RETURN(auto meta, MetaForUpdate(path, repairs));
  AddToCount(meta, n);
  meta["last_seen"] = Now();
  Finding seen_as;
  if (!found_as.empty()) seen_as.found_as = {std::string(found_as)};
  AddFoundAs(seen_as, meta);
  NoteRepairs(repairs, meta);
  PTXDIFF_RETURN_IF_ERROR(
      WriteFileAtomic(path + "/meta.txt", FormatMeta(meta)));
  return FileResult{name, false, meta.count("explained") > 0, IndexError(),
                    absl::StrJoin(repairs, "; ")};
}

absl::StatusOr<FileResult> TriageStore::CountIn(const std::string& name,
                                                const Finding& finding) {
  const std::string path = dir_ + "/" + name;
  std::vector<std::string> repairs;
  const bool had_meta = Exists(path + "/meta.txt");
  PTXDIFF_ASSIGN_OR_RETURN(auto meta, MetaForUpdate(path, repairs));
  if (!had_meta) CompleteRebuiltMeta(path, finding, meta);
  PTXDIFF_RETURN_IF_ERROR(
      RepairCase(path, SignatureOf(finding), finding, check_program_case_,
                 repairs));
  AddToCount(meta, finding.occurrences);
  meta["last_seen"] = Now();
  AddFoundAs(finding, meta);
  NoteRepairs(repairs, meta);
  PTXDIFF_RETURN_IF_ERROR(
      WriteFileAtomic(path + "/meta.txt", FormatMeta(meta)));
  return FileResult{name, false, meta.count("explained") > 0, IndexError(),
                    absl::StrJoin(repairs, "; ")};
}

std::string TriageStore::IndexError() const {
  const absl::Status index = RewriteIndex();
  return index.ok()
             ? ""
             : absl::StrCat("INDEX.md was not rewritten: ", index.message());
}

absl::StatusOr<std::vector<EntryInfo>> TriageStore::List() const {
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return ErrnoError("cannot list", dir_);
  std::vector<EntryInfo> entries;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    auto signature = ParseEntryName(name);
    if (name[0] == '.' || !signature.ok() || !IsDirectory(dir_ + "/" + name))
      continue;
    entries.push_back(Inspect(name, *signature));
  }
  closedir(d);
  std::sort(
      entries.begin(), entries.end(),
      [](const EntryInfo& a, const EntryInfo& b) { return a.name < b.name; });
  return entries;
}

std::vector<std::string> TriageStore::NotEntries() const {
  std::vector<std::string> names;
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name[0] != '.' && !ParseEntryName(name).ok() &&
        IsDirectory(dir_ + "/" + name)) {
      names.push_back(name);
    }
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

EntryInfo TriageStore::Inspect(const std::string& name,
                               const Signature& signature) const {
  return InspectEntry(dir_ + "/" + name, name, signature,
                      check_program_case_);
}

absl::StatusOr<std::string> TriageStore::Show(absl::string_view entry) const {
  PTXDIFF_RETURN_IF_ERROR(ValidateEntryName(entry));
  PTXDIFF_RETURN_IF_ERROR(EntryThere(dir_, entry));
  const std::string path = absl::StrCat(dir_, "/", entry);
  return ShowEntry(path, Inspect(std::string(entry), *ParseEntryName(entry)));
}

absl::StatusOr<std::string> TriageStore::MarkExplained(
    absl::string_view entry, absl::string_view reason) {
  PTXDIFF_RETURN_IF_ERROR(ValidateEntryName(entry));
  // meta.txt holds a line per key: a line break would add keys of its own.
  if (!IsMetaValue(reason)) {
    return absl::InvalidArgumentError(
        "--explained takes one line of text (no line break or control "
        "character)");
  }
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  PTXDIFF_RETURN_IF_ERROR(EntryThere(dir_, entry));
  const std::string path = absl::StrCat(dir_, "/", entry);
  std::vector<std::string> repairs;
  PTXDIFF_ASSIGN_OR_RETURN(auto meta, MetaForUpdate(path, repairs));
  meta["explained"] = std::string(reason);
  NoteRepairs(repairs, meta);
  PTXDIFF_RETURN_IF_ERROR(
      WriteFileAtomic(path + "/meta.txt", FormatMeta(meta)));
  // Marked: an index not rewritten is said, not the mark's failure.
  if (std::string index = IndexError(); !index.empty())
    repairs.push_back(index);
  return absl::StrJoin(repairs, "; ");
}

absl::StatusOr<int> TriageStore::MergeFrom(const std::string& other_dir,
                                           std::vector<std::string>* skipped,
                                           std::vector<std::string>* damaged) {
  // Read without its lock: a read-only source is merged (the eighteenth
  // fault run), and entries are written whole, by renames.
  PTXDIFF_ASSIGN_OR_RETURN(TriageStore other,
                           OpenToRead(other_dir, check_program_case_));
  // This directory under another name (`triage merge out/triage` with the
  // default --dir) would count each of its entries twice.
  struct stat here, there;
  if (stat(dir_.c_str(), &here) == 0 && stat(other_dir.c_str(), &there) == 0 &&
      here.st_dev == there.st_dev && here.st_ino == there.st_ino) {
    return absl::InvalidArgumentError(absl::StrCat(
        other_dir, " is the triage directory merged into (", dir_,
        "): nothing to merge (--dir names the one merged into)"));
  }
  // An entry named as the source (the fifteenth fault run: "0 new entries",
  // exit 0) holds no entries: its own files are what it is.
  if (struct stat meta; stat((other_dir + "/meta.txt").c_str(), &meta) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        other_dir,
        " is a triage entry, not a triage directory: merge the directory "
        "that holds it"));
  }
  PTXDIFF_ASSIGN_OR_RETURN(std::vector<EntryInfo> theirs, other.List());
  if (skipped != nullptr) *skipped = other.NotEntries();
  PTXDIFF_ASSIGN_OR_RETURN(DirectoryLock lock, DirectoryLock::Acquire(dir_));
  // Everything read before anything is written: an entry that cannot be
  // read (a FIFO, too large) stops the merge with nothing changed, so that
  // merging again once it is mended counts no entry twice.
  std::vector<MergeStep> steps;
  for (const EntryInfo& e : theirs) {
    absl::StatusOr<MergeStep> step = PlanMerge(e, other_dir);
    if (!step.ok()) {
      return absl::Status(step.status().code(),
                          absl::StrCat(step.status().message(),
                                       "; nothing merged from ", other_dir));
    }
    // The twelfth fault run: copied without a word, one that is a link
    // to /etc as an empty entry.
    if (damaged != nullptr && (!e.damage.empty() || step->unreadable)) {
      damaged->push_back(absl::StrCat(
          e.name, " is damaged (", absl::StrJoin(e.damage, "; "), ")",
          step->unreadable ? ": not merged, its case.txt cannot be read"
                           : ": merged as it is"));
    }
    if (!step->unreadable) steps.push_back(*std::move(step));
  }
  int added = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    const MergeStep& step = steps[k];
    // A stop (Ctrl-C) between entries: said, with what was merged and the
    // index rewritten for it (the sixteenth fault run: nothing said).
    const absl::Status written =
        Interrupted() ? absl::CancelledError("interrupted")
        : step.is_new ? WriteDirectoryAtomic(step.path, step.files)
                      : WriteFileAtomic(step.path + "/meta.txt", step.meta);
    if (!written.ok() && k > 0) RewriteIndex().IgnoreError();
    if (!written.ok()) {
      return absl::Status(
          written.code(),
          absl::StrCat(written.message(), "; ", k, " of the ", steps.size(),
                       " entries of ", other_dir,
                       " were merged before (merging it again counts them "
                       "twice)"));
    }
    added += step.is_new;
  }
  PTXDIFF_RETURN_IF_ERROR(RewriteIndex());
  return added;
}

absl::StatusOr<TriageStore::MergeStep> TriageStore::PlanMerge(
    const EntryInfo& e, const std::string& other_dir) const {
  MergeStep step;
  step.path = dir_ + "/" + e.name;
  if (!IsDirectory(step.path)) {
    step.is_new = true;
    for (const char* f :
         {"case.txt", "repro.ptx", "meta.txt", "input.bin", kFaultOutputFile}) {
      auto content = ReadEntryFile(other_dir + "/" + e.name, f);
      if (TooLarge(content.status())) return content.status();
      if (content.ok()) step.files[f] = *content;
    }
    step.unreadable = !step.files.contains("case.txt");
    return step;
  }
  std::vector<std::string> repairs;
  PTXDIFF_ASSIGN_OR_RETURN(auto meta, MetaForUpdate(step.path, repairs));
  AddToCount(meta, e.count());
  // What the other directory lost of its count, this one has lost too.
  if (!e.count_known()) {
    meta["count_lost"] =
        absl::StrCat(Now(), ": merged from ", other_dir,
                     ", whose count of this entry is unreadable");
  } else if (e.count_is_lower_bound() && !meta.count("count_lost")) {
    meta["count_lost"] = e.meta.at("count_lost");
  }
  NoteRepairs(repairs, meta);
  // RFC 3339 UTC timestamps order as strings.
  auto theirs_at = [&e](const char* key) {
    auto it = e.meta.find(key);
    return it == e.meta.end() ? std::string() : it->second;
  };
  if (!theirs_at("first_seen").empty() &&
      theirs_at("first_seen") < meta["first_seen"]) {
    meta["first_seen"] = theirs_at("first_seen");
  }
  meta["last_seen"] = std::max(meta["last_seen"], theirs_at("last_seen"));
  if (e.explained() && !meta.count("explained"))
    meta["explained"] = theirs_at("explained");
  step.meta = FormatMeta(meta);
  return step;
}

absl::Status TriageStore::RewriteIndex() const {
  PTXDIFF_ASSIGN_OR_RETURN(std::vector<EntryInfo> entries, List());
  std::string out =
      "# Triage index\n\nRegenerated by ptxdiff on every change; see "
      "triage/README.md for the format.\n\n"
      "| kind | backend | class | variant | count | first seen | last seen | "
      "explained | damaged |\n|---|---|---|---|---:|---|---|---|---|\n";
  for (const EntryInfo& e : entries) {
    auto at = [&e](const char* key) {
      auto it = e.meta.find(key);
      return it == e.meta.end() ? std::string("-") : it->second;
    };
    absl::StrAppend(
        &out, "| ", FindingKindName(e.signature.kind), " | ",
        e.signature.backend, " | ", e.signature.disagreement_class, " | `",
        e.signature.spelling, "` | ", e.CountText(), " | ", at("first_seen"),
        " | ", at("last_seen"), " | ", e.explained() ? at("explained") : "",
        " | ",
        absl::StrReplaceAll(absl::StrJoin(e.damage, "; "), {{"|", "\\|"}}),
        " |\n");
  }
  return WriteFileAtomic(dir_ + "/INDEX.md", out);
}

}  // namespace ptxdiff
