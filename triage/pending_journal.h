// The journal of findings judged but not yet filed, so that nothing already
// found is lost when the process dies (a crash, SIGKILL, libFuzzer's _Exit
// on Ctrl-C) or stops (a deadline, a full disk) between judging a finding
// and filing its minimized entry. Both campaigns keep one: the tuple
// campaign (campaign/campaign.h) and the program campaign
// (program/program_campaign.h), each its own kind of file:
//
//   <triage dir>/.pending/<pid>.journal            tuples
//   <triage dir>/.pending/<pid>.programs.journal   programs
//
// (`<pid>-<n>` in place of `<pid>` for a process's second journal of a
// kind while its first is still there.) One line per event, appended with
// write(2) (so a process crash keeps it):
//   M <seq> <record>     a finding judged (its record: below)
//   R <seq> <n>          n more sightings of it, seen while it was not
//                        filed (counted in its entry when it is)
//   F <seq>              filed, or counted as known
// A tuple's record is
//   <variant stable id> <a> <b> <c> <d> <backend bits> [<carry> [<form>]]
// in hex. The optional `carry` is the backend's carry-out of a `.cc` variant
// (PendingMismatch::backend_carry), written as `1` only when set: a line
// without it reads as carry 0, and a binary from before the carry flag
// skips the lines that have it (their variants are unknown to it anyway).
// The optional `form` is the tuple's Tuple::runtime, written only when not
// 0, the carry then written as 0 or 1 before it. A program's record is the
// program campaign's (ProgramJournalRecord): one line, no line breaks.
// A campaign starting on the same triage directory adopts the journals of
// its kind whose processes are gone (or, in this process, that no journal
// still holds open): their findings without an F line are judged and filed
// again, and the old journal is removed. A journal claimed by an adopter
// that died before it was done (`<name>.adopted-by-<pid>`) is adopted too. A stop removes its own once
// everything in it is filed; a journal that still holds unfiled findings
// (a filing failed: a full disk; the run ended first) is left for the next
// campaign to adopt.

#ifndef PTXDIFF_TRIAGE_PENDING_JOURNAL_H_
#define PTXDIFF_TRIAGE_PENDING_JOURNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/tuple.h"

namespace ptxdiff {

// What a journal holds: one kind per file, adopted only by its own kind.
enum class JournalKind : uint8_t {
  kTuples,    // the tuple campaign's mismatches (PendingMismatch)
  kPrograms,  // the program campaign's findings (a record of its own)
};

struct PendingMismatch {
  Tuple tuple;
  uint64_t backend_bits = 0;
  bool backend_carry = false;  // the CC.CF out of a `.cc` variant
  // Adopted: its repeats an earlier run saw and could not count (R lines).
  int64_t repeats = 0;
};

class PendingJournal {
 public:
  // Opens (creates) a journal of `kind` for this process under `triage_dir`.
  static absl::StatusOr<std::unique_ptr<PendingJournal>> Open(
      const std::string& triage_dir, JournalKind kind = JournalKind::kTuples);
  ~PendingJournal();

  // Records a tuple's mismatch; returns its sequence number (for Done).
  int64_t Add(const PendingMismatch& m);
  // Records one finding as `record` (one line, no line break): what a
  // journal of programs holds.
  int64_t AddRecord(absl::string_view record);
  void Done(int64_t seq);
  // Records `n` more sightings of the open finding `seq` (an R line), which
  // a run could not count in an entry because the finding is not filed.
  void AddRepeats(int64_t seq, int64_t n);
  // Whether `seq` is added and not done.
  bool IsOpen(int64_t seq) const;

  // Findings added and not done: judged, not (yet) filed.
  int64_t unfiled() const;
  // Of those, how many could not be written (a full disk): they are in no
  // journal, only in the process's stderr.
  int64_t unwritten() const;

  // Removes the journal (call when everything in it is done).
  void Remove();
  // Removes the journal if nothing in it is open; otherwise closes it and
  // leaves it for the next campaign to adopt. Returns whether it was
  // removed.
  bool RemoveIfAllDone();

  JournalKind kind() const { return kind_; }
  const std::string& path() const { return path_; }

 private:
  PendingJournal(JournalKind kind, std::string path, int fd)
      : kind_(kind), path_(std::move(path)), fd_(fd) {}
  // Appends one line; false (said on stderr, with the line) if it could not.
  bool Append(const std::string& line);
  // Closes the file; the caller holds mu_.
  void CloseLocked();

  mutable std::mutex mu_;
  const JournalKind kind_;
  std::string path_;
  int fd_;
  int64_t next_seq_ = 0;
  // Open sequence numbers, and those of them whose line was not written.
  absl::flat_hash_set<int64_t> open_, unwritten_;
};

// Takes over the journals of `into`'s kind under `triage_dir` that no
// process holds (their process is gone, or it is this one and the journal
// is closed): each is claimed by an atomic rename (so two campaigns never
// adopt the same one), its open records that `readable` accepts are added
// to `into` (so they survive this process dying too) and returned with
// their new sequence numbers, and it is removed. A torn last line (a
// process killed mid-write) is dropped; a journal with whole lines that are
// not readable (damage, another build's variants) is kept as
// `<name>.damaged`, which is never adopted, and said on stderr; so is one of
// the name that cannot be read at all (a directory, a FIFO, one past the
// bound), unread. Each such line begins with kPendingJournalSaid.
std::vector<std::pair<int64_t, std::string>> AdoptOrphanedRecords(
    const std::string& triage_dir, PendingJournal& into,
    const std::function<bool(absl::string_view)>& readable);

// How every stderr line about a pending journal kept aside begins: `ptxdiff
// fuzz` finds them in its fuzzer's output to say them in its summary.
inline constexpr char kPendingJournalSaid[] = "ptxdiff: the pending journal ";

// The same for a journal of tuples: the unfiled mismatches it adopted.
std::vector<std::pair<int64_t, PendingMismatch>> AdoptOrphanedJournals(
    const std::string& triage_dir, PendingJournal& into);

// The findings not yet filed that `triage_dir`'s journals hold, of each
// kind, whether a running campaign holds them or a dead one left them (a
// journal that cannot be read is not counted): for `triage list` and
// `triage merge`, which do not file them, to say so.
struct PendingFindings {
  int64_t tuples = 0, programs = 0;
  int64_t total() const { return tuples + programs; }
};
PendingFindings CountPendingFindings(const std::string& triage_dir);

// The records of one journal's text not marked done, in order.
std::vector<std::string> OpenRecords(const std::string& text);
// The same, each with its repeats (its R lines' sum).
std::vector<std::pair<std::string, int64_t>> OpenRecordsWithRepeats(
    const std::string& text);

// A tuple's record, and its mismatch back (nullopt if it does not parse).
std::string TupleRecord(const PendingMismatch& m);
std::optional<PendingMismatch> ParseTupleRecord(absl::string_view record);

// The unfiled mismatches of one journal of tuples' text (for tests and
// adoption).
std::vector<PendingMismatch> ParseJournal(const std::string& text);

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_PENDING_JOURNAL_H_
