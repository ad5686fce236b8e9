// An entry's files as they lie on disk (triage_store.h has the layout):
// read with a bound, checked for damage from outside, and meta.txt parsed,
// formatted and repaired. The store (triage_store.cc) decides what a filing,
// a merge or a mark changes; this is how an entry's files are read and
// mended, for it alone.
//
// Every read is bounded (kMaxMetaBytes, kMaxEntryFileBytes): an entry's
// file replaced from outside by a huge one, or by a link to /dev/zero, is
// damage named with its bound, never read whole.

#ifndef PTXDIFF_TRIAGE_ENTRY_FILES_H_
#define PTXDIFF_TRIAGE_ENTRY_FILES_H_

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "triage/finding.h"
#include "triage/triage_store.h"

namespace ptxdiff::triage_internal {

// The most meta.txt may hold: a few dozen short lines, `found_as` listing
// at most every variant.
inline constexpr size_t kMaxMetaBytes = size_t{1} << 20;
// The most any other file of an entry may hold (a batch's case.txt, a long
// program's repro.ptx).
inline constexpr size_t kMaxEntryFileBytes = size_t{16} << 20;

// `file` ("meta.txt", "case.txt", ...) of the entry at `entry_path`, read up
// to its bound as a record (common/files.h, ReadRecordFile): NotFound if
// missing; FailedPrecondition for a directory; InvalidArgument naming the
// path if longer than the bound, or no regular file (a FIFO, a link to
// /dev/zero): TooLarge, either is set aside.
absl::StatusOr<std::string> ReadEntryFile(const std::string& entry_path,
                                          absl::string_view file);
// Whether a ReadEntryFile error is the bound's.
bool TooLarge(const absl::Status& status);

// `count` + `n` of two counts (each at least 0), held at INT64_MAX where
// the sum would pass it: a count of INT64_MAX (a damaged or hand-edited
// meta.txt) merged or counted again must never wrap to a negative one.
int64_t AddCounts(int64_t count, int64_t n);
// Adds `n` to meta's count (AddCounts); a count that is no number (there is
// none after MetaForUpdate) counts as 0.
void AddToCount(std::map<std::string, std::string>& meta, int64_t n);

// The time now, as meta.txt writes it (RFC 3339 UTC).
std::string Now();
bool Exists(const std::string& path);

// Whether `value` may stand in a meta.txt line (no control bytes).
bool IsMetaValue(absl::string_view value);
// meta.txt's text: a "key: value" line each.
std::string FormatMeta(const std::map<std::string, std::string>& meta);

// The meta.txt of the entry at `path`, for a change (under the lock). A
// damaged one is set aside first and what parses of it returned; a missing
// one is rebuilt empty; one past its bound is set aside unread. A count lost
// any way restarts at 0, and `count_lost` says when and why: the count is a
// lower bound from then on. `repairs` gets a phrase for each thing done.
absl::StatusOr<std::map<std::string, std::string>> MetaForUpdate(
    const std::string& path, std::vector<std::string>& repairs);
// Notes the repairs of a change in meta.txt.
void NoteRepairs(const std::vector<std::string>& repairs,
                 std::map<std::string, std::string>& meta);

// What is wrong with a case.txt (`text`, as ReadEntryFile gave it) of an
// entry of `signature`, a phrase each; none for a sound one. A program's is
// parsed by `check_program_case` when there is one (TriageStore::Open).
std::vector<std::string> CheckCase(const absl::StatusOr<std::string>& text,
                                   const Signature& signature,
                                   const ProgramCaseCheck& check_program_case);

// Keeps a damaged `file` of the entry at `path` as
// <file>.damaged-<time>, under a name not yet taken, and returns that name:
// a copy of its `bytes` where they were read, else (a file past its bound)
// the file itself, renamed.
absl::StatusOr<std::string> SetAside(const std::string& path,
                                     absl::string_view file,
                                     const absl::StatusOr<std::string>& bytes);

// The entry `name` (of `signature`) at `path`, read and checked (a
// program's case.txt with `check_program_case`, as CheckCase).
EntryInfo InspectEntry(const std::string& path, const std::string& name,
                       const Signature& signature,
                       const ProgramCaseCheck& check_program_case);

// The entry `e` at `path` for `ptxdiff triage show`: first what is damaged,
// and a damaged file's unprintable bytes as \xNN escapes.
std::string ShowEntry(const std::string& path, const EntryInfo& e);

}  // namespace ptxdiff::triage_internal

#endif  // PTXDIFF_TRIAGE_ENTRY_FILES_H_
