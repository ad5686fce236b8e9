#include "program/program_encoding.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "backends/cuda/kernel_gen.h"

namespace ptxdiff {
namespace {

// An input's or a move's type code, and back.
constexpr std::array<int, 4> kWidthOfType = {16, 32, 64, 1};
static_assert(kTidXInputType == kWidthOfType.size(),
              "a thread input's type codes follow the widths'");

std::optional<uint8_t> TypeOfWidth(int width) {
  for (uint8_t t = 0; t < kWidthOfType.size(); ++t) {
    if (kWidthOfType[t] == width) return t;
  }
  return std::nullopt;
}

// An input record's type code (read modulo kNumInputTypes), and back.
ThreadInput ThreadOfType(uint8_t type) {
  switch (type % kNumInputTypes) {
    case kTidXInputType:
      return ThreadInput::kTidX;
    case kLaneIdInputType:
      return ThreadInput::kLaneId;
    default:
      return ThreadInput::kNone;
  }
}

uint8_t TypeOfInput(const ProgramInput& in) {
  if (in.loaded) return kLoadedInputType + *TypeOfWidth(in.width);
  switch (in.thread) {
    case ThreadInput::kTidX:
      return kTidXInputType;
    case ThreadInput::kLaneId:
      return kLaneIdInputType;
    case ThreadInput::kNone:
      break;
  }
  return *TypeOfWidth(in.width);
}

// The registers set so far, in the order they were first set.
class RegisterFile {
 public:
  struct Register {
    std::string name;
    int width;
  };

  void Add(std::string name, int width) {
    index_[name] = registers_.size();
    registers_.push_back({std::move(name), width});
  }
  bool Has(const std::string& name) const { return index_.contains(name); }

  // The registers whose width `fits`, the most recently set first.
  std::vector<const Register*> Fitting(
      const std::function<bool(int)>& fits) const {
    std::vector<const Register*> out;
    for (auto it = registers_.rbegin(); it != registers_.rend(); ++it) {
      if (fits(it->width)) out.push_back(&*it);
    }
    return out;
  }

  // `name`'s pick among the registers whose width `fits`.
  absl::StatusOr<uint8_t> PickOf(const std::string& name,
                                 const std::function<bool(int)>& fits) const {
    const std::vector<const Register*> fitting = Fitting(fits);
    for (size_t k = 0; k < fitting.size(); ++k) {
      if (fitting[k]->name != name) continue;
      if (k > 127) {
        return absl::InvalidArgumentError(
            absl::StrCat("%", name, " is ", k,
                         " registers back; the byte form reaches 127"));
      }
      return static_cast<uint8_t>(k);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("%", name, " does not fit where it is used"));
  }

 private:
  std::vector<Register> registers_;
  absl::flat_hash_map<std::string, size_t> index_;
};

std::function<bool(int)> WidthIs(int width) {
  return [width](int w) { return w == width; };
}

// The trip count a loop may have inside loops of `outer` trips, so that
// the innermost runs at most kMaxLoopTrip times in all.
int TripCap(const std::vector<int>& outer) {
  int64_t runs = 1;
  for (int t : outer) runs *= std::max(t, 1);
  return static_cast<int>(std::max<int64_t>(0, kMaxLoopTrip / runs));
}

// A variant that can be a step: the one with this stable id, else the id
// wrapped around the table (so that any bytes name one); nullopt if it is
// not PTX.
std::optional<Variant> StepVariant(uint64_t id) {
  std::optional<Variant> v = VariantByStableId(id);
  if (!v) {
    const absl::Span<const Variant> all = AllVariants();
    v = all[id % all.size()];
  }
  if (InfoOf(v->family).isa != TargetIsa::kPtx) return std::nullopt;
  return v;
}

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

// Reads little-endian fields; past the end, zeros.
class ByteReader {
 public:
  explicit ByteReader(absl::string_view bytes) : bytes_(bytes) {}
  uint64_t Read(int bytes) {
    uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) {
      const uint64_t byte =
          at_ < bytes_.size() ? static_cast<uint8_t>(bytes_[at_]) : 0;
      v |= byte << (8 * k);
      ++at_;
    }
    return v;
  }
  uint8_t U8() { return static_cast<uint8_t>(Read(1)); }

 private:
  absl::string_view bytes_;
  size_t at_ = 0;
};

void Append(std::string& out, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k)
    out.push_back(static_cast<char>(v >> (8 * k)));
}

enum OpBits : uint8_t {
  kKindBits = 7,
  kGuarded = 1 << 3,
  kGuardNegated = 1 << 4,
  kDstSetBefore = 1 << 5,
  kJumpOrLabel = 1 << 6,
};
constexpr int kNumKinds = ProgramStep::kIfEnd + 1;
constexpr int kNumJumpKinds = ProgramStep::kExit - ProgramStep::kLabel + 1;

// The kind an op byte says.
ProgramStep::Kind KindOf(uint8_t op) {
  if ((op & kJumpOrLabel) != 0) {
    return static_cast<ProgramStep::Kind>(ProgramStep::kLabel +
                                          (op & kKindBits) % kNumJumpKinds);
  }
  return static_cast<ProgramStep::Kind>((op & kKindBits) % kNumKinds);
}

// The op byte's kind bits for `kind`.
uint8_t KindBits(ProgramStep::Kind kind) {
  if (kind >= ProgramStep::kLabel) {
    return kJumpOrLabel | static_cast<uint8_t>(kind - ProgramStep::kLabel);
  }
  return static_cast<uint8_t>(kind);
}

// An if's condition is a pick like a guard's, always there.
bool HasGuardPick(const StepRecord& r) {
  return r.guarded || r.kind == ProgramStep::kIfBegin;
}
constexpr uint8_t kRegisterOperand = 0x80;

OperandRecord ReadOperand(ByteReader& in) {
  const uint8_t tag = in.U8();
  OperandRecord o{.is_register = (tag & kRegisterOperand) != 0,
                  .pick = static_cast<uint8_t>(tag & 0x7f)};
  if (!o.is_register) o.value = in.Read(8);
  return o;
}

void WriteOperand(std::string& out, const OperandRecord& o) {
  Append(out, (o.is_register ? kRegisterOperand : 0) | (o.pick & 0x7f), 1);
  if (!o.is_register) Append(out, o.value, 8);
}

StepRecord ReadStep(ByteReader& in) {
  const uint8_t op = in.U8();
  StepRecord r{
      .kind = KindOf(op),
      .guarded = (op & kGuarded) != 0,
      .guard_negated = (op & kGuardNegated) != 0,
      .dst_set_before = (op & kDstSetBefore) != 0};
  if (HasGuardPick(r)) r.guard_pick = in.U8();
  if (r.dst_set_before) r.dst_pick = in.U8();
  switch (r.kind) {
    case ProgramStep::kInstruction: {
      r.variant_id = in.Read(8);
      const int operands = in.U8() % (kMaxSources + 1);
      for (int k = 0; k < operands; ++k) r.operands.push_back(ReadOperand(in));
      break;
    }
    case ProgramStep::kMove:
      r.width_type = in.U8() % kWidthOfType.size();
      r.operands.push_back(ReadOperand(in));
      break;
    case ProgramStep::kLoopBegin:
      r.trip = static_cast<uint16_t>(in.Read(2) % (kMaxLoopTrip + 1));
      break;
    case ProgramStep::kBranch:
      r.target_pick = in.U8();
      break;
    case ProgramStep::kLoopEnd:
    case ProgramStep::kIfBegin:
    case ProgramStep::kElse:
    case ProgramStep::kIfEnd:
    case ProgramStep::kLabel:
    case ProgramStep::kExit:
      break;
  }
  return r;
}

void WriteStep(std::string& out, const StepRecord& r) {
  Append(out,
         KindBits(r.kind) | (r.guarded ? kGuarded : 0) |
             (r.guard_negated ? kGuardNegated : 0) |
             (r.dst_set_before ? kDstSetBefore : 0),
         1);
  if (HasGuardPick(r)) Append(out, r.guard_pick, 1);
  if (r.dst_set_before) Append(out, r.dst_pick, 1);
  switch (r.kind) {
    case ProgramStep::kInstruction: {
      Append(out, r.variant_id, 8);
      const size_t operands = std::min<size_t>(r.operands.size(), kMaxSources);
      Append(out, operands, 1);
      for (size_t k = 0; k < operands; ++k) WriteOperand(out, r.operands[k]);
      break;
    }
    case ProgramStep::kMove:
      Append(out, r.width_type % kWidthOfType.size(), 1);
      WriteOperand(out, r.operands.empty() ? OperandRecord{} : r.operands[0]);
      break;
    case ProgramStep::kLoopBegin:
      Append(out, r.trip % (kMaxLoopTrip + 1), 2);
      break;
    case ProgramStep::kBranch:
      Append(out, r.target_pick, 1);
      break;
    case ProgramStep::kLoopEnd:
    case ProgramStep::kIfBegin:
    case ProgramStep::kElse:
    case ProgramStep::kIfEnd:
    case ProgramStep::kLabel:
    case ProgramStep::kExit:
      break;
  }
}

}  // namespace

bool LooksLikeProgramInput(absl::string_view bytes) {
  return bytes.size() >= 8 && ByteReader(bytes).Read(8) == kProgramInputTag;
}

absl::StatusOr<ProgramRecords> ReadProgramRecords(absl::string_view bytes) {
  if (!LooksLikeProgramInput(bytes)) {
    return absl::InvalidArgumentError(
        "not a program input: it does not open with PXDPROG1");
  }
  ByteReader in(bytes.substr(8));
  ProgramRecords r;
  const int inputs = in.U8() % (kMaxProgramInputs + 1);
  for (int k = 0; k < inputs; ++k) {
    const uint8_t type = in.U8() % kNumInputTypes;
    r.inputs.push_back({.type = type, .witness = in.Read(8)});
  }
  const int steps = in.U8() % (kMaxProgramInputRecords + 1);
  for (int k = 0; k < steps; ++k) r.steps.push_back(ReadStep(in));
  const int outputs = in.U8() % kMaxProgramOutputs + 1;
  for (int k = 0; k < outputs; ++k) r.outputs.push_back(in.U8());
  return r;
}

std::string WriteProgramRecords(const ProgramRecords& r) {
  std::string out;
  Append(out, kProgramInputTag, 8);
  const size_t inputs = std::min<size_t>(r.inputs.size(), kMaxProgramInputs);
  Append(out, inputs, 1);
  for (size_t k = 0; k < inputs; ++k) {
    Append(out, r.inputs[k].type % kNumInputTypes, 1);
    Append(out, r.inputs[k].witness, 8);
  }
  const size_t steps =
      std::min<size_t>(r.steps.size(), kMaxProgramInputRecords);
  Append(out, steps, 1);
  for (size_t k = 0; k < steps; ++k) WriteStep(out, r.steps[k]);
  const size_t outputs =
      std::clamp<size_t>(r.outputs.size(), 1, kMaxProgramOutputs);
  Append(out, outputs - 1, 1);
  for (size_t k = 0; k < outputs; ++k) {
    Append(out, k < r.outputs.size() ? r.outputs[k] : 0, 1);
  }
  return out;
}

absl::StatusOr<Program> DecodeProgramRecords(const ProgramRecords& records) {
  return Decoder().Decode(records);
}

absl::StatusOr<Program> DecodeProgramInput(absl::string_view bytes) {
  absl::StatusOr<ProgramRecords> records = ReadProgramRecords(bytes);
  if (!records.ok()) return records.status();
  return DecodeProgramRecords(*records);
}

absl::StatusOr<ProgramRecords> EncodeProgram(const Program& program) {
  return Encoder().Encode(program);
}

absl::StatusOr<std::string> ProgramInputBytes(const Program& program) {
  absl::StatusOr<ProgramRecords> records = EncodeProgram(program);
  if (!records.ok()) return records.status();
  return WriteProgramRecords(*records);
}

bool LooksLikeProgramCase(absl::string_view contents) {
  return LooksLikeProgram(contents) || LooksLikeProgramInput(contents);
}

absl::StatusOr<Program> ParseProgramCase(absl::string_view contents) {
  if (LooksLikeProgramInput(contents)) return DecodeProgramInput(contents);
  return ParseProgram(contents);
}

}  // namespace ptxdiff
