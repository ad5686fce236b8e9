// ParseProgram and LooksLikeProgram (program.h): the text form read back,
// with a message naming the line for each way it can be wrong.

#include "program/program.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/byte_order_mark.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "backends/cuda/kernel_gen.h"

namespace ptxdiff {
namespace {

// Longer words of a message (an operand of a million digits) are cut:
// the message names the line, which holds the rest.
constexpr size_t kMaxShownWord = 80;

// `message` with each word longer than kMaxShownWord cut to its start.
std::string ShortenedWords(absl::string_view message) {
  std::vector<std::string> words;
  for (absl::string_view word : absl::StrSplit(message, ' ')) {
    words.push_back(word.size() <= kMaxShownWord
                        ? std::string(word)
                        : absl::StrCat(word.substr(0, kMaxShownWord / 2),
                                       "... (", word.size(), " characters)"));
  }
  return absl::StrJoin(words, " ");
}

// `message` quotes what the line holds: a byte that is no printable ASCII
// (a NUL, an escape, a non-ASCII name) is shown as \xNN, not printed.
absl::Status LineError(int line, absl::string_view message) {
  std::string shown;
  for (const char c : ShortenedWords(message)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      shown += c;
    } else {
      absl::StrAppendFormat(&shown, "\\x%02x", byte);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("program line ", line, ": ", shown));
}

// `.b32` / `.u32` / `.s32` -> 32, `.pred` -> 1; 0 for anything else.
int WidthOfType(absl::string_view type) {
  if (type == ".pred") return 1;
  if (type.size() < 3 || type[0] != '.' || !absl::StrContains("bus", type[1]))
    return 0;
  int width = 0;
  if (!absl::SimpleAtoi(type.substr(2), &width)) return 0;
  return width == 16 || width == 32 || width == 64 ? width : 0;
}

// "0x1f", "31", "-1" as bits.
bool ParseValue(absl::string_view text, uint64_t& value) {
  absl::string_view hex = text;
  if (absl::ConsumePrefix(&hex, "0x") || absl::ConsumePrefix(&hex, "0X")) {
    return absl::SimpleHexAtoi(hex, &value);
  }
  if (absl::SimpleAtoi(text, &value)) return true;
  int64_t negative = 0;
  if (!absl::SimpleAtoi(text, &negative)) return false;
  value = static_cast<uint64_t>(negative);
  return true;
}

// Longer names are refused: ptxas crashes on a 100,000-character one.
constexpr size_t kMaxRegisterName = 64;

// A name PTX takes for a register: a letter, then letters, digits, `_` or
// `$` (ASCII only).
bool IsRegisterName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxRegisterName ||
      !absl::ascii_isalpha(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '$';
  });
}

// Whether a value written as `text` (read as `value`) fits `width` bits:
// as an unsigned number, or, written negative, as a signed one; a .pred
// (width 1) is 0 or 1.
bool FitsWidth(absl::string_view text, uint64_t value, int width) {
  if (width >= 64) return true;
  if (!absl::StartsWith(text, "-")) return value <= WidthMask(width);
  const int64_t v = static_cast<int64_t>(value);
  return width > 1 && v >= -(int64_t{1} << (width - 1));
}

// `%a.b1` or `-%a`: the register name `a`; empty if `token` is no register.
std::string RegisterName(absl::string_view token) {
  absl::ConsumePrefix(&token, "-");
  if (!absl::ConsumePrefix(&token, "%")) return "";
  return std::string(token.substr(0, token.find('.')));
}

// The sources written as operands, in order: all but CC.CF and a selector.
std::vector<int> WrittenSourceIndices(const Variant& v) {
  std::vector<int> out;
  for (int i = 0; i < NumSources(v); ++i) {
    if (!IsCarryInSource(v, i) && !IsSelectorSource(v, i)) out.push_back(i);
  }
  return out;
}

class Parser {
 public:
  absl::StatusOr<Program> Parse(absl::string_view text) {
    text = WithoutByteOrderMark(text);
    int number = 0;
    bool header = false;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++number;
      if (!header) {
        if (absl::StripAsciiWhitespace(line) != kProgramHeader) {
          return LineError(number,
                           absl::StrCat("expected '", kProgramHeader, "'"));
        }
        header = true;
        continue;
      }
      line = absl::StripAsciiWhitespace(line.substr(0, line.find('#')));
      if (line.empty()) continue;
      PTXDIFF_RETURN_IF_ERROR(Statement(number, line));
    }
    if (!header)
      return LineError(1, absl::StrCat("expected '", kProgramHeader, "'"));
    if (!open_blocks_.empty()) {
      const OpenBlock& open = open_blocks_.back();
      return LineError(open.line,
                       absl::StrCat("this ", open.is_if ? "if" : "loop",
                                    "'s '}' is missing"));
    }
    PTXDIFF_RETURN_IF_ERROR(ClosePart());
    if (program_.outputs.empty()) {
      return LineError(number, "no output: a program stores 1 to 4 registers");
    }
    return std::move(program_);
  }

 private:
  absl::Status Statement(int number, absl::string_view line) {
    if (absl::ConsumePrefix(&line, "input ")) return Input(number, line);
    if (absl::ConsumePrefix(&line, "output ")) return Output(number, line);
    if (absl::StartsWith(line, "@")) return Guarded(number, line);
    if (absl::ConsumePrefix(&line, "loop ")) return LoopBegin(number, line);
    if (absl::ConsumePrefix(&line, "if ")) return IfBegin(number, line);
    if (line == "}") return BlockEnd(number);
    if (IsElse(line)) return Else(number);
    if (absl::StartsWith(line, "else") || absl::StartsWith(line, "}")) {
      return LineError(number, "expected '}' or '} else {' alone on its line");
    }
    if (absl::StartsWith(line, "mov.")) return Move(number, line);
    if (absl::ConsumeSuffix(&line, ":")) return Label(number, line);
    if (IsJump(line)) return Jump(number, line, "", false);
    return Step(number, line);
  }

  // `bra L;` or `exit;` (the `;` may be left out).
  static bool IsJump(absl::string_view line) {
    return absl::StartsWith(line, "bra ") || absl::StartsWith(line, "bra\t") ||
           line == "exit;" || line == "exit";
  }

  // `bra L;` or `exit;`, under `guard` (negated) if it is not empty.
  absl::Status Jump(int number, absl::string_view line,
                    const std::string& guard, bool negated) {
    absl::ConsumeSuffix(&line, ";");
    ProgramStep step{.kind = ProgramStep::kExit,
                     .line = number,
                     .guard = guard,
                     .guard_negated = negated};
    if (absl::ConsumePrefix(&line, "bra")) {
      step.kind = ProgramStep::kBranch;
      step.label = std::string(absl::StripAsciiWhitespace(line));
      PTXDIFF_RETURN_IF_ERROR(Branch(number, step.label));
    }
    program_.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A branch to `label`, which must come later in this block.
  absl::Status Branch(int number, const std::string& label) {
    if (!IsRegisterName(label)) {
      return LineError(number, absl::StrCat("expected 'bra LABEL;' (a label "
                                            "name: a letter, then letters, "
                                            "digits, _ or $), not 'bra ",
                                            label, "'"));
    }
    if (labels_.contains(label)) {
      return LineError(number,
                       absl::StrCat("bra ", label, " goes back to ", label,
                                    ": a branch only goes forward (a loop "
                                    "repeats steps)"));
    }
    parts_.back().pending.push_back({.label = label, .line = number});
    return absl::OkStatus();
  }

  // `L1:`: a label, set once; it resolves the branches to it before it in
  // this block.
  absl::Status Label(int number, absl::string_view name) {
    const std::string label(absl::StripAsciiWhitespace(name));
    if (!IsRegisterName(label)) {
      return LineError(number, absl::StrCat("'", label.substr(0, 40),
                                            ":' is not a label: a letter, "
                                            "then letters, digits, _ or $"));
    }
    if (!labels_.insert(label).second) {
      return LineError(number, absl::StrCat("the label ", label,
                                            " is set twice"));
    }
    for (size_t k = 0; k + 1 < parts_.size(); ++k) {
      for (const PendingBranch& b : parts_[k].pending) {
        if (b.label == label) {
          return LineError(number,
                           absl::StrCat("bra ", label, " on line ", b.line,
                                        " would jump into a loop or if: a "
                                        "branch goes to a label in its own "
                                        "block"));
        }
      }
    }
    std::vector<PendingBranch>& pending = parts_.back().pending;
    pending.erase(std::remove_if(pending.begin(), pending.end(),
                                 [&](const PendingBranch& b) {
                                   return b.label == label;
                                 }),
                  pending.end());
    program_.steps.push_back(
        {.kind = ProgramStep::kLabel, .label = label, .line = number});
    return absl::OkStatus();
  }

  // The end of a block's part (a loop's body, an if's then or else part,
  // or the program): a branch in it whose label has not come leaves it.
  absl::Status ClosePart() {
    const Part part = std::move(parts_.back());
    parts_.pop_back();
    if (part.pending.empty()) return absl::OkStatus();
    const PendingBranch& b = part.pending.front();
    return LineError(
        b.line,
        absl::StrCat("bra ", b.label, ": no label ", b.label,
                     " after it in its block (a branch goes forward to a "
                     "label in its own block, not out of a loop or if)"));
  }

  // `@%p add.u32 %r, %r, 1;`: the step, run only where %p is true (`@!%p`:
  // false). Its destination must be set before, so that it has a value
  // where the step does not run.
  absl::Status Guarded(int number, absl::string_view line) {
    absl::ConsumePrefix(&line, "@");
    const bool negated = absl::ConsumePrefix(&line, "!");
    const size_t space = line.find_first_of(" \t");
    const std::string guard = RegisterName(line.substr(0, space));
    if (guard.empty() || space == absl::string_view::npos) {
      return LineError(number, "expected '@%p step' or '@!%p step'");
    }
    auto it = widths_.find(guard);
    if (it == widths_.end()) {
      return LineError(number,
                       absl::StrCat("%", guard, " is used before it is set"));
    }
    if (it->second != 1) {
      return LineError(number,
                       absl::StrCat("the guard %", guard, " is ", it->second,
                                    " bits wide, not a .pred"));
    }
    const absl::string_view step =
        absl::StripAsciiWhitespace(line.substr(space));
    if (IsJump(step)) return Jump(number, step, guard, negated);
    if (absl::StartsWith(step, "loop ") || absl::StartsWith(step, "if ") ||
        absl::StartsWith(step, "}") || absl::StartsWith(step, "@")) {
      return LineError(number, "only an instruction, a move, a branch or an "
                               "exit can be guarded");
    }
    PTXDIFF_RETURN_IF_ERROR(absl::StartsWith(step, "mov.")
                                ? Move(number, step)
                                : Step(number, step));
    ProgramStep& guarded = program_.steps.back();
    if (defined_new_) {
      return LineError(number, absl::StrCat("the guarded step's %", guarded.dst,
                                            " must be set before it"));
    }
    guarded.guard = guard;
    guarded.guard_negated = negated;
    return absl::OkStatus();
  }

  // A register is set at one width wherever it is set.
  absl::Status Define(int number, const std::string& name, int width) {
    if (name.empty()) return LineError(number, "expected a register (%name)");
    if (!IsRegisterName(name)) {
      return LineError(number,
                       absl::StrCat("'%", name.substr(0, 40),
                                    name.size() > 40 ? "...'" : "'",
                                    " is not a register name: a letter, then "
                                    "letters, digits, _ or $, at most ",
                                    kMaxRegisterName, " in all"));
    }
    auto [it, added] = widths_.emplace(name, width);
    defined_new_ = added;
    if (!added && it->second != width) {
      return LineError(number,
                       absl::StrCat("%", name, " is ", it->second,
                                    " bits wide; set again as ", width));
    }
    return absl::OkStatus();
  }

  // `loop 4 {`
  absl::Status LoopBegin(int number, absl::string_view rest) {
    int trip = -1;
    if (!absl::ConsumeSuffix(&rest, "{") ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &trip) ||
        trip < 0 || trip > kMaxLoopTrip) {
      return LineError(number, "expected 'loop N {' with N from 0 to 1024");
    }
    // Nested loops multiply: the innermost body runs at most kMaxLoopTrip
    // times in all, as in the byte form (program_encoding.h), so that a
    // case is evaluated (and compiled) in bounded time.
    int64_t around = 1;
    for (const OpenBlock& b : open_blocks_) around *= std::max(b.trip, 1);
    if (around * trip > kMaxLoopTrip) {
      return LineError(
          number,
          absl::StrCat("loop ", trip, " inside loops of ", around,
                       " trips in all would run its body ", around * trip,
                       " times; nested loops run at most ", kMaxLoopTrip,
                       " times in all"));
    }
    open_blocks_.push_back({.line = number, .trip = trip});
    parts_.emplace_back();
    program_.steps.push_back(
        {.kind = ProgramStep::kLoopBegin, .trip = trip, .line = number});
    return absl::OkStatus();
  }

  // `if %p {` or `if !%p {`: %p a predicate set before.
  absl::Status IfBegin(int number, absl::string_view rest) {
    const bool braced = absl::ConsumeSuffix(&rest, "{");
    rest = absl::StripAsciiWhitespace(rest);
    const bool negated = absl::ConsumePrefix(&rest, "!");
    const std::string condition = RegisterName(rest);
    if (!braced || condition.empty() || rest != absl::StrCat("%", condition)) {
      return LineError(number, "expected 'if %p {' or 'if !%p {'");
    }
    auto it = widths_.find(condition);
    if (it == widths_.end()) {
      return LineError(
          number, absl::StrCat("%", condition, " is used before it is set"));
    }
    if (it->second != 1) {
      return LineError(
          number, absl::StrCat("the condition %", condition, " is ", it->second,
                               " bits wide, not a .pred"));
    }
    open_blocks_.push_back({.line = number, .is_if = true});
    parts_.emplace_back();
    program_.steps.push_back({.kind = ProgramStep::kIfBegin,
                              .line = number,
                              .guard = condition,
                              .guard_negated = negated});
    return absl::OkStatus();
  }

  // `} else {`, spaced any way between its three tokens.
  static bool IsElse(absl::string_view line) {
    const std::vector<absl::string_view> tokens =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    return tokens == std::vector<absl::string_view>{"}", "else", "{"};
  }

  absl::Status Else(int number) {
    if (open_blocks_.empty() || !open_blocks_.back().is_if) {
      return LineError(number, "'} else {' without its 'if %p {'");
    }
    if (open_blocks_.back().has_else) {
      return LineError(number, "a second '} else {' for one 'if'");
    }
    open_blocks_.back().has_else = true;
    PTXDIFF_RETURN_IF_ERROR(ClosePart());
    parts_.emplace_back();
    program_.steps.push_back({.kind = ProgramStep::kElse, .line = number});
    return absl::OkStatus();
  }

  absl::Status BlockEnd(int number) {
    if (open_blocks_.empty()) {
      return LineError(number, "'}' closes no loop or if");
    }
    const bool is_if = open_blocks_.back().is_if;
    open_blocks_.pop_back();
    PTXDIFF_RETURN_IF_ERROR(ClosePart());
    program_.steps.push_back(
        {.kind = is_if ? ProgramStep::kIfEnd : ProgramStep::kLoopEnd,
         .line = number});
    return absl::OkStatus();
  }

  // `mov.b32 %r, 0x7fffffff;`
  absl::Status Move(int number, absl::string_view line) {
    absl::ConsumeSuffix(&line, ";");
    const size_t space = line.find_first_of(" \t");
    const int width = WidthOfType(line.substr(
        3, space == absl::string_view::npos ? absl::string_view::npos
                                            : space - 3));
    std::vector<absl::string_view> operands;
    if (space != absl::string_view::npos) {
      operands =
          absl::StrSplit(line.substr(space + 1), ',', absl::SkipWhitespace());
    }
    if (width == 0 || operands.size() != 2) {
      return LineError(
          number, "expected 'mov.bN %dst, src' (N 16, 32 or 64, or .pred)");
    }
    ProgramStep step{
        .kind = ProgramStep::kMove,
        .dst = RegisterName(absl::StripAsciiWhitespace(operands[0])),
        .sources = {{}},
        .width = width,
        .line = number};
    const absl::string_view src = absl::StripAsciiWhitespace(operands[1]);
    if (const std::string name = RegisterName(src); !name.empty()) {
      auto it = widths_.find(name);
      if (it == widths_.end()) {
        return LineError(number,
                         absl::StrCat("%", name, " is used before it is set"));
      }
      if (it->second != width) {
        return LineError(number,
                         absl::StrCat("%", name, " is ", it->second,
                                      " bits wide; the move is ", width));
      }
      step.sources[0] = {.is_register = true, .name = name};
    } else if (!ParseValue(src, step.sources[0].value)) {
      return LineError(number, absl::StrCat("cannot read operand '", src, "'"));
    } else if (!FitsWidth(src, step.sources[0].value, width)) {
      return LineError(
          number, absl::StrCat("the immediate ", src, " does not fit in ",
                               width, width == 1 ? " bit (0 or 1)" : " bits"));
    }
    PTXDIFF_RETURN_IF_ERROR(Define(number, step.dst, width));
    program_.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // An input's register, set once.
  absl::Status AddInput(int number, ProgramInput input) {
    PTXDIFF_RETURN_IF_ERROR(Define(number, input.name, input.width));
    if (!defined_new_) {
      return LineError(number,
                       absl::StrCat("%", input.name, " is declared twice"));
    }
    program_.inputs.push_back(std::move(input));
    return absl::OkStatus();
  }

  // `input %t .b32 %tid.x [lane]`: a value each thread has, 32 bits.
  absl::Status ThreadInputLine(int number, ProgramInput input,
                               const std::vector<absl::string_view>& fields) {
    for (ThreadInput t : {ThreadInput::kTidX, ThreadInput::kLaneId}) {
      if (fields[2] == ThreadInputName(t)) input.thread = t;
    }
    if (input.thread == ThreadInput::kNone) {
      return LineError(number,
                       absl::StrCat("unknown thread input '", fields[2],
                                    "' (%tid.x, %laneid)"));
    }
    if (input.width != 32) {
      return LineError(number, absl::StrCat(fields[2], " is 32 bits wide, not ",
                                            fields[1]));
    }
    if (fields.size() == 4 &&
        (!ParseValue(fields[3], input.witness) ||
         input.witness >= static_cast<uint64_t>(kProgramLanes))) {
      return LineError(number,
                       absl::StrCat("the lane '", fields[3],
                                    "' is not one of 0 to ", kProgramLanes - 1));
    }
    return AddInput(number, std::move(input));
  }

  // `input %a .b32 0x7fffffff`, `input %t .b32 %tid.x [lane]`,
  // `input %a .b32 in[%tid.x] 0x7fffffff`
  absl::Status Input(int number, absl::string_view rest) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(rest, ' ', absl::SkipWhitespace());
    const bool loaded = fields.size() == 4 && fields[2] == kLoadedInputSource;
    if (loaded) fields.erase(fields.begin() + 2);
    const bool thread = fields.size() >= 3 && absl::StartsWith(fields[2], "%");
    if (fields.size() != 3 && !(thread && fields.size() == 4)) {
      return LineError(number,
                       "expected 'input %name .type witness', "
                       "'input %name .type in[%tid.x] witness' or "
                       "'input %name .b32 %tid.x [lane]'");
    }
    ProgramInput input{.name = RegisterName(fields[0]),
                       .width = WidthOfType(fields[1])};
    if (input.width == 0) {
      return LineError(
          number, absl::StrCat("unknown type '", fields[1],
                               "' (.b16, .b32, .b64, their .u/.s, .pred)"));
    }
    if (thread) {
      if (loaded) {
        return LineError(number, "a thread input is not loaded from memory");
      }
      return ThreadInputLine(number, std::move(input), fields);
    }
    if (loaded && input.width == 1) {
      return LineError(number,
                       "a predicate is not loaded from memory (.b16, .b32 or "
                       ".b64 are)");
    }
    input.loaded = loaded;
    if (!ParseValue(fields[2], input.witness)) {
      return LineError(
          number, absl::StrCat("cannot read the witness '", fields[2], "'"));
    }
    if (!FitsWidth(fields[2], input.witness, input.width)) {
      return LineError(
          number,
          absl::StrCat(
              "the witness ", fields[2], " does not fit ", fields[1],
              input.width == 1
                  ? " (0 or 1)"
                  : absl::StrCat(" (", input.width, " bits, signed or not)")));
    }
    input.witness &= WidthMask(input.width);
    return AddInput(number, std::move(input));
  }

  // `output %r`
  absl::Status Output(int number, absl::string_view rest) {
    const std::string name = RegisterName(absl::StripAsciiWhitespace(rest));
    if (!widths_.contains(name)) {
      return LineError(number, absl::StrCat("output %", name, " is never set"));
    }
    if (program_.outputs.size() == kMaxProgramOutputs) {
      return LineError(number, "more than 4 outputs");
    }
    program_.outputs.push_back(name);
    return absl::OkStatus();
  }

  // `add.s32 %r, %a, 1;`
  absl::Status Step(int number, absl::string_view line) {
    absl::ConsumeSuffix(&line, ";");
    line = absl::StripAsciiWhitespace(line);
    // The spelling parser reads operand names without the `%`.
    absl::StatusOr<Variant> v =
        ParseVariant(absl::StrReplaceAll(line, {{"%", ""}}));
    if (!v.ok()) return LineError(number, v.status().message());
    const size_t space = line.find_first_of(" \t");
    if (space == absl::string_view::npos)
      return LineError(number, "expected operands");
    std::vector<absl::string_view> operands =
        absl::StrSplit(line.substr(space + 1), ',', absl::SkipWhitespace());
    for (absl::string_view& o : operands) o = absl::StripAsciiWhitespace(o);
    const std::vector<int> written = WrittenSourceIndices(*v);
    if (operands.size() != written.size() + 1) {
      return LineError(number,
                       absl::StrCat(Spell(*v), " takes a destination and ",
                                    written.size(), " sources"));
    }
    ProgramStep step{
        .variant = *v, .dst = RegisterName(operands[0]), .line = number};
    step.sources.resize(NumSources(*v));
    for (size_t k = 0; k < written.size(); ++k) {
      PTXDIFF_RETURN_IF_ERROR(Source(number, *v, written[k], operands[k + 1],
                                     step.sources[written[k]]));
    }
    for (int i = 0; i < NumSources(*v); ++i) {
      if (!IsSelectorSource(*v, i)) continue;
      absl::StatusOr<uint32_t> sel =
          SpelledSimdSelector(*v, absl::StrReplaceAll(line, {{"%", ""}}));
      if (!sel.ok()) return LineError(number, sel.status().message());
      step.sources[i].value = *sel;
    }
    PTXDIFF_RETURN_IF_ERROR(Define(number, step.dst, ResultWidth(*v)));
    program_.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  absl::Status Source(int number, const Variant& v, int i,
                      absl::string_view token, ProgramOperand& out) {
    const std::string name = RegisterName(token);
    if (name.empty()) {
      if (!MayBeImmediate(v, i)) {
        return LineError(number,
                         absl::StrCat(Spell(v), " source ", SourceName(v, i),
                                      " must be a register"));
      }
      // A video operand's selector or negation belongs to the variant.
      const absl::string_view value = token.substr(0, token.find('.'));
      if (!ParseValue(absl::StripPrefix(value, "-"), out.value)) {
        return LineError(number,
                         absl::StrCat("cannot read operand '", token, "'"));
      }
      // Bits the instruction does not read would be dropped unseen.
      if ((out.value & ~SourceMask(v, i)) != 0) {
        return LineError(
            number, absl::StrCat("the immediate ", token, " does not fit in ",
                                 SourceWidth(v, i), " bits (", Spell(v),
                                 " source ", SourceName(v, i), ")"));
      }
      if (!UsesImmediate(v, i, out.value & SourceMask(v, i))) {
        return LineError(
            number,
            absl::StrCat(Spell(v), " source ", SourceName(v, i),
                         " cannot be the immediate ", token,
                         " (ptxas takes 0 to 255 there): use a register"));
      }
      return absl::OkStatus();
    }
    auto it = widths_.find(name);
    if (it == widths_.end()) {
      return LineError(number,
                       absl::StrCat("%", name, " is used before it is set"));
    }
    if (!RegisterFitsSource(v, i, it->second)) {
      return LineError(
          number, absl::StrCat("%", name, " is ", it->second, " bits wide; ",
                               Spell(v), " source ", SourceName(v, i),
                               " reads ", SourceWidth(v, i)));
    }
    out = {.is_register = true, .name = name};
    return absl::OkStatus();
  }

  Program program_;
  absl::flat_hash_map<std::string, int> widths_;
  struct OpenBlock {
    int line = 0;  // of its `loop N {` or `if %p {`
    bool is_if = false;
    bool has_else = false;
    int trip = 1;  // a loop's
  };
  std::vector<OpenBlock> open_blocks_;  // innermost last
  // A branch whose label has not come yet.
  struct PendingBranch {
    std::string label;
    int line = 0;
  };
  // A block's part (or the program's top level), a branch's scope.
  struct Part {
    std::vector<PendingBranch> pending;
  };
  std::vector<Part> parts_ = std::vector<Part>(1);  // the top level first
  absl::flat_hash_set<std::string> labels_;
  bool defined_new_ = false;            // the last Define set a register first
};

}  // namespace

bool LooksLikeProgram(absl::string_view text) {
  return absl::StartsWith(
      absl::StripLeadingAsciiWhitespace(WithoutByteOrderMark(text)),
      kProgramHeader);
}

absl::StatusOr<Program> ParseProgram(absl::string_view text) {
  return Parser().Parse(text);
}

absl::Status CheckProgramText(absl::string_view text) {
  return ParseProgram(text).status();
}

}  // namespace ptxdiff
