// The triage directory: one entry per distinct finding (triage/README.md).
//
//   <dir>/<entry name>/case.txt     readable, replayable text case
//   <dir>/<entry name>/repro.ptx    standalone PTX reproducer
//   <dir>/<entry name>/input.bin    the raw fuzzer input (when there is one)
//   <dir>/<entry name>/meta.txt     first/last seen, count, versions, notes
//   <dir>/INDEX.md                  all entries, regenerated on every change
//
// Every change happens under an exclusive lock on <dir>/.lock, and every file
// is written to a temporary name and renamed into place (a new entry is built
// in a temporary directory and renamed whole), so several fuzz processes can
// file at once without lost, torn or duplicated entries, and a failed write
// (a full disk) leaves what was there before.
//
// An entry damaged from outside (a meta.txt of garbage, a count that does
// not parse, a missing meta.txt, a case.txt cut short or missing) is
// reported by List (EntryInfo::damage) and repaired by the next change to
// it: the damaged file is first copied to <file>.damaged-<time>, what parses
// is kept, what the filing brings is rebuilt (a case.txt from the finding),
// and a count that was lost is restarted and said to be a lower bound
// (`count_lost` in meta.txt). Each file is read with a bound (entry_files.h,
// where an entry's files are read, checked and mended): one past it, or a
// link to /dev/zero, is damage named with its bound, set aside unread by
// the next change.

#ifndef PTXDIFF_TRIAGE_TRIAGE_STORE_H_
#define PTXDIFF_TRIAGE_TRIAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "triage/finding.h"

namespace ptxdiff {

// Whether a program entry's case.txt (`text`: read, not empty) reads back as
// a program: OK, or why not. Programs are parsed on the floor above triage,
// so a store is given this check (program/program.h's CheckProgramText).
using ProgramCaseCheck = std::function<absl::Status(absl::string_view text)>;

struct EntryInfo {
  std::string name;
  Signature signature;
  std::map<std::string, std::string> meta;  // meta.txt's key: value lines
  // What is wrong with the entry's files, a phrase each ("meta.txt is
  // missing", "case.txt is cut short: ..."); empty for a sound entry.
  std::vector<std::string> damage;
  // Damaged files kept by earlier repairs (meta.txt.damaged-<time>, ...).
  std::vector<std::string> kept_aside;
  // 0 when meta.txt gives no count that parses (CountText says "?").
  int64_t count() const;
  bool count_known() const;
  // A repair or merge lost part of the count: count() is at least what was.
  bool count_is_lower_bound() const { return meta.count("count_lost") > 0; }
  // "189", "62+" (a lower bound), or "?" (unknown): how lists show it.
  std::string CountText() const;
  bool explained() const { return meta.count("explained") > 0; }
  // What lists print after its name: ": " and a crash's or hang's `how`, or
  // the `cause` a contrast told, then " (found in N variants)" when its
  // found_as holds more than one (a cause counted in one entry: hundreds);
  // "" when there is none of these.
  std::string Gist() const;
};

// Entries of one kind and backend that differ only in their trigger class:
// the same (minimized, so plainest) variant, or for programs the same steps
// (meta.txt's `shape`). One cause may show in two operand
// classes (ptxas folds slct.s32.s32's c as an f32: its NaN patterns are
// `in-range`, its -0.0 is `min`), so summaries count causes, not entries;
// entries stay apart so that two causes in one variant are not merged.
// Entries whose meta.txt names the same `cause` (Finding::cause: "wrong
// only with 64-bit immediates ...", "crash where the spec leaves the value
// open: division-by-zero") are one cause across variants, and an entry
// without one joins the cause its variant's other entries name.
struct RootCause {
  FindingKind kind;
  std::string backend;
  // The variant, the meta's `cause`, or a program's "program: abs.s32,
  // setp.lt.s32, selp.b32".
  std::string spelling;
  std::vector<const EntryInfo*> entries;  // in the order given
  int64_t count = 0;                      // the entries' counts summed
  bool explained() const;                 // every entry is
};
// `entries` grouped, in order of each cause's first entry.
std::vector<RootCause> GroupByRootCause(const std::vector<EntryInfo>& entries);
// A crash's or hang's cause across variants (finding.h): where the spec
// leaves the value open, that condition ("crash where the spec leaves the
// value open: division-by-zero", in div and rem alike); else the family and
// how it ended ("crash in sad: killed by signal 6 (SIGABRT)"). Empty for an
// unisolated fault or a program's. A campaign counts a fault of a cause
// already filed in that entry.
std::string FaultCause(const Finding& f);
// The cause's key in a compiler engineer's words, one line: "a wrong value
// of `bfe.s32`: ptxas takes it of 0x0, 0x55, 0x1 (field-past-top) to be
// 0xffffffff, the oracle gives 0x0", "miscompiled: the optimized code first
// goes wrong at `SEL R, R, 0xffff, !P` (a value its -O0 code never
// computes)", "no cause key found: programs of the steps ...".
std::string CauseInWords(const RootCause& cause);
// A fault's own words, kept in its entry's kFaultOutputFile: the tail of
// what the tool printed before it crashed or hung ("its output ends:" in
// the detail), or the error lines it said; "" when the detail quotes none.
inline constexpr char kFaultOutputFile[] = "output.txt";
std::string FaultOutput(absl::string_view detail);

// "1 entry, 1 root cause", "3 entries, 2 root causes": how summaries count.
std::string EntriesAndCauses(size_t entries, size_t causes);

struct FileResult {
  std::string entry;  // its name
  bool is_new;        // false: an existing entry's count went up
  bool explained;     // the entry is marked as a known, explained one
  // Non-empty when the entry was written but INDEX.md could not be (a full
  // disk): the finding is filed, and must not be filed again; the index is
  // rewritten whole on the next change.
  std::string index_error;
  // Non-empty when the entry was damaged and this filing repaired it: what
  // was wrong, and where the damaged files were kept.
  std::string repaired;
};

class TriageStore {
 public:
  // Opens `dir`, creating it when `create` is set. A directory that does not
  // exist (without `create`) or is not writable is FailedPrecondition.
  // `check_program_case` is how program entries' case.txt are checked when
  // they are listed, shown, merged or repaired by a filing; without it, one
  // is checked only for being there, readable, not empty and ending its last
  // line. Pass it wherever program entries may be listed or filed.
  static absl::StatusOr<TriageStore> Open(
      const std::string& dir, bool create,
      ProgramCaseCheck check_program_case = nullptr);
  // Opens `dir` to read its entries (List, Show), which needs no lock: a
  // read-only directory is read. Only a `dir` that is no directory fails.
  static absl::StatusOr<TriageStore> OpenToRead(
      const std::string& dir, ProgramCaseCheck check_program_case = nullptr);

  const std::string& dir() const { return dir_; }

  // Files a finding: a new entry, or the existing entry of its signature
  // counted once more (last seen, count), repaired first if it was damaged
  // (FileResult::repaired). An error means the finding was not filed
  // (nothing changed); a stale index alone is not one (index_error).
  absl::StatusOr<FileResult> File(const Finding& finding);

  // Counts `n` more findings in the entry named `entry` (its count and last
  // seen; `found_as`, if given, added to what it was found as): repeats of
  // its cause recognized without filing a finding of their own (a program
  // whose cause key names the entry's cause). NotFound if there is no such
  // entry.
  absl::StatusOr<FileResult> CountRepeats(absl::string_view entry, int64_t n,
                                          absl::string_view found_as = "");

  // Every entry, sorted by name, with the damage found in its files.
  // Unparseable entry folders are skipped.
  absl::StatusOr<std::vector<EntryInfo>> List() const;

  // The entry's case.txt and meta.txt, for `ptxdiff triage show`: first what
  // is damaged, and a damaged file's unprintable bytes as \xNN escapes.
  absl::StatusOr<std::string> Show(absl::string_view entry) const;

  // Marks an entry as a known, explained disagreement (a documented toolchain
  // deviation, a spec ambiguity): campaigns count it without reporting it.
  // A damaged meta.txt is rebuilt first (its copy kept): what was repaired
  // ("meta.txt was damaged: …") or not rewritten (INDEX.md), empty where
  // nothing was, for the user.
  absl::StatusOr<std::string> MarkExplained(absl::string_view entry,
                                            absl::string_view reason);

  // Adds the entries of another triage directory: new ones are copied, known
  // ones have their counts added and first/last seen widened. This
  // directory itself (under any name) is InvalidArgument. Its directories
  // whose names are no entry names (but those starting with '.', a triage
  // directory's own) are passed over, their names put in `skipped` if given.
  // A damaged entry is merged as it is, one whose case.txt cannot be read
  // not at all: each said in `damaged` if given ("NAME is damaged (…):
  // merged as it is").
  absl::StatusOr<int> MergeFrom(const std::string& other_dir,
                                std::vector<std::string>* skipped = nullptr,
                                std::vector<std::string>* damaged = nullptr);

 private:
  TriageStore(std::string dir, ProgramCaseCheck check_program_case)
      : dir_(std::move(dir)),
        check_program_case_(std::move(check_program_case)) {}
  // What merging one entry of another directory writes: a new entry's
  // files, or a known one's meta.txt (its counts added).
  struct MergeStep {
    std::string path;  // the entry's directory here
    bool is_new = false;
    bool unreadable = false;  // new, and its case.txt cannot be read
    std::map<std::string, std::string> files;  // is_new
    std::string meta;                           // !is_new
  };
  absl::StatusOr<MergeStep> PlanMerge(const EntryInfo& e,
                                      const std::string& other_dir) const;
  // The directories of dir_ that List passes over as no entry's, by name.
  std::vector<std::string> NotEntries() const;
  // The entry `name` (a directory of dir_), read and checked.
  EntryInfo Inspect(const std::string& name, const Signature& signature) const;
  // File() for an entry that exists: repaired, then counted.
  absl::StatusOr<FileResult> CountIn(const std::string& name,
                                     const Finding& finding);
  absl::Status RewriteIndex() const;
  // RewriteIndex's error message, or empty (File's index_error).
  std::string IndexError() const;

  std::string dir_;
  ProgramCaseCheck check_program_case_;  // may be empty (Open)
};

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_TRIAGE_STORE_H_
