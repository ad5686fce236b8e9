// What the program campaign knows of the root causes filed (issue 64): each
// cause's key (meta.txt's `cause`, or a tuple entry's variant), the entry a
// repeat of it is counted in, and how often it came back. Read from the
// triage directory at the start and kept as the run files, so that a
// disagreement whose key names a filed cause is counted, not minimized
// again, and the variant of a cause that keeps coming back is drawn seldom
// (ProgramShape::discouraged).
//
// Not thread-safe: the campaign calls it under its lock, but for KeyOf,
// which reads only what Note set before the run's threads started.

#ifndef PTXDIFF_PROGRAM_FILED_CAUSES_H_
#define PTXDIFF_PROGRAM_FILED_CAUSES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_cause.h"
#include "triage/triage_store.h"

namespace ptxdiff {

// Repeats of one cause after which its variant is drawn seldom.
inline constexpr int64_t kDiscourageAfter = 10;

// A finding's cause key and, where it was read off a constant, what ptxas
// assumed in words (or why no key was found).
struct CauseKey {
  std::string key;
  std::string assumed;
};

class FiledCauses {
 public:
  // An entry of the directory: a value mismatch of `backend` (others are
  // skipped) whose cause is now known.
  void Note(const EntryInfo& e, const std::string& backend);
  // A cause this run filed in `entry`, minimized to `program`.
  void NoteFiled(const std::string& key, const std::string& entry,
                 const Program& program);

  // The cause a tuple entry of `spelling` is grouped under (its `cause`,
  // else its variant): a program that comes down to that one instruction,
  // or whose constant it explains, is that cause.
  std::string TupleCauseName(const std::string& spelling) const;

  // The key of a mismatch of `p` (at the mismatch's inputs): where its
  // executed code departs, unless that is a constant ptxas computed (a fold
  // by another name); else the instruction whose value, taken wrong, gives
  // ptxas's constant (program_cause.h), as its tuple cause. `alone`, if
  // given, runs a culprit that only carries the constant by itself.
  CauseKey KeyOf(const Program& p, const ProgramMismatch& m, Reading reading,
                 const AloneCheck* alone = nullptr) const;

  // The entry repeats of `key` are counted in, if it is filed.
  std::optional<std::string> EntryOf(const std::string& key) const;
  // One more repeat of `key`; after kDiscourageAfter its variant joins
  // discouraged().
  void CountRepeat(const std::string& key);

  const std::map<std::string, int64_t>& repeats() const { return repeats_; }
  const std::vector<std::string>& discouraged() const { return discouraged_; }

 private:
  absl::flat_hash_map<std::string, std::string> tuple_cause_names_;
  absl::flat_hash_map<std::string, std::string> entries_;
  // The variant to discourage for each cause: the culprit its key names,
  // else the last instruction of its minimized program.
  absl::flat_hash_map<std::string, std::string> spellings_;
  std::map<std::string, int64_t> repeats_;
  std::vector<std::string> discouraged_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_FILED_CAUSES_H_
