// The journal of mismatches judged but not yet filed, so that nothing
// already found is lost when the fuzzer process dies (a crash, SIGKILL,
// libFuzzer's _Exit on Ctrl-C) between judging a mismatch and filing its
// minimized entry.
//
//   <triage dir>/.pending/<pid>.journal
//
// One line per event, appended with write(2) (so a process crash keeps it):
//   M <seq> <variant stable id> <a> <b> <c> <d> <backend bits> [<carry>
//   [<form>]]  (hex) F <seq>                                  (filed, or
//   counted as known)
// The optional `carry` is the backend's carry-out of a `.cc` variant
// (PendingMismatch::backend_carry), written as `1` only when set: a line
// without it reads as carry 0, and a binary from before the carry flag
// skips the lines that have it (their variants are unknown to it anyway).
// The optional `form` is the tuple's Tuple::runtime, written only when not
// 0, the carry then written as 0 or 1 before it.
// A campaign starting on the same triage directory adopts the journals of
// processes that are gone: their mismatches without an F line are filed
// again, and the old journal is removed. A stop removes its own once
// everything in it is filed; a journal that still holds unfiled mismatches
// (a filing failed: a full disk) is left for the next campaign to adopt.

#ifndef PTXDIFF_CAMPAIGN_PENDING_JOURNAL_H_
#define PTXDIFF_CAMPAIGN_PENDING_JOURNAL_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "isa/tuple.h"

namespace ptxdiff {

struct PendingMismatch {
  Tuple tuple;
  uint64_t backend_bits = 0;
  bool backend_carry = false;  // the CC.CF out of a `.cc` variant
};

class PendingJournal {
 public:
  // Opens (creates) this process's journal under `triage_dir`.
  static absl::StatusOr<std::unique_ptr<PendingJournal>> Open(
      const std::string& triage_dir);
  ~PendingJournal();

  // Records a mismatch; returns its sequence number (for Done).
  int64_t Add(const PendingMismatch& m);
  void Done(int64_t seq);

  // Mismatches added and not done: judged, not (yet) filed.
  int64_t unfiled() const;
  // Of those, how many could not be written (a full disk): they are in no
  // journal, only in the process's stderr.
  int64_t unwritten() const;

  // Removes the journal (call when everything in it is done).
  void Remove();
  // Removes the journal if nothing in it is open; otherwise closes it and
  // leaves it for the next campaign to adopt (once this process is gone).
  // Returns whether it was removed.
  bool RemoveIfAllDone();

  const std::string& path() const { return path_; }

 private:
  PendingJournal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  // Appends one line; false (said on stderr, with the line) if it could not.
  bool Append(const std::string& line);

  mutable std::mutex mu_;
  std::string path_;
  int fd_;
  int64_t next_seq_ = 0;
  // Open sequence numbers, and those of them whose line was not written.
  absl::flat_hash_set<int64_t> open_, unwritten_;
};

// Takes over the journals under `triage_dir` whose processes are gone: each
// is claimed by an atomic rename (so two campaigns never adopt the same
// one), its unfiled mismatches are added to `into` (so they survive this
// process dying too) and returned with their new sequence numbers, and it
// is removed. Lines that do not parse (a torn last line) are skipped.
std::vector<std::pair<int64_t, PendingMismatch>> AdoptOrphanedJournals(
    const std::string& triage_dir, PendingJournal& into);

// The unfiled mismatches of one journal's text (for tests and adoption).
std::vector<PendingMismatch> ParseJournal(const std::string& text);

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_PENDING_JOURNAL_H_
