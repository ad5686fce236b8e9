// The program campaign's work, step by step (issue 63): the programs to
// check next, a batch checked in both input forms (counted, refusals
// learned, what is found journaled), and what was found minimized and
// filed (cause keys, known repeats, one-step causes filed as tuples). It
// owns no worker and no thread: each step that runs is given the backend to
// run on, that of the worker an engine's sender or filer lends it (the
// program lane, program_lane.h: `ptxdiff fuzz --programs`, `ptxdiff
// programs`, the program fuzzer).
// Thread-safe.

#ifndef PTXDIFF_PROGRAM_PROGRAM_SEARCH_H_
#define PTXDIFF_PROGRAM_PROGRAM_SEARCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_campaign.h"

namespace ptxdiff {

// What was found in a program: a value the oracle refutes, or a fault.
struct ProgramFound {
  Program program;
  ProgramInputs form;
  CaseFault fault = CaseFault::kNone;  // kNone: a value mismatch
  int64_t seq = -1;                    // its pending journal line
  // A hang seen of the program alone: how it ended (not known of one
  // taken up from the journal).
  std::string hang_seen;
  // A value mismatch as found (not known of one taken up from the
  // journal): its cause key tells a known repeat before minimizing.
  std::optional<ProgramMismatch> mismatch;
};

class ProgramSearch {
 public:
  // Opens the triage directory and its program journal, learns the tuple
  // causes filed there and the refusals remembered, and takes up what
  // earlier runs left pending (options.adopt_pending). `presenter` names
  // and presents the cases. The run ends at
  // options.max_time from now. `progress` gets a line per filing.
  static absl::StatusOr<std::unique_ptr<ProgramSearch>> Open(
      const ProgramCampaignOptions& options,
      std::shared_ptr<const ProgramBackend> presenter,
      std::function<void(const std::string&)> progress);
  ~ProgramSearch();

  // Once a run, before its first batch: the remembered refusals re-checked
  // on `on`, and what the tool runs now forgotten (refusal_recheck.h).
  void RecheckRefusals(ProgramBackend& on);
  // Past max_time, stopped (a filing failed), or interrupted (Ctrl-C).
  bool OutOfTime() const;
  // Findings taken up from the journal, to file first.
  bool HasBacklog();
  std::optional<ProgramFound> TakeBacklog();
  // The next programs to check (a ptxas run's worth); none when nothing is
  // left to draw, or `next` ran out.
  std::vector<Program> NextBatch(std::mt19937_64& rng);
  // Checks `batch` on `on` in both input forms and counts it; learns what
  // the tool refuses; journals what it found (and files an unisolated hang
  // at once), which it returns for FileMinimized.
  std::vector<ProgramFound> CheckBatch(const std::vector<Program>& batch,
                                       ProgramBackend& on);
  // Minimizes `found` on `on` and files it, or counts it as a known repeat;
  // cut short by the run's end, it stays in the journal.
  void FileMinimized(const ProgramFound& found, ProgramBackend& on);

  // The counts so far, while the run goes on.
  ProgramCampaignReport Snapshot();
  // The run's report, once: the journal removed if everything was filed.
  ProgramCampaignReport TakeReport();

 private:
  class Impl;
  explicit ProgramSearch(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_SEARCH_H_
