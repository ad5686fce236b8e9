// What a program campaign files (program_campaign.h): a minimized program's
// disagreement as a triage finding, its entry's case text (with the line
// that replays it), reproducer and one-line `what`, and the shape its root
// cause is grouped by.

#ifndef PTXDIFF_PROGRAM_PROGRAM_FINDING_H_
#define PTXDIFF_PROGRAM_PROGRAM_FINDING_H_

#include <string>
#include <vector>

#include "oracle/errata.h"
#include "program/filed_causes.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "triage/finding.h"

namespace ptxdiff {

// The spellings of a program's steps in order, "mov" for a move.
std::vector<std::string> StepSpellings(const Program& p);

// What `check` (of `minimized` alone, in `form`) shows on `backend`, as a
// finding: a mismatch at its inputs, keyed `cause` (FiledCauses::KeyOf of
// AtMismatch), or a crash or hang (a hang of one instruction keyed by its
// family, as the tuple campaign's hangs are).
Finding ProgramFinding(const ProgramBackend& backend, Reading reading,
                       const Program& minimized, ProgramInputs form,
                       const ProgramCheck& check, const CauseKey& cause);

// A module `backend` hung on (`how` it ran) whose halving the deadline cut,
// so that no one program of it is known to hang: the module's hang, as the
// tuple campaign files a batch's. Its case is the first program (what
// `repro` replays), its reproducer the module of them all.
Finding UnisolatedHangFinding(const ProgramBackend& backend, Reading reading,
                              const std::vector<Program>& programs,
                              ProgramInputs form, const std::string& how);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_FINDING_H_
