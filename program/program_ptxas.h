// A program (program.h) through ptxas: what the compiler claims it stores.
//
// The program's kernel (program_ptx.h) is compiled for one arch; when the
// strict SASS decoder (backends/ptxas/sass_constants.h) reads the
// kernel as constant stores only, ptxas has claimed those constants as the
// outputs. With immediate inputs that is the folded value at the witness;
// with runtime inputs it is a claim for every input, which the composed
// oracle refutes with one input vector where a defined output differs
// (docs/ptxas-folding-research.md, "the claimed-constant reading"). Code
// that still depends on the inputs is run on the CPU (sass/sass_machine.h)
// where the evaluator understands all of it, at the witness and at the
// refutation's input vectors: a value it refutes is filed as "executed"
// only where the same program's -O0 code runs to the oracle's values
// (the evaluator's calibration, docs/sass-evaluator.md).

#ifndef PTXDIFF_PROGRAM_PROGRAM_PTXAS_H_
#define PTXDIFF_PROGRAM_PROGRAM_PTXAS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "oracle/errata.h"
#include "program/composed_oracle.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_ptx.h"
#include "sass/sass_instruction.h"

namespace ptxdiff {

// What compiles the programs' modules: the ptxas executable at `ptxas` (a
// process per module, killed after its timeout), or where `in_process` is
// set, that release's libnvJitLink in-process, as the ptxas backend
// assembles tuples (LoadPtxasInProcess): no process to start per module.
// An in-process compile cannot be killed: past its timeout or at a stop it
// is a run that did not finish, as a killed ptxas is, and runs on to its
// end on a thread of its own (CompileWithin). A path alone means the
// executable.
struct ProgramCompiler {
  ProgramCompiler(std::string ptxas_path,  // NOLINT: a path is the executable
                  std::shared_ptr<const NvJitLink> library = nullptr)
      : ptxas(std::move(ptxas_path)), in_process(std::move(library)) {}

  // As RunPtxas, bounded by `timeout` and a stop either way.
  absl::StatusOr<PtxasOutput> Compile(absl::string_view arch,
                                      absl::string_view ptx, int opt_level,
                                      absl::Duration timeout) const;
  // "/usr/local/cuda/bin/ptxas", or with "; assembled in-process by <the
  // library> (nvJitLink 13.0)": what a finding's code came from.
  std::string Description() const;

  std::string ptxas;
  std::shared_ptr<const NvJitLink> in_process;
};

// The compiler the ptxas backend uses for `options` (ptxas=, compiler=,
// $PTXDIFF_PTXAS_COMPILER): programs are judged on the code tuples are.
absl::StatusOr<ProgramCompiler> PtxasProgramCompiler(const KeyValues& options);

struct ProgramCompilation {
  // The constants stored per output, if ptxas folded the kernel to them.
  std::optional<std::vector<uint64_t>> claimed;
  // Why not, if not: the decoder's reason, or ptxas's error.
  std::string why_not;
  // The kernel's decoded SASS, where ptxas compiled it and the evaluator
  // reads the arch: what runs when nothing is claimed.
  std::vector<SassSlot> code;
  // ptxas crashed on it (a signal): a finding, not a rejection.
  std::optional<ProgramFault> fault;
  // Not compiled: cut at the caller's deadline, or by a stop of this
  // process (common/interrupt.h).
  bool cut = false;
};

// Compiles `program` with `ptxas` for `arch` ("sm_90"), at -O`opt_level`,
// killing ptxas after `timeout` (a program it did not finish is
// `why_not`). An error only where ptxas could not be run or the arch is
// unknown to the decoder; a program ptxas rejects is `why_not`.
absl::StatusOr<ProgramCompilation> CompileProgram(
    const ProgramCompiler& compiler, const std::string& arch,
    const Program& program, ProgramInputs inputs,
    int opt_level = kPtxasDefaultOptLevel,
    absl::Duration timeout = kPtxasTimeout);

// The same for many programs in one ptxas run (ProgramsModule), one result
// each; a module ptxas rejects or crashes on is split until the program it
// fails on is alone. Runs are bounded by `timeout` and by `deadline`: a run
// that `deadline` cuts short leaves its programs `cut`. With `until_fault`,
// only up to the first program ptxas crashes on, the rest left `cut`.
absl::StatusOr<std::vector<ProgramCompilation>> CompilePrograms(
    const ProgramCompiler& compiler, const std::string& arch,
    std::span<const Program> programs, ProgramInputs inputs,
    int opt_level = kPtxasDefaultOptLevel,
    absl::Duration timeout = kPtxasTimeout,
    absl::Time deadline = absl::InfiniteFuture(), bool until_fault = false);

// A refutation of a claim: the inputs and the oracle's outputs there.
struct CounterExample {
  std::vector<uint64_t> inputs;
  std::vector<ProgramValue> oracle;
};

// The first input vector where the composed oracle defines an output that
// differs from `claimed`: the witness, then each input alone at each edge
// value (the others at the witness), then `random` pseudo-random vectors.
// nullopt if none does.
std::optional<CounterExample> RefuteClaim(const Program& program,
                                          const std::vector<uint64_t>& claimed,
                                          Reading reading, int random = 256);
// The same, saying too whether the claim was judged at all: whether the
// oracle defined an output at some input vector tried.
// A stop of this process or `deadline` ends it `cut`, neither refuted nor
// judged.
struct ClaimCheck {
  std::optional<CounterExample> refuted;
  bool judged = false;
  bool cut = false;
  int vectors = 0;  // the input vectors the oracle was evaluated at
};
ClaimCheck CheckClaim(const Program& program,
                      const std::vector<uint64_t>& claimed, Reading reading,
                      int random = 256,
                      absl::Time deadline = absl::InfiniteFuture());

// Many programs checked in one ptxas run (CompilePrograms) at
// -O`opt_level`; with `execute` false, on folds and claims alone (the
// benchmark's baseline). Above -O0 an executed mismatch stands only where
// the program's -O0 code runs to the oracle's values. A stop of this
// process or `deadline` ends the judging too: what it ends is `cut`.
// `until_fault`: as CompilePrograms's.
absl::StatusOr<std::vector<ProgramCheck>> CheckPrograms(
    const ProgramCompiler& compiler, const std::string& arch,
    std::span<const Program> programs, ProgramInputs form, Reading reading,
    absl::Duration timeout = kPtxasTimeout,
    absl::Time deadline = absl::InfiniteFuture(), bool execute = true,
    int opt_level = kPtxasDefaultOptLevel, bool until_fault = false);
absl::StatusOr<ProgramCheck> CheckProgram(const ProgramCompiler& compiler,
                                          const std::string& arch,
                                          const Program& program,
                                          ProgramInputs form, Reading reading);

// ptxas as a program backend: what it folds (inputs immediate) or claims
// for every input (inputs runtime), for `arch`; each run of the ptxas
// executable killed after `timeout`.
std::unique_ptr<ProgramBackend> MakePtxasProgramBackend(
    ProgramCompiler compiler, std::string arch,
    absl::Duration timeout = kPtxasTimeout);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_PTXAS_H_
