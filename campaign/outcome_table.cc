#include "campaign/outcome_table.h"

#include <algorithm>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "isa/family_table.h"
#include "isa/isa_tables.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kHeader = "# ptxdiff outcomes 1";
// Distinct reasons a table keeps (InternReason).
constexpr size_t kMaxReasons = std::numeric_limits<uint16_t>::max() - 1;

// A reason on one line of the file: its first line, tabs as spaces.
std::string OneLine(absl::string_view text) {
  std::string line(text.substr(0, text.find('\n')));
  std::replace(line.begin(), line.end(), '\t', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  return line;
}

Outcome DeclineOutcome(DeclineCode code) {
  switch (code) {
    case DeclineCode::kUnsupportedVariant:
      return Outcome::kUnsupported;
    case DeclineCode::kNotEvaluable:
      return Outcome::kNotEvaluable;
    case DeclineCode::kOperandForm:
      return Outcome::kOperandForm;
    default:
      return Outcome::kDeclinedOther;
  }
}

}  // namespace

Outcome OutcomeOf(Verdict verdict, const TupleResult& result, bool not_run) {
  switch (verdict) {
    case Verdict::kAgree:
      return Outcome::kAgree;
    case Verdict::kMismatch:
      return Outcome::kMismatch;
    case Verdict::kUnspecified:
      return Outcome::kUnspecified;
    case Verdict::kOtherReading:
      return Outcome::kOtherReading;
    case Verdict::kFault:
      return result.fault == CaseFault::kHang ? Outcome::kHang
                                              : Outcome::kCrash;
    case Verdict::kDeclined:
      return not_run ? Outcome::kNotRun : DeclineOutcome(result.code);
  }
  return Outcome::kDeclinedOther;
}

OutcomeTable::OutcomeTable()
    : counts_(AllVariants().size() * kNumTupleForms * kNumOutcomes),
      reason_of_(AllVariants().size()) {}

int OutcomeTable::InternReason(absl::string_view reason) {
  std::string line = OneLine(reason);
  if (auto it = reason_index_.find(line); it != reason_index_.end())
    return it->second;
  if (reasons_.size() >= kMaxReasons) return -1;
  reason_index_.emplace(line, reasons_.size());
  reasons_.push_back(std::move(line));
  return static_cast<int>(reasons_.size() - 1);
}

OutcomeCounts OutcomeTable::counts(int variant, OutcomeForm form) const {
  OutcomeCounts c{};
  if (IsProgramForm(form)) {
    const auto it = program_counts_.find(variant);
    if (it == program_counts_.end()) return c;
    for (int o = 0; o < kNumOutcomes; ++o)
      c[o] = it->second[ProgramSlot(form) + o];
    return c;
  }
  for (int o = 0; o < kNumOutcomes; ++o)
    c[o] = counts_[Slot(variant, form) + o];
  return c;
}

absl::string_view OutcomeTable::decline_reason(int variant) const {
  const uint16_t r = reason_of_[variant];
  return r == 0 ? absl::string_view() : absl::string_view(reasons_[r - 1]);
}

std::string OutcomeTable::Format(absl::string_view backend,
                                 const std::vector<bool>& supported) const {
  std::string text = absl::StrCat(kHeader, "\nbackend\t", OneLine(backend),
                                  "\n");
  for (size_t r = 0; r < reasons_.size(); ++r)
    absl::StrAppend(&text, "reason\t", r, "\t", reasons_[r], "\n");
  const IsaTables& tables = TheIsaTables();
  for (size_t v = 0; v < tables.variants.size(); ++v) {
    const uint16_t reason = reason_of_[v];
    const std::string reason_text =
        reason == 0 ? "-" : absl::StrCat(reason - 1);
    const int forms =
        program_counts_.contains(v) ? kNumOutcomeForms : kNumTupleForms;
    for (int f = 0; f < forms; ++f) {
      const OutcomeCounts c = counts(v, static_cast<OutcomeForm>(f));
      const bool any = std::any_of(c.begin(), c.end(),
                                   [](int64_t n) { return n != 0; });
      const bool supported_imm = f == 0 && v < supported.size() && supported[v];
      if (!any && !supported_imm) continue;
      // Trailing zeros left out: most variants have one or two outcomes.
      int last = kNumOutcomes;
      while (last > 0 && c[last - 1] == 0) --last;
      absl::StrAppend(&text, tables.SpellingAt(v), "\t", kOutcomeFormNames[f],
                      "\t", reason_text);
      for (int o = 0; o < last; ++o) absl::StrAppend(&text, "\t", c[o]);
      text += '\n';
    }
  }
  return text;
}

namespace {

absl::StatusOr<OutcomeFile::Row> ParseRow(
    const std::vector<absl::string_view>& fields,
    const std::vector<std::string>& reasons) {
  if (fields.size() < 3 || fields.size() > 3 + kNumOutcomes) {
    return absl::InvalidArgumentError(absl::StrCat(
        fields.size(), " fields, not 3 to ", 3 + kNumOutcomes));
  }
  OutcomeFile::Row row;
  row.spelling = std::string(fields[0]);
  const auto form =
      std::find(kOutcomeFormNames.begin(), kOutcomeFormNames.end(), fields[1]);
  if (form == kOutcomeFormNames.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("form '", fields[1], "' is not one of ",
                     absl::StrJoin(kOutcomeFormNames, ", ")));
  }
  row.form = static_cast<OutcomeForm>(form - kOutcomeFormNames.begin());
  if (fields[2] != "-") {
    size_t r = 0;
    if (!absl::SimpleAtoi(fields[2], &r) || r >= reasons.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "reason '", fields[2], "' is not one listed before it"));
    }
    row.decline_reason = reasons[r];
  }
  for (size_t o = 0; o + 3 < fields.size(); ++o) {
    if (!absl::SimpleAtoi(fields[3 + o], &row.counts[o]) || row.counts[o] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          kOutcomeNames[o], " count '", fields[3 + o], "' is no count"));
    }
  }
  return row;
}

}  // namespace

absl::StatusOr<OutcomeFile> ParseOutcomeFile(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.empty() || lines[0] != kHeader) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not an outcomes file: its first line is not '", kHeader, "'"));
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  OutcomeFile file;
  std::vector<std::string> reasons;
  const bool cut_short = !text.empty() && text.back() != '\n';
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<absl::string_view> fields = absl::StrSplit(lines[i], '\t');
    auto damaged = [&](absl::string_view what) {
      file.damage.push_back(absl::StrCat("line ", i + 1, ": ", what));
    };
    if (i + 1 == lines.size() && cut_short) {
      damaged("cut short (no newline at its end)");
    } else if (fields[0] == "backend" && fields.size() == 2) {
      file.backend = std::string(fields[1]);
    } else if (fields[0] == "reason" && fields.size() == 3) {
      size_t n = 0;
      if (!absl::SimpleAtoi(fields[1], &n) || n != reasons.size()) {
        damaged(absl::StrCat("reason number '", fields[1], "' is not ",
                             reasons.size()));
      }
      reasons.push_back(std::string(fields[2]));
    } else if (absl::StatusOr<OutcomeFile::Row> row = ParseRow(fields, reasons);
               row.ok()) {
      file.rows.push_back(*std::move(row));
    } else {
      damaged(row.status().message());
    }
  }
  return file;
}

}  // namespace ptxdiff
