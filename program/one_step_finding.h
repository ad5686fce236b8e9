// A program minimized to one instruction is a tuple (issue 63: one case
// type): what the tuple campaign checks, filed where it files, under the
// same signature, so that one bug found by either path is one entry that
// both count in, and `ptxdiff repro` replays it as a tuple.

#ifndef PTXDIFF_PROGRAM_ONE_STEP_FINDING_H_
#define PTXDIFF_PROGRAM_ONE_STEP_FINDING_H_

#include <optional>

#include "isa/tuple.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_ptx.h"
#include "triage/finding.h"

namespace ptxdiff {

// The tuple `p` is in `form`, where `p` is the one-step program of a tuple
// (TupleAsProgram's shape): one unguarded instruction, no carry in or out,
// its output the instruction's destination, each source an immediate or
// an input of its own (a parameter as wide as the tuple's register for
// that source) read once. Its operands are the inputs' witnesses; in the
// runtime form the input sources are runtime. nullopt for any other.
std::optional<Tuple> ProgramAsTuple(const Program& p, ProgramInputs form);

// `program_finding` (a value mismatch of `p`, found as `m`) as the tuple
// finding the tuple campaign files, where `p` is one (ProgramAsTuple at the
// mismatch's inputs): the tuple, the oracle's and the backend's values,
// how the backend obtained them, the cause if it is not the variant.
std::optional<Finding> AsTupleFinding(const Finding& program_finding,
                                      const Program& p,
                                      const ProgramMismatch& m);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_ONE_STEP_FINDING_H_
