// Crash mode's abort, through stack frames that name the finding's cause.
//
// ClusterFuzz and OSS-Fuzz group crashes by their crash state: the top three
// frames of the symbolized stack once the sanitizer's, libc's and abort's
// own are skipped, not by the first line printed. A crash mode that aborted
// from one function would file every cause as one issue. So the abort goes
// through one small function for the finding's family and one for its kind,
// generated from the family table (isa/families.inc):
//
//   #0 abort
//   #1 ptxdiff::cause::ValueMismatch()
//   #2 ptxdiff::cause::InFamilyFns(...)
//   #3 ptxdiff::cause::AbortWithCauseInFrames(...)
//
// One (family, kind) is one crash state, whatever the variant, operands or
// backend: the triage directory's root-cause grouping (FaultInFamilyCause)
// splits finer where a cause needs it.

#ifndef PTXDIFF_FUZZERS_CAUSE_FRAMES_H_
#define PTXDIFF_FUZZERS_CAUSE_FRAMES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "isa/axes.h"
#include "triage/finding.h"

namespace ptxdiff::cause {

// "value-mismatch in fns": the cause the frames name, for the first line.
std::string CauseText(FindingKind kind, Family family);

// The names of the frames a crash of this cause aborts through, innermost
// first ("ptxdiff::cause::ValueMismatch", "ptxdiff::cause::InFamilyFns"), as
// a symbolizer prints them without their parameters.
std::string KindFrameName(FindingKind kind);
std::string FamilyFrameName(Family family);

// Prints `first_line` (and a newline) on stderr, then aborts through the
// frames of (kind, family).
[[noreturn]] void AbortWithCauseInFrames(FindingKind kind, Family family,
                                         absl::string_view first_line);

}  // namespace ptxdiff::cause

#endif  // PTXDIFF_FUZZERS_CAUSE_FRAMES_H_
