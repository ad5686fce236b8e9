// The composed oracle: a program (program.h) evaluated step by step with the
// per-variant oracle.
//
// Each register carries its bits and whether the spec defines them. A step
// whose result the spec leaves open (a division by zero, `bfind`'s ...), or
// that reads an undefined register, gives an undefined result: an output
// that depends on one is never judged (poison propagation).
//
// An if runs the branch its condition takes. A condition the spec leaves
// open runs neither: every register either branch sets is undefined after
// the block (and CC.CF, when a branch sets it), as is a guarded step's
// register under an undefined guard. A register the path taken never set
// (first set in the other branch, or in a loop run 0 times) is undefined.
//
// A branch skips to its label; where paths join there, a register holds
// a defined value only where every path that reaches the label gives it
// the same one (one set only on the path not taken is undefined, as after an
// if). A branch under a guard the spec leaves open takes both paths. A
// thread that exits stores no output: none is judged (nor where it may
// exit, its guard undefined).
//
// CC.CF is state: a `.cc` step sets it, a carry-in step (addc, subc, madc)
// reads it. Under the spec reading a flag read before any step set it, or
// read by the other kind (a borrow by addc, a carry by subc), is undefined:
// the spec leaves both open (docs/spec-notes.md, "What the spec leaves open:
// the bit value of a borrow"). Under the hardware reading the flag is one
// bit, the adder's carry-out, which after a subtraction is NOT borrow: a
// carry is read as that bit, a borrow as its complement.

#ifndef PTXDIFF_PROGRAM_COMPOSED_ORACLE_H_
#define PTXDIFF_PROGRAM_COMPOSED_ORACLE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "program/program.h"

namespace ptxdiff {

struct ProgramValue {
  uint64_t bits = 0;  // zero-extended from the register's width
  bool defined = true;
  // The thread exits (or may: under a guard the spec leaves open) before
  // the stores: the output is not stored, so not judged (defined false).
  bool exits = false;
  friend bool operator==(const ProgramValue&, const ProgramValue&) = default;
};

// Told of each instruction step as it runs: its operands and the per-variant
// oracle's result (the program fuzzer's signal).
using StepObserver =
    std::function<void(const Variant&, const Operands&, const Result&)>;

// The outputs of `program` with its inputs set to `inputs` (one per input,
// masked to its width), in the order of its `output` lines.
// InvalidArgument if `inputs` has the wrong count. An evaluation that a
// stop of this process (common/interrupt.h) or `deadline` ends early
// defines no output (EvaluationStopped tells the caller why).
absl::StatusOr<std::vector<ProgramValue>> EvaluateProgram(
    const Program& program, std::span<const uint64_t> inputs,
    Reading reading = Reading::kSpec, const StepObserver* observer = nullptr,
    absl::Time deadline = absl::InfiniteFuture());

// True once this process was asked to stop or `deadline` has passed: where
// a long check (many evaluations, many runs of code) ends, not judged.
bool EvaluationStopped(absl::Time deadline);

// True if an output `oracle` defines differs from `claimed` (one value per
// output): a claim the oracle refutes there.
bool Disagrees(std::span<const ProgramValue> oracle,
               std::span<const uint64_t> claimed);

// True if the outputs are a thread's that exits (or may) before its
// stores: there is nothing to judge.
bool ThreadExits(std::span<const ProgramValue> outputs);

// True if the oracle defines none of `outputs`: the thread exits (or may),
// or the spec leaves each one open (a division by zero). A backend's values
// there are not judged.
bool DefinesNoOutput(std::span<const ProgramValue> outputs);

// Why a backend's values were not judged where the oracle defined no output
// at any input vector tried: `exits` if the thread exited at each.
std::string NoOutputDefinedWhy(bool exits);

// The outputs at the program's witness inputs.
std::vector<ProgramValue> EvaluateAtWitness(const Program& program,
                                            Reading reading = Reading::kSpec);

// "%lo = 0x00000000, %hi = 0x00000001": the outputs (one value each), an
// undefined one saying it is not judged; past 16, "and N more outputs".
std::string OutputsText(const Program& program,
                        std::span<const ProgramValue> values);
// The same for constants a backend stored.
std::string ClaimedText(const Program& program,
                        std::span<const uint64_t> claimed);
// "%a = 0x00000001, %b = ...": the inputs (one value each), past 16 "and
// N more inputs"; "no inputs".
std::string InputsText(const Program& program,
                       std::span<const uint64_t> inputs);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_COMPOSED_ORACLE_H_
