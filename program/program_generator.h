// Random program cases in the shapes where compilers' known bugs live
// (issue 31): chains of 32-bit integer steps over a few runtime inputs, with
// special constants (0, 1, -1, INT_MIN, INT_MAX) as immediates and moved
// into registers, values shifted up and squared, bitfields past the top,
// steps guarded by a compare of an input, a final narrowing (an `and` mask,
// a shift, a compare and select, a convert to 16 bits), counted loops
// after an empty one, their counters set in the entry block, that often
// carry a register set before them, and if/else blocks on a compare of an
// input (a thread-index-like value) whose branches each set one register
// their own way; where the backend judges them, an input that is the
// thread's own (%tid.x, %laneid); and PTX's own control flow: a forward
// branch on such a compare over steps that update registers set before it
// (`@%p bra L; ...; L:`), a bare label before a step (a block boundary),
// and an exit on such a compare. Deterministic for a seed.

#ifndef PTXDIFF_PROGRAM_PROGRAM_GENERATOR_H_
#define PTXDIFF_PROGRAM_PROGRAM_GENERATOR_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "program/program.h"

namespace ptxdiff {

struct ProgramShape {
  int max_inputs = 3;
  int min_steps = 2, max_steps = 7;
  // Percent of programs with a counted loop (after an empty one).
  int loop_percent = 30;
  // Percent of programs with an if/else on a compare of an input, each
  // branch setting the same register.
  int if_else_percent = 25;
  // Whether programs may read a thread input (%tid.x or %laneid): only
  // where the backend judges them (ProgramBackend::JudgesThreadInputs),
  // which the program campaign sets. Off, the generator draws nothing for
  // them: a seed gives the programs it gave before.
  bool thread_inputs = false;
  // Percent of programs, where they may, with one of their inputs a thread
  // input in place of a parameter: what reads it differs from lane to lane.
  int thread_input_percent = 12;
  // Whether programs may load inputs from memory (in[%tid.x], as
  // reproducers do): where the backend judges them
  // (ProgramBackend::JudgesLoadedInputs). Off, nothing is drawn for them.
  bool loaded_inputs = false;
  // Percent of programs, where they may, with one of their parameters
  // loaded from memory instead.
  int loaded_input_percent = 12;
  // Whether a step may now and then come with a forward branch over it
  // (most often), a bare label before it or an exit on a compare of an
  // input before it. Off, the generator draws nothing for them: a seed gives
  // the programs it gave before they were added.
  bool forward_branches = true;
  // Spellings never used as steps: root causes already known, so that one
  // cause does not flood a run.
  std::vector<std::string> suppressed;
  // Spellings drawn as steps only one time in kDiscouragedOdds: the
  // culprits of causes that keep being found again, so that the run spends
  // its programs on other variants and shapes. Empty, a seed gives the
  // programs it gave before.
  std::vector<std::string> discouraged;
};
inline constexpr int kDiscouragedOdds = 8;

// Programs drawn in `shape`. Where every step variant is suppressed
// (CanDrawAStep false), suppression is set aside so that a program can be
// drawn at all: a caller that must not draw them asks first.
Program RandomProgram(std::mt19937_64& rng, const ProgramShape& shape = {});

// Whether some variant RandomProgram draws as a step is not suppressed in
// `shape`: a campaign on a tool that refuses (or a directory that holds) all
// of them has nothing left to generate.
bool CanDrawAStep(const ProgramShape& shape);

// Every variant RandomProgram may draw as a step, by spelling: what a
// tool's remembered refusals are read against (program_refusals.h).
std::vector<std::string> GeneratedSpellings();

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_GENERATOR_H_
