#include "program/program_ptx.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// PTX has no 8-bit registers: 8-bit values live in 16-bit ones.
absl::string_view RegisterType(int width) {
  if (width == 1) return ".pred";
  return width <= 16 ? ".b16" : width <= 32 ? ".b32" : ".b64";
}

std::string Reg(absl::string_view name) { return absl::StrCat("%", name); }

// Every register once with its width: the inputs, then the steps'
// destinations in order.
std::vector<std::pair<std::string, int>> Registers(const Program& p) {
  std::vector<std::pair<std::string, int>> out;
  absl::flat_hash_map<std::string, int> seen;
  auto add = [&](const std::string& name, int width) {
    if (seen.emplace(name, width).second) out.emplace_back(name, width);
  };
  for (const ProgramInput& in : p.inputs) add(in.name, in.width);
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction || s.kind == ProgramStep::kMove) {
      add(s.dst, DestinationWidth(s));
    }
  }
  return out;
}

// A constant-trip loop as a counted loop, the shape compilers see: the
// counter tested and decremented at the top of each trip. It is set in the
// entry block for a loop at the top level (where generated code sets
// counters, and where ptxas's known loop bugs need them), just before a
// nested loop, which starts again on each trip of its parent.
std::string SetCounter(int k, int trip) {
  return absl::StrCat("  mov.u32 %ptxdiff_lc", k, ", ", trip, ";\n");
}
std::string LoopHead(int k) {
  return absl::StrCat("$ptxdiff_loop", k,
                      ":\n", "  setp.eq.u32 %ptxdiff_lp, %ptxdiff_lc", k, ", 0;\n",
                      "  @%ptxdiff_lp bra $ptxdiff_done", k, ";\n", "  sub.u32 %ptxdiff_lc", k,
                      ", %ptxdiff_lc", k, ", 1;\n");
}
std::string LoopTail(int k) {
  return absl::StrCat("  bra $ptxdiff_loop", k, ";\n", "$ptxdiff_done", k, ":\n");
}

std::string MoveText(const ProgramStep& step) {
  const ProgramOperand& src = step.sources[0];
  if (!src.is_register) {
    const uint64_t mask = step.width >= 64 ? ~uint64_t{0} : (uint64_t{1} << step.width) - 1;
    return PtxSetRegister(step.width, Reg(step.dst), absl::StrFormat("0x%x", src.value & mask));
  }
  return absl::StrCat("  mov", RegisterType(step.width), " ", Reg(step.dst), ", ",
                      Reg(src.name), ";\n");
}

// Stores register `name` (`width` bits) zero-extended at %out + `offset`.
std::string StoreOutput(absl::string_view name, int width, int offset) {
  const std::string address = absl::StrCat("[%out+", offset, "]");
  if (width == 64) return absl::StrCat("  st.global.u64 ", address, ", ", Reg(name), ";\n");
  const std::string widen =
      width == 1 ? absl::StrCat("  selp.u64 %result, 1, 0, ", Reg(name), ";\n")
                 : absl::StrCat("  cvt.u64.u", width <= 8 ? 8 : width <= 16 ? 16 : 32,
                                " %result, ", Reg(name), ";\n");
  return absl::StrCat(widen, "  st.global.u64 ", address, ", %result;\n");
}

std::string StepText(const ProgramStep& step) {
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(step.variant); ++i) {
    const ProgramOperand& o = step.sources[i];
    sources.push_back(o.is_register
                          ? Reg(o.name)
                          : absl::StrFormat("0x%x", o.value & SourceMask(step.variant, i)));
  }
  return absl::StrCat("  ", PtxInstruction(step.variant, Reg(step.dst), sources), ";\n");
}

}  // namespace

std::string ProgramKernel(const Program& program, absl::string_view entry,
                          ProgramInputs inputs) {
  std::string params = "    .param .u64 ptxdiff_out";
  std::string loads;
  for (const ProgramInput& in : program.inputs) {
    if (inputs == ProgramInputs::kRuntime) {
      const std::string param = absl::StrCat("in_", in.name);
      absl::StrAppend(&params, ",\n    .param ", PtxParamType(in.width), " ", param);
      absl::StrAppend(&loads, PtxLoadParam(in.width, Reg(in.name), param));
    } else {
      absl::StrAppend(&loads, PtxSetRegister(in.width, Reg(in.name),
                                             absl::StrFormat("0x%x", in.witness)));
    }
  }
  const std::vector<std::pair<std::string, int>> registers = Registers(program);
  std::string declarations;
  for (const auto& [name, width] : registers) {
    absl::StrAppend(&declarations, "  .reg ", RegisterType(width), " ", Reg(name), ";\n");
  }
  std::string body, counters;
  std::vector<int> open;  // the loops' numbers
  int loops = 0;
  for (const ProgramStep& step : program.steps) {
    switch (step.kind) {
      case ProgramStep::kInstruction: absl::StrAppend(&body, StepText(step)); break;
      case ProgramStep::kMove: absl::StrAppend(&body, MoveText(step)); break;
      case ProgramStep::kLoopBegin:
        absl::StrAppend(open.empty() ? &counters : &body, SetCounter(loops, step.trip));
        open.push_back(loops);
        absl::StrAppend(&body, LoopHead(loops++));
        break;
      case ProgramStep::kLoopEnd:
        absl::StrAppend(&body, LoopTail(open.back()));
        open.pop_back();
        break;
    }
  }
  for (int k = 0; k < loops; ++k) {
    absl::StrAppend(&declarations, "  .reg .b32 %ptxdiff_lc", k, ";\n");
  }
  if (loops > 0) absl::StrAppend(&declarations, "  .reg .pred %ptxdiff_lp;\n");
  absl::flat_hash_map<std::string, int> widths;
  for (const auto& [name, width] : registers) widths[name] = width;
  std::string stores;
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const std::string& name = program.outputs[k];
    absl::StrAppend(&stores, StoreOutput(name, widths[name], static_cast<int>(8 * k)));
  }
  return absl::StrCat(".visible .entry ", entry, "(\n", params, ")\n{\n",
                      "  .reg .b64 %out, %result;\n", declarations,
                      "  ld.param.u64 %out, [ptxdiff_out];\n",
                      "  cvta.to.global.u64 %out, %out;\n", loads, counters, body, stores,
                      "  ret;\n}\n");
}

std::string ProgramEntry(size_t k) { return absl::StrCat(kProgramEntry, "_", k); }

namespace {
// The module's opening lines: the lowest `.version` the target and every
// step of `programs` need.
std::string ProgramsHeader(std::span<const Program> programs, const PtxTarget& target) {
  int ptx = target.min_ptx;
  for (const Program& program : programs) {
    for (const ProgramStep& step : program.steps) {
      if (step.kind == ProgramStep::kInstruction) {
        ptx = std::max(ptx, PtxVersionFor(step.variant, target));
      }
    }
  }
  return absl::StrCat(".version ", ptx / 10, ".", ptx % 10, "\n.target sm_", target.sm,
                      "\n.address_size 64\n\n");
}
}  // namespace

std::string ProgramModule(const Program& program, const PtxTarget& target,
                          ProgramInputs inputs) {
  const int steps = CountSteps(program);
  return absl::StrCat("// ptxdiff program: ", steps, steps == 1 ? " step" : " steps", ", inputs ",
                      inputs == ProgramInputs::kRuntime ? "runtime" : "immediate", "\n",
                      ProgramsHeader({&program, 1}, target),
                      ProgramKernel(program, kProgramEntry, inputs));
}

std::string ProgramsModule(std::span<const Program> programs, const PtxTarget& target,
                           ProgramInputs inputs) {
  std::string out = ProgramsHeader(programs, target);
  for (size_t k = 0; k < programs.size(); ++k) {
    absl::StrAppend(&out, ProgramKernel(programs[k], ProgramEntry(k), inputs), "\n");
  }
  return out;
}

}  // namespace ptxdiff
