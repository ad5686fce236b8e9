#include "cli/fuzz_summary_lines.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ptxdiff {

std::string RootCauseLine(const RootCause& c) {
  if (c.entries.size() == 1) {
    const EntryInfo& e = *c.entries[0];
    return absl::StrCat(e.CountText(), "x ", e.name, e.Gist());
  }
  std::vector<std::string> parts;
  for (const EntryInfo* e : c.entries)
    parts.push_back(absl::StrCat(e->count(), "x ", e->name));
  return absl::StrCat(c.count, "x ", c.spelling, " on ", c.backend,
                      ", one root cause in ", c.entries.size(),
                      " entries: ", absl::StrJoin(parts, ", "));
}

std::string CalibrationLine(const FuzzStats& sum) {
  if (sum.families_timed == 0) return "";
  return absl::StrCat("fuzz:   calibration: ", sum.families_timed,
                      " families timed on the backend in ", sum.calibration_ms,
                      " ms at start (on a slow backend, families then get "
                      "equal backend time)\n");
}

// ", 3 in programs with a variant filed before (not filed again)", or "":
// findings no entry counts.
std::string NotFiledAgain(const FuzzStats& sum) {
  if (sum.programs_not_filed_again == 0) return "";
  return absl::StrCat(", ", sum.programs_not_filed_again,
                      " in programs with a variant filed before (not filed "
                      "again)");
}

// ", 5 kept pending for the next run", or on a full disk ", 5 kept pending
// for the next run; 47 could not be journaled", or "". `kept` is what the
// journals hold at the run's end (under --jobs, one job's findings may be
// filed by another, or a killed job's counts never written: the
// twenty-first fault run).
std::string PendingPrograms(const FuzzStats& sum, int64_t kept) {
  if (kept == 0 && sum.programs_unjournaled == 0) return "";
  std::string line = absl::StrCat(", ", kept, " kept pending for the next run");
  if (sum.programs_unjournaled > 0)
    absl::StrAppend(&line, "; ", sum.programs_unjournaled,
                    " could not be journaled");
  return line;
}

std::string ProgramsLine(const FuzzStats& sum, const FuzzConfig& config,
                         int64_t kept_pending) {
  if (config.programs_share <= 0) return "";
  if (!sum.programs_not_started.empty()) {
    return absl::StrCat("fuzz:   programs: none run (",
                        sum.programs_not_started, ")\n");
  }
  return absl::StrCat(
      "fuzz:   programs (",
      absl::StrFormat("%.0f%%", 100 * config.programs_share),
      " of the backend's time): checked ", sum.programs, ", judged ",
      sum.programs_judged_immediate, " with the inputs as immediates and ",
      sum.programs_judged_runtime, " with runtime inputs; ",
      sum.program_disagreements, " disagreements, ", sum.program_faults,
      " crashes or hangs; filed ", sum.programs_filed, " (",
      sum.programs_filed_new, " new), ", sum.programs_known,
      " counted under a cause filed before", NotFiledAgain(sum),
      PendingPrograms(sum, kept_pending), "\n");
}

std::string FindingsThisRun(const FuzzStats& sum) {
  const int64_t programs_new = sum.programs_filed_new;
  const int64_t programs_again =
      sum.programs_filed - sum.programs_filed_new + sum.programs_known;
  return absl::StrCat(
      sum.new_findings + programs_new, " new, ",
      sum.known_findings + programs_again, " already filed",
      sum.programs == 0
          ? ""
          : absl::StrCat(" (programs: ", programs_new, " new, ", programs_again,
                         " already filed", NotFiledAgain(sum), ")"));
}

// The most common decline reason, its first line: a tool's refusal of a
// variant ("... failed on lop3.b32 (8 tuples): exit status 1"), ptxas's
// "not folded", ...
std::string TopDeclineLine(const FuzzStats& sum) {
  if (sum.top_decline_count == 0) return "";
  return absl::StrCat(
      "fuzz:     most often (", sum.top_decline_count,
      " tuples): ", sum.top_decline.substr(0, sum.top_decline.find('\n')),
      "\n");
}

// How far the systematic source got with its planned tiers (extremes,
// relations and narrowing points, middle values) over the variants.
std::string PlannedLine(const FuzzStats& sum) {
  // Said at 0 too: on a slow backend a short run plans no variant through.
  if (sum.supported_variants == 0) return "";
  return absl::StrCat("fuzz:   planned tiers done for ", sum.planned_variants,
                      " of ", sum.supported_variants,
                      " variants (their extremes, boundaries and middle "
                      "values)\n");
}

// How many values came from code compiled once and run for other inputs
// (a compiler's code cache), when any did.
std::string ReusedCodeLine(const FuzzStats& sum) {
  if (sum.on_reused_code == 0) return "";
  return absl::StrFormat(
      "fuzz:   %d of the values (%.1f%%) came from code compiled once for "
      "an earlier tuple of the same variant, form and immediates, run with "
      "the tuple's runtime values\n",
      sum.on_reused_code,
      100.0 * sum.on_reused_code / std::max<int64_t>(1, sum.counts.tested()));
}

// What faults of the backend cost the search, when they cost anything.
std::string FaultCostLine(const FuzzStats& sum) {
  std::string slow;
  if (sum.answered_given_longer > 0) {
    slow = absl::StrCat(
        "fuzz:   ", sum.answered_given_longer,
        sum.answered_given_longer == 1 ? " batch" : " batches",
        " timed out, could not be narrowed to a tuple, and answered when run "
        "again given longer (4 times --timeout, or what the batch should "
        "take, at least 10s): not filed as hangs (a larger --timeout suits "
        "this machine's load or this backend)\n");
  }
  if (sum.withheld_faulting == 0 && sum.sent_again == 0) return slow;
  return absl::StrCat(
      slow, "fuzz:   faults: ", sum.withheld_faulting,
      " tuples not sent again because they crashed or hung the backend "
      "before; ",
      sum.sent_again,
      " sent again because a batch left them unrun (its time budget or fault "
      "cap)\n");
}

std::string KeptBeforeTheCountsLine(int64_t kept,
                                    const std::string& triage_dir) {
  if (kept <= 0) return "";
  return absl::StrCat("fuzz:   stopped before its counts were written; ", kept,
                      kept == 1 ? " finding it met is" : " findings it met are",
                      " kept in ", triage_dir,
                      "/.pending/, and the next run on it files them\n");
}

std::string NotFiledYetLine(const FuzzStats& sum, int64_t pending,
                            const std::string& triage_dir) {
  if (pending <= 0 || sum.counts.tuples == 0) return "";
  const char* them = pending == 1 ? "it" : "them";
  return absl::StrCat(
      "fuzz:   ", pending, pending == 1 ? " finding is" : " findings are",
      " not filed yet; ", triage_dir, "/.pending/ keeps ", them,
      ", and the next campaign on this directory files ", them, "\n");
}

std::string UnfiledOnAFailingDisk(const FuzzStats& sum,
                                  const std::string& triage_dir,
                                  const std::string& log) {
  if (sum.unfiled <= 0) return "";
  const int64_t lost = std::min(sum.unjournaled, sum.unfiled);
  const int64_t kept = sum.unfiled - lost;
  const std::string where = absl::StrCat("their journal lines are in ", log);
  if (kept == 0) {
    // The twentieth fault run: "…/.pending/ keeps them …; N of them could
    // not be kept there either", where it kept none.
    return absl::StrCat("; ", sum.unfiled,
                        " findings were not filed, nor could they be kept in ",
                        triage_dir, "/.pending/ (", where, ")");
  }
  std::string line = absl::StrCat(
      "; ", sum.unfiled, " findings were not filed: ", triage_dir,
      "/.pending/ keeps ", lost == 0 ? "them" : absl::StrCat(kept, " of them"),
      sum.pending_repeats > 0
          ? absl::StrCat(" with their ", sum.pending_repeats, " repeats")
          : "",
      ", and the next campaign on this directory files them once it can "
      "write there");
  if (lost > 0)
    absl::StrAppend(&line, "; the other ", lost, " could not be kept there (",
                    where, ")");
  return line;
}

}  // namespace ptxdiff
