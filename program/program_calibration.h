// The SASS evaluator's self-check on programs (issue 40's calibration, the
// program half of `ptxdiff calibrate`): random programs (program_generator.h)
// compiled by ptxas at -O0, where it emits close to a literal translation,
// in both input forms; where ptxas keeps code the evaluator runs it at the
// witness or at the refutation's input vectors (program_ptxas.h), and the
// composed oracle judges it with the hardware reading. A disagreement is a
// defect of the evaluator (or of the composed oracle) until told apart,
// never a finding of ptxas's optimizer; programs with a step whose variant
// ptxas's own code is known to get wrong (KnownCalibrationFinding) are
// counted apart.

#ifndef PTXDIFF_PROGRAM_PROGRAM_CALIBRATION_H_
#define PTXDIFF_PROGRAM_PROGRAM_CALIBRATION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "program/program.h"
#include "program/program_ptxas.h"

namespace ptxdiff {

struct ProgramCalibrationReport {
  int64_t programs = 0;  // generated and compiled
  int64_t checks = 0;    // a program in one input form
  int64_t executed = 0;  // checks judged on the evaluator's run of the code
  int64_t constant = 0;  // checks judged on a fold or a claim: nothing ran
  int64_t agreed = 0;    // judged checks the oracle does not refute
  // Refuted checks with a step ptxas's code is known to get wrong, by
  // finding.
  std::map<std::string, int64_t> known;
  // The other refuted checks: the program, the inputs and both values.
  std::vector<std::string> disagreements;
  // Checks not judged, by why (the evaluator's census key, or ptxas's), in
  // checks, with an example each.
  std::map<std::string, int64_t> not_run;
  std::map<std::string, std::string> not_run_example;

  void Merge(const ProgramCalibrationReport& other);
};

struct ProgramCalibrationOptions {
  // The ptxas backend's compiler (PtxasProgramCompiler): its code is what
  // a campaign judges.
  ProgramCompiler compiler{""};
  std::string arch = "sm_90";
  int64_t programs = 1000;
  int opt_level = 0;
  uint64_t seed = 1;
  int threads = 1;
  absl::Time deadline = absl::InfiniteFuture();
  absl::Duration timeout = kPtxasTimeout;  // each compile's (--timeout)
  // Called after each batch, under a lock, with the report so far.
  std::function<void(const ProgramCalibrationReport&)> progress;
};

// The programs' calibration; stops at `deadline` or a stop of this process
// (common/interrupt.h). An error only where ptxas cannot be run.
absl::StatusOr<ProgramCalibrationReport> CalibratePrograms(
    const ProgramCalibrationOptions& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_CALIBRATION_H_
