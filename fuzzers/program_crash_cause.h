// The cause of a program's finding in crash mode (issue 66), as the frames
// it aborts through name it (cause_frames.h), so that ClusterFuzz files one
// issue per cause:
//
//   - its cause key names a variant (the instruction whose value, taken
//     wrong, gives ptxas's constant: program_cause.h; or the program's one
//     instruction): the frames of that variant's family, the same as its
//     tuple's, so that one ptxas bug seen as a tuple and as a program is one
//     crash state;
//   - its executed code departs from its -O0 code (sass_departure.h): a
//     frame for the SASS operation it departs at;
//   - neither (two wrong steps, a departure at a constant ptxas computed
//     with no culprit, a fault of several steps): the unkeyed frame, and the
//     first line says why. No family is guessed.
//
// The key is the one the program campaign files the finding under
// (FiledCauses::KeyOf), read on the program as it came, not minimized.

#ifndef PTXDIFF_FUZZERS_PROGRAM_CRASH_CAUSE_H_
#define PTXDIFF_FUZZERS_PROGRAM_CRASH_CAUSE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "isa/axes.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "sass/sass_instruction.h"
#include "triage/finding.h"

namespace ptxdiff {

struct ProgramCrashCause {
  enum Keyed { kVariant, kDeparture, kUnkeyed };
  FindingKind kind = FindingKind::kValueMismatch;
  Keyed keyed = kUnkeyed;
  Family family = Family::kAdd;  // kVariant: the key's
  SassOp op = SassOp::kNop;      // kDeparture: the departing instruction's
  // The key ("fns.b32", "executed code that departs first at `SEL R, R,
  // 0xffff, !P`"), or, unkeyed, why there is none.
  std::string key;
};

// The cause of `m`, a mismatch of `program` (as checked: its witness is
// set to the mismatch's inputs here).
ProgramCrashCause CauseOfMismatch(const Program& program,
                                  const ProgramMismatch& m, Reading reading);
// The cause of a crash or hang of the backend on `program`: its
// instruction's family if it has one, else unkeyed.
ProgramCrashCause CauseOfFault(const Program& program,
                               const ProgramFault& fault);

// "value-mismatch in fns", "value-mismatch departing at SEL",
// "crash in an unkeyed program": what the frames name.
std::string CauseText(const ProgramCrashCause& cause);
// The two frames that name it, innermost first, as a symbolizer prints
// them: {"ptxdiff::cause::ValueMismatch", "ptxdiff::cause::InFamilyFns"}.
std::vector<std::string> CauseFrameNames(const ProgramCrashCause& cause);

// Prints `first_line` and aborts through the cause's frames.
[[noreturn]] void AbortWithProgramCause(const ProgramCrashCause& cause,
                                        absl::string_view first_line);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_PROGRAM_CRASH_CAUSE_H_
