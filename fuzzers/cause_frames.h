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
//
// A program's finding (fuzzers/program_crash_cause.h) whose cause key names
// a variant aborts through the same frames as that variant's tuple; one
// whose executed code departs from its -O0 code aborts through a frame for
// the SASS operation it departs at, generated from sass/sass_ops.inc
// (`ptxdiff::cause::DepartingAtSel`); one with no cause key through
// `ptxdiff::cause::InUnkeyedProgram`, never a guessed family.

#ifndef PTXDIFF_FUZZERS_CAUSE_FRAMES_H_
#define PTXDIFF_FUZZERS_CAUSE_FRAMES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "isa/axes.h"
#include "sass/sass_instruction.h"
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

// Programs: "value-mismatch departing at SEL", its frame
// ("ptxdiff::cause::DepartingAtSel"), and the abort through it and the
// kind's frame.
std::string DepartureCauseText(FindingKind kind, SassOp op);
std::string DepartureFrameName(SassOp op);
[[noreturn]] void AbortWithDepartureInFrames(FindingKind kind, SassOp op,
                                             absl::string_view first_line);

// Programs with no cause key: "value-mismatch in an unkeyed program", its
// frame ("ptxdiff::cause::InUnkeyedProgram"), and the abort through it and
// the kind's frame.
std::string UnkeyedCauseText(FindingKind kind);
std::string UnkeyedFrameName();
[[noreturn]] void AbortUnkeyedInFrames(FindingKind kind,
                                       absl::string_view first_line);

}  // namespace ptxdiff::cause

#endif  // PTXDIFF_FUZZERS_CAUSE_FRAMES_H_
