// A campaign over programs (issue 31): random programs in the known shapes
// (program_generator.h) through a backend (ptxas, or a tool that runs PTX)
// in both input forms, judged by the composed oracle; each disagreement, or
// crash or hang of a tool, minimized (program_minimizer.h) and filed in the
// triage directory under its signature, with the minimized case and a
// standalone PTX module that shows it.
//
// A cause the minimizer brings down to one instruction is the tuple
// campaign's business: it is filed too, and its variant is then no longer
// generated, so that it does not flood the run. The run ends at max_time,
// minimizing included: a disagreement still being minimized then is filed
// as far as it got.

#ifndef PTXDIFF_PROGRAM_PROGRAM_CAMPAIGN_H_
#define PTXDIFF_PROGRAM_PROGRAM_CAMPAIGN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_generator.h"
#include "program/program_ptx.h"

namespace ptxdiff {

// Programs checked in one ptxas run: its start-up is most of the cost of a
// few programs.
inline constexpr int kProgramsPerPtxasRun = 32;

struct ProgramCampaignOptions {
  // What runs the programs: ptxas (MakePtxasProgramBackend) or a tool that
  // runs PTX (MakeToolProgramBackend).
  std::shared_ptr<ProgramBackend> backend;
  absl::Duration max_time = absl::Seconds(60);
  uint64_t seed = 1;
  int threads = 2;
  Reading reading = Reading::kSpec;
  ProgramShape shape;
  std::string triage_dir;
  int max_minimize_candidates = 2000;
  // The programs to check, in place of RandomProgram's (for tests); the run
  // also ends when it returns nullopt.
  std::function<std::optional<Program>(std::mt19937_64&)> next;
};

// One disagreement, minimized and filed.
struct FiledProgram {
  std::string entry;  // the triage entry's name
  bool is_new = false;
  std::string what;   // one line: the form, the steps, the values
  std::string shape;  // its steps: entries of one shape are one root cause
  int steps = 0;      // CountSteps of the minimized program
};

struct ProgramCampaignReport {
  int64_t programs = 0;       // checked
  int64_t folded = 0;         // inputs immediate: ptxas stored constants
  int64_t claimed = 0;        // inputs runtime: ptxas stored constants
  int64_t disagreements = 0;  // and faults
  // Disagreements in programs that use a variant no longer generated (its
  // one-instruction cause filed, or --suppress): counted, not filed.
  int64_t known = 0;
  double seconds = 0;
  std::vector<FiledProgram> filed;      // in the order filed
  std::vector<std::string> suppressed;  // variants no longer generated
  std::vector<std::string> errors;      // what could not be filed, or run
};

// Runs the campaign; `progress` gets a line per filing. An error only when
// the run could not start (no triage directory).
absl::StatusOr<ProgramCampaignReport> RunProgramCampaign(
    const ProgramCampaignOptions& options,
    const std::function<void(const std::string&)>& progress);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_CAMPAIGN_H_
