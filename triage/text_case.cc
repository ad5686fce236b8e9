#include "triage/text_case.h"

#include <algorithm>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/byte_order_mark.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"

namespace ptxdiff {

namespace {

// A case with runtime sources names them, and shows the instruction as a
// compiler sees it; the values on the operands line are then the witness.
std::string RuntimeLines(const Tuple& t) {
  if (t.runtime == 0) return "";
  return absl::StrCat("runtime: ", RuntimeSourceNames(t.variant, t.runtime),
                      "\ninstruction: ", FormattedInstruction(t), "\n");
}

// A tuple's `variant:` and `operands:` lines: the case's own, and each of a
// batch's.
std::string TupleLines(const Tuple& t) {
  return absl::StrCat("variant: ", Spell(t.variant), "\noperands: ",
                      absl::StrJoin(HexOperands(t.variant, t.operands), " "),
                      "\n", RuntimeLines(t));
}

}  // namespace

std::string FormatTextCase(const Finding& f) {
  const Variant& v = f.tuple.variant;
  const int width = ResultWidth(v);
  std::string out =
      absl::StrCat(kTextCaseHeader, "\n", TupleLines(f.tuple),
                   "oracle: ", ResultText(v, f.oracle.bits, f.oracle.carry),
                   " ", Token(f.oracle.undefined), "\n");
  absl::StrAppend(&out, "backend: ", f.backend_identity, "\n");
  if (f.backend_bits) {
    absl::StrAppend(&out, "backend-result: ",
                    ResultText(v, *f.backend_bits, f.backend_carry),
                    "\ndiffering-bits: ",
                    HexOperand(*f.backend_bits ^ f.oracle.bits, width), "\n");
    // A `.cc` variant: whether the carry-out (sub kind: the borrow) differs.
    if (HasCarryOut(v)) {
      absl::StrAppend(&out, "differing-carry: ",
                      f.backend_carry != f.oracle.carry ? 1 : 0, "\n");
    }
  }
  absl::StrAppend(&out, "kind: ", FindingKindName(f.kind), "\n");
  if (!f.detail.empty()) {
    absl::StrAppend(
        &out, "detail: ", absl::StrReplaceAll(f.detail, {{"\n", " | "}}), "\n");
  }
  if (f.flaky)
    absl::StrAppend(&out, "flaky: the minimized case did not reproduce\n");
  if (f.unisolated && f.batch.size() > 1 && f.batch[0] == f.tuple) {
    absl::StrAppend(&out, "batch: ", f.batch.size(),
                    " tuples, the one above first; the fault is among them\n");
    for (size_t i = 1; i < f.batch.size(); ++i)
      absl::StrAppend(&out, TupleLines(f.batch[i]));
  }
  return out;
}

bool LooksLikeTextCase(absl::string_view data) {
  data = WithoutByteOrderMark(data);  // as a program case's
  if (absl::StartsWith(data, kTextCaseHeader)) return true;
  // A hand-written case may be just its `variant:` and `operands:` lines
  // (triage/README.md): text with a `variant:` line. A crash file starts
  // with a variant's 8-byte id, which is no such text.
  const bool text = std::all_of(data.begin(), data.end(), [](char c) {
    return c == '\n' || c == '\t' || c == '\r' || (c >= 0x20 && c < 0x7f);
  });
  if (!text) return false;
  for (absl::string_view line : absl::StrSplit(data, '\n')) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), "variant:"))
      return true;
  }
  return false;
}

namespace {

// ParseTextCase of `text` whose first line is line `first_line` of a
// longer case, so that its errors name the line of the whole.
absl::StatusOr<Tuple> ParseTextCaseFrom(absl::string_view text,
                                        int first_line) {
  std::string spelling, operands, runtime;
  int variant_line = 0, operands_line = 0, runtime_line = 0,
      number = first_line - 1;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", number, ": expected 'key: value', got '", line, "'"));
    }
    const absl::string_view key = line.substr(0, colon);
    const absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (key == "variant") spelling = std::string(value), variant_line = number;
    if (key == "operands")
      operands = std::string(value), operands_line = number;
    if (key == "runtime") runtime = std::string(value), runtime_line = number;
  }
  if (variant_line == 0 || operands_line == 0) {
    return absl::InvalidArgumentError(
        "a text case needs 'variant:' and 'operands:' lines");
  }
  auto variant = ParseVariant(spelling);
  if (!variant.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", variant_line, ": ", variant.status().message()));
  }
  const std::vector<std::string> texts =
      absl::StrSplit(operands, ' ', absl::SkipWhitespace());
  if (static_cast<int>(texts.size()) != NumSources(*variant)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", operands_line, ": ", Spell(*variant), " takes ",
        NumSources(*variant), " operands, the case gives ", texts.size()));
  }
  Tuple tuple{*variant, {}};
  for (size_t i = 0; i < texts.size(); ++i) {
    auto value = ParseOperand(texts[i], SourceWidth(*variant, i));
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", operands_line, ", operand ", SourceName(*variant, i), ": ",
          value.status().message()));
    }
    tuple.operands.v[i] = *value;
  }
  auto form = ParseRuntimeSources(*variant, runtime);
  if (!form.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", runtime_line, ": ", form.status().message()));
  }
  tuple.runtime = *form;
  return tuple;
}

// Whether lines [begin, end) hold an `operands:` line.
bool HasOperandsLine(const std::vector<absl::string_view>& lines, size_t begin,
                     size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]),
                         "operands:")) {
      return true;
    }
  }
  return false;
}

// Why the tuple begun by the `variant:` line at starts[k] (0-based line
// indices) has no `operands:` line: a case of one tuple with a second
// `variant:` line reads as a batch whose second tuple has none.
std::string TupleWithoutOperands(const std::vector<size_t>& starts, size_t k) {
  if (k == 0) {
    return absl::StrCat("line ", starts[0] + 1,
                        ": a 'variant:' line with no 'operands:' line before "
                        "a second 'variant:' line (line ",
                        starts[1] + 1, ")");
  }
  return absl::StrCat(
      k == 1 ? "a second" : "another", " 'variant:' line (line ", starts[k] + 1,
      ") with no 'operands:' line after it (a case of a batch gives each of "
      "its tuples both)");
}

}  // namespace

absl::StatusOr<Tuple> ParseTextCase(absl::string_view text) {
  return ParseTextCaseFrom(WithoutByteOrderMark(text), 1);
}

absl::StatusOr<std::vector<Tuple>> ParseTextCaseTuples(absl::string_view text) {
  // Cut before each `variant:` line, and each part parsed as a case of its
  // own, told its first line's number so that its errors name the line of
  // the whole text. (Padding each part with the lines before it made the
  // parse quadratic: a batch of ~11,700 tuples took seconds, and every
  // filing and `triage list` parses every entry's case.)
  const std::vector<absl::string_view> lines =
      absl::StrSplit(WithoutByteOrderMark(text), '\n');
  std::vector<size_t> starts;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(lines[i]),
                         "variant:")) {
      starts.push_back(i);
    }
  }
  if (starts.size() <= 1) {
    absl::StatusOr<Tuple> one = ParseTextCase(text);
    if (!one.ok()) return one.status();
    return std::vector<Tuple>{*one};
  }
  std::vector<Tuple> tuples;
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t end = k + 1 < starts.size() ? starts[k + 1] : lines.size();
    // The header and comments before the first `variant:` go with it.
    if (!HasOperandsLine(lines, k == 0 ? 0 : starts[k], end)) {
      return absl::InvalidArgumentError(TupleWithoutOperands(starts, k));
    }
    // The part is a piece of `text` itself: lines[i] views into it.
    const char* from = lines[starts[k]].data();
    const char* to = lines[end - 1].data() + lines[end - 1].size();
    absl::StatusOr<Tuple> t = ParseTextCaseFrom(
        absl::string_view(from, static_cast<size_t>(to - from)),
        static_cast<int>(starts[k]) + 1);
    if (!t.ok()) return t.status();
    tuples.push_back(*t);
  }
  return tuples;
}

}  // namespace ptxdiff
