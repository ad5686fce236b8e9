#include "sass/sass_departure.h"

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace ptxdiff {
namespace {

bool IsRegister(const SassAccess& a) {
  return a.kind == SassAccess::kRegister || a.kind == SassAccess::kUniform;
}

bool IsPredicate(const SassAccess& a) { return !IsRegister(a); }

std::pair<int, int> RegisterKey(const SassAccess& a) {
  return {a.kind, a.index};
}

// Every register value `run` wrote.
absl::flat_hash_set<uint32_t> ValuesWritten(const SassRun& run) {
  absl::flat_hash_set<uint32_t> values;
  for (const SassTraceStep& step : run.trace) {
    for (const SassAccess& w : step.writes) {
      if (IsRegister(w)) values.insert(w.value);
    }
  }
  return values;
}

// For each step up to `last`, the step that wrote each register or
// predicate it read (-1: none did), in the order of its reads.
std::vector<std::vector<int64_t>> Producers(const SassRun& run, int64_t last) {
  std::vector<std::vector<int64_t>> producers(last + 1);
  absl::flat_hash_map<std::pair<int, int>, int64_t> last_writer;
  for (int64_t s = 0; s <= last; ++s) {
    const SassTraceStep& step = run.trace[s];
    for (const SassAccess& r : step.reads) {
      const auto it = last_writer.find(RegisterKey(r));
      producers[s].push_back(it == last_writer.end() ? -1 : it->second);
    }
    for (const SassAccess& w : step.writes) last_writer[RegisterKey(w)] = s;
  }
  return producers;
}

// Whether a name starts at `i` of `text` (not inside another word).
bool StartsAName(absl::string_view text, size_t i) {
  return i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
                     text[i - 1] == '_' || text[i - 1] == '.');
}

// The length of a uniform register's or predicate's "U" at `i` of `text`
// (UR4, URZ, UP0, UPT, or a uniform mnemonic at `mnemonic`), or 0.
size_t UniformPrefixAt(absl::string_view text, size_t i, size_t mnemonic) {
  if (!StartsAName(text, i) || text.substr(i, 1) != "U") return 0;
  if (i == mnemonic) return 1;
  const absl::string_view rest = text.substr(i + 1);
  return absl::StartsWith(rest, "R") || absl::StartsWith(rest, "P") ? 1 : 0;
}

// The length of the number of a register or predicate name R5, P0 (after
// its uniform "U" is dropped) at `i` of `text`, or 0.
size_t NumberAfterNameAt(absl::string_view text, size_t i) {
  if (text[i] != 'R' && text[i] != 'P') return 0;
  size_t n = 0;
  while (i + 1 + n < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[i + 1 + n]))) {
    ++n;
  }
  const bool named = i + 1 + n == text.size() ||
                     !std::isalnum(static_cast<unsigned char>(text[i + 1 + n]));
  return named ? n : 0;
}

// Where the mnemonic starts: after a guard "@!P0 ".
size_t MnemonicAt(absl::string_view text) {
  if (!absl::StartsWith(text, "@")) return 0;
  const size_t space = text.find(' ');
  return space == absl::string_view::npos ? 0 : space + 1;
}

}  // namespace

std::optional<SassDeparture> FirstDeparture(const SassRun& optimized,
                                            const SassStore& wrong,
                                            const SassRun& reference) {
  const int64_t last = wrong.step;
  if (last < 0 || last >= static_cast<int64_t>(optimized.trace.size())) {
    return std::nullopt;
  }
  const absl::flat_hash_set<uint32_t> known = ValuesWritten(reference);
  const std::vector<std::vector<int64_t>> producers =
      Producers(optimized, last);
  // The wrong value's history: back from the store's data, through every
  // register read whose value the reference never computes.
  std::vector<int64_t> pending;
  const auto follow = [&](int64_t s, bool stored_only) {
    const std::vector<SassAccess>& reads = optimized.trace[s].reads;
    for (size_t j = 0; j < reads.size(); ++j) {
      if ((!stored_only || reads[j].stored) && IsRegister(reads[j]) &&
          !known.contains(reads[j].value) && producers[s][j] >= 0) {
        pending.push_back(producers[s][j]);
      }
    }
  };
  follow(last, /*stored_only=*/true);
  absl::flat_hash_set<int64_t> seen;
  int64_t earliest = -1;
  while (!pending.empty()) {
    const int64_t s = pending.back();
    pending.pop_back();
    if (!seen.insert(s).second) continue;
    if (earliest < 0 || s < earliest) earliest = s;
    follow(s, /*stored_only=*/false);
  }
  if (earliest < 0) return std::nullopt;
  const SassTraceStep& step = optimized.trace[earliest];
  SassDeparture d{.step = earliest,
                  .pc = step.pc,
                  .text = step.text,
                  .key = SassKey(step.text)};
  for (const SassAccess& w : step.writes) {
    if (IsRegister(w) && !known.contains(w.value)) {
      d.value = w.value;
      break;
    }
  }
  for (size_t j = 0; j < step.reads.size(); ++j) {
    const int64_t p = producers[earliest][j];
    if (IsPredicate(step.reads[j]) && p >= 0) {
      d.condition = optimized.trace[p].text;
      break;
    }
  }
  return d;
}

std::string DescribeDeparture(const SassDeparture& d) {
  return absl::StrFormat(
      "departs first at +0x%04x `%s`, which wrote 0x%x, a value its -O0 code "
      "never computes%s",
      d.pc, d.text, d.value,
      d.condition.empty()
          ? ""
          : absl::StrCat(" (its condition from `", d.condition, "`)"));
}

constexpr char kDepartureCausePrefix[] =
    "executed code that departs first at `";

std::string DepartureCause(const SassDeparture& d) {
  return absl::StrCat(kDepartureCausePrefix, d.key, "`");
}

std::optional<SassOp> DepartingOperation(absl::string_view cause) {
  if (!absl::ConsumePrefix(&cause, kDepartureCausePrefix) ||
      !absl::ConsumeSuffix(&cause, "`")) {
    return std::nullopt;
  }
  return SassOpOfText(cause);
}

std::string SassKey(absl::string_view text) {
  const size_t mnemonic = MnemonicAt(text);
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (const size_t u = UniformPrefixAt(text, i, mnemonic)) {
      i += u;
      continue;
    }
    if (StartsAName(text, i) || (i > 0 && text[i - 1] == 'U')) {
      if (const size_t digits = NumberAfterNameAt(text, i)) {
        out.push_back(text[i]);
        i += 1 + digits;
        continue;
      }
    }
    if (text.substr(i, 3) == "][0") {  // c[bank][offset]: the offset
      out.append("][...");
      i = text.find(']', i + 1);
      if (i == absl::string_view::npos) break;
      continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

}  // namespace ptxdiff
