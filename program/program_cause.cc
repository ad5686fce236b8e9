#include "program/program_cause.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/interrupt.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"

namespace ptxdiff {
namespace {

bool IsValid(const Program& p) { return ParseProgram(FormatProgram(p)).ok(); }

// The block markers that close, in order, the loops and ifs open at step
// `i` (inner first).
std::vector<ProgramStep> ClosingsAt(const Program& p, size_t i) {
  std::vector<ProgramStep::Kind> open;
  for (size_t j = 0; j <= i; ++j) {
    switch (p.steps[j].kind) {
      case ProgramStep::kLoopBegin:
        open.push_back(ProgramStep::kLoopEnd);
        break;
      case ProgramStep::kIfBegin:
        open.push_back(ProgramStep::kIfEnd);
        break;
      case ProgramStep::kLoopEnd:
      case ProgramStep::kIfEnd:
        open.pop_back();
        break;
      default:
        break;
    }
  }
  std::vector<ProgramStep> closings;
  for (auto kind = open.rbegin(); kind != open.rend(); ++kind)
    closings.push_back({.kind = *kind});
  return closings;
}

// `p` with step `i` a move of `value` to its register, under its guard.
Program WithStepAs(const Program& p, size_t i, uint64_t value) {
  Program c = p;
  const ProgramStep& step = p.steps[i];
  c.steps[i] = {.kind = ProgramStep::kMove,
                .dst = step.dst,
                .sources = {{.value = value & WidthMask(DestinationWidth(step))}},
                .width = DestinationWidth(step),
                .guard = step.guard,
                .guard_negated = step.guard_negated};
  return c;
}

struct Observed {
  Variant variant;
  Operands operands;
  Result result;
};

// The instructions run at the witness by `p`'s steps up to `i`, storing
// step i's register (a prefix, valid or not).
std::optional<std::vector<Observed>> RunThrough(const Program& p, size_t i,
                                                Reading reading) {
  Program prefix = p;
  prefix.steps.resize(i + 1);
  prefix.outputs = {p.steps[i].dst};
  // A step in a loop or an if: its blocks closed after it, so that its
  // last run is the prefix's last instruction.
  for (ProgramStep& closing : ClosingsAt(p, i))
    prefix.steps.push_back(std::move(closing));
  // A branch over step i to a label after it: the label at the end, where
  // the step is passed over as it is in the program.
  for (size_t j = i + 1; j < p.steps.size(); ++j) {
    if (p.steps[j].kind == ProgramStep::kLabel) prefix.steps.push_back(p.steps[j]);
  }
  if (!IsValid(prefix)) return std::nullopt;
  std::vector<Observed> run;
  const StepObserver each = [&run](const Variant& v, const Operands& o,
                                   const Result& r) {
    run.push_back({v, o, r});
  };
  if (!EvaluateProgram(prefix, WitnessInputs(prefix), reading, &each).ok())
    return std::nullopt;
  return run;
}

// What instruction step `i` ran with at the witness (in a loop, at its
// last run); nullopt where it did not run (its guard false, its loop run
// no times, its branch of an if not taken) or its prefix is no program.
std::optional<Observed> StepAtWitness(const Program& p, size_t i,
                                      Reading reading) {
  const std::optional<std::vector<Observed>> with = RunThrough(p, i, reading);
  const std::optional<std::vector<Observed>> without =
      RunThrough(WithStepAs(p, i, 0), i, reading);
  if (!with || !without || with->size() <= without->size() ||
      !(with->back().variant == p.steps[i].variant))
    return std::nullopt;
  return with->back();
}

// The plain values a step might have been taken to give: ptxas's own, and
// the edges of its width.
std::vector<uint64_t> AssumableValues(int width, uint64_t claimed) {
  const uint64_t mask = WidthMask(width);
  std::vector<uint64_t> out;
  for (uint64_t v : {claimed & mask, uint64_t{0}, uint64_t{1}, mask,
                     (mask >> 1) + 1, mask >> 1}) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// The first output the oracle defines and `claimed` contradicts.
std::optional<size_t> FirstDiffering(const std::vector<ProgramValue>& oracle,
                                     std::span<const uint64_t> claimed) {
  for (size_t k = 0; k < oracle.size() && k < claimed.size(); ++k) {
    if (oracle[k].defined && oracle[k].bits != claimed[k]) return k;
  }
  return std::nullopt;
}

// True if `p` with step `i` a move of `v` gives `claimed` at output `k`.
bool Gives(const Program& p, size_t i, uint64_t v, size_t k, uint64_t claimed,
           Reading reading) {
  const Program c = WithStepAs(p, i, v);
  if (!IsValid(c)) return false;
  const std::vector<ProgramValue> out = EvaluateAtWitness(c, reading);
  return k < out.size() && out[k].defined && out[k].bits == claimed;
}

// The first of `values` that, as step `i`'s in place of its own, gives
// `claimed` at output `k`; nullopt when none does.
std::optional<uint64_t> FirstThatGives(const Program& p, size_t i,
                                       const std::vector<uint64_t>& values,
                                       size_t k, uint64_t claimed,
                                       Reading reading) {
  for (uint64_t v : values) {
    if (Gives(p, i, v, k, claimed, reading)) return v;
  }
  return std::nullopt;
}

std::string OperandsText(const Tuple& t) {
  std::vector<std::string> parts;
  for (int s = 0; s < NumSources(t.variant); ++s)
    parts.push_back(absl::StrFormat("0x%x", t.operands.v[s]));
  return absl::StrJoin(parts, ", ");
}

std::string Words(const WrongConstant& w) {
  return absl::StrFormat(
      "ptxas's constant is what the program gives if `%s` of %s (%s) were "
      "0x%x (the oracle: 0x%x)",
      w.key, OperandsText(w.tuple), w.trigger, w.assumed, w.oracle.bits);
}

// The operation ptxas got wrong, where the culprit's variant hides it
// (issue 64; docs/program-causes.md has the runs of ptxas 13.0 that show it): a
// `mad.lo` whose factors are one value is a square, as `mul.lo` of it is
// (ptxas takes the known low bits of a square wrong through either); a
// `sub` of a, b that ptxas took to be a + b is the negation of b taken to
// be b, as `neg` of it is (ptxas takes -INT_MAX to be INT_MAX through
// either). Their key is the operation's variant, and the words say it.
// True where the culprit reads as a negation dropped (a `neg` of a taken
// to be a, or such a `sub`): as telling as operands of a trigger class.
bool KeyTheOperation(const Program& p, WrongConstant& w) {
  const std::string spelling = Spell(w.tuple.variant);
  const uint64_t a = w.tuple.operands.v[0], b = w.tuple.operands.v[1];
  const uint64_t mask = WidthMask(DestinationWidth(p.steps[w.step]));
  absl::string_view type = spelling;
  if (absl::ConsumePrefix(&type, "mad.lo.") && a == b) {
    w.key = absl::StrCat("mul.lo.", type);
    absl::StrAppend(&w.words, "; a square, as `", w.key, "` of 0x",
                    absl::Hex(a), ", 0x", absl::Hex(a), " is");
    return false;
  }
  if (absl::ConsumePrefix(&type, "sub.") && !absl::StrContains(type, '.') &&
      w.assumed == ((a + b) & mask)) {
    w.key = absl::StrCat("neg.s", type.substr(1));
    absl::StrAppend(&w.words, "; that is 0x", absl::Hex(a), " + 0x",
                    absl::Hex(b), ", as if `", w.key, "` of 0x", absl::Hex(b),
                    " were 0x", absl::Hex(b));
    return true;
  }
  return absl::StartsWith(spelling, "neg.") && w.assumed == (a & mask);
}

// The culprit `seen` at step `i`, taken to give `assumed`.
WrongConstant CulpritAt(size_t i, const Observed& seen, uint64_t assumed) {
  WrongConstant w{.step = i,
                  .tuple = {seen.variant, seen.operands},
                  .oracle = seen.result,
                  .assumed = assumed,
                  .trigger = TriggerClassName(TriggerClasses(SemanticClasses(
                      {seen.variant, seen.operands}, seen.result))),
                  .key = Spell(seen.variant)};
  w.words = Words(w);
  return w;
}

// The values a step might have been taken to give in a second look, where
// the step that stores ptxas's constant was seen to compute its own value
// right: the oracle's with one bit flipped (the low bits of a square that
// ptxas knows some of, read through a shift after it).
std::vector<uint64_t> OneBitOff(int width, uint64_t oracle) {
  std::vector<uint64_t> out;
  for (int bit = 0; bit < width && bit < 64; ++bit)
    out.push_back((oracle ^ (uint64_t{1} << bit)) & WidthMask(width));
  return out;
}

struct Search {
  size_t output = 0;     // the first output ptxas has wrong
  uint64_t claimed = 0;  // ptxas's value of it
};

// What step `i` ran with at the witness and the plain value that, in its
// place, gives the claimed output in `search`; nullopt when none does.
std::optional<std::pair<Observed, uint64_t>> Explains(const Program& p,
                                                     size_t i,
                                                     const Search& search,
                                                     Reading reading) {
  // The cheaper test first: most steps explain nothing.
  const std::optional<uint64_t> assumed = FirstThatGives(
      p, i, AssumableValues(DestinationWidth(p.steps[i]), search.claimed),
      search.output, search.claimed, reading);
  if (!assumed) return std::nullopt;
  const std::optional<Observed> seen = StepAtWitness(p, i, reading);
  if (!seen) return std::nullopt;
  return std::pair{*seen, *assumed};
}

struct Culprit {
  WrongConstant w;
  // At operands of a trigger class, or read as a negation dropped: what
  // the step did wrong is told by its operands, not only by its value.
  bool telling = false;
};

// The culprit of the search's output (see the header): the first
// explaining step that computes a value, at operands of a trigger class
// if one is, else the first that computes a predicate.
std::optional<Culprit> FindCulprit(const Program& program, const Search& search,
                                   Reading reading) {
  std::optional<WrongConstant> first, steering;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    if (Interrupted()) return std::nullopt;
    if (program.steps[i].kind != ProgramStep::kInstruction) continue;
    const auto explained = Explains(program, i, search, reading);
    if (!explained) continue;
    WrongConstant w = CulpritAt(i, explained->first, explained->second);
    const bool negation_dropped = KeyTheOperation(program, w);
    // A culprit at operands of a trigger class, or one that reads as a
    // negation dropped, is preferred: the steps around it that also
    // explain the value only pass it on (a max after the neg ptxas got
    // wrong). So is one that computes a value over a predicate, which
    // often only steers which value is computed (a branch over the step
    // ptxas got wrong).
    const bool steers = DestinationWidth(program.steps[i]) == 1;
    if ((w.trigger != "in-range" || negation_dropped) && !steers)
      return Culprit{std::move(w), true};
    std::optional<WrongConstant>& slot = steers ? steering : first;
    if (!slot || (slot->trigger == "in-range" && w.trigger != "in-range"))
      slot = std::move(w);
  }
  if (first) {
    const bool telling = first->trigger != "in-range";
    return Culprit{*std::move(first), telling};
  }
  if (!steering) return std::nullopt;
  // Only a compare explains it: what ptxas took the values it compares
  // to be is not told (`-|a| < C`, claimed for every a: no one value of
  // the abs or the neg gives it), and the entry says so.
  absl::StrAppend(&steering->words,
                  "; no one value of a step before it explains it, so the "
                  "key is the compare, not what ptxas took the values it "
                  "compares to be");
  return Culprit{*std::move(steering), true};
}

// True if step `i` sets output `k` last: no step after it writes that
// register.
bool SetsTheOutput(const Program& p, size_t i, size_t k) {
  if (k >= p.outputs.size() || p.steps[i].dst != p.outputs[k]) return false;
  for (size_t j = i + 1; j < p.steps.size(); ++j) {
    if (p.steps[j].dst == p.outputs[k]) return false;
  }
  return true;
}

// True for a culprit that sets the output and explains it only by being
// given ptxas's own constant, at operands that tell nothing: any step that
// sets the output would, so only the backend can say whether it is its own
// fault.
bool OnlyCarriesTheConstant(const Program& p, const Culprit& c,
                            const Search& search) {
  return !c.telling && c.w.assumed == search.claimed &&
         SetsTheOutput(p, c.w.step, search.output);
}

// The value step `i` computes, one bit off, that gives the claimed output
// in `search`; nullopt when none does (or the step did not run).
std::optional<std::pair<Observed, uint64_t>> ExplainsOneBitOff(
    const Program& p, size_t i, const Search& search, Reading reading) {
  const std::optional<Observed> seen = StepAtWitness(p, i, reading);
  if (!seen) return std::nullopt;
  const std::optional<uint64_t> assumed = FirstThatGives(
      p, i, OneBitOff(DestinationWidth(p.steps[i]), seen->result.bits),
      search.output, search.claimed, reading);
  if (!assumed) return std::nullopt;
  return std::pair{*seen, *assumed};
}

// `carrier` was seen to compute its own value right alone on the backend,
// so the value it was given was wrong: the nearest value step before it
// whose value one bit off explains the constant (what feeds it, before
// what feeds that), if one does; else `carrier`, its words saying that it
// was seen right alone.
WrongConstant LookBeforeTheCarrier(const Program& program,
                                   const Search& search, WrongConstant carrier,
                                   Reading reading) {
  const std::string alone = absl::StrFormat(
      "`%s` of %s alone gives the oracle's 0x%x on the backend", carrier.key,
      OperandsText(carrier.tuple), carrier.oracle.bits);
  for (size_t i = carrier.step; i-- > 0 && !Interrupted();) {
    const ProgramStep& step = program.steps[i];
    if (step.kind != ProgramStep::kInstruction || DestinationWidth(step) == 1)
      continue;
    const auto explained = ExplainsOneBitOff(program, i, search, reading);
    if (!explained) continue;
    WrongConstant w = CulpritAt(i, explained->first, explained->second);
    KeyTheOperation(program, w);
    absl::StrAppend(&w.words, "; ", alone,
                    ", so the constant it stores comes from before it");
    return w;
  }
  absl::StrAppend(&carrier.words, "; ", alone,
                  ", and no step before it one bit off explains the "
                  "constant: the key is the step that stores it, not one "
                  "shown wrong");
  return carrier;
}

}  // namespace

std::optional<WrongConstant> WrongConstantCause(
    const Program& program, std::span<const uint64_t> claimed,
    Reading reading, const AloneCheck* alone) {
  if (program.steps.size() > kCulpritSearchSteps) return std::nullopt;
  const std::optional<size_t> k =
      FirstDiffering(EvaluateAtWitness(program, reading), claimed);
  if (!k) return std::nullopt;
  const Search search{.output = *k, .claimed = claimed[*k]};
  std::optional<Culprit> found = FindCulprit(program, search, reading);
  if (!found) return std::nullopt;
  if (alone == nullptr || !*alone ||
      !OnlyCarriesTheConstant(program, *found, search) ||
      !(*alone)(found->w.tuple).value_or(false)) {
    return std::move(found->w);
  }
  return LookBeforeTheCarrier(program, search, std::move(found->w), reading);
}

bool DepartsAtAConstant(absl::string_view departure_cause) {
  const size_t open = departure_cause.find('`');
  const size_t close = departure_cause.rfind('`');
  if (open == absl::string_view::npos || close <= open) return false;
  const absl::string_view text =
      departure_cause.substr(open + 1, close - open - 1);
  if (text.empty() || text[0] == '@') return false;  // predicated: a choice
  const std::vector<absl::string_view> operands =
      absl::StrSplit(text.substr(std::min(text.find(' '), text.size())), ',');
  if (operands.size() < 2) return false;
  for (size_t i = 1; i < operands.size(); ++i) {
    absl::string_view o = absl::StripAsciiWhitespace(operands[i]);
    while (!o.empty() && (o[0] == '-' || o[0] == '!' || o[0] == '|'))
      o.remove_prefix(1);
    const bool constant = o == "RZ" || o == "PT" ||
                          (!o.empty() && absl::ascii_isdigit(o[0]));
    if (!constant) return false;
  }
  return true;
}

}  // namespace ptxdiff
