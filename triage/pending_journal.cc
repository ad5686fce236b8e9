#include "triage/pending_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "isa/variant.h"
#include "triage/entry_files.h"

namespace ptxdiff {
namespace {

// A journal holds a line per finding a run met before filing it (a program
// case each, for programs): far less than this. One larger, or no regular
// file, is damage, never read.
constexpr size_t kMaxJournalBytes = size_t{256} << 20;

std::string PendingDir(const std::string& triage_dir) {
  return triage_dir + "/.pending";
}

// ".journal", ".programs.journal": what a kind's file names end with.
std::string Suffix(JournalKind kind) {
  return kind == JournalKind::kPrograms ? ".programs.journal" : ".journal";
}

bool ProcessAlive(int pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool ParseHex(absl::string_view s, uint64_t& out) {
  return absl::SimpleHexAtoi(s, &out);
}

// The journals this process holds open, by path: a journal of this pid that
// is not among them was left by a campaign of this process that has ended,
// and is adopted as a dead process's would be.
std::mutex& OpenPathsMutex() {
  static std::mutex mu;
  return mu;
}
absl::flat_hash_set<std::string>& OpenPaths() {
  static auto* paths = new absl::flat_hash_set<std::string>;
  return *paths;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The pid in a journal's file name of `kind` ("123.journal",
// "123-2.programs.journal"); 0 if it is not one.
int PidOfJournal(absl::string_view name, JournalKind kind) {
  if (!absl::ConsumeSuffix(&name, Suffix(kind))) return 0;
  name = name.substr(0, name.find('-'));
  int pid = 0;
  return absl::SimpleAtoi(name, &pid) && pid > 0 ? pid : 0;
}

constexpr absl::string_view kAdoptedBy = ".adopted-by-";

// The journal of `kind` a claimed file's name ("123.journal.adopted-by-456")
// names, if its adopter (456) is gone: the adopter was killed between
// claiming it and copying its findings (seconds, for a long journal), and
// they are in it alone. "" otherwise.
std::string ClaimedByTheDead(absl::string_view name, JournalKind kind) {
  const size_t at = name.rfind(kAdoptedBy);
  int adopter = 0;
  if (at == absl::string_view::npos ||
      !absl::SimpleAtoi(name.substr(at + kAdoptedBy.size()), &adopter) ||
      adopter == getpid() || ProcessAlive(adopter) ||
      PidOfJournal(name.substr(0, at), kind) == 0) {
    return "";
  }
  return std::string(name.substr(0, at));
}

// Renames `path`, a journal an earlier campaign of this process left, to
// the first free `<pid>-<k><suffix>` (the caller holds OpenPathsMutex).
void MoveAside(const std::string& path, const std::string& dir,
               const std::string& suffix) {
  for (int k = 1;; ++k) {
    const std::string aside = absl::StrCat(dir, "/", getpid(), "-", k, suffix);
    if (!OpenPaths().contains(aside) && access(aside.c_str(), F_OK) != 0) {
      rename(path.c_str(), aside.c_str());
      return;
    }
  }
}

// Opens a new journal file for this process under `dir` (the caller holds
// OpenPathsMutex): `<pid><suffix>` unless this process has it open, else
// `<pid>-<n><suffix>`. A regular file left at the first name by an earlier
// journal of this process is moved to a `-<n>` name first (to be adopted
// like any other); anything else there (a test's /dev/full) is used as is.
absl::StatusOr<std::pair<std::string, int>> OpenFreshFile(
    const std::string& dir, JournalKind kind) {
  const std::string suffix = Suffix(kind);
  const std::string plain = absl::StrCat(dir, "/", getpid(), suffix);
  for (int n = 0;; ++n) {
    const std::string path =
        n == 0 ? plain : absl::StrCat(dir, "/", getpid(), "-", n, suffix);
    if (OpenPaths().contains(path)) continue;
    if (n == 0 && IsRegularFile(path)) MoveAside(path, dir, suffix);
    const int flags =
        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (n == 0 ? 0 : O_EXCL);
    const int fd = open(path.c_str(), flags, 0644);
    if (fd >= 0) return std::make_pair(path, fd);
    if (errno != EEXIST) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PendingJournal>> PendingJournal::Open(
    const std::string& triage_dir, JournalKind kind) {
  const std::string dir = PendingDir(triage_dir);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  std::lock_guard<std::mutex> lock(OpenPathsMutex());
  absl::StatusOr<std::pair<std::string, int>> file = OpenFreshFile(dir, kind);
  if (!file.ok()) return file.status();
  OpenPaths().insert(file->first);
  return std::unique_ptr<PendingJournal>(
      new PendingJournal(kind, file->first, file->second));
}

PendingJournal::~PendingJournal() {
  std::lock_guard<std::mutex> lock(mu_);
  CloseLocked();
}

void PendingJournal::CloseLocked() {
  if (fd_ < 0) return;
  close(fd_);
  fd_ = -1;
  std::lock_guard<std::mutex> lock(OpenPathsMutex());
  OpenPaths().erase(path_);
}

bool PendingJournal::Append(const std::string& line) {
  if (fd_ < 0) return false;
  // One write per line: a crash keeps whole lines. A line that cannot be
  // written (a full disk) is printed instead, so that the log still holds
  // what would otherwise be lost.
  if (write(fd_, line.data(), line.size()) !=
      static_cast<ssize_t>(line.size())) {
    std::fprintf(stderr, "ptxdiff: cannot append to %s: %s; the line was: %s",
                 path_.c_str(), std::strerror(errno), line.c_str());
    return false;
  }
  return true;
}

int64_t PendingJournal::Add(const PendingMismatch& m) {
  return AddRecord(TupleRecord(m));
}

int64_t PendingJournal::AddRecord(absl::string_view record) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t seq = next_seq_++;
  open_.insert(seq);
  if (!Append(absl::StrCat("M ", seq, " ", record, "\n"))) {
    unwritten_.insert(seq);
  }
  return seq;
}

void PendingJournal::Done(int64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(seq);
  unwritten_.erase(seq);
  Append(absl::StrFormat("F %d\n", seq));
}

void PendingJournal::AddRepeats(int64_t seq, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (n > 0 && open_.contains(seq))
    Append(absl::StrFormat("R %d %d\n", seq, n));
}

bool PendingJournal::IsOpen(int64_t seq) const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_.contains(seq);
}

int64_t PendingJournal::unfiled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_.size();
}

int64_t PendingJournal::unwritten() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unwritten_.size();
}

void PendingJournal::Remove() {
  std::lock_guard<std::mutex> lock(mu_);
  // Unlinked before it is closed: no adoption of this process finds it
  // closed and still there.
  unlink(path_.c_str());
  CloseLocked();
}

bool PendingJournal::RemoveIfAllDone() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_.empty()) {
      CloseLocked();
      return false;
    }
  }
  Remove();
  return true;
}

std::string TupleRecord(const PendingMismatch& m) {
  const Operands& o = m.tuple.operands;
  // The carry and the form are optional fields, written where not 0 (the
  // carry then as 0 or 1 before the form).
  const std::string tail =
      m.tuple.runtime != 0
          ? absl::StrFormat(" %d %x", m.backend_carry, m.tuple.runtime)
      : m.backend_carry ? " 1"
                        : "";
  return absl::StrFormat("%x %x %x %x %x %x%s", StableId(m.tuple.variant),
                         o.v[0], o.v[1], o.v[2], o.v[3], m.backend_bits, tail);
}

std::optional<PendingMismatch> ParseTupleRecord(absl::string_view record) {
  const std::vector<absl::string_view> f = absl::StrSplit(record, ' ');
  uint64_t id, bits, ops[4], runtime = 0;
  if (f.size() < 6 || f.size() > 8 || !ParseHex(f[0], id) ||
      !ParseHex(f[5], bits)) {
    return std::nullopt;
  }
  // The carry field: "1" alone, "0" or "1" before a form.
  if (f.size() >= 7 && f[6] != "1" && !(f.size() == 8 && f[6] == "0"))
    return std::nullopt;
  if (f.size() == 8 && (!ParseHex(f[7], runtime) || runtime > 0xf))
    return std::nullopt;
  bool ok = true;
  for (int i = 0; i < 4; ++i) ok &= ParseHex(f[1 + i], ops[i]);
  const std::optional<Variant> v = VariantByStableId(id);
  if (!ok || !v) return std::nullopt;
  return PendingMismatch{
      {*v, {{ops[0], ops[1], ops[2], ops[3]}}, static_cast<uint8_t>(runtime)},
      bits,
      f.size() >= 7 && f[6] == "1"};
}

namespace {

// The most repeats one R line may count: a run's judged tuples at a
// million a second for eleven days. Past it a line is damage, not a count
// (`R 0 9223372036854775807` made an entry's count INT64_MAX).
constexpr int64_t kMostRepeatsALine = int64_t{1} << 40;

// An R line's count of repeats; nullopt for no count.
std::optional<int64_t> RepeatsOf(const std::vector<absl::string_view>& f) {
  int64_t n = 0;
  if (f.size() != 3 || f[0] != "R" || !absl::SimpleAtoi(f[2], &n) || n < 0 ||
      n > kMostRepeatsALine)
    return std::nullopt;
  return n;
}

}  // namespace

namespace {

// The records of `text`'s M lines that no F line closed and `readable`
// takes (each without it), with their repeats: views into `text`, in their
// order. Only those are kept while reading: a journal of millions of lines
// costs no more than its text (the eleventh fault run: 2,000,000 unreadable
// lines of 68 MB held 498 MB).
std::vector<std::pair<absl::string_view, int64_t>> OpenRecordViews(
    absl::string_view text,
    const std::function<bool(absl::string_view)>& readable) {
  std::map<int64_t, std::pair<absl::string_view, int64_t>> open;
  // A torn last line (a full disk, a kill mid-write) is no record: `triage
  // list` counted it, and the next run rightly did not take it up (the
  // thirteenth fault run). Its whole form went to the run's log.
  text = text.substr(0, text.rfind('\n') + 1);
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::MaxSplits(' ', 2));
    int64_t seq;
    if (f.size() < 2 || !absl::SimpleAtoi(f[1], &seq)) continue;
    if (f[0] == "F" && f.size() == 2) {
      open.erase(seq);
    } else if (f[0] == "M" && f.size() == 3) {
      if (!readable || readable(f[2])) open[seq] = {f[2], 0};
    } else if (const std::optional<int64_t> n = RepeatsOf(f); n) {
      if (auto it = open.find(seq); it != open.end())
        it->second.second = triage_internal::AddCounts(it->second.second, *n);
    }
  }
  std::vector<std::pair<absl::string_view, int64_t>> out;
  out.reserve(open.size());
  for (const auto& [seq, entry] : open) out.push_back(entry);
  return out;
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> OpenRecordsWithRepeats(
    const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [record, repeats] : OpenRecordViews(text, nullptr))
    out.emplace_back(std::string(record), repeats);
  return out;
}

std::vector<std::string> OpenRecords(const std::string& text) {
  std::vector<std::string> out;
  for (auto& [record, repeats] : OpenRecordsWithRepeats(text))
    out.push_back(std::move(record));
  return out;
}

std::vector<PendingMismatch> ParseJournal(const std::string& text) {
  std::vector<PendingMismatch> out;
  for (const std::string& record : OpenRecords(text)) {
    if (std::optional<PendingMismatch> m = ParseTupleRecord(record))
      out.push_back(*m);
  }
  return out;
}

namespace {

// Whole lines of a journal's `text` that are no journal line, or record a
// finding `readable` rejects: damage, not the torn last line of a process
// killed mid-write (which ends without a line break).
int64_t DamagedLines(absl::string_view text,
                     const std::function<bool(absl::string_view)>& readable) {
  text = text.substr(0, text.rfind('\n') + 1);
  int64_t damaged = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::MaxSplits(' ', 2));
    int64_t seq;
    const bool numbered = f.size() >= 2 && absl::SimpleAtoi(f[1], &seq);
    const bool done = numbered && ((f[0] == "F" && f.size() == 2) ||
                                   RepeatsOf(f).has_value());
    const bool found =
        numbered && f[0] == "M" && f.size() == 3 && readable(f[2]);
    if (!done && !found) ++damaged;
  }
  return damaged;
}

// An adopted journal (`claimed`, once `original`) is removed, unless lines of
// it could not be read (damage, or another build's variants): then it is
// kept as `original`.damaged, which no campaign adopts, and said on stderr.
void KeepIfDamaged(const std::string& claimed, const std::string& original,
                   absl::string_view text,
                   const std::function<bool(absl::string_view)>& readable) {
  const int64_t damaged = DamagedLines(text, readable);
  if (damaged == 0) {
    unlink(claimed.c_str());
    return;
  }
  const std::string kept = original + ".damaged";
  const bool moved = rename(claimed.c_str(), kept.c_str()) == 0;
  std::fprintf(stderr,
               "%s%s had %lld line%s this ptxdiff "
               "cannot read (damaged, or of another build); %s\n",
               kPendingJournalSaid, original.c_str(),
               static_cast<long long>(damaged),
               damaged == 1 ? "" : "s",
               moved ? absl::StrCat("kept as ", kept).c_str()
                     : absl::StrCat("left as ", claimed).c_str());
}

// An adopted journal (`claimed`, once `original`) that could not be read
// at all (a directory, a FIFO, a link to /dev/zero, one grown huge): kept
// as `original`.damaged, which no campaign adopts, and said once (moved,
// it is not found again). Claimed first, then refused by the record reader:
// one check, which also sees what was swapped in before the claim.
void KeepUnread(const std::string& claimed, const std::string& original,
                const absl::Status& why) {
  const std::string kept = original + ".damaged";
  const bool moved = rename(claimed.c_str(), kept.c_str()) == 0;
  // The reason names the claimed file; the user knows the journal's name.
  const std::string reason =
      absl::StrReplaceAll(why.message(), {{claimed, original}});
  std::fprintf(
      stderr, "%s%s was not read (%s); %s\n", kPendingJournalSaid,
      original.c_str(), reason.c_str(),
      absl::StrCat(moved ? "kept as " : "left as ", moved ? kept : claimed,
                   moved ? ", never adopted" : "")
          .c_str());
}

// An adopted record: its new sequence number, and its repeats.
struct AdoptedRecord {
  int64_t seq;
  std::string record;
  int64_t repeats;
};

std::vector<AdoptedRecord> AdoptOrphaned(
    const std::string& triage_dir, PendingJournal& into,
    const std::function<bool(absl::string_view)>& readable) {
  std::vector<AdoptedRecord> out;
  const std::string dir = PendingDir(triage_dir);
  // Each orphan's path, and the journal's own (the same, unless a dead
  // adopter had claimed it).
  std::vector<std::pair<std::string, std::string>> orphans;
  {
    std::lock_guard<std::mutex> lock(OpenPathsMutex());
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return out;
    while (dirent* e = readdir(d)) {
      const std::string path = dir + "/" + e->d_name;
      const int pid = PidOfJournal(e->d_name, into.kind());
      const bool orphan =
          pid == getpid() ? !OpenPaths().contains(path) : !ProcessAlive(pid);
      if (pid > 0 && orphan) orphans.emplace_back(path, path);
      if (const std::string original = ClaimedByTheDead(e->d_name, into.kind());
          !original.empty()) {
        orphans.emplace_back(path, dir + "/" + original);
      }
    }
    closedir(d);
  }
  for (const auto& [found, path] : orphans) {
    const std::string claimed = absl::StrCat(path, kAdoptedBy, getpid());
    if (rename(found.c_str(), claimed.c_str()) != 0)
      continue;  // another took it
    const absl::StatusOr<std::string> text =
        ReadRecordFile(claimed, kMaxJournalBytes);
    if (!text.ok()) {
      KeepUnread(claimed, path, text.status());
      continue;
    }
    for (const auto& [record, repeats] : OpenRecordViews(*text, readable)) {
      const int64_t seq = into.AddRecord(record);
      into.AddRepeats(seq, repeats);  // kept until it is filed
      out.push_back({seq, std::string(record), repeats});
    }
    KeepIfDamaged(claimed, path, *text, readable);
  }
  return out;
}

}  // namespace

PendingFindings CountPendingFindings(const std::string& triage_dir) {
  PendingFindings found;
  const std::string dir = PendingDir(triage_dir);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return found;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) names.push_back(e->d_name);
  closedir(d);
  for (const std::string& name : names) {
    // A claimed journal's name goes on past its suffix, as does a damaged
    // one's; the first is being adopted, the second is never read.
    const bool programs = absl::EndsWith(name, Suffix(JournalKind::kPrograms));
    if (!programs && !absl::EndsWith(name, Suffix(JournalKind::kTuples)))
      continue;
    const absl::StatusOr<std::string> text =
        ReadRecordFile(dir + "/" + name, kMaxJournalBytes);
    if (!text.ok()) continue;
    (programs ? found.programs : found.tuples) +=
        static_cast<int64_t>(OpenRecordViews(*text, nullptr).size());
  }
  return found;
}

std::vector<std::pair<int64_t, std::string>> AdoptOrphanedRecords(
    const std::string& triage_dir, PendingJournal& into,
    const std::function<bool(absl::string_view)>& readable) {
  std::vector<std::pair<int64_t, std::string>> out;
  for (AdoptedRecord& a : AdoptOrphaned(triage_dir, into, readable))
    out.emplace_back(a.seq, std::move(a.record));
  return out;
}

std::vector<std::pair<int64_t, PendingMismatch>> AdoptOrphanedJournals(
    const std::string& triage_dir, PendingJournal& into) {
  std::vector<std::pair<int64_t, PendingMismatch>> out;
  for (const AdoptedRecord& a :
       AdoptOrphaned(triage_dir, into, [](absl::string_view r) {
         return ParseTupleRecord(r).has_value();
       })) {
    PendingMismatch m = *ParseTupleRecord(a.record);
    m.repeats = a.repeats;
    out.emplace_back(a.seq, m);
  }
  return out;
}

}  // namespace ptxdiff
