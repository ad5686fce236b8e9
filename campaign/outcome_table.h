// What happened to the tuples of each variant, by operand form: the outcome
// records a campaign keeps so that a report can show the instruction set as a
// map (docs/report.md), not just run totals.
//
// Each fuzz process counts into one OutcomeTable (dense: a few counters per
// variant and form, bumped where a batch is judged) and writes it beside its
// stats file as <stats_dir>/<pid>.outcomes. Nothing is merged in place: a
// run's directory keeps its processes' files, and a reader sums every file
// of every run it is given (as `ptxdiff fuzz` sums the stats files), so
// --jobs workers, resumed runs and a Ctrl-C all add up without a read-modify-
// write that a full disk could tear.
//
// The file, one record a line, tab-separated:
//   # ptxdiff outcomes 1
//   backend <tab> <the worker's identity, as the stats file has it>
//   reason <tab> <n> <tab> <a decline reason, on one line>
//   <spelling> <tab> <imm|runtime|program-imm|program-runtime> <tab> <the
//       number of the variant's latest decline reason, or -> <tab> <its
//       count of each outcome, tab-separated in kOutcomeNames' order,
//       trailing zeros left out>
// A supported variant has at least its `imm` line (all zeros if it got no
// tuple yet: "never reached"); a variant with no line was not supported.
// The `program-` forms count the programs that held the variant (once a
// program, however many of its steps), by how the program's check ended
// (a program lane's, campaign/case_lane.h): a program's disagreement is
// the program's, not known to be that variant's.

#ifndef PTXDIFF_CAMPAIGN_OUTCOME_TABLE_H_
#define PTXDIFF_CAMPAIGN_OUTCOME_TABLE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "harness/judge.h"
#include "protocol/protocol.h"

namespace ptxdiff {

enum class Outcome : uint8_t {
  kAgree,
  kMismatch,
  kUnspecified,   // the spec leaves the value open
  kOtherReading,  // what the other reading gives (oracle/errata.h)
  kCrash,
  kHang,
  kUnsupported,   // declined: DeclineCode::kUnsupportedVariant
  kNotEvaluable,  // declined: kNotEvaluable (not folded, not run)
  kOperandForm,   // declined: kOperandForm
  kNotRun,        // declined: left unrun (kNotRunPrefix): a time budget
                  // ran out first, or a fault cap
  kDeclinedOther,
};
inline constexpr int kNumOutcomes = 11;
inline constexpr std::array<absl::string_view, kNumOutcomes> kOutcomeNames = {
    "agree",     "mismatch",    "unspecified",   "other_reading",
    "crash",     "hang",        "unsupported",   "not_evaluable",
    "operand_form", "not_run", "declined_other"};

// The operand forms a report tells apart: every source an immediate, or at
// least one a runtime value (Tuple::runtime); and the programs that held
// the variant, checked with their inputs as immediates or runtime values.
enum class OutcomeForm : uint8_t {
  kImmediate,
  kRuntime,
  kProgramImmediate,
  kProgramRuntime,
};
inline constexpr int kNumOutcomeForms = 4;
inline constexpr int kNumTupleForms = 2;  // the forms before the programs'
inline constexpr std::array<absl::string_view, kNumOutcomeForms>
    kOutcomeFormNames = {"imm", "runtime", "program-imm", "program-runtime"};
inline bool IsProgramForm(OutcomeForm form) {
  return static_cast<int>(form) >= kNumTupleForms;
}

// The outcome of one judged tuple: its verdict, and for a decline or a
// fault what the backend said (`not_run`: the decline's message says the
// tuple was not evaluated).
Outcome OutcomeOf(Verdict verdict, const TupleResult& result, bool not_run);

using OutcomeCounts = std::array<int64_t, kNumOutcomes>;

class OutcomeTable {
 public:
  OutcomeTable();  // every variant of AllVariants(), every count 0

  void Count(int variant, OutcomeForm form, Outcome outcome, uint32_t n = 1) {
    if (IsProgramForm(form)) {
      program_counts_[variant][ProgramSlot(form) + static_cast<int>(outcome)] +=
          n;
      return;
    }
    counts_[Slot(variant, form) + static_cast<int>(outcome)] += n;
  }
  // A decline reason's number, -1 once the table holds its most reasons
  // (a tool that puts a counter in every message must not grow it without
  // bound; its variants keep their earlier reasons).
  int InternReason(absl::string_view reason);
  // `variant`'s latest decline reason, InternReason's number (-1: none).
  void SetDeclineReason(int variant, int reason) {
    if (reason >= 0) reason_of_[variant] = static_cast<uint16_t>(reason + 1);
  }

  int64_t count(int variant, OutcomeForm form, Outcome outcome) const {
    return counts(variant, form)[static_cast<int>(outcome)];
  }
  OutcomeCounts counts(int variant, OutcomeForm form) const;
  // "" when `variant` was never declined.
  absl::string_view decline_reason(int variant) const;

  // The file's text: a line per form counted, and an all-zero `imm` line for
  // each `supported` variant (by VariantIndex) not counted at all.
  std::string Format(absl::string_view backend,
                     const std::vector<bool>& supported) const;

 private:
  static size_t Slot(int variant, OutcomeForm form) {
    return (static_cast<size_t>(variant) * kNumTupleForms +
            static_cast<size_t>(form)) *
           kNumOutcomes;
  }
  static size_t ProgramSlot(OutcomeForm form) {
    return (static_cast<size_t>(form) - kNumTupleForms) * kNumOutcomes;
  }
  // Counts per (variant, tuple form, outcome); 32 bits hold a process's
  // run.
  std::vector<uint32_t> counts_;
  // The program forms' by variant, sparse: programs hold a few hundred.
  absl::flat_hash_map<
      int,
      std::array<uint32_t, (kNumOutcomeForms - kNumTupleForms) * kNumOutcomes>>
      program_counts_;
  // Per variant: 0, or 1 + the index of its latest reason in reasons_.
  std::vector<uint16_t> reason_of_;
  std::vector<std::string> reasons_;
  absl::flat_hash_map<std::string, uint16_t> reason_index_;
};

// One outcomes file, read back: counts by (spelling, form), the backend,
// and each line that did not parse ("line 12: ..."): a damaged record is
// reported and its sound lines kept, never silently reset.
struct OutcomeFile {
  std::string backend;
  struct Row {
    std::string spelling;
    OutcomeForm form = OutcomeForm::kImmediate;
    OutcomeCounts counts{};
    std::string decline_reason;  // "" if none
  };
  std::vector<Row> rows;
  std::vector<std::string> damage;
};
// An error only for text that is no outcomes file (a wrong first line).
absl::StatusOr<OutcomeFile> ParseOutcomeFile(absl::string_view text);

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_OUTCOME_TABLE_H_
