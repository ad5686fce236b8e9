// The cause key of a constant ptxas computed wrong in a program (issue 64):
// which one instruction's value, taken wrong, gives the value ptxas stored.
//
// A fold, a claim or executed code that stores a constant holds what
// ptxas's optimizer computed; the program's other steps are often only
// there to keep ptxas from folding the culprit the right way (a label, a
// move, a guard). So each instruction (in a loop, at each of its runs; in
// an if, where its branch is taken) is replaced in turn by a move of a
// plain value (ptxas's own, 0, 1, all ones, the signed minimum and
// maximum) and the composed oracle is asked whether the program then
// gives what ptxas stored. The instructions that explain it are the
// candidates; the first whose operands fall in a trigger class (a field
// past the top, MIN, a shift of 32 or more: harness/semantic_classes.h)
// is the culprit, else the first; a step that sets a predicate only where
// no step that sets a value explains it (a compare often only steers which
// value is computed, as a branch over the step ptxas got wrong does). The
// same bug reached through five shapes, or through a claim and through
// executed code, has one culprit, and so one key: the culprit's spelling,
// which is also what a tuple entry of that variant is grouped under
// (triage_store.h); or the operation it hides (a `mad.lo` of x, x is the
// square `mul.lo`; a `sub` of a, b taken as a + b is `neg` of b).
//
// It is a reading of the data flow, not a proof: a wrong value no single
// instruction's value explains (two wrong steps) has no culprit, and
// WrongConstantCause says so with nullopt. Values alone cannot tell one
// case apart: a step that writes the output explains any constant by being
// given it. Where such a step is the culprit at operands that tell nothing,
// the backend is asked to run it alone; if it gives the oracle's value
// there, the constant came from before it, and the nearest step before it
// whose value one bit off explains it is the culprit (a square whose known
// low bits ptxas takes wrong, read through a `shl`).

#ifndef PTXDIFF_PROGRAM_PROGRAM_CAUSE_H_
#define PTXDIFF_PROGRAM_PROGRAM_CAUSE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "absl/strings/string_view.h"
#include "isa/tuple.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "program/program.h"

namespace ptxdiff {

struct WrongConstant {
  size_t step = 0;       // the culprit's index in the program's steps
  Tuple tuple;           // its variant and operands at the witness
  Result oracle;         // what the oracle gives there
  uint64_t assumed = 0;  // the value that, in its place, gives ptxas's
  std::string trigger;   // its operands' trigger class ("field-past-top")
  // The root cause's key: the culprit's spelling ("bfe.s32").
  std::string key;
  // The same in words: "ptxas's constant is what the program gives if
  // `bfe.s32` of 0x0, 0xff, 0x1 (field-past-top) were 0xffffffff (the
  // oracle: 0x0)".
  std::string words;
};

// Whether the backend, given `t` alone with its operands as immediates,
// gives the oracle's value; nullopt where it cannot tell (not judged, a
// fault, out of time).
using AloneCheck = std::function<std::optional<bool>(const Tuple& t)>;

// The most steps a program's culprit is searched in. The search runs the
// program once per step and value tried: a 6,000-step case took minutes
// after its minimizing, deaf to Ctrl-C. Generated programs have a few.
inline constexpr size_t kCulpritSearchSteps = 1024;

// The culprit of `claimed` (ptxas's values, one per output) in `program`
// at its witness inputs (set to where the oracle refutes them), or nullopt
// where no one instruction explains the first output that differs, the
// program has more than kCulpritSearchSteps, or a stop came (interrupt.h).
// With `alone`, a culprit that only carries the constant is checked alone.
std::optional<WrongConstant> WrongConstantCause(
    const Program& program, std::span<const uint64_t> claimed,
    Reading reading = Reading::kSpec, const AloneCheck* alone = nullptr);

// What an entry says when no culprit is found.
inline constexpr char kNoCulpritWords[] =
    "no cause key: no one instruction's value, taken wrong, gives ptxas's "
    "constant";

// True for a departure key (DepartureCause, sass/sass_departure.h) at an
// instruction that writes a constant and reads no register (`MOV R,
// 0xffffffff`, `HFMA2.MMA R, 0x1`): the code stores a constant ptxas
// computed, as a fold does, so the departure names no cause of its own.
bool DepartsAtAConstant(absl::string_view departure_cause);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_CAUSE_H_
