// A program encoded as the byte form's records (program_encoding.h): each
// register named by where it was set.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "program/program.h"
#include "program/program_encoding.h"
#include "program/program_records_internal.h"

namespace ptxdiff {
namespace {

using program_records_internal::TypeOfWidth;
using program_records_internal::TypeOfInput;
using program_records_internal::RegisterFile;
using program_records_internal::WidthIs;
using program_records_internal::TripCap;

// The block part of each step (a loop's body, an if's then or else part;
// 0 the top level), numbered as the decoder numbers them.
std::vector<int> PartsOf(const std::vector<ProgramStep>& steps) {
  std::vector<int> out;
  std::vector<int> open = {0};
  int next = 1;
  for (const ProgramStep& s : steps) {
    switch (s.kind) {
      case ProgramStep::kLoopEnd:
      case ProgramStep::kIfEnd:
        open.pop_back();
        break;
      case ProgramStep::kElse:
        open.back() = next++;
        break;
      default:
        break;
    }
    out.push_back(open.back());
    if (s.kind == ProgramStep::kLoopBegin || s.kind == ProgramStep::kIfBegin) {
      open.push_back(next++);
    }
  }
  return out;
}

class Encoder {
 public:
  absl::StatusOr<ProgramRecords> Encode(const Program& p) {
    if (p.inputs.size() > kMaxProgramInputs) {
      return absl::InvalidArgumentError(
          absl::StrCat("the byte form takes at most ", kMaxProgramInputs,
                       " inputs; the program has ", p.inputs.size()));
    }
    if (p.steps.size() > kMaxProgramInputRecords) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the byte form takes at most ", kMaxProgramInputRecords,
          " steps and loop brackets; the program has ", p.steps.size()));
    }
    for (const ProgramInput& in : p.inputs) {
      records_.inputs.push_back(
          {.type = TypeOfInput(in), .witness = in.witness});
      registers_.Add(in.name, in.width);
    }
    steps_ = &p.steps;
    parts_ = PartsOf(p.steps);
    for (at_ = 0; at_ < p.steps.size(); ++at_) {
      absl::StatusOr<StepRecord> r = Step(p.steps[at_]);
      if (!r.ok()) return r.status();
      records_.steps.push_back(*std::move(r));
    }
    for (const std::string& name : p.outputs) {
      absl::StatusOr<uint8_t> pick =
          registers_.PickOf(name, [](int) { return true; });
      if (!pick.ok()) return pick.status();
      records_.outputs.push_back(*pick);
    }
    return std::move(records_);
  }

 private:
  absl::StatusOr<StepRecord> Step(const ProgramStep& s) {
    StepRecord r{.kind = s.kind};
    switch (s.kind) {
      case ProgramStep::kLoopBegin:
        if (trips_.size() >= kMaxProgramInputLoopDepth ||
            open_.size() >= kMaxProgramInputBlockDepth ||
            s.trip > TripCap(trips_)) {
          return absl::InvalidArgumentError(
              "a loop nested deeper or running longer than the byte form "
              "takes");
        }
        open_.push_back(true);
        trips_.push_back(s.trip);
        r.trip = static_cast<uint16_t>(s.trip);
        return r;
      case ProgramStep::kIfBegin: {
        if (open_.size() >= kMaxProgramInputBlockDepth) {
          return absl::InvalidArgumentError(
              "blocks nested deeper than the byte form takes");
        }
        open_.push_back(false);
        r.guard_negated = s.guard_negated;
        absl::StatusOr<uint8_t> pick = registers_.PickOf(s.guard, WidthIs(1));
        if (!pick.ok()) return pick.status();
        r.guard_pick = *pick;
        return r;
      }
      case ProgramStep::kElse:
        return r;
      case ProgramStep::kLabel:
        return r;
      case ProgramStep::kBranch:
        r.target_pick = TargetPick(s);
        [[fallthrough]];
      case ProgramStep::kExit:
        if (absl::Status g = Guard(s, r); !g.ok()) return g;
        return r;
      case ProgramStep::kLoopEnd:
      case ProgramStep::kIfEnd:
        if (!open_.empty()) {
          if (open_.back()) trips_.pop_back();
          open_.pop_back();
        }
        return r;
      case ProgramStep::kMove:
        r.width_type = *TypeOfWidth(s.width);
        r.operands.push_back(Operand(s.sources[0]));
        if (s.sources[0].is_register) {
          absl::StatusOr<uint8_t> pick =
              registers_.PickOf(s.sources[0].name, WidthIs(s.width));
          if (!pick.ok()) return pick.status();
          r.operands[0].pick = *pick;
        }
        break;
      case ProgramStep::kInstruction:
        r.variant_id = StableId(s.variant);
        for (int i = 0; i < NumSources(s.variant); ++i) {
          if (IsCarryInSource(s.variant, i)) continue;
          absl::StatusOr<OperandRecord> o = Source(s.variant, i, s.sources[i]);
          if (!o.ok()) return o.status();
          r.operands.push_back(*o);
        }
        break;
    }
    if (absl::Status d = Destination(s, r); !d.ok()) return d;
    return r;
  }

  // A branch's or an exit's guard.
  absl::Status Guard(const ProgramStep& s, StepRecord& r) {
    if (s.guard.empty()) return absl::OkStatus();
    r.guarded = true;
    r.guard_negated = s.guard_negated;
    absl::StatusOr<uint8_t> pick = registers_.PickOf(s.guard, WidthIs(1));
    if (!pick.ok()) return pick.status();
    r.guard_pick = *pick;
    return absl::OkStatus();
  }

  // The branch at step_'s label among the labels after it in its part.
  uint8_t TargetPick(const ProgramStep& s) const {
    int pick = 0;
    for (size_t j = at_ + 1; j < steps_->size(); ++j) {
      const ProgramStep& later = (*steps_)[j];
      if (later.kind != ProgramStep::kLabel || parts_[j] != parts_[at_])
        continue;
      if (later.label == s.label) break;
      ++pick;
    }
    return static_cast<uint8_t>(pick);
  }

  static OperandRecord Operand(const ProgramOperand& o) {
    return {.is_register = o.is_register, .value = o.value};
  }

  absl::StatusOr<OperandRecord> Source(const Variant& v, int i,
                                       const ProgramOperand& o) {
    OperandRecord r = Operand(o);
    if (!o.is_register) return r;
    if (MustBeImmediate(v, i) || IsSelectorSource(v, i)) {
      return absl::InvalidArgumentError(absl::StrCat(
          Spell(v), " source ", SourceName(v, i), " must be an immediate"));
    }
    absl::StatusOr<uint8_t> pick = registers_.PickOf(
        o.name, [&](int width) { return RegisterFitsSource(v, i, width); });
    if (!pick.ok()) return pick.status();
    r.pick = *pick;
    return r;
  }

  absl::Status Destination(const ProgramStep& s, StepRecord& r) {
    const int width = DestinationWidth(s);
    if (!registers_.Has(s.dst)) {
      registers_.Add(s.dst, width);
      return absl::OkStatus();
    }
    r.dst_set_before = true;
    absl::StatusOr<uint8_t> pick = registers_.PickOf(s.dst, WidthIs(width));
    if (!pick.ok()) return pick.status();
    r.dst_pick = *pick;
    if (s.guard.empty()) return absl::OkStatus();
    r.guarded = true;
    r.guard_negated = s.guard_negated;
    absl::StatusOr<uint8_t> guard = registers_.PickOf(s.guard, WidthIs(1));
    if (!guard.ok()) return guard.status();
    r.guard_pick = *guard;
    return absl::OkStatus();
  }

  ProgramRecords records_;
  RegisterFile registers_;
  std::vector<bool> open_;  // the blocks open: true for a loop
  std::vector<int> trips_;  // the loops'
  const std::vector<ProgramStep>* steps_ = nullptr;
  std::vector<int> parts_;  // PartsOf the steps
  size_t at_ = 0;           // the step being encoded
};

}  // namespace

absl::StatusOr<ProgramRecords> EncodeProgram(const Program& program) {
  return Encoder().Encode(program);
}

}  // namespace ptxdiff
