// What runs a program and is judged against the composed oracle: ptxas
// (what it folds or claims constant, program_ptxas.h) or a user's tool that
// runs PTX (what it computes, program_tool.h). The program campaign and
// `ptxdiff program` ask either the same way.

#ifndef PTXDIFF_PROGRAM_PROGRAM_BACKEND_H_
#define PTXDIFF_PROGRAM_PROGRAM_BACKEND_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "oracle/errata.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_ptx.h"
#include "protocol/fault_kind.h"

namespace ptxdiff {

// A backend's outputs that the composed oracle refutes.
struct ProgramMismatch {
  ProgramInputs form;
  std::vector<uint64_t> claimed;  // what the backend gave, per output
  std::vector<uint64_t>
      inputs;  // where the oracle differs (immediates: the witness)
  std::vector<ProgramValue> oracle;  // the oracle's outputs there
  // The backend's values came from running its code on the CPU (ptxas's
  // SASS on sass/sass_machine.h), not from a fold, a claim or a tool; the
  // SASS that ran, as a listing.
  bool executed = false;
  std::string listing;
  // Executed: where the code first departs from its -O0 code's values on
  // the way to the wrong output (sass/sass_departure.h), as a sentence, and
  // as the root cause it is filed under (DepartureCause); empty where none
  // is seen.
  std::string departure;
  std::string departure_cause;
};

// `p` with its witness at `m`'s inputs, so that the program alone shows the
// disagreement (`ptxdiff program` on a case; its cause key, filed_causes.h).
inline Program AtMismatch(Program p, const ProgramMismatch& m) {
  for (size_t k = 0; k < p.inputs.size() && k < m.inputs.size(); ++k) {
    p.inputs[k].witness = m.inputs[k];
  }
  return p;
}

// A run that did not end: the tool crashed or hung on the program alone
// (kind: kCrash or kHang, as a tuple's fault).
struct ProgramFault {
  CaseFault kind = CaseFault::kCrash;
  std::string what;  // how it ended, and the end of the tool's output
};

// A tool's or a GPU's why_not for a program with thread inputs: the kernel
// ABI runs programs on one thread (docs/kernel-abi.md).
inline constexpr char kThreadInputsNotRun[] =
    "a program with thread inputs (%tid.x, %laneid) runs on one thread "
    "here: judged on ptxas's code only, each lane run on the CPU";

// What a backend did with a program in one input form: not judged (ptxas
// kept code that reads the inputs; the tool refused it), agreeing, a
// mismatch, or a fault.
struct ProgramCheck {
  bool judged = false;
  std::optional<ProgramMismatch> mismatch;
  std::optional<ProgramFault> fault;
  std::string why_not;  // when not judged
  // Not judged because the oracle defined no output wherever it ran
  // (NoOutputDefinedWhy): not a limit of the backend or of the evaluator.
  bool nothing_defined = false;
  // Not judged because the tool refused the program alone (it ran none of
  // it; not the harness's own limit on inputs): what the program campaign
  // learns refused instructions from (program_refusals.h).
  bool refused = false;
  // Not run: the run was cut at the caller's deadline. Not checked, and so
  // not counted as checked.
  bool cut = false;
  // Cut, in a module the backend hung on before the deadline cut its
  // halving: how that run ended. An unisolated hang, of the module.
  std::string hung_in_module;
  // Judged on code run on the CPU (ptxas's SASS on the evaluator), not on a
  // fold, a claim or a tool's run.
  bool executed = false;
  // Not judged because the evaluator did not run the code: what stopped it
  // (SassRun::blocker, a census key).
  std::string blocker;
  // The outputs a compiler computed ahead of the inputs, judged or not:
  // ptxas's fold (immediates) or its claim for every input (runtime).
  std::optional<std::vector<uint64_t>> constants;
  // The input vectors it was judged at (a claim's, or its code's runs).
  int vectors = 0;
};

class ProgramBackend {
 public:
  virtual ~ProgramBackend() = default;
  // "ptxas", "ptx-cmd": a triage entry's backend.
  virtual std::string Name() const = 0;
  // What it is exactly (meta.txt's backend line).
  virtual std::string Identity() const = 0;
  // Each program checked in `form`, as few runs as it can (one for all).
  // Runs past `deadline` are cut and not judged. An error only for the
  // harness's own failure.
  virtual absl::StatusOr<std::vector<ProgramCheck>> Check(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) = 0;
  // The same up to the first program the backend crashes or hangs on: those
  // after it may be left unchecked (`cut`). What a minimizer of a crash or a
  // hang asks, which keeps the first candidate that still faults.
  virtual absl::StatusOr<std::vector<ProgramCheck>> CheckUntilFault(
      std::span<const Program> programs, ProgramInputs form, Reading reading,
      absl::Time deadline) {
    return Check(programs, form, reading, deadline);
  }
  // The disagreement in words: what it gave and where the oracle differs.
  virtual std::string Describe(const Program& p,
                               const ProgramMismatch& m) const = 0;
  // A finding's class in `form` ("runtime-claim"), and its short name in
  // summaries ("runtime claim").
  virtual std::string FindingClass(ProgramInputs form) const = 0;
  virtual std::string FindingName(ProgramInputs form) const = 0;
  // The same for a mismatch, which may say more than its form (ptxas's
  // executed code: "runtime-executed").
  virtual std::string MismatchClass(const ProgramMismatch& m) const {
    return FindingClass(m.form);
  }
  virtual std::string MismatchName(const ProgramMismatch& m) const {
    return FindingName(m.form);
  }
  // A standalone reproducer: the module it is given (and its input buffer,
  // for a tool that reads one).
  virtual std::string ReproModule(const Program& p,
                                  ProgramInputs form) const = 0;
  virtual std::string ReproInput(const Program& p) const { return ""; }
  // The same for a module of several programs (an unisolated fault's); by
  // default the first program's.
  virtual std::string ReproModuleOf(std::span<const Program> programs,
                                    ProgramInputs form) const {
    return ReproModule(programs[0], form);
  }
  virtual std::string ReproInputOf(std::span<const Program> programs) const {
    return ReproInput(programs[0]);
  }
  // The flags that replay a case: "--backend ptxas --arch sm_90".
  virtual std::string ReplayFlags() const = 0;
  // True if it judges programs with thread inputs (ptxas's code, each lane
  // run on the CPU). A tool and a GPU run programs on one thread and only
  // say "not judged" (kThreadInputsNotRun): the campaign generates no such
  // programs for them.
  virtual bool JudgesThreadInputs() const { return false; }
  // True if it judges programs whose inputs are loaded from memory with
  // their runtime inputs: a tool and a GPU run the loads; ptxas only where
  // the SASS evaluator runs its code (it folds no load).
  virtual bool JudgesLoadedInputs() const { return true; }
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_BACKEND_H_
