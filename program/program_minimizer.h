// Minimizing a program case (issue 31): the fewest steps, loops, inputs and
// outputs, and the plainest immediates, that still show a disagreement.
//
// Delta debugging, one candidate at a time: a candidate is the program with
// one simplification, kept when it is still a valid case and `shows` says
// the disagreement is still there. The simplifications, each tried in turn
// until none is kept:
//   - drop an output;
//   - remove a step, its later uses rewired to one of its register sources
//     of the same width, or to the immediate it held at the witness;
//   - unwrap a loop (its body once), remove an empty loop, run a loop once;
//   - replace an input by its witness as an immediate;
//   - make an immediate or a witness 0, 1, or its low 16 bits.
// The signature of the result (ProgramSignature) is what deduplicates it.

#ifndef PTXDIFF_PROGRAM_PROGRAM_MINIMIZER_H_
#define PTXDIFF_PROGRAM_PROGRAM_MINIMIZER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "program/program.h"

namespace ptxdiff {

// True if a candidate still shows the disagreement (one compile and check);
// an error stops the minimizing.
using ProgramPredicate = std::function<absl::StatusOr<bool>(const Program&)>;

struct ProgramMinimizeResult {
  Program program;
  int calls = 0;           // of the predicate
  bool budget_out = false;  // stopped at max_calls, maybe not minimal
};

// `program` minimized while `shows` holds, calling it at most `max_calls`
// times. `program` itself is assumed to show the disagreement.
absl::StatusOr<ProgramMinimizeResult> MinimizeProgram(const Program& program,
                                                      const ProgramPredicate& shows,
                                                      int max_calls = 400);

// Every one-simplification candidate of `program`, in the order tried; each
// valid (it reads back from its text).
std::vector<Program> ProgramSimplifications(const Program& program);

// The instruction and move steps: what "a program of N steps" counts.
int CountSteps(const Program& program);

// What deduplicates a minimized program: its text with registers renamed in
// order of appearance (inputs %a, %b, ...; others %r0, %r1, ...), witness
// values dropped, and each immediate written as its class (0, 1, -1, min,
// max, small for < 32, pow2, k). Two findings of one shape have one.
std::string ProgramSignature(const Program& program);
// "program-1f2e3d4c": a short, file-safe name of a signature.
std::string ProgramSignatureName(const std::string& signature);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_MINIMIZER_H_
