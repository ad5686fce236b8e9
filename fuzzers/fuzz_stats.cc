#include "fuzzers/fuzz_stats.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace ptxdiff {

namespace {

// Every counter of a stats file: its one name, and where it lives.
struct Counter {
  absl::string_view name;
  int64_t& (*field)(FuzzStats& s);
};

#define PTXDIFF_COUNTER(name, expr)                     \
  Counter {                                             \
    name, [](FuzzStats& s) -> int64_t& { return expr; } \
  }
const Counter kCounters[] = {
    PTXDIFF_COUNTER("inputs", s.inputs),
    PTXDIFF_COUNTER("tuples", s.counts.tuples),
    PTXDIFF_COUNTER("agreed", s.counts.agreed),
    PTXDIFF_COUNTER("mismatched", s.counts.mismatched),
    PTXDIFF_COUNTER("declined", s.counts.declined),
    PTXDIFF_COUNTER("unspecified", s.counts.unspecified),
    PTXDIFF_COUNTER("other_reading", s.counts.other_reading),
    PTXDIFF_COUNTER("faulty_batches", s.counts.faulty_batches),
    PTXDIFF_COUNTER("faulted", s.counts.faulted),
    PTXDIFF_COUNTER("new_findings", s.new_findings),
    PTXDIFF_COUNTER("known_findings", s.known_findings),
    PTXDIFF_COUNTER("explained_findings", s.explained_findings),
    PTXDIFF_COUNTER("worker_restarts", s.worker_restarts),
    PTXDIFF_COUNTER("answered_given_longer", s.answered_given_longer),
    PTXDIFF_COUNTER("supported_variants", s.supported_variants),
    PTXDIFF_COUNTER("offered", s.offered),
    PTXDIFF_COUNTER("queued", s.queued),
    PTXDIFF_COUNTER("duplicates", s.duplicates),
    PTXDIFF_COUNTER("dropped", s.dropped),
    PTXDIFF_COUNTER("systematic", s.systematic),
    PTXDIFF_COUNTER("skipped_undefined", s.skipped_undefined),
    PTXDIFF_COUNTER("skipped_unsupported", s.skipped_unsupported),
    PTXDIFF_COUNTER("skipped_declining", s.skipped_declining),
    PTXDIFF_COUNTER("withheld_faulting", s.withheld_faulting),
    PTXDIFF_COUNTER("sent_again", s.sent_again),
    PTXDIFF_COUNTER("on_reused_code", s.on_reused_code),
    PTXDIFF_COUNTER("declined_unsupported", s.declined_unsupported),
    PTXDIFF_COUNTER("declined_not_evaluable", s.declined_not_evaluable),
    PTXDIFF_COUNTER("declined_operand_form", s.declined_operand_form),
    PTXDIFF_COUNTER("declined_other", s.declined_other),
    PTXDIFF_COUNTER("declined_not_run", s.declined_not_run),
    PTXDIFF_COUNTER("filing_errors", s.filing_errors),
    PTXDIFF_COUNTER("unfiled", s.unfiled),
    PTXDIFF_COUNTER("unjournaled", s.unjournaled),
    PTXDIFF_COUNTER("pending_repeats", s.pending_repeats),
    PTXDIFF_COUNTER("first_mismatch_after", s.first_mismatch_after),
    PTXDIFF_COUNTER("first_mismatch_unix_ms", s.first_mismatch_unix_ms),
    PTXDIFF_COUNTER("calibration_ms", s.calibration_ms),
    PTXDIFF_COUNTER("families_timed", s.families_timed),
    PTXDIFF_COUNTER("planned_variants", s.planned_variants),
    PTXDIFF_COUNTER("programs", s.programs),
    PTXDIFF_COUNTER("programs_judged_immediate", s.programs_judged_immediate),
    PTXDIFF_COUNTER("programs_judged_runtime", s.programs_judged_runtime),
    PTXDIFF_COUNTER("program_disagreements", s.program_disagreements),
    PTXDIFF_COUNTER("program_faults", s.program_faults),
    PTXDIFF_COUNTER("programs_filed", s.programs_filed),
    PTXDIFF_COUNTER("programs_filed_new", s.programs_filed_new),
    PTXDIFF_COUNTER("programs_known", s.programs_known),
    PTXDIFF_COUNTER("programs_not_filed_again", s.programs_not_filed_again),
    PTXDIFF_COUNTER("programs_pending", s.programs_pending),
    PTXDIFF_COUNTER("programs_unjournaled", s.programs_unjournaled),
    PTXDIFF_COUNTER("program_write_errors", s.program_write_errors),
};
#undef PTXDIFF_COUNTER

constexpr absl::string_view kErratumPrefix = "erratum_";

// A text on one line of the stats file: its first line.
absl::string_view OneLine(absl::string_view text) {
  return text.substr(0, text.find('\n'));
}

// A bitmap as hex nibbles, bit 0 of the first nibble first.
std::string Bitmap(const std::vector<bool>& bits) {
  std::string out;
  for (size_t i = 0; i < bits.size(); i += 4) {
    int nibble = 0;
    for (size_t b = 0; b < 4 && i + b < bits.size(); ++b) {
      nibble |= bits[i + b] << b;
    }
    out += "0123456789abcdef"[nibble];
  }
  return out;
}

// ORs Bitmap's text into `bits`, growing it as needed.
void OrBitmap(absl::string_view text, std::vector<bool>& bits) {
  bits.resize(std::max(bits.size(), 4 * text.size()));
  for (size_t i = 0; i < text.size(); ++i) {
    const int nibble = text[i] >= 'a' ? text[i] - 'a' + 10 : text[i] - '0';
    for (int b = 0; b < 4; ++b) {
      if (nibble & (1 << b)) bits[4 * i + b] = true;
    }
  }
}

// Adds a histogram's text ("3,0,17") into `sum`, growing it as needed.
void AddHistogram(absl::string_view text, std::vector<int64_t>& sum) {
  size_t b = 0;
  for (absl::string_view count : absl::StrSplit(text, ',')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(count, &n)) n = 0;
    if (b >= sum.size()) sum.resize(b + 1);
    sum[b++] += n;
  }
}

}  // namespace

std::string FormatStatsFile(const StatsFile& file) {
  FuzzStats stats = file.stats;  // the table's accessors take it mutable
  std::string text;
  for (const Counter& c : kCounters) {
    absl::StrAppend(&text, c.name, "=", c.field(stats), "\n");
  }
  for (const auto& [id, n] : stats.other_reading_by_erratum) {
    absl::StrAppend(&text, kErratumPrefix, id, "=", n, "\n");
  }
  if (!stats.filing_error.empty()) {
    absl::StrAppend(&text, "filing_error=", OneLine(stats.filing_error), "\n");
  }
  if (!stats.programs_not_started.empty()) {
    absl::StrAppend(&text, "programs_not_started=",
                    OneLine(stats.programs_not_started), "\n");
  }
  if (stats.top_decline_count > 0) {
    absl::StrAppend(&text, "top_decline=", stats.top_decline_count, " ",
                    OneLine(stats.top_decline), "\n");
  }
  absl::StrAppend(&text, "backend=", file.backend,
                  "\nreached=", Bitmap(file.reached), "\n");
  if (!file.reached_runtime.empty()) {
    absl::StrAppend(&text, "reached_runtime=", Bitmap(file.reached_runtime),
                    "\n");
  }
  if (!file.explored.empty()) {
    absl::StrAppend(&text, "explored=", absl::StrJoin(file.explored, ","),
                    "\n");
  }
  return text;
}

namespace {

// The counter `key` names where the processes' figure is the largest, not
// their sum: the same for every process of a campaign, or each process's
// own start-up or plan; null for any other key.
int64_t* LargestOverProcesses(absl::string_view key, FuzzStats& s) {
  if (key == "supported_variants") return &s.supported_variants;
  if (key == "calibration_ms") return &s.calibration_ms;
  if (key == "families_timed") return &s.families_timed;
  if (key == "planned_variants") return &s.planned_variants;
  return nullptr;
}

}  // namespace

void AddStatsFile(absl::string_view text, StatsFile& sum) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, eq),
                            value = line.substr(eq + 1);
    int64_t n = 0;
    if (key == "backend") {
      sum.backend = std::string(value);
    } else if (key == "filing_error") {
      sum.stats.filing_error = std::string(value);
    } else if (key == "programs_not_started") {
      sum.stats.programs_not_started = std::string(value);
    } else if (key == "top_decline") {
      // "<tuples> <reason>": the reason most tuples of one process gave.
      const size_t space = value.find(' ');
      if (space != absl::string_view::npos &&
          absl::SimpleAtoi(value.substr(0, space), &n) &&
          n > sum.stats.top_decline_count) {
        sum.stats.top_decline_count = n;
        sum.stats.top_decline = std::string(value.substr(space + 1));
      }
    } else if (key == "reached") {
      OrBitmap(value, sum.reached);
    } else if (key == "reached_runtime") {
      OrBitmap(value, sum.reached_runtime);
    } else if (key == "explored") {
      AddHistogram(value, sum.explored);
    } else if (!absl::SimpleAtoi(value, &n)) {
      continue;
    } else if (absl::StartsWith(key, kErratumPrefix)) {
      sum.stats.other_reading_by_erratum[std::string(
          key.substr(kErratumPrefix.size()))] += n;
    } else if (int64_t* largest = LargestOverProcesses(key, sum.stats)) {
      *largest = std::max(*largest, n);
    } else if (key == "first_mismatch_after" ||
               key == "first_mismatch_unix_ms") {
      // The earliest over the processes; 0 (none yet) never wins.
      int64_t& first = key == "first_mismatch_after"
                           ? sum.stats.first_mismatch_after
                           : sum.stats.first_mismatch_unix_ms;
      if (n > 0 && (first == 0 || n < first)) first = n;
    } else {
      for (const Counter& c : kCounters) {
        if (c.name == key) c.field(sum.stats) += n;
      }
    }
  }
}

}  // namespace ptxdiff
