// The SASS evaluator's self-check (issue 40's calibration): tuples compiled
// by ptxas at -O0, where it emits close to a literal translation of the PTX,
// run on the machine (sass/sass_machine.h) and compared with the oracle.
// At -O0 a disagreement is a defect of the evaluator (or a finding of
// ptxas's -O0 code, to be told apart), never a finding of optimized code:
// the evaluator earns the right to judge -O3 code here.
//
// Every runtime-capable source of a tuple is a kernel parameter, so ptxas
// folds nothing and every instruction the PTX asks for is run.

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_CALIBRATION_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_CALIBRATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/ptxas/compiled_code.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_execution.h"
#include "isa/tuple.h"
#include "sass/sass_decoder.h"

namespace ptxdiff {

struct CalibrationReport {
  int64_t tuples = 0;     // compiled and looked at
  int64_t rejected = 0;   // ptxas would not compile them
  std::string rejected_example;  // "add.u32: <ptxas's first line>"
  int64_t executed = 0;   // their kernel ran to the end
  int64_t agreed = 0;     // executed, and the oracle's (hardware reading's)
                          // value, or its result is not defined
  int64_t undefined = 0;  // executed, the spec leaves the result open
  // Kernels compiled (one per variant and immediates), and those that ran
  // to the end for every tuple given them: the census's share.
  int64_t kernels = 0;
  int64_t kernels_run = 0;
  // Kernels not run, by what stopped them (SassRun::blocker), in tuples.
  std::map<std::string, int64_t> not_run;
  std::map<std::string, std::string> not_run_example;  // a variant each
  // Disagreements that are known findings of ptxas's code, not of the
  // evaluator (KnownCalibrationFinding), in tuples by finding.
  std::map<std::string, int64_t> known;
  std::map<std::string, std::string> known_example;  // a replay line each
  // The other disagreements of executed tuples, as replay lines with the
  // evaluator's value: defects of the evaluator until told apart.
  std::vector<std::string> disagreements;
  std::vector<Tuple> disagreeing;  // their tuples, in the same order
  // The first disagreement's run, one "/*0040*/ IADD3 R5, R4, R5, RZ  ->
  // 0x1234" line per instruction run: where the evaluator went wrong.
  std::string first_trace;

  void Merge(const CalibrationReport& other);
  // "12000 tuples: 11890 executed (99.1%), 0 disagreements; not run: ..."
  std::string Summary() const;
};

// Where ptxas's own code for `v` at -O`opt_level` is known to disagree with
// the spec (docs/sass-evaluator.md) for some operands: what is known, or
// nothing. For a scalar video variant, the variant classes the findings'
// evidence covers (a destination part other than the lowest; mixed
// signedness with `.sat`; `.sat` or a secondary min/max).
std::optional<std::string> KnownCalibrationFinding(const Variant& v,
                                                   int opt_level);
// The same for one tuple: for scalar video, only where its operands are of
// the class on which the finding's pattern gives another value than the
// spec's. Calibration counts such disagreements apart, as findings, not the
// evaluator's; any other disagreement fails it.
std::optional<std::string> KnownCalibrationFinding(const Variant& v,
                                                   const Operands& o,
                                                   int opt_level);

// The kernel parameters after the output pointer that hold `t`'s runtime
// sources, as PtxParamType declares them (a predicate as a 32-bit word).
std::vector<KernelArgument> RuntimeArguments(const Tuple& t);
// The same, appended to `out`.
void AppendRuntimeArguments(const Tuple& t, std::vector<KernelArgument>& out);

// One tuple's calibration: its kernel ran to the oracle's value (or to a
// result the spec leaves open), to another value, or not at all.
enum class CalibrationOutcome : uint8_t { kAgrees, kDisagrees, kNotRun };

struct TupleCalibration {
  CalibrationOutcome outcome = CalibrationOutcome::kNotRun;
  bool undefined = false;  // kAgrees because the spec leaves it open
  bool rejected = false;   // kNotRun because ptxas would not compile it
  std::string blocker;     // kNotRun: what stopped the evaluator
  std::string why_not;
  std::string line;  // kDisagrees: the replay line and the value
  SassRun run;       // the machine's traced run, where CalibrateEach keeps it
};

// Each tuple compiled for `arch` at -O`opt_level` (every runtime source a
// parameter) in one module, a kernel for each run of consecutive tuples
// that differ only in runtime values, run and judged with the hardware
// reading; with `keep_runs`, each run traced (TupleCalibration::run: the
// -O0 reference sass_departure.h compares optimized code with). An error
// only where ptxas cannot be run.
absl::StatusOr<std::vector<TupleCalibration>> CalibrateEach(
    const std::string& ptxas, const SassArchInfo& arch,
    std::span<const Tuple> tuples, int opt_level, bool keep_runs = false);

// A kernel compiled for one tuple's key at one -O level, to calibrate every
// tuple of that key on (CalibrateOn), or why there is none: ptxas rejected
// the tuple, or the decoder does not read the kernel.
struct ReferenceKernel {
  std::shared_ptr<const CompiledKernel> kernel;
  bool rejected = false;
  std::string why_not;
};

// What assembles a module at an -O level: the ptxas executable or the same
// release's assembler in-process (nvjitlink.h), as the caller compiles.
using Assembler = std::function<absl::StatusOr<PtxasOutput>(
    absl::string_view ptx, int opt_level)>;

// The ptxas executable at `ptxas`, compiling for `arch`; each run killed at
// `timeout` (calibrate's --timeout) or at `deadline`, whichever comes first
// (a ptxas that hangs must not hold `calibrate --max-time` a minute a
// module: TimeoutBefore, common/subprocess.h).
Assembler ExecutableAssembler(const std::string& ptxas, absl::string_view arch,
                              absl::Time deadline = absl::InfiniteFuture(),
                              absl::Duration timeout = kPtxasTimeout);

// `tuples` compiled for `arch` at -O`opt_level` by `assemble`, a kernel
// each, in one module (halved where ptxas rejects a tuple). An error only
// where the assembler cannot be run.
absl::StatusOr<std::vector<ReferenceKernel>> CompileReferenceKernels(
    const Assembler& assemble, const SassArchInfo& arch,
    std::span<const Tuple> tuples, int opt_level);

// `t` run on `reference` (compiled for t's key at -O`opt_level`) and judged
// as CalibrateEach judges it; with `keep_run`, the run traced.
TupleCalibration CalibrateOn(const SassArchInfo& arch,
                             const ReferenceKernel& reference, const Tuple& t,
                             int opt_level, bool keep_run);

// The same on `runner`, a runner of the reference kernel (not null) of t's
// key: the way to calibrate many tuples of one key, its launch laid out
// once. Where not `describe`, a disagreement's `line` is left empty: a
// caller that reads only the outcome is spared formatting the tuple.
TupleCalibration CalibrateOn(CompiledKernelRunner& runner, const Tuple& t,
                             int opt_level, bool keep_run, bool describe);

// Compiles `tuples` (each with every runtime-capable source a parameter)
// for `arch` at -O`opt_level`, one kernel for each run of consecutive
// tuples that differ only in runtime values, runs each tuple on its kernel
// and judges it. An error only where ptxas cannot be run.
absl::StatusOr<CalibrationReport> CalibrateTuples(const Assembler& assemble,
                                                  const SassArchInfo& arch,
                                                  std::span<const Tuple> tuples,
                                                  int opt_level);

// The self-check as a campaign (`ptxdiff calibrate`): every variant given,
// `tuples_per_variant` edge and random operand sets each on one kernel
// (every runtime-capable source a parameter), compiled
// `variants_per_module` variants to a ptxas run on `threads` threads until
// all are done, `deadline`, or a stop (common/interrupt.h).
struct CalibrationCampaignOptions {
  std::string ptxas;
  // What compiles the kernels: the ptxas backend's assembler (MakeAssembler
  // in ptxas_backend.h: nvJitLink where it loads), so that the self-check
  // runs the code the backend judges; unset, the executable at `ptxas`.
  Assembler assemble;
  std::string arch = "sm_90";
  std::vector<Variant> variants;  // of PTX families
  int tuples_per_variant = 12;
  int opt_level = 0;
  uint64_t seed = 1;
  int threads = 1;
  int variants_per_module = 64;
  absl::Time deadline = absl::InfiniteFuture();
  // Called after each module, under a lock, with the report so far and
  // the variants done.
  std::function<void(const CalibrationReport&, int64_t)> progress;
};

// The tuples of one variant in the campaign: `n` operand sets from
// FillEdgeTuples, every runtime-capable source a runtime value, the other
// sources (immediates) those of the first set, so that one kernel answers
// all of them.
std::vector<Tuple> CalibrationTuples(const Variant& v, int n,
                                     std::mt19937_64& rng);

// The campaign's report (those variants the deadline left are not in it);
// an error only where ptxas cannot be run, or for an arch with no decoding
// table.
absl::StatusOr<CalibrationReport> RunCalibrationCampaign(
    const CalibrationCampaignOptions& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_SASS_CALIBRATION_H_
