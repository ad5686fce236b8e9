#include "program/program_encoding.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "program/program_records_internal.h"

namespace ptxdiff {
namespace {

using program_records_internal::kWidthOfType;

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

absl::StatusOr<Program> DecodeProgramInput(absl::string_view bytes) {
  absl::StatusOr<ProgramRecords> records = ReadProgramRecords(bytes);
  if (!records.ok()) return records.status();
  return DecodeProgramRecords(*records);
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
