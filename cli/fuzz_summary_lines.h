// Lines of `ptxdiff fuzz`'s summary (fuzz_command.cc), each from the summed
// stats of the run's fuzz processes or from the triage directory: a root
// cause, the calibration, the program lane.

#ifndef PTXDIFF_CLI_FUZZ_SUMMARY_LINES_H_
#define PTXDIFF_CLI_FUZZ_SUMMARY_LINES_H_

#include <string>

#include "fuzzers/fuzz_config.h"
#include "fuzzers/fuzz_stats.h"
#include "triage/triage_store.h"

namespace ptxdiff {

// "132x value-mismatch~ptxas~min~fns.b32" (the entry, for `triage show`), or
// for a cause filed in several trigger classes "72x slct.s32.s32 on ptxas,
// one root cause in 2 entries: 48x value-mismatch~ptxas~in-range~..., ...".
std::string RootCauseLine(const RootCause& c);

// What the first seconds of a campaign went to: on a slow backend (ptxas)
// calibration times every family, on a cheap one it stops after the first
// batches. "" when nothing was timed.
std::string CalibrationLine(const FuzzStats& sum);

// The program lane's line (--programs): what it checked, judged in each
// input form, found and filed, and `kept_pending` (the program findings the
// triage directory's journals hold at the end); or why no program ran. ""
// without the lane.
std::string ProgramsLine(const FuzzStats& sum, const FuzzConfig& config,
                         int64_t kept_pending);

// The findings of the run, tuples' and programs': "5 new, 12 already
// filed", and where the program lane ran, the programs' part of it
// ("(programs: 1 new, 2 already filed)"). Already filed: found again and
// counted in an entry (a program too under a cause filed before).
std::string FindingsThisRun(const FuzzStats& sum);

// "fuzz:     most often (N tuples): REASON": the most common decline
// reason's first line (a tool's refusal, ptxas's "not folded"); "" if none.
std::string TopDeclineLine(const FuzzStats& sum);

// How far the systematic source got with its planned tiers.
std::string PlannedLine(const FuzzStats& sum);

// How many values came from code compiled once and run for other inputs
// (a compiler's code cache), when any did.
std::string ReusedCodeLine(const FuzzStats& sum);

// What faults of the backend cost the search, when they cost anything.
std::string FaultCostLine(const FuzzStats& sum);

// What a run stopped before its counts were written kept pending (`kept`
// findings more in `triage_dir`'s journal than at its start), when any.
std::string KeptBeforeTheCountsLine(int64_t kept,
                                    const std::string& triage_dir);

// "fuzz:   N findings are not filed yet; DIR/.pending/ keeps them, …" for
// the `pending` tuple findings the journals hold at the run's end (not the
// processes' counts: under --jobs one job's are filed by another, and a job
// stopped by a Ctrl-C never writes its last counts: the twentieth fault
// run); "" for none, or where the run counted no tuple.
std::string NotFiledYetLine(const FuzzStats& sum, int64_t pending,
                            const std::string& triage_dir);

// Where a run that could not write to `triage_dir` left the findings it did
// not file: "; 6 findings were not filed: DIR/.pending/ keeps them …", with
// those that could not be journaled either named apart ("" if none).
std::string UnfiledOnAFailingDisk(const FuzzStats& sum,
                                  const std::string& triage_dir,
                                  const std::string& log);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_FUZZ_SUMMARY_LINES_H_
