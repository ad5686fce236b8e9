// Minimizing a program case (issue 31): the fewest steps, loops, inputs and
// outputs, and the plainest immediates, that still show a disagreement.
//
// Delta debugging in rounds (the loop is common/minimize_rounds.h's): a
// candidate is the program with one simplification, valid as a case; each
// round asks `shows` about every candidate at once (one ptxas run for a
// round) and keeps the first that still shows the disagreement, until none
// does. The simplifications, in the order tried:
//   - drop an output;
//   - in a program of more than 32 steps, remove a block whole, or a run of
//     instructions at one depth (halves, then quarters, ...), what they set
//     read as 0 after them: a long case's irrelevant steps go in a few
//     rounds;
//   - remove a step, its later uses rewired to one of its register sources
//     of the same width, or to the immediate it held at the witness; or
//     make it a move of that immediate;
//   - unwrap a loop (its body once), remove an empty loop, run a loop once;
//   - replace an if by its then part or by its else part (an if without an
//     else: remove it), drop an empty else;
//   - remove a branch, an exit, or a label with the branches to it;
//   - drop the guard of a step, a branch or an exit;
//   - replace an input by its witness as an immediate;
//   - make an immediate or a witness 0, 1, or its low 16 bits.
// The signature of the result (ProgramSignature) is what deduplicates it.

#ifndef PTXDIFF_PROGRAM_PROGRAM_MINIMIZER_H_
#define PTXDIFF_PROGRAM_PROGRAM_MINIMIZER_H_

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "oracle/errata.h"
#include "program/program.h"

namespace ptxdiff {

// For each candidate, whether it still shows the disagreement; an error
// stops the minimizing.
using ProgramBatchPredicate =
    std::function<absl::StatusOr<std::vector<bool>>(std::span<const Program>)>;
// The same one candidate at a time.
using ProgramPredicate = std::function<absl::StatusOr<bool>(const Program&)>;

struct ProgramMinimizeResult {
  Program program;
  int rounds = 0;           // calls of the predicate
  int candidates = 0;       // candidates it judged
  bool budget_out = false;  // stopped at max_candidates, maybe not minimal
};

// `program` minimized while `shows` holds, judging at most `max_candidates`
// candidates. `program` itself is assumed to show the disagreement.
absl::StatusOr<ProgramMinimizeResult> MinimizeProgram(
    const Program& program, const ProgramBatchPredicate& shows,
    int max_candidates = 2000);
absl::StatusOr<ProgramMinimizeResult> MinimizeProgram(
    const Program& program, const ProgramPredicate& shows,
    int max_candidates = 2000);

// The steps one round's candidates may hold in all. Each candidate is a
// whole copy of the program: a 6,000-step case's candidates took 24 GB
// before the first was judged, deaf to Ctrl-C. A long program gets fewer
// candidates a round (at least one), the last steps' first.
inline constexpr size_t kProgramRoundSteps = size_t{1} << 17;

// The one-simplification candidates of `program`, in the order tried, within
// kProgramRoundSteps (none once a stop is recorded: interrupt.h); each valid
// (it reads back from its text).
std::vector<Program> ProgramSimplifications(const Program& program);

// Each instruction `program` runs at its witness inputs, alone at the
// operands it had there (TupleAsProgram), once each, in the order run, at
// most `max`: the candidates for a fault of one instruction, which is what
// a tool's crash or hang most often is.
std::vector<Program> InstructionsAlone(const Program& program, Reading reading,
                                       size_t max = 64);

// What deduplicates a minimized program: its text (its blocks included)
// with registers renamed in order of appearance (inputs %a, %b, ...; others
// %r0, %r1, ...; an if's condition as a guard's), labels L0, L1, ..., witness
// values dropped, and each immediate written as its class (0, 1, -1, min,
// max, small for < 32, pow2, k). Two findings of one shape have one.
std::string ProgramSignature(const Program& program);
// "program-1f2e3d4c": a short, file-safe name of a signature.
std::string ProgramSignatureName(const std::string& signature);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_MINIMIZER_H_
