#include "fuzzers/program_mutator.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"

namespace ptxdiff {
namespace {

size_t Below(std::mt19937_64& rng, size_t n) { return n == 0 ? 0 : rng() % n; }

bool OneIn(std::mt19937_64& rng, int n) { return rng() % n == 0; }

// A value to try: an edge value of a width (the decoder masks it to the
// source's), a small one, or random bits.
uint64_t InterestingValue(std::mt19937_64& rng) {
  static constexpr int kWidths[] = {8, 16, 32, 64};
  switch (rng() % 4) {
    case 0:
      return rng() % 66;  // amounts around 0, 31, 32, 63, 64
    case 1:
      return rng();
    default: {
      const std::vector<uint64_t>& edges = EdgeValues(kWidths[rng() % 4]);
      return edges[Below(rng, edges.size())];
    }
  }
}

uint64_t Tweak(uint64_t v, std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0:
      return v ^ (uint64_t{1} << (rng() % 64));
    case 1:
      return v + 1;
    default:
      return v - 1;
  }
}

// Every operand record of every step, and every witness: what a value
// mutation may change.
std::vector<uint64_t*> Values(ProgramRecords& r) {
  std::vector<uint64_t*> out;
  for (InputRecord& in : r.inputs) out.push_back(&in.witness);
  for (StepRecord& s : r.steps) {
    for (OperandRecord& o : s.operands) {
      if (!o.is_register) out.push_back(&o.value);
    }
  }
  return out;
}

std::vector<OperandRecord*> OperandRecords(ProgramRecords& r) {
  std::vector<OperandRecord*> out;
  for (StepRecord& s : r.steps) {
    for (OperandRecord& o : s.operands) out.push_back(&o);
  }
  return out;
}

// The indices of the steps of `kind`.
std::vector<size_t> StepsOf(const ProgramRecords& r,
                            std::initializer_list<ProgramStep::Kind> kinds) {
  std::vector<size_t> out;
  for (size_t k = 0; k < r.steps.size(); ++k) {
    if (std::find(kinds.begin(), kinds.end(), r.steps[k].kind) != kinds.end())
      out.push_back(k);
  }
  return out;
}

// A PTX variant: one of `family` (mostly), else any.
Variant DrawVariant(std::mt19937_64& rng, const Variant* sibling_of) {
  if (sibling_of != nullptr && !OneIn(rng, 4)) {
    const absl::Span<const Variant> family = VariantsOf(sibling_of->family);
    return family[Below(rng, family.size())];
  }
  const absl::Span<const Variant> all = AllVariants();
  for (;;) {
    const Variant& v = all[Below(rng, all.size())];
    if (InfoOf(v.family).isa == TargetIsa::kPtx) return v;
  }
}

bool Lists(const std::vector<std::string>& spellings, const std::string& s) {
  return std::find(spellings.begin(), spellings.end(), s) != spellings.end();
}

// Draws a replacement variant as the generator draws a step's
// (program_generator.h): never a suppressed one, a discouraged one (a
// cause that keeps coming back) only one time in kDiscouragedOdds. The
// draws are bounded, so that a family all of whose variants are listed
// still gets one.
Variant AnotherVariant(std::mt19937_64& rng, const Variant* sibling_of,
                       const ProgramShape& shape) {
  constexpr int kDraws = 64;
  Variant v = DrawVariant(rng, sibling_of);
  for (int draw = 1; draw < kDraws; ++draw) {
    const std::string spelling = Spell(v);
    const bool redraw = Lists(shape.suppressed, spelling) ||
                        (Lists(shape.discouraged, spelling) &&
                         !OneIn(rng, kDiscouragedOdds));
    if (!redraw) break;
    v = DrawVariant(rng, sibling_of);
  }
  return v;
}

StepRecord FreshInstruction(std::mt19937_64& rng, const ProgramShape& shape) {
  StepRecord s{.variant_id = StableId(AnotherVariant(rng, nullptr, shape))};
  for (int k = 0; k < kMaxSources; ++k) {
    s.operands.push_back({.is_register = !OneIn(rng, 3),
                          .pick = static_cast<uint8_t>(rng() % 3),
                          .value = InterestingValue(rng)});
  }
  return s;
}

void ChangeValue(ProgramRecords& r, std::mt19937_64& rng,
                 const ProgramShape&) {
  const std::vector<uint64_t*> values = Values(r);
  if (values.empty()) return;
  uint64_t& v = *values[Below(rng, values.size())];
  v = OneIn(rng, 3) ? Tweak(v, rng) : InterestingValue(rng);
}

void ChangeOperand(ProgramRecords& r, std::mt19937_64& rng,
                   const ProgramShape&) {
  const std::vector<OperandRecord*> operands = OperandRecords(r);
  if (operands.empty()) return;
  OperandRecord& o = *operands[Below(rng, operands.size())];
  if (OneIn(rng, 2)) {
    o.is_register = !o.is_register;
    if (!o.is_register) o.value = InterestingValue(rng);
  }
  o.pick = static_cast<uint8_t>(rng() % 4);
}

void ChangeVariant(ProgramRecords& r, std::mt19937_64& rng,
                   const ProgramShape& shape) {
  const std::vector<size_t> steps = StepsOf(r, {ProgramStep::kInstruction});
  if (steps.empty()) return;
  StepRecord& s = r.steps[steps[Below(rng, steps.size())]];
  const std::optional<Variant> v = VariantByStableId(s.variant_id);
  s.variant_id = StableId(AnotherVariant(rng, v ? &*v : nullptr, shape));
  while (s.operands.size() < kMaxSources) {
    s.operands.push_back({.pick = static_cast<uint8_t>(rng() % 3)});
  }
}

void AddStep(ProgramRecords& r, std::mt19937_64& rng,
             const ProgramShape& shape) {
  if (r.steps.size() + 1 >= kMaxProgramInputRecords) return;
  const std::vector<size_t> steps =
      StepsOf(r, {ProgramStep::kInstruction, ProgramStep::kMove});
  StepRecord s = !steps.empty() && OneIn(rng, 2)
                     ? r.steps[steps[Below(rng, steps.size())]]
                     : FreshInstruction(rng, shape);
  r.steps.insert(r.steps.begin() + Below(rng, r.steps.size() + 1), s);
}

void DropStep(ProgramRecords& r, std::mt19937_64& rng,
              const ProgramShape&) {
  if (r.steps.empty()) return;
  r.steps.erase(r.steps.begin() + Below(rng, r.steps.size()));
}

void SwapSteps(ProgramRecords& r, std::mt19937_64& rng,
               const ProgramShape&) {
  if (r.steps.size() < 2) return;
  const size_t k = Below(rng, r.steps.size() - 1);
  std::swap(r.steps[k], r.steps[k + 1]);
}

void ChangeLoops(ProgramRecords& r, std::mt19937_64& rng,
                 const ProgramShape&) {
  static constexpr uint16_t kTrips[] = {0, 1, 2, 3, 4, 31, 32, 33, 1024};
  const std::vector<size_t> loops = StepsOf(r, {ProgramStep::kLoopBegin});
  if (!loops.empty() && OneIn(rng, 2)) {
    StepRecord& loop = r.steps[loops[Below(rng, loops.size())]];
    loop.trip = OneIn(rng, 4) ? rng() % (kMaxLoopTrip + 1)
                              : kTrips[Below(rng, std::size(kTrips))];
    return;
  }
  if (r.steps.size() + 2 > kMaxProgramInputRecords) return;
  // Around steps [begin, end): an empty loop where they are the same.
  size_t begin = Below(rng, r.steps.size() + 1);
  size_t end = begin + Below(rng, r.steps.size() - begin + 1);
  r.steps.insert(r.steps.begin() + end, {.kind = ProgramStep::kLoopEnd});
  r.steps.insert(r.steps.begin() + begin,
                 {.kind = ProgramStep::kLoopBegin,
                  .trip = kTrips[Below(rng, std::size(kTrips))]});
}

// An if around steps [begin, end), an else part for some of them.
void WrapInIf(ProgramRecords& r, std::mt19937_64& rng,
              const ProgramShape&) {
  if (r.steps.size() + 3 > kMaxProgramInputRecords) return;
  const size_t begin = Below(rng, r.steps.size() + 1);
  const size_t end = begin + Below(rng, r.steps.size() - begin + 1);
  const size_t split = begin + Below(rng, end - begin + 1);
  r.steps.insert(r.steps.begin() + end, {.kind = ProgramStep::kIfEnd});
  if (OneIn(rng, 2)) {
    r.steps.insert(r.steps.begin() + split, {.kind = ProgramStep::kElse});
  }
  r.steps.insert(r.steps.begin() + begin,
                 {.kind = ProgramStep::kIfBegin,
                  .guard_negated = OneIn(rng, 2),
                  .guard_pick = static_cast<uint8_t>(rng() % 3)});
}

// A record's guard drawn anew: mostly there, either sense, a recent
// predicate.
void DrawGuard(StepRecord& s, std::mt19937_64& rng) {
  s.guarded = !OneIn(rng, 4);
  s.guard_negated = OneIn(rng, 2);
  s.guard_pick = static_cast<uint8_t>(rng() % 3);
}

// A forward branch over steps [begin, end) to a label at `end` (the first
// label after it, which in its block is that one unless another comes
// first), a bare label, or an exit.
void AddJumpOrLabel(ProgramRecords& r, std::mt19937_64& rng,
                    const ProgramShape&) {
  if (r.steps.size() + 2 > kMaxProgramInputRecords) return;
  const size_t begin = Below(rng, r.steps.size() + 1);
  StepRecord jump{.kind = ProgramStep::kExit};
  DrawGuard(jump, rng);
  switch (rng() % 3) {
    case 0: {
      const size_t end = begin + Below(rng, r.steps.size() - begin + 1);
      r.steps.insert(r.steps.begin() + end, {.kind = ProgramStep::kLabel});
      jump.kind = ProgramStep::kBranch;
      break;
    }
    case 1:
      jump = {.kind = ProgramStep::kLabel};
      break;
    default:
      break;
  }
  r.steps.insert(r.steps.begin() + begin, jump);
}

// A branch's or an exit's guard drawn anew, or a branch to another of the
// labels after it.
void ChangeJump(ProgramRecords& r, std::mt19937_64& rng,
                const ProgramShape&) {
  const std::vector<size_t> jumps =
      StepsOf(r, {ProgramStep::kBranch, ProgramStep::kExit});
  if (jumps.empty()) return;
  StepRecord& s = r.steps[jumps[Below(rng, jumps.size())]];
  if (s.kind == ProgramStep::kBranch && OneIn(rng, 2)) {
    s.target_pick = static_cast<uint8_t>(rng() % 3);
  } else {
    DrawGuard(s, rng);
  }
}

void ChangeDestination(ProgramRecords& r, std::mt19937_64& rng,
                       const ProgramShape&) {
  const std::vector<size_t> steps =
      StepsOf(r, {ProgramStep::kInstruction, ProgramStep::kMove});
  if (steps.empty()) return;
  StepRecord& s = r.steps[steps[Below(rng, steps.size())]];
  if (OneIn(rng, 2)) {
    s.guarded = !s.guarded;
    s.guard_negated = OneIn(rng, 2);
    s.guard_pick = static_cast<uint8_t>(rng() % 3);
    if (s.guarded) s.dst_set_before = true;  // a guard needs one
  } else {
    s.dst_set_before = !s.dst_set_before;
    s.dst_pick = static_cast<uint8_t>(rng() % 4);
  }
}

void ChangeOutputs(ProgramRecords& r, std::mt19937_64& rng,
                   const ProgramShape&) {
  if (r.outputs.empty() ||
      (r.outputs.size() < kMaxProgramOutputs && OneIn(rng, 3))) {
    r.outputs.push_back(static_cast<uint8_t>(rng() % 4));
  } else if (r.outputs.size() > 1 && OneIn(rng, 2)) {
    r.outputs.erase(r.outputs.begin() + Below(rng, r.outputs.size()));
  } else {
    r.outputs[Below(rng, r.outputs.size())] = static_cast<uint8_t>(rng() % 6);
  }
}

void ChangeInputs(ProgramRecords& r, std::mt19937_64& rng,
                  const ProgramShape&) {
  if (r.inputs.size() < kMaxProgramInputs && OneIn(rng, 2)) {
    r.inputs.push_back(
        {.type = static_cast<uint8_t>(OneIn(rng, 4) ? rng() % 4 : 1),
         .witness = InterestingValue(rng)});
  } else if (!r.inputs.empty() && OneIn(rng, 2)) {
    r.inputs.erase(r.inputs.begin() + Below(rng, r.inputs.size()));
  } else if (!r.inputs.empty()) {
    r.inputs[Below(rng, r.inputs.size())].type = rng() % 4;
  }
}

bool IsThreadInput(const InputRecord& in) {
  const int type = in.type % kNumInputTypes;
  return type == kTidXInputType || type == kLaneIdInputType;
}

// Makes a .b16/.b32/.b64 parameter loaded from memory (in[%tid.x]) where
// the shape allows it, or a loaded input a parameter again.
void ToggleLoaded(ProgramRecords& r, std::mt19937_64& rng,
                  const ProgramShape& shape) {
  if (r.inputs.empty()) return;
  InputRecord& in = r.inputs[Below(rng, r.inputs.size())];
  const int type = in.type % kNumInputTypes;
  if (type >= kLoadedInputType) {
    in.type = type - kLoadedInputType;
  } else if (type < 3 && shape.loaded_inputs) {
    in.type = kLoadedInputType + type;
  }
}

// Makes a parameter a thread input (where the shape allows them), or a
// thread input a 32-bit parameter again, the other thread input (%tid.x,
// %laneid), or shown at another lane.
void ChangeThreadInputs(ProgramRecords& r, std::mt19937_64& rng,
                        const ProgramShape& shape) {
  std::vector<InputRecord*> threads, parameters;
  for (InputRecord& in : r.inputs) {
    (IsThreadInput(in) ? threads : parameters).push_back(&in);
  }
  if (shape.thread_inputs && !parameters.empty() &&
      (threads.empty() || OneIn(rng, 2))) {
    *parameters[Below(rng, parameters.size())] = {
        .type = OneIn(rng, 2) ? kTidXInputType : kLaneIdInputType,
        .witness = rng() % kProgramLanes};
    return;
  }
  if (threads.empty()) return;
  InputRecord& in = *threads[Below(rng, threads.size())];
  switch (rng() % 3) {
    case 0:
      in = {.type = 1, .witness = InterestingValue(rng)};
      return;
    case 1:
      in.type = in.type % kNumInputTypes == kTidXInputType ? kLaneIdInputType
                                                           : kTidXInputType;
      return;
    default:
      in.witness = OneIn(rng, 2) ? in.witness % kProgramLanes + 1
                                 : rng() % kProgramLanes;
  }
}

size_t Emit(const std::string& bytes, uint8_t* out, size_t max) {
  if (bytes.size() > max) return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

// `records` written, or a fresh program if they are too long for `max` or
// decode to nothing to store.
size_t WriteOrFresh(const ProgramRecords& records, std::mt19937_64& rng,
                    const ProgramShape& shape, uint8_t* out, size_t max) {
  if (DecodeProgramRecords(records).ok()) {
    if (const size_t n = Emit(WriteProgramRecords(records), out, max)) return n;
  }
  return Emit(RandomProgramInput(rng, shape), out, max);
}

}  // namespace

void MutateProgramRecords(ProgramRecords& records, std::mt19937_64& rng,
                          const ProgramShape& shape) {
  using Mutation = void (*)(ProgramRecords&, std::mt19937_64&,
                            const ProgramShape&);
  // Values and operands most often: they move a program across its
  // operands' classes, where single instructions' bugs are. The thread and
  // loaded inputs (last) need the shape to know whether the backend judges
  // them; a variant drawn anew, which ones to avoid.
  static constexpr Mutation kMutations[] = {
      ChangeValue,       ChangeValue,        ChangeValue,   ChangeOperand,
      ChangeOperand,     ChangeVariant,      ChangeVariant, AddStep,
      DropStep,          SwapSteps,          ChangeLoops,   WrapInIf,
      ChangeDestination, ChangeOutputs,      ChangeInputs,  AddJumpOrLabel,
      ChangeJump,        ChangeThreadInputs, ToggleLoaded,
  };
  const int n = 1 + rng() % 3;
  for (int k = 0; k < n; ++k) {
    kMutations[Below(rng, std::size(kMutations))](records, rng, shape);
  }
}

std::string RandomProgramInput(std::mt19937_64& rng,
                               const ProgramShape& shape) {
  for (;;) {
    absl::StatusOr<std::string> bytes =
        ProgramInputBytes(RandomProgram(rng, shape));
    if (bytes.ok()) return *std::move(bytes);
  }
}

size_t MutateProgramInput(uint8_t* data, size_t size, size_t max_size,
                          unsigned seed, const ProgramShape& shape) {
  std::mt19937_64 rng(seed);
  absl::StatusOr<ProgramRecords> records = ReadProgramRecords(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!records.ok()) {
    return Emit(RandomProgramInput(rng, shape), data, max_size);
  }
  MutateProgramRecords(*records, rng, shape);
  return WriteOrFresh(*records, rng, shape, data, max_size);
}

size_t CrossOverProgramInputs(const uint8_t* a, size_t a_size, const uint8_t* b,
                              size_t b_size, uint8_t* out, size_t max_out,
                              unsigned seed, const ProgramShape& shape) {
  std::mt19937_64 rng(seed);
  absl::StatusOr<ProgramRecords> first = ReadProgramRecords(
      absl::string_view(reinterpret_cast<const char*>(a), a_size));
  absl::StatusOr<ProgramRecords> second = ReadProgramRecords(
      absl::string_view(reinterpret_cast<const char*>(b), b_size));
  if (!first.ok() || !second.ok()) {
    return Emit(RandomProgramInput(rng, shape), out, max_out);
  }
  ProgramRecords child = *first;
  child.steps.resize(Below(rng, first->steps.size() + 1));
  const size_t from = Below(rng, second->steps.size() + 1);
  child.steps.insert(child.steps.end(), second->steps.begin() + from,
                     second->steps.end());
  return WriteOrFresh(child, rng, shape, out, max_out);
}

}  // namespace ptxdiff
