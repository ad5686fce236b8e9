#include "program/program_generator.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "program/composed_oracle.h"
#include "backends/cuda/kernel_gen.h"

namespace ptxdiff {
namespace {

// 32-bit steps: every source and the result a 32-bit value.
constexpr std::array<const char*, 34> kSteps = {
    "add.u32",        "sub.u32",      "add.s32",         "sub.s32",
    "mul.lo.u32",     "mul.hi.u32",   "mul.hi.s32",      "mad.lo.u32",
    "mul24.lo.u32",   "and.b32",      "or.b32",          "xor.b32",
    "not.b32",        "neg.s32",      "abs.s32",         "min.u32",
    "max.u32",        "min.s32",      "max.s32",         "shl.b32",
    "shr.u32",        "shr.s32",      "bfe.u32",         "bfe.s32",
    "bfi.b32",        "clz.b32",      "popc.b32",        "bfind.u32",
    "brev.b32",       "slct.s32.s32", "shf.l.clamp.b32", "shf.r.wrap.b32",
    "bmsk.clamp.b32", "cnot.b32",
};

// The narrowing converts to 16 bits, plain or saturating.
constexpr std::array<const char*, 4> kConverts = {
    "cvt.u16.u32", "cvt.s16.s32", "cvt.sat.u16.s32", "cvt.sat.s16.u32"};

// The steps of the compare, select and square shapes (Builder).
constexpr std::array<const char*, 5> kShapeSteps = {
    "setp.lt.u32", "setp.lt.s32", "selp.b32", "and.b32", "shr.u32"};

constexpr std::array<uint64_t, 9> kSpecial = {
    0, 1, 2, 31, 32, 0xffffffff, 0x80000000, 0x7fffffff, 0x55555555};

uint64_t SpecialOrRandom(std::mt19937_64& rng) {
  return rng() % 3 == 0 ? rng() & 0xffffffff
                        : kSpecial[rng() % kSpecial.size()];
}

class Builder {
 public:
  Builder(std::mt19937_64& rng, const ProgramShape& shape)
      : rng_(rng), shape_(shape), may_suppress_(CanDrawAStep(shape)) {}

  Program Build() {
    const int inputs = 1 + static_cast<int>(rng_() % shape_.max_inputs);
    for (int k = 0; k < inputs; ++k) {
      const std::string name = absl::StrCat("in", k);
      p_.inputs.push_back(
          {.name = name, .width = 32, .witness = SpecialOrRandom(rng_)});
      live_.push_back(name);
    }
    if (shape_.thread_inputs &&
        static_cast<int>(rng_() % 100) < shape_.thread_input_percent) {
      MakeThreadInput(p_.inputs[rng_() % p_.inputs.size()]);
    }
    if (shape_.loaded_inputs &&
        static_cast<int>(rng_() % 100) < shape_.loaded_input_percent) {
      ProgramInput& in = p_.inputs[rng_() % p_.inputs.size()];
      in.loaded = in.thread == ThreadInput::kNone;
    }
    const int steps =
        shape_.min_steps +
        static_cast<int>(rng_() % (shape_.max_steps - shape_.min_steps + 1));
    const bool loop = static_cast<int>(rng_() % 100) < shape_.loop_percent;
    const int loop_at = loop ? static_cast<int>(rng_() % steps) : -1;
    // Where an if/else goes, in addition to the motifs: before step
    // `branch_at`, or (at `steps`) just before the final narrowing.
    const bool branch = static_cast<int>(rng_() % 100) < shape_.if_else_percent;
    const int branch_at = branch ? static_cast<int>(rng_() % (steps + 1)) : -1;
    for (int s = 0; s < steps; ++s) {
      if (s == loop_at) OpenLoop();
      if (s == branch_at) AddIfElse();
      AddMotif();
      if (s == loop_at + 1 || (loop && s == steps - 1 && open_)) CloseLoop();
    }
    if (branch_at == steps) AddIfElse();
    Narrow();
    p_.outputs = {live_.back()};
    KeepTheWitnessStoring();
    return std::move(p_);
  }

 private:
  // A program whose thread exits at its witness stores nothing there, and
  // most such exit at every input vector a check tries (not judged): its
  // exits' guards are turned round, so that the witness reaches the stores
  // and other inputs may still exit (or, where it still exits, the exits
  // go).
  void KeepTheWitnessStoring() {
    if (!HasExit(p_) || !ThreadExits(EvaluateAtWitness(p_))) return;
    for (ProgramStep& s : p_.steps) {
      if (s.kind == ProgramStep::kExit) s.guard_negated = !s.guard_negated;
    }
    if (!ThreadExits(EvaluateAtWitness(p_))) return;
    // Exits on both senses of its compares: none is kept.
    std::erase_if(p_.steps, [](const ProgramStep& s) {
      return s.kind == ProgramStep::kExit;
    });
  }

  // `in` read from the thread: %tid.x or %laneid, shown at a random lane.
  // The compares of an input with a small bound then split the lanes.
  void MakeThreadInput(ProgramInput& in) {
    in.thread = rng_() % 2 == 0 ? ThreadInput::kTidX : ThreadInput::kLaneId;
    in.witness = rng_() % kProgramLanes;
  }

  // An empty one-trip loop, then a loop of 1, 2 or 4 trips around the next
  // steps: the shape of FuzzX's m009, m011 and m012.
  void OpenLoop() {
    p_.steps.push_back({.kind = ProgramStep::kLoopBegin, .trip = 1});
    p_.steps.push_back({.kind = ProgramStep::kLoopEnd});
    p_.steps.push_back(
        {.kind = ProgramStep::kLoopBegin, .trip = 1 << (rng_() % 3)});
    open_ = true;
    set_before_loop_.clear();
    for (const std::string& name : live_) {
      if (!name.starts_with("in")) set_before_loop_.push_back(name);
    }
  }

  // A step's destination: a new register, or, in a loop, often one set
  // before it, so that the loop carries it (m009, m011, m012).
  std::string Destination() {
    if (open_ && !set_before_loop_.empty() && rng_() % 2 == 0) {
      return set_before_loop_[rng_() % set_before_loop_.size()];
    }
    return absl::StrCat("r", next_++);
  }
  void CloseLoop() {
    if (!open_) return;
    p_.steps.push_back({.kind = ProgramStep::kLoopEnd});
    open_ = false;
  }

  // A recent register (most often the last), an input, or a constant.
  ProgramOperand Source(const Variant& v, int i) {
    const uint64_t value = SpecialOrRandom(rng_);
    if (UsesImmediate(v, i, value) && rng_() % 3 == 0) return {.value = value};
    const size_t back = std::min<size_t>(live_.size() - 1, rng_() % 3);
    return {.is_register = true, .name = live_[live_.size() - 1 - back]};
  }

  // A step's variant, never a suppressed one (unless all are: then it
  // would never end), and a discouraged one seldom.
  Variant StepVariant() {
    while (true) {
      const char* spelling = kSteps[rng_() % kSteps.size()];
      if (may_suppress_ && Suppressed(spelling)) continue;
      if (Discouraged(spelling) && rng_() % kDiscouragedOdds != 0) continue;
      return *ParseVariant(spelling);
    }
  }

  // Mostly one random step; else a shape the public reproducers share: a
  // special constant moved into a register (inside a loop, the m011/m012
  // shape), or a value shifted up and squared, whose low bits are known
  // zero (m025, m044).
  void AddMotif() {
    switch (rng_() % 8) {
      case 0:
        AddMove();
        return;
      case 1:
        if (!Suppressed("mul.lo.u32") && !Suppressed("shl.b32")) {
          AddShiftedSquare();
          return;
        }
        break;
      case 2:
        if (AddGuarded()) return;
        break;
      default:
        if (shape_.forward_branches && AddControlFlow()) return;
        break;
    }
    AddStep();
  }

  // Now and then PTX's own control flow (FuzzX's kernels are blocks of
  // forward branches): a branch over steps, a bare label before a step, or
  // an exit before one. False where none was drawn (or none fits).
  bool AddControlFlow() {
    switch (rng_() % 32) {
      case 0:
      case 1:
      case 2:
      case 3:
        return AddBranchOver();
      case 4:
        p_.steps.push_back(
            {.kind = ProgramStep::kLabel, .label = NewLabel()});
        AddStep();
        return true;
      case 5:
        if (Suppressed("setp.lt.u32")) return false;
        p_.steps.push_back({.kind = ProgramStep::kExit,
                            .guard = AddInputCompare(),
                            .guard_negated = rng_() % 2 == 0});
        AddStep();
        return true;
      default:
        return false;
    }
  }

  std::string NewLabel() { return absl::StrCat("L", labels_++); }

  // `@%p bra L;` on a compare of an input, over one or two steps that update
  // registers set before it (where it is taken they keep their values), then
  // `L:`: the predicated step's shape as divergent code has it. False if no
  // register is set yet.
  bool AddBranchOver() {
    const std::vector<std::string> set = SetRegisters();
    if (set.empty() || Suppressed("setp.lt.u32")) return false;
    const std::string label = NewLabel();
    p_.steps.push_back({.kind = ProgramStep::kBranch,
                        .label = label,
                        .guard = AddInputCompare(),
                        .guard_negated = rng_() % 2 == 0});
    for (int k = 1 + static_cast<int>(rng_() % 2); k > 0; --k) {
      AddStepTo(StepVariant(), set[rng_() % set.size()]);
    }
    p_.steps.push_back({.kind = ProgramStep::kLabel, .label = label});
    return true;
  }

  // The registers steps have set (not the inputs).
  std::vector<std::string> SetRegisters() const {
    std::vector<std::string> set;
    for (const std::string& name : live_) {
      if (!name.starts_with("in")) set.push_back(name);
    }
    return set;
  }

  bool Discouraged(absl::string_view spelling) const {
    return std::find(shape_.discouraged.begin(), shape_.discouraged.end(),
                     spelling) != shape_.discouraged.end();
  }

  bool Suppressed(absl::string_view spelling) const {
    return std::find(shape_.suppressed.begin(), shape_.suppressed.end(),
                     spelling) != shape_.suppressed.end();
  }

  void AddMove() { AddMoveTo(Destination()); }
  void AddMoveTo(const std::string& dst) {
    p_.steps.push_back(
        {.kind = ProgramStep::kMove,
         .dst = dst,
         .sources = {{.value = kSpecial[rng_() % kSpecial.size()]}},
         .width = 32});
    live_.push_back(dst);
  }

  void AddShiftedSquare() {
    const std::string shifted = absl::StrCat("r", next_++),
                      square = absl::StrCat("r", next_++);
    p_.steps.push_back({.variant = *ParseVariant("shl.b32"),
                        .dst = shifted,
                        .sources = {{.is_register = true, .name = live_.back()},
                                    {.value = 4 + rng_() % 20}}});
    p_.steps.push_back({.variant = *ParseVariant("mul.lo.u32"),
                        .dst = square,
                        .sources = {{.is_register = true, .name = shifted},
                                    {.is_register = true, .name = shifted}}});
    live_.push_back(shifted);
    live_.push_back(square);
  }

  // A step under a guard that compares an input with a constant (a branch
  // on a thread-index-like value, as a predicated instruction), updating a
  // register set before it. False if no register is set yet.
  bool AddGuarded() {
    std::vector<std::string> set;
    for (const std::string& name : live_) {
      if (!name.starts_with("in")) set.push_back(name);
    }
    if (set.empty() || Suppressed("setp.lt.u32")) return false;
    const std::string p = absl::StrCat("p", next_++);
    p_.steps.push_back(
        {.variant = *ParseVariant("setp.lt.u32"),
         .dst = p,
         .sources = {{.is_register = true,
                      .name = p_.inputs[rng_() % p_.inputs.size()].name},
                     {.value = SpecialOrRandom(rng_)}}});
    AddStep();
    ProgramStep& guarded = p_.steps.back();
    guarded.dst = set[rng_() % set.size()];
    guarded.guard = p;
    guarded.guard_negated = rng_() % 2 == 0;
    live_.back() = guarded.dst;
    return true;
  }

  void AddStep() {
    const Variant v = StepVariant();
    AddStepTo(v, Destination());
  }
  void AddStepTo(const Variant& v, const std::string& dst) {
    ProgramStep step{.variant = v, .dst = dst};
    step.sources.resize(NumSources(v));
    for (int i = 0; i < NumSources(v); ++i) step.sources[i] = Source(v, i);
    // A square: both factors the same register.
    if (NumSources(v) >= 2 && step.sources[0].is_register && rng_() % 4 == 0) {
      step.sources[1] = step.sources[0];
    }
    live_.push_back(step.dst);
    p_.steps.push_back(std::move(step));
  }

  // An if/else on a compare of an input with a constant (a branch on a
  // thread-index-like value, as divergent code has), each branch setting
  // one new register its own way: the steps after it read a value that is
  // one of two, where a compiler may merge what it knows of each branch
  // wrong (and, just before the narrowing, it is what gets narrowed).
  // False if no compare may be generated.
  bool AddIfElse() {
    if (Suppressed("setp.lt.u32")) return false;
    const std::string p = AddInputCompare();
    const std::string dst = absl::StrCat("r", next_++);
    p_.steps.push_back({.kind = ProgramStep::kIfBegin,
                        .guard = p,
                        .guard_negated = rng_() % 4 == 0});
    AddBranch(dst);
    p_.steps.push_back({.kind = ProgramStep::kElse});
    AddBranch(dst);
    p_.steps.push_back({.kind = ProgramStep::kIfEnd});
    live_.push_back(dst);
    return true;
  }

  // `setp.lt.u32 %p, %in, c`: most often a small bound, as a thread index
  // is compared; the predicate's name.
  std::string AddInputCompare() {
    constexpr std::array<uint64_t, 4> kBounds = {1, 16, 32, 0x80000000};
    const std::string p = absl::StrCat("p", next_++);
    const uint64_t bound = rng_() % 2 == 0 ? kBounds[rng_() % kBounds.size()]
                                           : SpecialOrRandom(rng_);
    p_.steps.push_back(
        {.variant = *ParseVariant("setp.lt.u32"),
         .dst = p,
         .sources = {{.is_register = true,
                      .name = p_.inputs[rng_() % p_.inputs.size()].name},
                     {.value = bound}}});
    return p;
  }

  // One branch: `dst` set by a special constant's move or a random step,
  // sometimes updated by a second step; what the branch sets is not live
  // after it (only `dst`, which both branches set).
  void AddBranch(const std::string& dst) {
    const size_t live = live_.size();
    if (rng_() % 3 == 0) {
      AddMoveTo(dst);
    } else {
      AddStepTo(StepVariant(), dst);
    }
    if (rng_() % 3 == 0) AddStepTo(StepVariant(), dst);
    live_.resize(live);
  }

  // The final narrowing: a low mask, a shift, a compare and select, or a
  // convert to 16 bits.
  void Narrow() {
    const std::string last = live_.back();
    const std::string dst = absl::StrCat("r", next_++);
    switch (rng_() % 5) {
      case 0:
        p_.steps.push_back(
            {.variant = *ParseVariant("and.b32"),
             .dst = dst,
             .sources = {{.is_register = true, .name = last},
                         {.value = (uint64_t{1} << (1 + rng_() % 16)) - 1}}});
        break;
      case 1:
        p_.steps.push_back({.variant = *ParseVariant("shr.u32"),
                            .dst = dst,
                            .sources = {{.is_register = true, .name = last},
                                        {.value = 16 + rng_() % 16}}});
        break;
      case 2: {
        const std::string p = absl::StrCat("p", next_++);
        p_.steps.push_back({.variant = *ParseVariant("setp.lt.s32"),
                            .dst = p,
                            .sources = {{.is_register = true, .name = last},
                                        {.value = SpecialOrRandom(rng_)}}});
        p_.steps.push_back({.variant = *ParseVariant("selp.b32"),
                            .dst = dst,
                            .sources = {{.value = 1},
                                        {.value = 0},
                                        {.is_register = true, .name = p}}});
        break;
      }
      case 3: {
        // A narrowing convert to 16 bits, plain or saturating.
        const char* spelling = kConverts[rng_() % kConverts.size()];
        if (Suppressed(spelling)) return;
        if (Discouraged(spelling) && rng_() % kDiscouragedOdds != 0) return;
        p_.steps.push_back({.variant = *ParseVariant(spelling),
                            .dst = dst,
                            .sources = {{.is_register = true, .name = last}}});
        break;
      }
      default:
        return;  // none
    }
    live_.push_back(dst);
  }

  std::mt19937_64& rng_;
  const ProgramShape& shape_;
  const bool may_suppress_;  // false where every step is suppressed
  Program p_;
  std::vector<std::string> live_;
  std::vector<std::string> set_before_loop_;  // registers a loop may carry
  int next_ = 0;
  int labels_ = 0;
  bool open_ = false;
};

}  // namespace

bool CanDrawAStep(const ProgramShape& shape) {
  return std::any_of(kSteps.begin(), kSteps.end(), [&](const char* spelling) {
    return std::find(shape.suppressed.begin(), shape.suppressed.end(),
                     spelling) == shape.suppressed.end();
  });
}

Program RandomProgram(std::mt19937_64& rng, const ProgramShape& shape) {
  return Builder(rng, shape).Build();
}

std::vector<std::string> GeneratedSpellings() {
  std::vector<std::string> out(kSteps.begin(), kSteps.end());
  for (const char* s : kConverts) out.emplace_back(s);
  for (const char* s : kShapeSteps) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.emplace_back(s);
  }
  return out;
}

}  // namespace ptxdiff
