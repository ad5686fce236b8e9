#include "program/program_minimizer.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/interrupt.h"
#include "common/minimize_rounds.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "program/composed_oracle.h"

namespace ptxdiff {
namespace {

// One round's candidates, within kProgramRoundSteps, and none more once a
// stop is recorded.
class RoundCandidates {
 public:
  // Whether no more are taken: the steps are spent, or a stop came.
  bool full() const { return steps_left_ == 0 || Interrupted(); }
  // Taken if it fits, or if it is the first: a round has one at least.
  void push_back(Program c) {
    const size_t steps = std::max<size_t>(c.steps.size(), 1);
    if (full() || (steps > steps_left_ && !programs_.empty())) {
      steps_left_ = 0;
      return;
    }
    steps_left_ -= std::min(steps_left_, steps);
    programs_.push_back(std::move(c));
  }
  std::vector<Program> Take() { return std::move(programs_); }

 private:
  size_t steps_left_ = kProgramRoundSteps;
  std::vector<Program> programs_;
};

// The value a top-level step held at the witness, by its index.
using WitnessValue = std::function<std::optional<uint64_t>(size_t)>;

// An immediate the program may choose: not a selector, an immLut or the
// carry flag's unused entry, which say what the instruction is.
bool IsOrdinaryImmediate(const ProgramStep& s, size_t i) {
  if (s.sources[i].is_register) return false;
  if (s.kind == ProgramStep::kMove) return true;
  const int k = static_cast<int>(i);
  return !IsSelectorSource(s.variant, k) && !MustBeImmediate(s.variant, k) &&
         !IsCarryInSource(s.variant, k);
}

bool IsValid(const Program& p) { return ParseProgram(FormatProgram(p)).ok(); }

// Every use of register `name` in the steps after `from` and in the
// outputs replaced by `by`; false if an output would become an immediate.
bool Rewire(Program& p, size_t from, const std::string& name,
            const ProgramOperand& by) {
  for (size_t j = from; j < p.steps.size(); ++j) {
    ProgramStep& step = p.steps[j];
    for (ProgramOperand& src : step.sources) {
      if (src.is_register && src.name == name) src = by;
    }
    if (step.guard != name) continue;
    if (by.is_register) {
      step.guard = by.name;
    } else if (step.kind == ProgramStep::kIfBegin) {
      return false;  // the branch it would take is a candidate of its own
    } else if (((by.value & 1) != 0) != step.guard_negated) {
      step.guard.clear();  // a guard that always holds
    } else {
      return false;  // a step that never runs: removing it is another candidate
    }
  }
  for (std::string& out : p.outputs) {
    if (out != name) continue;
    if (!by.is_register) return false;
    out = by.name;
  }
  return true;
}

// The block depth of each step (a block's own brackets at the outer).
std::vector<int> Depths(const Program& p) {
  std::vector<int> depth;
  int d = 0;
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kLoopEnd || s.kind == ProgramStep::kIfEnd) --d;
    depth.push_back(d);
    if (s.kind == ProgramStep::kLoopBegin || s.kind == ProgramStep::kIfBegin)
      ++d;
  }
  return depth;
}

// The value step `i` (at the top level) sets, at the witness; nullopt when
// the oracle leaves it undefined.
std::optional<uint64_t> ValueAfter(const Program& p, size_t i) {
  Program prefix = p;
  prefix.steps.resize(i + 1);
  prefix.outputs = {p.steps[i].dst};
  const std::vector<ProgramValue> v = EvaluateAtWitness(prefix);
  if (v.size() != 1 || !v[0].defined) return std::nullopt;
  return v[0].bits;
}

// Whether register `name` is set by a step other than `i`.
bool SetElsewhere(const Program& p, size_t i, const std::string& name) {
  for (size_t j = 0; j < p.steps.size(); ++j) {
    if (j != i && SetsRegister(p.steps[j]) && p.steps[j].dst == name)
      return true;
  }
  return false;
}

// Step `i` removed, its uses rewired to each of its same-width register
// sources, to the value it held, or (when set by another step too) to
// nothing.
void StepRemovals(const Program& p, size_t i,
                  const std::optional<uint64_t>& value,
                  RoundCandidates& out) {
  const ProgramStep& step = p.steps[i];
  std::vector<ProgramOperand> replacements;
  for (const ProgramOperand& src : step.sources) {
    if (src.is_register && src.name != step.dst &&
        RegisterWidth(p, src.name) == DestinationWidth(step)) {
      replacements.push_back(src);
    }
  }
  std::optional<uint64_t> held = value;
  if (step.kind == ProgramStep::kMove && !step.sources[0].is_register) {
    replacements.push_back(step.sources[0]);
    held = step.sources[0].value;
  } else if (value) {
    replacements.push_back({.value = *value});
  }
  // Where only the low byte is read (bfe's and bfi's position and length),
  // that byte is the immediate PTX takes (ptxas refuses 0xffff there, so a
  // move of it could not be folded into the instruction: issue 42, item 12).
  if (held && *held > 0xff) replacements.push_back({.value = *held & 0xff});
  auto removed = [&] {
    Program c = p;
    c.steps.erase(c.steps.begin() + static_cast<long>(i));
    return c;
  };
  // Set by another step (before it, later, or in the other branch of an
  // if, whose unwrapping leaves both): its uses may still read a value; the
  // candidate is valid if the text still sets the register before each use.
  if (SetElsewhere(p, i, step.dst)) out.push_back(removed());
  for (const ProgramOperand& by : replacements) {
    Program c = removed();
    if (Rewire(c, i, step.dst, by)) out.push_back(std::move(c));
  }
}

// `p` with the steps from `first` up to (not including) `last` erased.
Program Erased(Program p, size_t first, size_t last) {
  p.steps.erase(p.steps.begin() + static_cast<long>(first),
                p.steps.begin() + static_cast<long>(last));
  return p;
}

// Programs longer than this also get run removals (RunRemovals), at most
// kMaxRunRemovals a round (every candidate of a round is judged, and counts
// against the budget); a short one is minimized a step at a time, each
// rewired to the value it held.
constexpr size_t kRunRemovalMinSteps = 32;
constexpr size_t kMaxRunRemovals = 16;

// `p` with the steps from `first` up to `last` erased, each register they
// set (and no step left sets) read after them as 0; nullopt where an output
// or a guard would lose its register. The value is a guess (the run's own
// values would cost an oracle run each): a candidate whose guess changes
// what shows fails its check, and smaller runs are tried next.
std::optional<Program> WithoutRun(const Program& p, size_t first, size_t last) {
  Program c = Erased(p, first, last);
  absl::flat_hash_set<std::string> rewired;
  for (size_t i = first; i < last; ++i) {
    const ProgramStep& step = p.steps[i];
    if (!SetsRegister(step) || !rewired.insert(step.dst).second) continue;
    const bool still_set = absl::c_any_of(c.steps, [&](const ProgramStep& s) {
      return SetsRegister(s) && s.dst == step.dst;
    });
    if (!still_set && !Rewire(c, first, step.dst, {.value = 0}))
      return std::nullopt;
  }
  return c;
}

// An instruction or a move: what a run removal takes (brackets, labels,
// branches and exits have candidates of their own).
bool InARun(const ProgramStep& s) {
  return s.kind == ProgramStep::kInstruction || s.kind == ProgramStep::kMove;
}

// Delta debugging's coarse steps, for a long program: each block whole,
// then each run of consecutive instructions at one depth in halves, then
// quarters, and so on. A 4,000-step case whose disagreement is in two of
// its steps came down by one step a round (32 candidates of it fill a
// round), 34 steps in the 300 s `minimize` gives it.
// `depth` and `blocks` are p's (Depths, BlocksOf).
void RunRemovals(const Program& p, const std::vector<int>& depth,
                 const std::vector<ProgramBlock>& blocks,
                 RoundCandidates& out) {
  if (p.steps.size() <= kRunRemovalMinSteps) return;
  size_t made = 0;
  const auto add = [&](size_t first, size_t last) {
    if (made == kMaxRunRemovals || out.full()) return;
    if (auto c = WithoutRun(p, first, last)) {
      out.push_back(*std::move(c));
      ++made;
    }
  };
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const ProgramStep::Kind kind = p.steps[i].kind;
    if (kind == ProgramStep::kLoopBegin || kind == ProgramStep::kIfBegin)
      add(i, blocks[i].end + 1);
  }
  std::vector<std::pair<size_t, size_t>> runs;  // [first, last)
  size_t longest = 0;
  for (size_t i = 0; i < p.steps.size();) {
    size_t j = i;
    while (j < p.steps.size() && InARun(p.steps[j]) && depth[j] == depth[i])
      ++j;
    if (j - i >= 2) {
      runs.emplace_back(i, j);
      longest = std::max(longest, j - i);
    }
    i = std::max(j, i + 1);
  }
  for (size_t parts = 2; parts <= longest && made < kMaxRunRemovals;
       parts *= 2) {
    for (const auto& [first, last] : runs) {
      const size_t n = last - first;
      for (size_t k = 0; k < parts && n >= parts; ++k)
        add(first + k * n / parts, first + (k + 1) * n / parts);
    }
  }
}

// Each top-level instruction as a move of the value it held: the plainest
// way to set its register.
void StepsAsMoves(const Program& p, const WitnessValue& value_of,
                  RoundCandidates& out) {
  for (size_t i = 0; i < p.steps.size() && !out.full(); ++i) {
    const ProgramStep& step = p.steps[i];
    if (step.kind != ProgramStep::kInstruction || DestinationWidth(step) <= 1)
      continue;
    if (const std::optional<uint64_t> value = value_of(i)) {
      Program c = p;
      c.steps[i] = {.kind = ProgramStep::kMove,
                    .dst = step.dst,
                    .sources = {{.value = *value}},
                    .width = DestinationWidth(step)};
      out.push_back(std::move(c));
    }
  }
}

// `p` with the block's brackets gone and only the steps from `first` up to
// `last` of it kept.
Program KeepOf(const Program& p, const ProgramBlock& block, size_t first,
               size_t last) {
  return Erased(Erased(p, last, block.end + 1), block.begin, first);
}

// The loop at `block` unwrapped (its body once, or gone when empty), and
// run once.
void LoopSimplifications(const Program& p, const ProgramBlock& block,
                         RoundCandidates& out) {
  const size_t begin = block.begin;
  out.push_back(KeepOf(p, block, begin + 1, block.end));
  if (p.steps[begin].trip > 1) {
    Program once = p;
    once.steps[begin].trip = 1;
    out.push_back(std::move(once));
  }
}

// The if at `block` replaced by its then part, and by its else part (gone
// when it has none); an empty else dropped.
void IfSimplifications(const Program& p, const ProgramBlock& block,
                       RoundCandidates& out) {
  out.push_back(KeepOf(p, block, block.begin + 1, block.else_at));
  const bool has_else = block.else_at != block.end;
  out.push_back(KeepOf(p, block, block.else_at + has_else, block.end));
  if (has_else && block.else_at + 1 == block.end) {
    out.push_back(Erased(p, block.else_at, block.end));
  }
}

// Each branch and exit removed, and each label with the branches to it.
void JumpRemovals(const Program& p, RoundCandidates& out) {
  for (size_t i = 0; i < p.steps.size() && !out.full(); ++i) {
    const ProgramStep& step = p.steps[i];
    if (step.kind == ProgramStep::kBranch || step.kind == ProgramStep::kExit) {
      out.push_back(Erased(p, i, i + 1));
    }
    if (step.kind != ProgramStep::kLabel) continue;
    Program c = p;
    std::erase_if(c.steps, [&step](const ProgramStep& s) {
      return (s.kind == ProgramStep::kBranch || s.kind == ProgramStep::kLabel) &&
             s.label == step.label;
    });
    out.push_back(std::move(c));
  }
}

// Each guarded step, branch or exit without its guard.
void GuardRemovals(const Program& p, RoundCandidates& out) {
  for (size_t i = 0; i < p.steps.size() && !out.full(); ++i) {
    if (p.steps[i].guard.empty() || p.steps[i].kind == ProgramStep::kIfBegin) {
      continue;
    }
    Program c = p;
    c.steps[i].guard.clear();
    c.steps[i].guard_negated = false;
    out.push_back(std::move(c));
  }
}

// Plainer values than `v`: 0, 1, its low 16 bits.
std::vector<uint64_t> PlainerValues(uint64_t v) {
  std::vector<uint64_t> out;
  for (uint64_t plainer : {uint64_t{0}, uint64_t{1}, v & 0xffff}) {
    if (plainer < v &&
        std::find(out.begin(), out.end(), plainer) == out.end()) {
      out.push_back(plainer);
    }
  }
  return out;
}

void InputRemovals(const Program& p, RoundCandidates& out) {
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    Program c = p;
    const ProgramInput in = c.inputs[k];
    c.inputs.erase(c.inputs.begin() + static_cast<long>(k));
    if (Rewire(c, 0, in.name, {.value = in.witness}))
      out.push_back(std::move(c));
  }
}

// A loaded input as a parameter: a case that does not need the load
// says so by losing it.
void LoadRemovals(const Program& p, RoundCandidates& out) {
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    if (!p.inputs[k].loaded) continue;
    Program c = p;
    c.inputs[k].loaded = false;
    out.push_back(std::move(c));
  }
}

void ValueSimplifications(const Program& p, RoundCandidates& out) {
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    for (uint64_t v : PlainerValues(p.inputs[k].witness)) {
      Program c = p;
      c.inputs[k].witness = v;
      out.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < p.steps.size() && !out.full(); ++i) {
    for (size_t s = 0; s < p.steps[i].sources.size(); ++s) {
      if (!IsOrdinaryImmediate(p.steps[i], s)) continue;
      for (uint64_t v : PlainerValues(p.steps[i].sources[s].value)) {
        Program c = p;
        c.steps[i].sources[s].value = v;
        out.push_back(std::move(c));
      }
    }
  }
}

// The class of an immediate, as a representative value (so that the
// signature is a program's text).
uint64_t ImmediateClass(uint64_t v) {
  if (v == 0 || v == 1 || v == 0xffffffff || v == ~uint64_t{0}) return v;
  if (v == 0x80000000 || v == 0x7fffffff) return v;
  if (v < 32) return 3;
  if ((v & (v - 1)) == 0) return 0x100;
  return 0x1234;
}

std::string InputName(size_t k) {
  return k < 26 ? std::string(1, static_cast<char>('a' + k))
                : absl::StrCat("in", k);
}

// The one output stored from another register a top-level step sets: where
// what shows is in a step whose value is not stored (a tool crashing on an
// instruction whose result is dropped), storing it lets the rest go. Last
// among the candidates: a program keeps its output while anything else
// simplifies.
void OutputRewires(const Program& p, const std::vector<int>& depth,
                   RoundCandidates& out) {
  if (p.outputs.size() != 1) return;
  for (size_t i = 0; i < p.steps.size() && !out.full(); ++i) {
    if (!SetsRegister(p.steps[i]) || depth[i] != 0 ||
        p.steps[i].dst == p.outputs[0]) {
      continue;
    }
    Program c = p;
    c.outputs = {p.steps[i].dst};
    out.push_back(std::move(c));
  }
}

}  // namespace

std::vector<Program> ProgramSimplifications(const Program& p) {
  RoundCandidates out;
  for (size_t k = 0; p.outputs.size() > 1 && k < p.outputs.size(); ++k) {
    Program c = p;
    c.outputs.erase(c.outputs.begin() + static_cast<long>(k));
    out.push_back(std::move(c));
  }
  // The value each top-level step held at the witness (in a loop it changes
  // from trip to trip), worked out once, when first asked: each is a run of
  // the program up to it.
  const std::vector<int> depth = Depths(p);
  std::vector<std::optional<std::optional<uint64_t>>> values(p.steps.size());
  const WitnessValue value_of = [&](size_t i) -> std::optional<uint64_t> {
    if (!SetsRegister(p.steps[i]) || depth[i] != 0) return std::nullopt;
    if (!values[i]) values[i] = ValueAfter(p, i);
    return *values[i];
  };
  const std::vector<ProgramBlock> blocks = BlocksOf(p.steps);
  RunRemovals(p, depth, blocks, out);
  for (size_t i = p.steps.size(); i-- > 0 && !out.full();) {
    if (SetsRegister(p.steps[i])) StepRemovals(p, i, value_of(i), out);
  }
  for (size_t i = 0; i < p.steps.size() && !out.full(); ++i) {
    if (p.steps[i].kind == ProgramStep::kLoopBegin)
      LoopSimplifications(p, blocks[i], out);
    if (p.steps[i].kind == ProgramStep::kIfBegin)
      IfSimplifications(p, blocks[i], out);
  }
  JumpRemovals(p, out);
  GuardRemovals(p, out);
  InputRemovals(p, out);
  LoadRemovals(p, out);
  StepsAsMoves(p, value_of, out);
  ValueSimplifications(p, out);
  OutputRewires(p, depth, out);
  std::vector<Program> valid = out.Take();
  std::erase_if(valid, [](const Program& c) { return !IsValid(c); });
  return valid;
}

absl::StatusOr<ProgramMinimizeResult> MinimizeProgram(
    const Program& program, const ProgramBatchPredicate& shows,
    int max_candidates) {
  PTXDIFF_ASSIGN_OR_RETURN(
      MinimizeRoundsResult<Program> min,
      MinimizeInRounds(program, &ProgramSimplifications, shows,
                       FirstThatShows{}, {.max_candidates = max_candidates}));
  return ProgramMinimizeResult{.program = std::move(min.best),
                               .rounds = min.rounds,
                               .candidates = min.candidates,
                               .budget_out = min.budget_out};
}

absl::StatusOr<ProgramMinimizeResult> MinimizeProgram(
    const Program& program, const ProgramPredicate& shows, int max_candidates) {
  auto each = [&shows](std::span<const Program> candidates)
      -> absl::StatusOr<std::vector<bool>> {
    std::vector<bool> out;
    for (const Program& c : candidates) {
      PTXDIFF_ASSIGN_OR_RETURN(const bool still, shows(c));
      out.push_back(still);
    }
    return out;
  };
  return MinimizeProgram(program, ProgramBatchPredicate(each), max_candidates);
}

std::string ProgramSignature(const Program& program) {
  Program p = program;
  absl::flat_hash_map<std::string, std::string> names;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    names[p.inputs[k].name] = InputName(k);
    p.inputs[k].name = InputName(k);
    p.inputs[k].witness = 0;
  }
  absl::flat_hash_map<std::string, std::string> labels;  // L0, L1, ...
  auto rename = [&names](std::string& name) {
    auto [it, added] = names.try_emplace(name, absl::StrCat("r", names.size()));
    name = it->second;
  };
  for (ProgramStep& s : p.steps) {
    for (size_t i = 0; i < s.sources.size(); ++i) {
      ProgramOperand& src = s.sources[i];
      if (src.is_register) rename(src.name);
      if (IsOrdinaryImmediate(s, i)) src.value = ImmediateClass(src.value);
    }
    if (!s.guard.empty()) rename(s.guard);
    if (SetsRegister(s)) rename(s.dst);
    if (!s.label.empty()) {
      auto [it, added] = labels.try_emplace(s.label,
                                            absl::StrCat("L", labels.size()));
      s.label = it->second;
    }
  }
  for (std::string& out : p.outputs) rename(out);
  return FormatProgram(p);
}

std::string ProgramSignatureName(const std::string& signature) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (unsigned char c : signature) h = (h ^ c) * 16777619u;
  return absl::StrFormat("program-%08x", h);
}

std::vector<Program> InstructionsAlone(const Program& program, Reading reading,
                                       size_t max) {
  std::vector<Program> alone;
  absl::flat_hash_set<std::string> seen;
  const StepObserver each = [&](const Variant& v, const Operands& o,
                                const Result&) {
    if (alone.size() == max) return;
    Program one = TupleAsProgram(v, o);
    if (seen.insert(FormatProgram(one)).second) alone.push_back(std::move(one));
  };
  (void)EvaluateProgram(program, WitnessInputs(program), reading, &each);
  return alone;
}

}  // namespace ptxdiff
