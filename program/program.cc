#include "program/program.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "backends/cuda/kernel_gen.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

std::string TypeOfWidth(int width) {
  return width == 1 ? ".pred" : absl::StrCat(".b", width);
}

std::string OperandText(const Variant& v, int i, const ProgramOperand& o) {
  if (o.is_register) return absl::StrCat("%", o.name);
  const uint64_t bits = o.value & SourceMask(v, i);
  return absl::StrFormat("0x%x", bits);
}

}  // namespace

uint64_t WidthMask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

bool RegisterFitsSource(const Variant& v, int i, int width) {
  const int wants = SourceWidth(v, i);
  if (v.family == Family::kCvt) return width >= wants && width > 1;
  return width == wants || (wants == 8 && width == 16);
}

std::string GuardText(const ProgramStep& step) {
  if (step.guard.empty()) return "";
  return absl::StrCat("@", step.guard_negated ? "!" : "", "%", step.guard, " ");
}

bool SetsRegister(const ProgramStep& step) {
  return step.kind == ProgramStep::kInstruction ||
         step.kind == ProgramStep::kMove;
}

std::vector<ProgramBlock> BlocksOf(const std::vector<ProgramStep>& steps) {
  std::vector<ProgramBlock> out(steps.size());
  std::vector<size_t> open;
  for (size_t i = 0; i < steps.size(); ++i) {
    switch (steps[i].kind) {
      case ProgramStep::kLoopBegin:
      case ProgramStep::kIfBegin:
        open.push_back(i);
        break;
      case ProgramStep::kElse:
        out[open.back()].else_at = i;
        break;
      case ProgramStep::kLoopEnd:
      case ProgramStep::kIfEnd: {
        ProgramBlock& block = out[open.back()];
        block.begin = open.back();
        block.end = i;
        if (block.else_at == 0) block.else_at = i;
        open.pop_back();
        out[i] = block;
        if (steps[block.else_at].kind == ProgramStep::kElse) {
          out[block.else_at] = block;
        }
        break;
      }
      case ProgramStep::kInstruction:
      case ProgramStep::kMove:
      case ProgramStep::kLabel:
      case ProgramStep::kBranch:
      case ProgramStep::kExit:
        break;
    }
  }
  return out;
}

std::vector<size_t> BranchTargets(const std::vector<ProgramStep>& steps) {
  std::vector<size_t> out(steps.size(), steps.size());
  absl::flat_hash_map<std::string, size_t> labels;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == ProgramStep::kLabel) labels[steps[i].label] = i;
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != ProgramStep::kBranch) continue;
    if (auto it = labels.find(steps[i].label); it != labels.end()) {
      out[i] = it->second;
    }
  }
  return out;
}

bool IsJumpOrLabel(const ProgramStep& step) {
  return step.kind == ProgramStep::kLabel ||
         step.kind == ProgramStep::kBranch || step.kind == ProgramStep::kExit;
}

int TupleSourceRegisterWidth(const Variant& v, int i) {
  return SourceWidth(v, i) == 8 ? 16 : SourceWidth(v, i);
}

Program TupleAsProgram(const Variant& v, const Operands& operands) {
  Program p;
  ProgramStep step{.variant = v, .dst = "d"};
  step.sources.resize(NumSources(v));
  for (int i = 0; i < NumSources(v); ++i) {
    if (IsCarryInSource(v, i)) continue;
    if (IsSelectorSource(v, i) || MustBeImmediate(v, i)) {
      step.sources[i].value = operands.v[i];
      continue;
    }
    const std::string name = absl::StrCat("in", i);
    p.inputs.push_back({.name = name,
                        .width = TupleSourceRegisterWidth(v, i),
                        .witness = operands.v[i]});
    step.sources[i] = {.is_register = true, .name = name};
  }
  p.steps.push_back(std::move(step));
  p.outputs = {"d"};
  return p;
}

absl::string_view ThreadInputName(ThreadInput t) {
  switch (t) {
    case ThreadInput::kTidX:
      return "%tid.x";
    case ThreadInput::kLaneId:
      return "%laneid";
    case ThreadInput::kNone:
      break;
  }
  return "";
}

bool HasExit(const Program& program) {
  return absl::c_any_of(program.steps, [](const ProgramStep& s) {
    return s.kind == ProgramStep::kExit;
  });
}

bool HasThreadInputs(const Program& program) {
  return absl::c_any_of(program.inputs, [](const ProgramInput& in) {
    return in.thread != ThreadInput::kNone;
  });
}

bool HasLoadedInputs(const Program& program) {
  return absl::c_any_of(program.inputs,
                        [](const ProgramInput& in) { return in.loaded; });
}

std::vector<uint64_t> AtLane(const Program& program,
                             std::vector<uint64_t> inputs, uint32_t lane) {
  for (size_t k = 0; k < program.inputs.size() && k < inputs.size(); ++k) {
    if (program.inputs[k].thread != ThreadInput::kNone) inputs[k] = lane;
  }
  return inputs;
}

uint32_t LaneOf(const Program& program, const std::vector<uint64_t>& inputs) {
  for (size_t k = 0; k < program.inputs.size() && k < inputs.size(); ++k) {
    if (program.inputs[k].thread != ThreadInput::kNone) {
      return static_cast<uint32_t>(inputs[k]);
    }
  }
  return 0;
}

int CountSteps(const Program& program) {
  int n = 0;
  for (const ProgramStep& s : program.steps) n += SetsRegister(s);
  return n;
}

std::string BlockKinds(const Program& program) {
  auto has = [&program](ProgramStep::Kind kind) {
    return std::any_of(program.steps.begin(), program.steps.end(),
                       [kind](const ProgramStep& s) { return s.kind == kind; });
  };
  std::vector<std::string> kinds;
  if (has(ProgramStep::kLoopBegin)) kinds.push_back("loops");
  if (has(ProgramStep::kIfBegin)) kinds.push_back("if/else");
  if (has(ProgramStep::kBranch)) {
    kinds.push_back("branches");
  } else if (has(ProgramStep::kLabel)) {
    kinds.push_back("labels");
  }
  if (has(ProgramStep::kExit)) kinds.push_back("exit");
  return absl::StrJoin(kinds, ", ");
}

std::vector<uint64_t> WitnessInputs(const Program& program) {
  std::vector<uint64_t> out;
  for (const ProgramInput& in : program.inputs) out.push_back(in.witness);
  // One thread's: every thread input on the first one's lane.
  const uint32_t lane = LaneOf(program, out);
  return AtLane(program, std::move(out), lane);
}

int DestinationWidth(const ProgramStep& step) {
  return step.kind == ProgramStep::kMove ? step.width
                                         : ResultWidth(step.variant);
}

int RegisterWidth(const Program& program, absl::string_view name) {
  for (const ProgramInput& in : program.inputs) {
    if (in.name == name) return in.width;
  }
  for (const ProgramStep& s : program.steps) {
    if (SetsRegister(s) && s.dst == name) return DestinationWidth(s);
  }
  return 0;
}

std::string FormatProgram(const Program& program) {
  std::string out = absl::StrCat(kProgramHeader, "\n");
  for (const ProgramInput& in : program.inputs) {
    absl::StrAppend(&out, "input %", in.name, " ", TypeOfWidth(in.width));
    if (in.thread != ThreadInput::kNone) {
      absl::StrAppend(&out, " ", ThreadInputName(in.thread));
      if (in.witness != 0) absl::StrAppend(&out, " ", in.witness);
      out += "\n";
      continue;
    }
    if (in.loaded) absl::StrAppend(&out, " ", kLoadedInputSource);
    absl::StrAppend(&out, absl::StrFormat(" 0x%x\n", in.witness));
  }
  std::string indent;
  for (const ProgramStep& step : program.steps) {
    switch (step.kind) {
      case ProgramStep::kLoopBegin:
        absl::StrAppend(&out, indent, "loop ", step.trip, " {\n");
        indent += "  ";
        continue;
      case ProgramStep::kIfBegin:
        absl::StrAppend(&out, indent, "if ", step.guard_negated ? "!" : "", "%",
                        step.guard, " {\n");
        indent += "  ";
        continue;
      case ProgramStep::kElse:
        absl::StrAppend(&out, indent.substr(2), "} else {\n");
        continue;
      case ProgramStep::kLoopEnd:
      case ProgramStep::kIfEnd:
        indent.resize(indent.size() - 2);
        absl::StrAppend(&out, indent, "}\n");
        continue;
      case ProgramStep::kLabel:
        absl::StrAppend(&out, indent, step.label, ":\n");
        continue;
      case ProgramStep::kBranch:
        absl::StrAppend(&out, indent, GuardText(step), "bra ", step.label,
                        ";\n");
        continue;
      case ProgramStep::kExit:
        absl::StrAppend(&out, indent, GuardText(step), "exit;\n");
        continue;
      case ProgramStep::kMove: {
        const ProgramOperand& src = step.sources[0];
        const uint64_t mask = WidthMask(step.width);
        absl::StrAppend(&out, indent, GuardText(step), "mov",
                        TypeOfWidth(step.width), " %", step.dst, ", ",
                        src.is_register
                            ? absl::StrCat("%", src.name)
                            : absl::StrFormat("0x%x", src.value & mask),
                        ";\n");
        continue;
      }
      case ProgramStep::kInstruction:
        break;
    }
    std::vector<std::string> sources;
    for (int i = 0; i < NumSources(step.variant); ++i) {
      sources.push_back(OperandText(step.variant, i, step.sources[i]));
    }
    absl::StrAppend(
        &out, indent, GuardText(step),
        PtxInstruction(step.variant, absl::StrCat("%", step.dst), sources),
        ";\n");
  }
  for (const std::string& name : program.outputs)
    absl::StrAppend(&out, "output %", name, "\n");
  return out;
}

}  // namespace ptxdiff
