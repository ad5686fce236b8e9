#include "program/program_ptx.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
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
    if (SetsRegister(s)) add(s.dst, DestinationWidth(s));
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
  return absl::StrCat("$ptxdiff_loop", k, ":\n",
                      "  setp.eq.u32 %ptxdiff_lp, %ptxdiff_lc", k, ", 0;\n",
                      "  @%ptxdiff_lp bra $ptxdiff_done", k, ";\n",
                      "  sub.u32 %ptxdiff_lc", k, ", %ptxdiff_lc", k, ", 1;\n");
}
std::string LoopTail(int k) {
  return absl::StrCat("  bra $ptxdiff_loop", k, ";\n", "$ptxdiff_done", k,
                      ":\n");
}

// An if as the branches compilers see: to the else part where the
// condition fails, and from the end of the then part over it. An if without
// an else has its else label at its end.
std::string IfHead(int k, const ProgramStep& begin) {
  return absl::StrCat("  @", begin.guard_negated ? "" : "!", Reg(begin.guard),
                      " bra $ptxdiff_else", k, ";\n");
}
std::string ElseHead(int k) {
  return absl::StrCat("  bra.uni $ptxdiff_fi", k, ";\n$ptxdiff_else", k, ":\n");
}
std::string IfTail(int k, bool has_else) {
  return has_else ? absl::StrCat("$ptxdiff_fi", k, ":\n")
                  : absl::StrCat("$ptxdiff_else", k, ":\n");
}

// A program's label `name` in the kernel, apart from the kernel's own.
std::string LabelText(absl::string_view name) {
  return absl::StrCat("$ptxdiff_L_", name);
}

// An exit: `exit;`, or where programs share a thread (a tool's module) a
// branch over the rest of the program and its stores to `exit_label`.
std::string ExitText(const std::string& exit_label) {
  if (exit_label.empty()) return "  exit;\n";
  return absl::StrCat("  bra ", exit_label, ";\n");
}

std::string MoveText(const ProgramStep& step) {
  const ProgramOperand& src = step.sources[0];
  if (!src.is_register) {
    const uint64_t mask = WidthMask(step.width);
    return PtxSetRegister(step.width, Reg(step.dst),
                          absl::StrFormat("0x%x", src.value & mask));
  }
  return absl::StrCat("  mov", RegisterType(step.width), " ", Reg(step.dst),
                      ", ", Reg(src.name), ";\n");
}

// Stores register `name` (`width` bits) zero-extended at %out + `offset`.
std::string StoreOutput(absl::string_view name, int width, int offset) {
  const std::string address = absl::StrCat("[%out+", offset, "]");
  if (width == 64)
    return absl::StrCat("  st.global.u64 ", address, ", ", Reg(name), ";\n");
  const std::string widen =
      width == 1 ? absl::StrCat("  selp.u64 %result, 1, 0, ", Reg(name), ";\n")
                 : absl::StrCat("  cvt.u64.u",
                                width <= 8    ? 8
                                : width <= 16 ? 16
                                              : 32,
                                " %result, ", Reg(name), ";\n");
  return absl::StrCat(widen, "  st.global.u64 ", address, ", %result;\n");
}

// `text`'s statements each under the step's guard.
std::string Guard(const ProgramStep& step, const std::string& text) {
  if (step.guard.empty()) return text;
  return absl::StrReplaceAll(text,
                             {{"\n  ", absl::StrCat("\n  ", GuardText(step))}})
      .insert(2, GuardText(step));
}

std::string StepText(const ProgramStep& step) {
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(step.variant); ++i) {
    const ProgramOperand& o = step.sources[i];
    sources.push_back(
        o.is_register
            ? Reg(o.name)
            : absl::StrFormat("0x%x", o.value & SourceMask(step.variant, i)));
  }
  return absl::StrCat(
      "  ", PtxInstruction(step.variant, Reg(step.dst), sources), ";\n");
}

// The module's opening lines: the lowest `.version` the target and every
// step of `programs` need.
std::string ProgramsHeader(std::span<const Program> programs,
                           const PtxTarget& target) {
  int ptx = target.min_ptx;
  for (const Program& program : programs) {
    for (const ProgramStep& step : program.steps) {
      if (step.kind == ProgramStep::kInstruction) {
        ptx = std::max(ptx, PtxVersionFor(step.variant, target));
      }
    }
  }
  return absl::StrCat(".version ", ptx / 10, ".", ptx % 10, "\n.target sm_",
                      target.sm, "\n.address_size 64\n\n");
}

// Where a kernel takes a program's inputs from.
enum class InputSource : uint8_t {
  kParam,      // kernel parameters in_<name>
  kImmediate,  // the witnesses, moved into the registers
  kBuffer,     // 8 bytes each from %in + in_offset (a tool's input buffer)
};

// How many loops and ifs a kernel's labels have numbered.
struct LabelCount {
  int loops = 0, ifs = 0;
};

// One program's share of a kernel.
struct KernelParts {
  std::string params, declarations, loads, counters, body, stores;
  LabelCount labels;  // how many it numbered, from its first ones
};

// The registers a loaded input's address is computed in.
constexpr char kLoadRegisters[] =
    "  .reg .b32 %ptxdiff_lane;\n  .reg .b64 %ptxdiff_addr, "
    "%ptxdiff_offset;\n";

// `in` loaded as reproducers read their inputs: the word of its buffer at
// %tid.x (a parameter pointing to it, or the tool's input buffer `%in`,
// where the thread that runs is the grid's first: its own slot).
std::string LoadFromMemory(const ProgramInput& in, InputSource source,
                           int offset) {
  const int bytes = in.width / 8;
  std::string out;
  if (source == InputSource::kParam) {
    absl::StrAppend(&out, "  ld.param.u64 %ptxdiff_addr, [in_", in.name,
                    "];\n  cvta.to.global.u64 %ptxdiff_addr, "
                    "%ptxdiff_addr;\n");
    offset = 0;
  } else {
    out = "  mov.u64 %ptxdiff_addr, %in;\n";
  }
  absl::StrAppend(&out, "  mov.u32 %ptxdiff_lane, %tid.x;\n",
                  "  mul.wide.u32 %ptxdiff_offset, %ptxdiff_lane, ", bytes,
                  ";\n  add.s64 %ptxdiff_addr, %ptxdiff_addr, "
                  "%ptxdiff_offset;\n  ld.global.u",
                  in.width, " ", Reg(in.name), ", [%ptxdiff_addr+", offset,
                  "];\n");
  return out;
}

std::string LoadInput(const ProgramInput& in, InputSource source, int offset) {
  if (in.thread != ThreadInput::kNone) {
    return absl::StrCat("  mov.u32 ", Reg(in.name), ", ",
                        ThreadInputName(in.thread), ";\n");
  }
  if (in.loaded && source != InputSource::kImmediate) {
    return LoadFromMemory(in, source, offset);
  }
  switch (source) {
    case InputSource::kParam:
      return PtxLoadParam(in.width, Reg(in.name), absl::StrCat("in_", in.name));
    case InputSource::kImmediate:
      return PtxSetRegister(in.width, Reg(in.name),
                            absl::StrFormat("0x%x", in.witness));
    case InputSource::kBuffer:
      break;
  }
  const std::string address = absl::StrCat("[%in+", offset, "]");
  if (in.width == 1) {  // a predicate: the slot's low bit
    return absl::StrCat("  ld.global.u32 %ptxdiff_bits, ", address, ";\n",
                        "  and.b32 %ptxdiff_bits, %ptxdiff_bits, 1;\n",
                        "  setp.ne.u32 ", Reg(in.name),
                        ", %ptxdiff_bits, 0;\n");
  }
  return absl::StrCat("  ld.global.u", in.width, " ", Reg(in.name), ", ",
                      address, ";\n");
}

// `program`'s registers, inputs, steps and stores (outputs at %out +
// out_offset + 8k), its loops and ifs numbered from `first`'s, an exit
// `exit;` or (`exit_label` not empty) a branch there.
KernelParts Parts(const Program& program, InputSource source, LabelCount first,
                  int in_offset, int out_offset,
                  const std::string& exit_label = "", bool on_lanes = false) {
  KernelParts parts;
  for (size_t j = 0; j < program.inputs.size(); ++j) {
    const ProgramInput& in = program.inputs[j];
    if (source == InputSource::kParam && in.thread == ThreadInput::kNone) {
      absl::StrAppend(&parts.params, ",\n    .param ",
                      in.loaded ? ".u64" : PtxParamType(in.width), " in_",
                      in.name);
    }
    // On lanes, each lane loads its own word: the input's slot word is
    // lane 0's only, and lane 1 would read its upper half.
    const int offset = in.loaded && on_lanes
                           ? in_offset + LaneWordsOffset(j)
                           : in_offset + 8 * static_cast<int>(j);
    absl::StrAppend(&parts.loads, LoadInput(in, source, offset));
  }
  const std::vector<std::pair<std::string, int>> registers = Registers(program);
  for (const auto& [name, width] : registers) {
    absl::StrAppend(&parts.declarations, "  .reg ", RegisterType(width), " ",
                    Reg(name), ";\n");
  }
  // The open loops' numbers. A loop inside another has its counter set
  // on each trip of the outer; one inside ifs only runs at most once, and
  // has its counter set in the entry block like any top-level loop.
  std::vector<int> open;
  struct OpenIf {
    int k = 0;
    bool has_else = false;
  };
  std::vector<OpenIf> open_ifs;
  for (const ProgramStep& step : program.steps) {
    switch (step.kind) {
      case ProgramStep::kInstruction:
        absl::StrAppend(&parts.body, Guard(step, StepText(step)));
        break;
      case ProgramStep::kMove:
        absl::StrAppend(&parts.body, Guard(step, MoveText(step)));
        break;
      case ProgramStep::kLoopBegin: {
        const int k = first.loops + parts.labels.loops++;
        absl::StrAppend(open.empty() ? &parts.counters : &parts.body,
                        SetCounter(k, step.trip));
        open.push_back(k);
        absl::StrAppend(&parts.body, LoopHead(k));
        break;
      }
      case ProgramStep::kLoopEnd:
        absl::StrAppend(&parts.body, LoopTail(open.back()));
        open.pop_back();
        break;
      case ProgramStep::kIfBegin: {
        open_ifs.push_back({.k = first.ifs + parts.labels.ifs++});
        absl::StrAppend(&parts.body, IfHead(open_ifs.back().k, step));
        break;
      }
      case ProgramStep::kElse:
        open_ifs.back().has_else = true;
        absl::StrAppend(&parts.body, ElseHead(open_ifs.back().k));
        break;
      case ProgramStep::kIfEnd:
        absl::StrAppend(&parts.body,
                        IfTail(open_ifs.back().k, open_ifs.back().has_else));
        open_ifs.pop_back();
        break;
      case ProgramStep::kLabel:
        absl::StrAppend(&parts.body, LabelText(step.label), ":\n");
        break;
      case ProgramStep::kBranch:
        absl::StrAppend(
            &parts.body,
            Guard(step, absl::StrCat("  bra ", LabelText(step.label), ";\n")));
        break;
      case ProgramStep::kExit:
        absl::StrAppend(&parts.body, Guard(step, ExitText(exit_label)));
        break;
    }
  }
  for (int k = first.loops; k < first.loops + parts.labels.loops; ++k) {
    absl::StrAppend(&parts.declarations, "  .reg .b32 %ptxdiff_lc", k, ";\n");
  }
  absl::flat_hash_map<std::string, int> widths;
  for (const auto& [name, width] : registers) widths[name] = width;
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const std::string& name = program.outputs[k];
    absl::StrAppend(
        &parts.stores,
        StoreOutput(name, widths[name], out_offset + static_cast<int>(8 * k)));
  }
  return parts;
}

// A program with thread inputs runs on every thread of its block: each
// stores its outputs at %out + ThreadOutputBytes(program) * %tid.x.
std::string ThreadOutputs(const Program& program) {
  if (!HasThreadInputs(program)) return "";
  return absl::StrCat(
      "  {\n  .reg .b32 %ptxdiff_tid;\n  .reg .b64 %ptxdiff_slot;\n",
      "  mov.u32 %ptxdiff_tid, %tid.x;\n",
      "  mul.wide.u32 %ptxdiff_slot, %ptxdiff_tid, ", ThreadOutputBytes(program),
      ";\n  add.s64 %out, %out, %ptxdiff_slot;\n  }\n");
}

// `program` with every register name prefixed by `tag`: programs that
// share a kernel never share a register.
Program Tagged(Program p, const std::string& tag) {
  for (ProgramInput& in : p.inputs) in.name = tag + in.name;
  for (ProgramStep& s : p.steps) {
    if (!s.dst.empty()) s.dst = tag + s.dst;
    if (!s.guard.empty()) s.guard = tag + s.guard;
    if (!s.label.empty()) s.label = tag + s.label;
    for (ProgramOperand& o : s.sources) {
      if (o.is_register) o.name = tag + o.name;
    }
  }
  for (std::string& out : p.outputs) out = tag + out;
  return p;
}

}  // namespace

std::string ProgramKernel(const Program& program, absl::string_view entry,
                          ProgramInputs inputs) {
  const KernelParts parts =
      Parts(program,
            inputs == ProgramInputs::kRuntime ? InputSource::kParam
                                              : InputSource::kImmediate,
            {}, 0, 0);
  std::string declarations = parts.declarations;
  if (parts.labels.loops > 0)
    absl::StrAppend(&declarations, "  .reg .pred %ptxdiff_lp;\n");
  if (inputs == ProgramInputs::kRuntime && HasLoadedInputs(program))
    absl::StrAppend(&declarations, kLoadRegisters);
  return absl::StrCat(".visible .entry ", entry,
                      "(\n    .param .u64 ptxdiff_out", parts.params, ")\n{\n",
                      "  .reg .b64 %out, %result;\n", declarations,
                      "  ld.param.u64 %out, [ptxdiff_out];\n",
                      "  cvta.to.global.u64 %out, %out;\n",
                      ThreadOutputs(program), parts.loads, parts.counters,
                      parts.body, parts.stores, "  ret;\n}\n");
}

ProgramSlots SlotsOf(std::span<const Program> programs, bool lanes) {
  ProgramSlots slots{.first = {0}, .lanes = lanes};
  for (const Program& p : programs) {
    slots.first.push_back(slots.first.back() +
                          (slots.OnLanes(p) ? kProgramLanes * 2 : 2));
  }
  return slots;
}

namespace {

// The head of a tool module's body: the thread's index in the grid, and
// whether it is the first (or, where programs run on lanes, one of the
// first kProgramLanes, with its share of {out}).
std::string ThreadsOfTheModule(bool lanes) {
  std::string out =
      "  mov.u32 %ptxdiff_bits, %ctaid.x;\n  mov.u32 %ptxdiff_t, %ntid.x;\n"
      "  mul.lo.u32 %ptxdiff_bits, %ptxdiff_bits, %ptxdiff_t;\n"
      "  mov.u32 %ptxdiff_t, %tid.x;\n  add.u32 %ptxdiff_bits, %ptxdiff_bits, "
      "%ptxdiff_t;\n"
      "  setp.ne.u32 %ptxdiff_first, %ptxdiff_bits, 0;\n";
  if (!lanes) {
    return absl::StrCat(
        "  // Only the grid's first thread runs the programs.\n", out,
        "  @%ptxdiff_first bra $ptxdiff_end;\n");
  }
  return absl::StrCat(
      "  // The grid's first thread runs the programs, its first ",
      kProgramLanes,
      " those with thread inputs\n  // (each its own outputs).\n", out,
      "  setp.ge.u32 %ptxdiff_notlane, %ptxdiff_bits, ", kProgramLanes,
      ";\n  mul.wide.u32 %ptxdiff_lane_out, %ptxdiff_bits, ",
      2 * kBatchResultBytes, ";\n");
}

}  // namespace

std::string ProgramToolModule(std::span<const Program> programs,
                              const PtxTarget& target, ProgramInputs inputs,
                              bool lanes) {
  const ProgramSlots slots = SlotsOf(programs, lanes);
  std::string declarations, body;
  LabelCount labels;
  for (size_t k = 0; k < programs.size(); ++k) {
    // Its slots: 32 bytes of {in} and 16 of {out} each, its inputs in the
    // first two's {in}, its outputs in two slots of {out} (a lane's two).
    const int in = static_cast<int>(slots.first[k]) * kTupleBytes;
    const int out = static_cast<int>(slots.first[k]) * kBatchResultBytes;
    const bool on_lanes = slots.OnLanes(programs[k]);
    // Programs run one after another on one thread: an exit skips only
    // the rest of its own program.
    const std::string exit_label = absl::StrCat("$ptxdiff_exit", k);
    const KernelParts parts =
        Parts(Tagged(programs[k], absl::StrCat("p", k, "_")),
              inputs == ProgramInputs::kRuntime ? InputSource::kBuffer
                                                : InputSource::kImmediate,
              labels, in, out, exit_label, on_lanes);
    labels.loops += parts.labels.loops;
    labels.ifs += parts.labels.ifs;
    absl::StrAppend(&declarations, parts.declarations);
    absl::StrAppend(
        &body, "  // program ", k,
        on_lanes ? absl::StrCat(", on ", kProgramLanes, " lanes") : "", "\n");
    if (on_lanes) {
      absl::StrAppend(&body, "  @%ptxdiff_notlane bra $ptxdiff_next", k,
                      ";\n  add.s64 %out, %out, %ptxdiff_lane_out;\n");
    } else if (lanes) {
      absl::StrAppend(&body, "  @%ptxdiff_first bra $ptxdiff_next", k, ";\n");
    }
    absl::StrAppend(&body, parts.loads, parts.counters, parts.body,
                    parts.stores);
    // Every byte of {out} is written: 0 for the outputs it does not have.
    for (size_t j = programs[k].outputs.size(); j < kMaxProgramOutputs; ++j) {
      absl::StrAppend(&body, "  mov.u64 %result, 0;\n  st.global.u64 [%out+",
                      out + 8 * j, "], %result;\n");
    }
    if (HasExit(programs[k])) {
      // The ABI wants every byte of {out} written: one that exited stores 0
      // in its slots, which the oracle does not judge.
      absl::StrAppend(&body, "  bra.uni $ptxdiff_stored", k, ";\n", exit_label,
                      ":\n  mov.u64 %result, 0;\n");
      for (int j = 0; j < kMaxProgramOutputs; ++j) {
        absl::StrAppend(&body, "  st.global.u64 [%out+", out + 8 * j,
                        "], %result;\n");
      }
      absl::StrAppend(&body, "$ptxdiff_stored", k, ":\n");
    }
    if (on_lanes)
      absl::StrAppend(&body, "  sub.s64 %out, %out, %ptxdiff_lane_out;\n");
    if (lanes) absl::StrAppend(&body, "$ptxdiff_next", k, ":\n");
  }
  if (labels.loops > 0)
    absl::StrAppend(&declarations, "  .reg .pred %ptxdiff_lp;\n");
  if (inputs == ProgramInputs::kRuntime &&
      absl::c_any_of(programs,
                     [](const Program& p) { return HasLoadedInputs(p); })) {
    absl::StrAppend(&declarations, kLoadRegisters);
  }
  if (lanes) {
    absl::StrAppend(&declarations,
                    "  .reg .pred %ptxdiff_notlane;\n  .reg .b64 "
                    "%ptxdiff_lane_out;\n");
  }
  return absl::StrCat(
      "// ptxdiff batch: ", programs.size(),
      programs.size() == 1 ? " program" : " programs", " in ", slots.total(),
      " slots; {out} holds 16 bytes per slot\n", "// program k: inputs ",
      inputs == ProgramInputs::kImmediate ? "immediate"
      : lanes                             ? "at {in} + 32 first(k) + 8j"
                                          : "at {in} + 64k + 8j",
      ", outputs at ",
      lanes ? "{out} + 16 first(k) + 8j (a program on lanes: + 32 lane)"
            : "{out} + 32k + 8j",
      "\n", ProgramsHeader(programs, target),
      ".visible .entry ptxdiff_register(\n    .param .u64 ptxdiff_in,\n    "
      ".param .u64 ptxdiff_out,\n"
      "    .param .u32 ptxdiff_n)\n{\n",
      "  .reg .pred %ptxdiff_first;\n  .reg .b32 %ptxdiff_bits, %ptxdiff_t;\n"
      "  .reg .b64 %in, %out, %result;\n",
      declarations,
      "  ld.param.u64 %in, [ptxdiff_in];\n  cvta.to.global.u64 %in, %in;\n"
      "  ld.param.u64 %out, [ptxdiff_out];\n  cvta.to.global.u64 %out, %out;\n",
      ThreadsOfTheModule(lanes), body, "$ptxdiff_end:\n  ret;\n}\n");
}

std::string ProgramEntry(size_t k) {
  return absl::StrCat(kProgramEntry, "_", k);
}

std::string ProgramModule(const Program& program, const PtxTarget& target,
                          ProgramInputs inputs) {
  const int steps = CountSteps(program);
  return absl::StrCat(
      "// ptxdiff program: ", steps, steps == 1 ? " step" : " steps",
      ", inputs ", inputs == ProgramInputs::kRuntime ? "runtime" : "immediate",
      "\n", ProgramsHeader({&program, 1}, target),
      ProgramKernel(program, kProgramEntry, inputs));
}

std::string ProgramsModule(std::span<const Program> programs,
                           const PtxTarget& target, ProgramInputs inputs) {
  std::string out = ProgramsHeader(programs, target);
  for (size_t k = 0; k < programs.size(); ++k) {
    absl::StrAppend(&out, ProgramKernel(programs[k], ProgramEntry(k), inputs),
                    "\n");
  }
  return out;
}

}  // namespace ptxdiff
