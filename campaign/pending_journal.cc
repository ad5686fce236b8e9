#include "campaign/pending_journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "isa/variant.h"

namespace ptxdiff {
namespace {

std::string PendingDir(const std::string& triage_dir) {
  return triage_dir + "/.pending";
}

bool ProcessAlive(int pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool ParseHex(absl::string_view s, uint64_t& out) {
  return absl::SimpleHexAtoi(s, &out);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PendingJournal>> PendingJournal::Open(
    const std::string& triage_dir) {
  const std::string dir = PendingDir(triage_dir);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  const std::string path = absl::StrCat(dir, "/", getpid(), ".journal");
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<PendingJournal>(new PendingJournal(path, fd));
}

PendingJournal::~PendingJournal() {
  if (fd_ >= 0) close(fd_);
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
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t seq = next_seq_++;
  const Operands& o = m.tuple.operands;
  open_.insert(seq);
  // The carry and the form are optional fields, written where not 0 (the
  // carry then as 0 or 1 before the form).
  const std::string tail =
      m.tuple.runtime != 0
          ? absl::StrFormat(" %d %x", m.backend_carry, m.tuple.runtime)
      : m.backend_carry ? " 1"
                        : "";
  if (!Append(absl::StrFormat("M %d %x %x %x %x %x %x%s\n", seq,
                              StableId(m.tuple.variant), o.v[0], o.v[1], o.v[2],
                              o.v[3], m.backend_bits, tail))) {
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
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  unlink(path_.c_str());
}

bool PendingJournal::RemoveIfAllDone() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_.empty()) {
      if (fd_ >= 0) close(fd_);
      fd_ = -1;
      return false;
    }
  }
  Remove();
  return true;
}

std::vector<PendingMismatch> ParseJournal(const std::string& text) {
  std::map<int64_t, PendingMismatch> open;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    int64_t seq;
    if (f.size() < 2 || !absl::SimpleAtoi(f[1], &seq)) continue;
    if (f[0] == "F" && f.size() == 2) {
      open.erase(seq);
      continue;
    }
    uint64_t id, bits, ops[4], runtime = 0;
    if (f[0] != "M" || f.size() < 8 || f.size() > 10 || !ParseHex(f[2], id) ||
        !ParseHex(f[7], bits)) {
      continue;
    }
    // The carry field: "1" alone, "0" or "1" before a form.
    if (f.size() >= 9 && f[8] != "1" && !(f.size() == 10 && f[8] == "0"))
      continue;
    if (f.size() == 10 && (!ParseHex(f[9], runtime) || runtime > 0xf)) continue;
    bool ok = true;
    for (int i = 0; i < 4; ++i) ok &= ParseHex(f[3 + i], ops[i]);
    const std::optional<Variant> v = VariantByStableId(id);
    if (!ok || !v) continue;
    PendingMismatch m{
        {*v, {{ops[0], ops[1], ops[2], ops[3]}}, static_cast<uint8_t>(runtime)},
        bits,
        f.size() >= 9 && f[8] == "1"};
    open[seq] = m;
  }
  std::vector<PendingMismatch> out;
  for (auto& [seq, m] : open) out.push_back(m);
  return out;
}

std::vector<std::pair<int64_t, PendingMismatch>> AdoptOrphanedJournals(
    const std::string& triage_dir, PendingJournal& into) {
  std::vector<std::pair<int64_t, PendingMismatch>> out;
  const std::string dir = PendingDir(triage_dir);
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  std::vector<std::string> orphans;
  while (dirent* e = readdir(d)) {
    int pid;
    const std::string name = e->d_name;
    if (!absl::EndsWith(name, ".journal") ||
        !absl::SimpleAtoi(name.substr(0, name.size() - 8), &pid) ||
        pid == getpid() || ProcessAlive(pid)) {
      continue;
    }
    orphans.push_back(dir + "/" + name);
  }
  closedir(d);
  for (const std::string& path : orphans) {
    const std::string claimed = absl::StrCat(path, ".adopted-by-", getpid());
    if (rename(path.c_str(), claimed.c_str()) != 0)
      continue;  // another took it
    std::ifstream in(claimed);
    std::stringstream text;
    text << in.rdbuf();
    for (const PendingMismatch& m : ParseJournal(text.str())) {
      out.emplace_back(into.Add(m), m);
    }
    unlink(claimed.c_str());
  }
  return out;
}

}  // namespace ptxdiff
