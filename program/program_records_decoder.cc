// The byte form's records decoded into a program (program_encoding.h):
// every record list gives one the parser accepts.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "backends/cuda/kernel_gen.h"
#include "program/program.h"
#include "program/program_encoding.h"
#include "program/program_records_internal.h"

namespace ptxdiff {
namespace {

using program_records_internal::kWidthOfType;
using program_records_internal::ThreadOfType;
using program_records_internal::RegisterFile;
using program_records_internal::WidthIs;
using program_records_internal::TripCap;
using program_records_internal::StepVariant;

class Decoder {
 public:
  absl::StatusOr<Program> Decode(const ProgramRecords& records) {
    for (size_t k = 0; k < records.inputs.size() && k < kMaxProgramInputs;
         ++k) {
      Input(records.inputs[k], k);
    }
    const size_t steps =
        std::min<size_t>(records.steps.size(), kMaxProgramInputRecords);
    for (size_t k = 0; k < steps; ++k) {
      if (Room() == 0) break;
      Step(records.steps[k]);
    }
    while (!open_.empty()) CloseBlock();
    ResolveBranches();
    Outputs(records.outputs);
    if (program_.outputs.empty()) {
      return absl::InvalidArgumentError(
          "the program input sets no register to store");
    }
    if (absl::StatusOr<Program> parsed = ParseProgram(FormatProgram(program_));
        !parsed.ok()) {
      return absl::InternalError(absl::StrCat(
          "a decoded program does not parse (", parsed.status().message(),
          "):\n", FormatProgram(program_)));
    }
    return std::move(program_);
  }

 private:
  // The steps and brackets that may still be added, with a `}` kept for
  // each open loop: the byte form holds a program's steps as records.
  size_t Room() const {
    size_t open = 0;
    for (const OpenBlock& b : open_) open += b.kept;
    return kMaxProgramInputRecords - program_.steps.size() - open;
  }

  void Input(const InputRecord& r, size_t k) {
    ProgramInput in{.name = std::string(1, static_cast<char>('a' + k))};
    in.thread = ThreadOfType(r.type);
    const uint8_t type = r.type % kNumInputTypes;
    if (in.thread != ThreadInput::kNone) {
      in.witness = r.witness % kProgramLanes;  // its lane; 32 bits wide
    } else {
      in.loaded = type >= kLoadedInputType;
      in.width = kWidthOfType[in.loaded ? type - kLoadedInputType : type];
      in.witness = r.witness & WidthMask(in.width);
    }
    registers_.Add(in.name, in.width);
    program_.inputs.push_back(std::move(in));
  }

  void Step(const StepRecord& r) {
    switch (r.kind) {
      case ProgramStep::kInstruction:
        return Instruction(r);
      case ProgramStep::kMove:
        return Move(r);
      case ProgramStep::kLoopBegin:
        return LoopBegin(r);
      case ProgramStep::kIfBegin:
        return IfBegin(r);
      case ProgramStep::kElse:
        return Else();
      case ProgramStep::kLoopEnd:
      case ProgramStep::kIfEnd:
        if (!open_.empty()) CloseBlock();
        return;
      case ProgramStep::kLabel:
        return Label();
      case ProgramStep::kBranch:
      case ProgramStep::kExit:
        return Jump(r);
    }
  }

  // `L<k>:` in the current block part.
  void Label() {
    labels_.push_back({.at = program_.steps.size(), .part = parts_.back()});
    program_.steps.push_back({.kind = ProgramStep::kLabel,
                              .label = absl::StrCat("L", labels_.size() - 1)});
  }

  // A branch (its label found when the program is whole) or an exit, under
  // the pick among the predicates set before if guarded and there is one.
  void Jump(const StepRecord& r) {
    ProgramStep step{.kind = r.kind};
    const auto predicates = registers_.Fitting(WidthIs(1));
    if (r.guarded && !predicates.empty()) {
      step.guard = predicates[r.guard_pick % predicates.size()]->name;
      step.guard_negated = r.guard_negated;
    }
    if (r.kind == ProgramStep::kBranch) {
      branches_.push_back({.at = program_.steps.size(),
                           .part = parts_.back(),
                           .pick = r.target_pick});
    }
    program_.steps.push_back(std::move(step));
  }

  // Each branch to its pick among the labels after it in its block part;
  // one with none there is left out.
  void ResolveBranches() {
    std::vector<size_t> left_out;
    for (const PendingBranch& b : branches_) {
      std::vector<size_t> after;
      for (const PlacedLabel& l : labels_) {
        if (l.part == b.part && l.at > b.at) after.push_back(l.at);
      }
      if (after.empty()) {
        left_out.push_back(b.at);
        continue;
      }
      program_.steps[b.at].label =
          program_.steps[after[b.pick % after.size()]].label;
    }
    for (auto it = left_out.rbegin(); it != left_out.rend(); ++it) {
      program_.steps.erase(program_.steps.begin() + static_cast<long>(*it));
    }
  }

  void Instruction(const StepRecord& r) {
    const std::optional<Variant> v = StepVariant(r.variant_id);
    if (!v) return;
    ProgramStep step{.kind = ProgramStep::kInstruction, .variant = *v};
    step.sources.resize(NumSources(*v));
    size_t next = 0;
    for (int i = 0; i < NumSources(*v); ++i) {
      if (IsCarryInSource(*v, i)) continue;
      const OperandRecord o =
          next < r.operands.size() ? r.operands[next] : OperandRecord{};
      ++next;
      if (!Source(*v, i, o, step.sources[i])) return;
    }
    Finish(r, ResultWidth(*v), std::move(step));
  }

  // Source `i` of `v` from `o`; false if it cannot be made whole.
  bool Source(const Variant& v, int i, const OperandRecord& o,
              ProgramOperand& out) {
    const uint64_t bits = o.value & SourceMask(v, i);
    if (IsSelectorSource(v, i)) {
      out.value = bits;
      return true;
    }
    const std::vector<const RegisterFile::Register*> fitting =
        registers_.Fitting(
            [&](int width) { return RegisterFitsSource(v, i, width); });
    const bool immediate_fits =
        MayBeImmediate(v, i) &&
        (UsesImmediate(v, i, bits) || UsesImmediate(v, i, bits & 0xff));
    if (MustBeImmediate(v, i) || (immediate_fits && !o.is_register) ||
        (immediate_fits && fitting.empty())) {
      if (!immediate_fits) return false;
      out.value = UsesImmediate(v, i, bits) ? bits : bits & 0xff;
      return true;
    }
    if (fitting.empty()) return false;
    out = {.is_register = true, .name = fitting[o.pick % fitting.size()]->name};
    return true;
  }

  void Move(const StepRecord& r) {
    const int width = kWidthOfType[r.width_type % kWidthOfType.size()];
    ProgramStep step{
        .kind = ProgramStep::kMove, .sources = {{}}, .width = width};
    const OperandRecord o =
        r.operands.empty() ? OperandRecord{} : r.operands[0];
    const auto fitting = registers_.Fitting(WidthIs(width));
    if (o.is_register && !fitting.empty()) {
      step.sources[0] = {.is_register = true,
                         .name = fitting[o.pick % fitting.size()]->name};
    } else {
      step.sources[0].value = o.value & WidthMask(width);
    }
    Finish(r, width, std::move(step));
  }

  // Sets `step`'s destination (a register of `width` set before, if the
  // record asks for one and there is one, else a new one) and guard (only
  // on a destination set before, which keeps its value where the step does
  // not run), and adds it.
  void Finish(const StepRecord& r, int width, ProgramStep step) {
    const auto same_width = registers_.Fitting(WidthIs(width));
    const bool set_before = r.dst_set_before && !same_width.empty();
    if (set_before) {
      step.dst = same_width[r.dst_pick % same_width.size()]->name;
      const auto predicates = registers_.Fitting(WidthIs(1));
      if (r.guarded && !predicates.empty()) {
        step.guard = predicates[r.guard_pick % predicates.size()]->name;
        step.guard_negated = r.guard_negated;
      }
    } else {
      step.dst = absl::StrCat(width == 1 ? "p" : "r", set_by_steps_++);
      registers_.Add(step.dst, width);
    }
    program_.steps.push_back(std::move(step));
  }

  // The trips of the loops open around the next step.
  std::vector<int> OuterTrips() const {
    std::vector<int> trips;
    for (const OpenBlock& b : open_) {
      if (b.kept && b.is_loop) trips.push_back(b.trip);
    }
    return trips;
  }

  void LoopBegin(const StepRecord& r) {
    const std::vector<int> outer = OuterTrips();
    if (outer.size() >= kMaxProgramInputLoopDepth ||
        open_.size() >= kMaxProgramInputBlockDepth || Room() < 2) {
      open_.push_back({.is_loop = true, .kept = false});
      return;
    }
    const int trip = std::min<int>(r.trip % (kMaxLoopTrip + 1), TripCap(outer));
    open_.push_back({.is_loop = true, .kept = true, .trip = trip});
    parts_.push_back(next_part_++);
    program_.steps.push_back({.kind = ProgramStep::kLoopBegin, .trip = trip});
  }

  // `if %p {` on the pick among the predicates set before; left out (with
  // its else and `}`) where there is none.
  void IfBegin(const StepRecord& r) {
    const auto predicates = registers_.Fitting(WidthIs(1));
    if (predicates.empty() || open_.size() >= kMaxProgramInputBlockDepth ||
        Room() < 2) {
      open_.push_back({.is_loop = false, .kept = false});
      return;
    }
    open_.push_back({.is_loop = false, .kept = true});
    parts_.push_back(next_part_++);
    program_.steps.push_back(
        {.kind = ProgramStep::kIfBegin,
         .guard = predicates[r.guard_pick % predicates.size()]->name,
         .guard_negated = r.guard_negated});
  }

  // `} else {` of the innermost block, if it is an if without one.
  void Else() {
    if (open_.empty() || open_.back().is_loop || open_.back().has_else) return;
    open_.back().has_else = true;
    if (open_.back().kept && Room() >= 1) {
      program_.steps.push_back({.kind = ProgramStep::kElse});
      parts_.back() = next_part_++;
    }
  }

  // The `}` of the innermost block, whichever kind the record says.
  void CloseBlock() {
    const OpenBlock block = open_.back();
    open_.pop_back();
    if (!block.kept) return;
    parts_.pop_back();
    program_.steps.push_back(
        {.kind = block.is_loop ? ProgramStep::kLoopEnd : ProgramStep::kIfEnd});
  }

  void Outputs(const std::vector<uint8_t>& picks) {
    const auto all = registers_.Fitting([](int) { return true; });
    if (all.empty()) return;
    const std::vector<uint8_t> some =
        picks.empty() ? std::vector<uint8_t>{0} : picks;
    for (size_t k = 0; k < some.size() && k < kMaxProgramOutputs; ++k) {
      const std::string& name = all[some[k] % all.size()]->name;
      if (std::find(program_.outputs.begin(), program_.outputs.end(), name) ==
          program_.outputs.end()) {
        program_.outputs.push_back(name);
      }
    }
  }

  Program program_;
  RegisterFile registers_;
  int set_by_steps_ = 0;
  struct OpenBlock {
    bool is_loop = true;
    bool kept = true;  // false: left out, and so are its else and `}`
    int trip = 0;      // a loop's
    bool has_else = false;
  };
  std::vector<OpenBlock> open_;
  // The block parts open (a loop's body, an if's then or else part), the
  // top level first: a branch's scope.
  std::vector<int> parts_ = {0};
  int next_part_ = 1;
  struct PlacedLabel {
    size_t at = 0;  // its step
    int part = 0;
  };
  std::vector<PlacedLabel> labels_;
  struct PendingBranch {
    size_t at = 0;  // its step
    int part = 0;
    uint8_t pick = 0;
  };
  std::vector<PendingBranch> branches_;
};

}  // namespace

absl::StatusOr<Program> DecodeProgramRecords(const ProgramRecords& records) {
  return Decoder().Decode(records);
}

}  // namespace ptxdiff
