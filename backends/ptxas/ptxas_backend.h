// The `ptxas` backend: ptxas's constant folding as an implementation under
// test, without a GPU.
//
// Each tuple becomes PTX that moves its operands into registers as
// constants, executes the instruction and stores the result
// (ptx_module.h). Many kernels go into one module and one ptxas run; the
// cubin's `.text.<kernel>` sections are read back (cubin.h) and decoded
// (sass_constants.h). Where ptxas folded a kernel completely, the stored
// constants are the tuples' results (and a `.cc` tuple's carry, from the
// flag word its CC.CF reader stored; carry_support.h). A tuple's runtime
// sources (isa/operand_form.h) are kernel parameters: a constant ptxas still
// stores is its claim for every value of them, the answer for every tuple
// that shares the variant, the form and the immediates (compiled once);
// research §11. Everything else is declined, never guessed:
//   - a variant above the arch's SM or the toolkit's PTX ISA (LevelOf), a
//     family ptxas never folds on the arch, or a variant it folds for no
//     operands (mad.hi, 16/64-bit div/rem, madc.hi, 64-bit add.cc, ...):
//     kUnsupportedVariant, and left out of `supports`;
//   - a tuple whose lines ptxas rejects: kOperandForm with ptxas's message
//     (the rest of its module is compiled again without it);
//   - a kernel the decoder does not fully understand: its tuples are
//     compiled again in halves, down to one per kernel, and those still not
//     understood are kNotEvaluable (with runtime sources: ptxas claims no
//     constant, the code reads them).
// Known disagreements of ptxas 13.0 with the oracle are listed in
// ptxas_backend_test.cc (KnownPtxasDeviation).
// Compile once, run every input (compiled_code.h): the code of a tuple with
// runtime sources (its kernel and slot, or its claim) is kept for the whole
// run under its key (variant, form, immediates, arch, -O level); a later
// tuple of that key, in any batch, runs on it without ptxas, its value
// flagged as reused (kResultFlagReused). So is the -O0 code that an
// executed value the oracle refutes is checked on. All-immediate tuples
// (folding checks) are compiled every time: their constants are the test.
//
// Options (HELLO key-values): `arch` (default sm_90; sm_75 .. sm_121f, see
// KnownArchs(); sm_87 included, its fixed kernel prologue is whitelisted),
// `ptxas` (path), `tuples_per_kernel` (the most per kernel, default 64; the
// backend learns smaller kernels for variants that often do not fold),
// `kernels_per_module` (default 64), `jobs` (modules assembled at once:
// default 2 ptxas processes, or 1 when in-process, see `compiler`),
// `all_variants` (1: compile the variants ptxas folds for no operands, too, to
// check that list against another ptxas), `compiler`
// (`auto`, the default: ptxas's assembler in-process through the libnvJitLink
// of the same release where it loads, nvjitlink.h, else the executable;
// `ptxas`: always the executable; `nvjitlink`: in-process or fail; the
// default is $PTXDIFF_PTXAS_COMPILER where set; the toolchain line says
// which), `code_cache_mb` (the bound of the compiled code kept, default
// 512; 0 keeps none across batches), `timeout_ms` (the most one run of the
// ptxas executable may take, default 60000; less once runs were timed: four
// times a run's expected time and 1 s, ptxas_faults.h), `batch_timeout_ms`
// (all runs of a batch, default three quarters of the client's reply
// timeout, HELLO's reply_timeout_ms, else 45000: what is left unrun then is
// declined saying so; in-process compiles are not cut, a hang there is the
// worker's, which the client restarts). Construction runs
// ptxas three times: --version, --list-version (the newest PTX ISA, used for
// `.version`), and a self-test that compiles known tuples and insists on
// reading them back (then, for the executable, 512 more, which time a
// run's cost per tuple).

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_BACKEND_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/backend.h"
#include "backends/ptxas/foldability.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_calibration.h"
#include "isa/axes.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// FailedPrecondition if ptxas cannot be found or does not work (with what to
// do about it), InvalidArgument for a bad option.
absl::StatusOr<std::unique_ptr<Backend>> MakePtxasBackend(
    const KeyValues& options);

// The assembler the backend would compile with for `options` (ptxas=,
// compiler=): libnvJitLink of the ptxas found's release in-process where it
// loads, else the ptxas executable; `description` says which. So that a
// self-check (ptxdiff calibrate) runs the code the backend judges.
struct PtxasAssembler {
  Assembler assemble;
  std::string description;
};
// Each compile ends after `timeout`, and by `deadline` (TimeoutBefore,
// common/subprocess.h).
absl::StatusOr<PtxasAssembler> MakePtxasAssembler(
    const KeyValues& options, absl::string_view arch,
    absl::Time deadline = absl::InfiniteFuture(),
    absl::Duration timeout = kPtxasTimeout);

// The libnvJitLink the backend assembles with for `options` (ptxas=,
// compiler=, $PTXDIFF_PTXAS_COMPILER), loaded; null where it runs the ptxas
// executable (compiler=ptxas, or no library of the found ptxas's release
// loads). For what compiles beside the backend (programs, program_ptxas.h):
// the same code the tuples are judged on.
absl::StatusOr<std::shared_ptr<const NvJitLink>> LoadPtxasInProcess(
    const KeyValues& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_BACKEND_H_
