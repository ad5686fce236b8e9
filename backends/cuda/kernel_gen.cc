#include "backends/cuda/kernel_gen.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "backends/carry_support.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// Each `.target` with the PTX ISA that introduced it (PTX ISA, "Release
// Notes" and the `.target` table), ascending by SM.
constexpr std::array<PtxTarget, 19> kTargets = {{
    {50, 40},  {52, 41},  {53, 42},  {60, 50},  {61, 50},  {62, 50}, {70, 60},
    {72, 61},  {75, 63},  {80, 70},  {86, 71},  {87, 74},  {89, 78}, {90, 78},
    {100, 86}, {103, 88}, {110, 90}, {120, 87}, {121, 88},
}};

// The first driver (cuDriverGetVersion) whose JIT accepts each PTX ISA; the
// PTX ISA release history. CUDA 12.6 kept 8.5; 8.6 came with 12.7.
struct DriverPtx {
  int driver;
  int ptx;
};
constexpr std::array<DriverPtx, 19> kDriverPtx = {{
    {11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74},
    {11050, 75}, {11060, 76}, {11070, 77}, {11080, 78}, {12000, 80},
    {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
    {12070, 86}, {12080, 87}, {12090, 88}, {13000, 90},
}};

std::string PtxVersionText(int ptx) {
  return absl::StrCat(ptx / 10, ".", ptx % 10);
}

// Registers, loads and conversions by operand width (as PtxRegister names
// them). The PTX families have 16-, 32- and 64-bit operands, 8-bit ones
// (lop3's LUT, cvt's .u8/.s8: loaded as a byte into a 16-bit register, as
// PTX has no 8-bit registers) and predicates (width 1: selp's c, setp's
// result).
absl::string_view RegType(int width) {
  if (width == 1) return "pred";
  return width <= 16 ? "b16" : width <= 32 ? "b32" : "b64";
}
absl::string_view LoadType(int width) {
  if (width <= 8) return "u8";  // into a 16-bit register
  return width <= 16 ? "u16" : width <= 32 ? "u32" : "u64";
}

// The registers of the instruction under test, named within `scope`: "" in
// a one-variant kernel, "v3_" for the fourth variant of a batch kernel
// (BatchModule), whose variants each declare their own registers.
std::string Reg(absl::string_view scope, absl::string_view name) {
  return absl::StrCat("%", scope, name);
}
std::string SourceRegister(absl::string_view scope, int i) {
  return absl::StrCat("%", scope, "src", i);
}
// CC.CF's registers: the setter's discarded sum, and the reader's flag word.
std::string CarryScratch(absl::string_view scope) {
  return Reg(scope, "cc_in");
}
std::string FlagWord(absl::string_view scope) { return Reg(scope, "cc_out"); }
// The 32-bit register a predicate source's bit is loaded into before
// `setp.ne.u32` makes it the predicate %src<i>.
std::string PredicateBitsRegister(absl::string_view scope, int i) {
  return absl::StrCat("%", scope, "bit", i);
}

// Stores %dst, zero-extended to 64 bits, at `address`: a predicate as 1 or
// 0, an 8-bit result (in a 16-bit register) as its low 8 bits.
std::string StoreResult(absl::string_view scope, const Variant& v,
                        absl::string_view address) {
  const int width = ResultWidth(v);
  const std::string dst = Reg(scope, "dst");
  if (width == 64) {
    return absl::StrCat("  st.global.u64 [", address, "], ", dst, ";\n");
  }
  const std::string widen =
      width == 1 ? absl::StrCat("  selp.u64 %result, 1, 0, ", dst, ";\n")
                 : absl::StrCat("  cvt.u64.", LoadType(width), " %result, ",
                                dst, ";\n");
  return absl::StrCat(widen, "  st.global.u64 [", address, "], %result;\n");
}

// Stores the flag word (the CC.CF reader's %cc_out), zero-extended to 64
// bits, at `address`: the second 8 bytes of a carry variant's result.
std::string StoreFlagWord(absl::string_view scope, absl::string_view address) {
  return absl::StrCat("  cvt.u64.u32 %result, ", FlagWord(scope), ";\n",
                      "  st.global.u64 [", address, "], %result;\n");
}

// Loads source `i` of `v` from the operand at `address` into its register
// (SourceRegister): CC.CF's operand and a predicate as their low bit, the
// others as wide as the source.
std::string LoadSource(absl::string_view scope, const Variant& v, int i,
                       absl::string_view address) {
  const std::string reg = SourceRegister(scope, i);
  if (IsCarryInSource(v, i)) {  // CC.CF in: the operand's low bit
    return absl::StrCat("  ld.global.u32 ", reg, ", [", address, "];\n",
                        "  and.b32 ", reg, ", ", reg, ", 1;\n");
  }
  if (SourceWidth(v, i) == 1) {  // a predicate: the operand's low bit
    const std::string bits = PredicateBitsRegister(scope, i);
    return absl::StrCat("  ld.global.u32 ", bits, ", [", address, "];\n",
                        "  and.b32 ", bits, ", ", bits, ", 1;\n",
                        "  setp.ne.u32 ", reg, ", ", bits, ", 0;\n");
  }
  return absl::StrCat("  ld.global.", LoadType(SourceWidth(v, i)), " ", reg,
                      ", [", address, "];\n");
}

// The instruction under test between the line setting the incoming CC.CF
// (from `sources`' carry-in entry) and the one reading the outgoing flag,
// for the variants that have them.
std::string InstructionWithCarries(absl::string_view scope, const Variant& v,
                                   const std::vector<std::string>& sources) {
  std::string out;
  if (const int cf = CarryInSource(v); cf >= 0) {
    absl::StrAppend(&out, PtxSetCarryIn(v, sources[cf], CarryScratch(scope)));
  }
  absl::StrAppend(&out, "  ", PtxInstruction(v, Reg(scope, "dst"), sources),
                  ";\n");
  if (HasCarryOut(v))
    absl::StrAppend(&out, PtxReadCarryOut(v, FlagWord(scope)));
  return out;
}

// An immediate as PTX reads it: hex, as many digits as the source is wide.
// Masking matters: ptxas silently truncates a wider immediate, which would
// test another tuple than the oracle evaluates.
std::string Immediate(const Variant& v, int i, uint64_t bits) {
  const int width = SourceWidth(v, i);
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  return absl::StrFormat("0x%0*x", width / 4, bits & mask);
}

}  // namespace

absl::string_view KernelModeName(KernelMode mode) {
  return mode == KernelMode::kRegister ? "register" : "immediate";
}

std::optional<KernelMode> ParseKernelMode(absl::string_view name) {
  if (name == "register") return KernelMode::kRegister;
  if (name == "immediate") return KernelMode::kImmediate;
  return std::nullopt;
}

std::optional<int> DeviceSm(absl::string_view device) {
  const size_t at = device.rfind("(sm_");
  int sm = 0;
  if (at == absl::string_view::npos) return std::nullopt;
  const absl::string_view digits = device.substr(at + 4);
  if (!absl::SimpleAtoi(digits.substr(0, digits.find_first_of(",)")), &sm)) {
    return std::nullopt;
  }
  return sm;
}

std::optional<PtxTarget> TargetForDevice(int device_sm) {
  std::optional<PtxTarget> best;
  for (const PtxTarget& t : kTargets) {
    if (t.sm <= device_sm) best = t;
  }
  return best;
}

int MaxPtxOfDriver(int driver_version) {
  int ptx = 0;
  for (const DriverPtx& d : kDriverPtx) {
    if (d.driver <= driver_version) ptx = d.ptx;
  }
  return ptx;
}

int PtxVersionFor(const Variant& v, const PtxTarget& target) {
  return std::max(LevelOf(v).ptx, target.min_ptx);
}

std::optional<std::string> WhyUnsupported(const Variant& v, int device_sm,
                                          int max_ptx) {
  if (InfoOf(v.family).isa != TargetIsa::kPtx) return "not a PTX instruction";
  const IsaLevel level = LevelOf(v);
  const std::optional<PtxTarget> target = TargetForDevice(device_sm);
  if (!target.has_value()) {
    return absl::StrCat("the device (sm_", device_sm, ") is older than sm_50");
  }
  if (level.sm > device_sm) {
    return absl::StrCat("needs sm_", level.sm, "; the device is sm_",
                        device_sm);
  }
  const int ptx = PtxVersionFor(v, *target);
  if (ptx > max_ptx) {
    return absl::StrCat("needs PTX ISA ", PtxVersionText(ptx),
                        "; the driver's JIT accepts up to ",
                        PtxVersionText(max_ptx));
  }
  return std::nullopt;
}

std::string ModuleHeader(const Variant& v, const PtxTarget& target) {
  return absl::StrCat("// ptxdiff variant: ", Spell(v), "\n", ".version ",
                      PtxVersionText(PtxVersionFor(v, target)), "\n.target sm_",
                      target.sm, "\n.address_size 64\n\n");
}

int ResultBytes(const Variant& v) {
  return HasCarryOut(v) ? kCarryResultBytes : kResultBytes;
}

std::string OperandDeclarations(const Variant& v) {
  return ScopedDeclarations(v, "");
}

std::string ScopedDeclarations(const Variant& v, absl::string_view scope) {
  std::string out;
  for (int i = 0; i < NumSources(v); ++i) {
    if (IsCarryInSource(v, i)) {  // the bit the CC.CF setter reads
      absl::StrAppend(&out, "  .reg .b32 ", SourceRegister(scope, i), ", ",
                      CarryScratch(scope), ";\n");
      continue;
    }
    absl::StrAppend(&out, "  .reg .", RegType(SourceWidth(v, i)), " ",
                    SourceRegister(scope, i), ";\n");
    if (SourceWidth(v, i) == 1) {
      absl::StrAppend(&out, "  .reg .b32 ", PredicateBitsRegister(scope, i),
                      ";\n");
    }
  }
  absl::StrAppend(&out, "  .reg .", RegType(ResultWidth(v)), " ",
                  Reg(scope, "dst"), ";\n");
  if (HasCarryOut(v)) {
    absl::StrAppend(&out, "  .reg .b32 ", FlagWord(scope), ";\n");
  }
  // The registers a SIMD selector's dispatch (2 lanes) or gather (4) uses.
  if (SimdLanes(v.family) == 2) {
    absl::StrAppend(&out, "  .reg .b16 ", Reg(scope, "selidx"), ", ",
                    Reg(scope, "selpart"), ";\n");
  } else if (SimdLanes(v.family) == 4) {
    absl::StrAppend(&out, "  .reg .b32 ", Reg(scope, "ga"), ", ",
                    Reg(scope, "gb"), ", ", Reg(scope, "gsel"), ";\n");
  }
  return out;
}

// The instruction for `values` (sorted) of the 16-bit register `reg`, which
// holds source `i` (an immediate: lop3's LUT) or an index of its values (a
// 2-lane SIMD selector): a binary tree of branches on the register down to
// one instruction per value, source i's text for each given by `text`; a
// register value between two of them takes the lower's, one at or past
// `bound` the last's. A thread takes log2(values.size()) branches.
void AppendDispatch(absl::string_view scope, const Variant& v, int i,
                    absl::string_view reg, std::span<const int> values,
                    int bound, absl::FunctionRef<std::string(int)> text,
                    std::vector<std::string>& sources, std::string& out) {
  if (values.size() == 1) {
    sources[i] = text(values[0]);
    absl::StrAppend(&out, "  ", PtxInstruction(v, Reg(scope, "dst"), sources),
                    ";\n", "  bra $", scope, "immediate_done;\n");
    return;
  }
  // Labels name the range of values they take, [values[mid], bound).
  const size_t mid = values.size() / 2;
  const std::string upper =
      absl::StrCat("$", scope, "immediate_", values[mid], "_", bound);
  absl::StrAppend(&out, "  setp.ge.u16 %p, ", reg, ", ", values[mid],
                  ";\n  @%p bra ", upper, ";\n");
  AppendDispatch(scope, v, i, reg, values.first(mid), values[mid], text,
                 sources, out);
  absl::StrAppend(&out, upper, ":\n");
  AppendDispatch(scope, v, i, reg, values.subspan(mid), bound, text, sources,
                 out);
}

// The canonical 2-lane selector (four 2-bit parts, one per nibble) whose
// parts are the four 2-bit fields of `index`, and back: the 256 values a
// register kernel dispatches on.
uint32_t SelectorOfIndex(int index) {
  uint32_t sel = 0;
  for (int k = 0; k < 4; ++k) sel |= ((index >> (2 * k)) & 3u) << (4 * k);
  return sel;
}

// PTX that packs the 2-lane selector in %src<sel> into %selidx, its index:
// nibble k's low 2 bits to bits 2k..2k+1.
std::string PackSelectorIndex(absl::string_view scope, int sel) {
  const std::string src = SourceRegister(scope, sel);
  const std::string index = Reg(scope, "selidx"), part = Reg(scope, "selpart");
  std::string out = absl::StrCat("  and.b16 ", index, ", ", src, ", 0x0003;\n");
  for (int k = 1; k < 4; ++k) {
    absl::StrAppendFormat(&out,
                          "  shr.u16 %s, %s, %d;\n"
                          "  and.b16 %s, %s, 0x%04x;\n"
                          "  or.b16 %s, %s, %s;\n",
                          part, src, 2 * k, part, part, 3 << (2 * k), index,
                          index, part);
  }
  return out;
}

// A 4-lane SIMD instruction in a register kernel. Its 2^24 canonical
// selectors are too many for a branch tree, so prmt gathers the bytes of
// {b, a} the selector picks (prmt's generic mode takes byte n of {b, a} for
// a nibble n < 8, exactly as `.bxyzw` does) into %ga (asel) and %gb (bsel),
// and the instruction runs on them with the default selectors `.b3210` /
// `.b7654`, which read %ga's and %gb's bytes in lane order. The same lanes
// are extended and operated on; the 4-lane selectors themselves are spelled
// in immediate mode and in the ptxas backend's modules.
std::string GatheredSimd4(absl::string_view scope, const Variant& v,
                          std::vector<std::string> sources) {
  const std::string sel = SourceRegister(scope, 3);
  const std::string ga = Reg(scope, "ga"), gb = Reg(scope, "gb"),
                    gsel = Reg(scope, "gsel");
  std::string out = absl::StrCat(
      "  and.b32 ", gsel, ", ", sel, ", 0x7777;\n",  //
      "  prmt.b32 ", ga, ", ", sources[0], ", ", sources[1], ", ", gsel, ";\n",
      "  shr.b32 ", gsel, ", ", sel, ", 16;\n",       //
      "  and.b32 ", gsel, ", ", gsel, ", 0x7777;\n",  //
      "  prmt.b32 ", gb, ", ", sources[0], ", ", sources[1], ", ", gsel, ";\n");
  sources[0] = ga, sources[1] = gb;
  sources[3] = Immediate(v, 3, DefaultSimdSelector(4));
  absl::StrAppend(&out, "  ", PtxInstruction(v, Reg(scope, "dst"), sources),
                  ";\n");
  return out;
}

// The source of `v` that PTX takes only as an immediate and a register
// kernel reads from the input (a SIMD selector, lop3's LUT), or -1.
int ImmediateOnlySource(const Variant& v) {
  for (int i = 0; i < NumSources(v); ++i) {
    if (MustBeImmediate(v, i) && !IsCarryInSource(v, i) &&
        SourceWidth(v, i) != 1) {
      return i;
    }
  }
  return -1;
}

// The values a register kernel's dispatch on `v`'s DispatchSource tells
// apart: 2-lane selector indices, or the source's values.
int DispatchCount(const Variant& v) {
  return SimdLanes(v.family) == 2 ? 256
                                  : 1 << SourceWidth(v, DispatchSource(v));
}

// `present` (sorted, distinct), or, if empty, every value DispatchCount says.
std::vector<int> DispatchOver(const Variant& v, std::span<const int> present) {
  if (!present.empty()) return {present.begin(), present.end()};
  std::vector<int> all(DispatchCount(v));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

std::string RegisterBody(const Variant& v) {
  return ScopedRegisterBody(v, "", ResultBytes(v));
}

int DispatchSource(const Variant& v) {
  // A 4-lane selector is gathered with prmt (GatheredSimd4), not dispatched.
  return SimdLanes(v.family) == 4 ? -1 : ImmediateOnlySource(v);
}

int DispatchValue(const Variant& v, uint64_t operand) {
  if (SimdLanes(v.family) == 2) {
    // PackSelectorIndex: nibble k's low 2 bits to bits 2k..2k+1.
    int index = 0;
    for (int k = 0; k < 4; ++k) index |= ((operand >> (4 * k)) & 3) << (2 * k);
    return index;
  }
  // Loaded as 8 bits (LoadType); a value past the last is dispatched to it.
  return static_cast<int>(
      std::min<uint64_t>(operand & 0xff, DispatchCount(v) - 1));
}

std::vector<int> DispatchValuesOf(const Variant& v,
                                  std::span<const Operands> tuples) {
  const int source = DispatchSource(v);
  if (source < 0) return {};
  std::vector<int> values;
  for (const Operands& o : tuples)
    values.push_back(DispatchValue(v, o.v[source]));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::string ScopedRegisterBody(const Variant& v, absl::string_view scope,
                               int slot_bytes,
                               std::span<const int> dispatch_values) {
  // The tuple's result slot.
  std::string out = absl::StrCat("  mul.wide.u32 %slot, %i, ", slot_bytes,
                                 ";\n", "  add.u64 %slot, %out, %slot;\n");
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(v); ++i) {
    sources.push_back(SourceRegister(scope, i));
    absl::StrAppend(&out,
                    LoadSource(scope, v, i, absl::StrCat("%tuple+", 8 * i)));
  }
  const int immediate = ImmediateOnlySource(v);
  const std::string done = absl::StrCat("$", scope, "immediate_done:\n");
  if (immediate < 0) {
    absl::StrAppend(&out, InstructionWithCarries(scope, v, sources));
  } else if (SimdLanes(v.family) == 4) {
    absl::StrAppend(&out, GatheredSimd4(scope, v, sources));
  } else if (SimdLanes(v.family) == 2) {
    absl::StrAppend(&out, PackSelectorIndex(scope, immediate));
    AppendDispatch(
        scope, v, immediate, Reg(scope, "selidx"),
        DispatchOver(v, dispatch_values), DispatchCount(v),
        [&](int index) {
          return Immediate(v, immediate, SelectorOfIndex(index));
        },
        sources, out);
    absl::StrAppend(&out, done);
  } else {
    AppendDispatch(
        scope, v, immediate, SourceRegister(scope, immediate),
        DispatchOver(v, dispatch_values), DispatchCount(v),
        [&](int value) { return Immediate(v, immediate, value); }, sources,
        out);
    absl::StrAppend(&out, done);
  }
  absl::StrAppend(&out, StoreResult(scope, v, "%slot"));
  if (HasCarryOut(v)) {
    absl::StrAppend(&out, StoreFlagWord(scope, "%slot+8"));
  } else if (slot_bytes == kCarryResultBytes) {
    // A batch kernel's slots are all 16 bytes: every byte is written.
    absl::StrAppend(&out, "  mov.u64 %result, 0;\n",
                    "  st.global.u64 [%slot+8], %result;\n");
  }
  return out;
}

std::string RegisterKernel(absl::string_view entry,
                           absl::string_view declarations,
                           absl::string_view bodies) {
  // Thread i handles tuples i, i + stride, ... (a grid-stride loop), so any
  // grid size covers any n: the host sizes the grid for occupancy only.
  return absl::StrCat(
      ".visible .entry ", entry, "(\n", "    .param .u64 ptxdiff_in,\n",
      "    .param .u64 ptxdiff_out,\n", "    .param .u32 ptxdiff_n)\n", "{\n",
      "  .reg .pred %p;\n", "  .reg .b32 %i, %n, %t, %stride;\n",
      "  .reg .b64 %in, %out, %tuple, %slot, %result;\n", declarations,
      "  ld.param.u64 %in, [ptxdiff_in];\n", "  cvta.to.global.u64 %in, %in;\n",
      "  ld.param.u64 %out, [ptxdiff_out];\n",
      "  cvta.to.global.u64 %out, %out;\n", "  ld.param.u32 %n, [ptxdiff_n];\n",
      "  mov.u32 %i, %ctaid.x;\n", "  mov.u32 %t, %ntid.x;\n",
      "  mov.u32 %stride, %tid.x;\n", "  mad.lo.u32 %i, %i, %t, %stride;\n",
      "  mov.u32 %stride, %nctaid.x;\n", "  mul.lo.u32 %stride, %stride, %t;\n",
      "  setp.ge.u32 %p, %i, %n;\n", "  @%p bra $done;\n", "$loop:\n",
      "  mul.wide.u32 %tuple, %i, ", kTupleBytes, ";\n",
      "  add.u64 %tuple, %in, %tuple;\n", bodies,
      "  add.u32 %i, %i, %stride;\n", "  setp.lt.u32 %p, %i, %n;\n",
      "  @%p bra $loop;\n", "$done:\n", "  ret;\n", "}\n");
}

std::string RegisterModule(const Variant& v, const PtxTarget& target) {
  return absl::StrCat(
      ModuleHeader(v, target),
      RegisterKernel(kRegisterEntry, OperandDeclarations(v), RegisterBody(v)));
}

namespace {

std::string BatchHeader(std::span<const BatchSegment> segments,
                        const PtxTarget& target) {
  int ptx = target.min_ptx;
  uint64_t tuples = 0;
  for (const BatchSegment& s : segments) {
    ptx = std::max(ptx, PtxVersionFor(s.variant, target));
    tuples = std::max<uint64_t>(tuples, uint64_t{s.first} + s.count);
  }
  std::string out =
      absl::StrCat("// ptxdiff batch: ", segments.size(),
                   segments.size() == 1 ? " variant, " : " variants, ", tuples,
                   tuples == 1 ? " tuple" : " tuples", "; {out} holds ",
                   kBatchResultBytes, " bytes per tuple\n");
  for (const BatchSegment& s : segments) {
    absl::StrAppend(&out, "// tuples ", s.first, "..", s.first + s.count - 1,
                    ": ", Spell(s.variant), "\n");
  }
  absl::StrAppend(&out, ".version ", PtxVersionText(ptx), "\n.target sm_",
                  target.sm, "\n.address_size 64\n\n");
  return out;
}

// Segment k's grid-stride loop over its tuples [first, first + count).
std::string BatchSegmentLoop(const BatchSegment& s, int k) {
  const std::string scope = absl::StrCat("v", k, "_");
  const uint64_t end = uint64_t{s.first} + s.count;
  return absl::StrCat("  // ", Spell(s.variant), "\n",  //
                      "  add.u32 %i, %first, ", s.first, ";\n",
                      "  setp.ge.u32 %p, %i, ", end, ";\n",  //
                      "  @%p bra $", scope, "done;\n",       //
                      "$", scope, "loop:\n",                 //
                      "  mul.wide.u32 %tuple, %i, ", kTupleBytes, ";\n",
                      "  add.u64 %tuple, %in, %tuple;\n",
                      ScopedRegisterBody(s.variant, scope, kBatchResultBytes,
                                         s.dispatch_values),
                      "  add.u32 %i, %i, %stride;\n",        //
                      "  setp.lt.u32 %p, %i, ", end, ";\n",  //
                      "  @%p bra $", scope, "loop;\n",       //
                      "$", scope, "done:\n");
}

// Source `i` of `v` as an immediate holding `bits`: the text the instruction
// reads, which is a register set by a line appended to `moves` where PTX
// does not take an immediate there (UsesImmediate) and for CC.CF's operand.
std::string ImmediateSource(absl::string_view scope, const Variant& v, int i,
                            uint64_t bits, std::string& moves) {
  const std::string value = Immediate(v, i, bits);
  if (!IsCarryInSource(v, i) && UsesImmediate(v, i, bits)) return value;
  const std::string reg = SourceRegister(scope, i);
  const int width = IsCarryInSource(v, i) ? 32 : SourceWidth(v, i);
  absl::StrAppend(&moves, PtxSetRegister(width, reg, value));
  return reg;
}

// Tuple `index` of a batch run as written (BatchSegment::written): its
// runtime sources loaded from the input buffer, the others immediates, the
// result in its kBatchResultBytes slot.
std::string WrittenBody(absl::string_view scope, const Tuple& t,
                        uint32_t index) {
  const Variant& v = t.variant;
  std::string loads, moves;
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(v); ++i) {
    if (t.IsRuntime(i) && CanBeRuntime(v, i)) {
      sources.push_back(SourceRegister(scope, i));
      absl::StrAppend(
          &loads,
          LoadSource(
              scope, v, i,
              absl::StrCat("%in+", uint64_t{kTupleBytes} * index + 8 * i)));
    } else {
      sources.push_back(ImmediateSource(scope, v, i, t.operands.v[i], moves));
    }
  }
  const uint64_t slot = uint64_t{kBatchResultBytes} * index;
  std::string out =
      absl::StrCat("  // tuple ", index, ": ", FormattedInstruction(t), "\n",
                   loads, moves, InstructionWithCarries(scope, v, sources),
                   StoreResult(scope, v, absl::StrCat("%out+", slot)));
  const std::string flag_slot = absl::StrCat("%out+", slot + 8);
  if (HasCarryOut(v)) {
    absl::StrAppend(&out, StoreFlagWord(scope, flag_slot));
  } else {
    absl::StrAppend(&out, "  mov.u64 %result, 0;\n", "  st.global.u64 [",
                    flag_slot, "], %result;\n");
  }
  return out;
}

// Segment k's tuples as written, each once, by the grid's first thread:
// immediates differ from tuple to tuple, so there is no loop to share.
std::string BatchSegmentWritten(const BatchSegment& s, int k) {
  const std::string scope = absl::StrCat("v", k, "_");
  std::string out = absl::StrCat(
      "  // ", Spell(s.variant), ": ", s.count,
      s.count == 1 ? " tuple" : " tuples", " as written, by thread 0\n",
      "  setp.ne.u32 %p, %first, 0;\n", "  @%p bra $", scope, "done;\n");
  for (uint32_t j = 0; j < s.count; ++j) {
    absl::StrAppend(&out, WrittenBody(scope, s.written[j], s.first + j));
  }
  absl::StrAppend(&out, "$", scope, "done:\n");
  return out;
}

}  // namespace

std::string BatchModule(std::span<const BatchSegment> segments,
                        const PtxTarget& target) {
  std::string declarations, loops;
  for (size_t k = 0; k < segments.size(); ++k) {
    absl::StrAppend(
        &declarations,
        ScopedDeclarations(segments[k].variant, absl::StrCat("v", k, "_")));
    absl::StrAppend(&loops, segments[k].written.empty()
                                ? BatchSegmentLoop(segments[k], k)
                                : BatchSegmentWritten(segments[k], k));
  }
  return absl::StrCat(
      BatchHeader(segments, target), ".visible .entry ", kRegisterEntry, "(\n",
      "    .param .u64 ptxdiff_in,\n", "    .param .u64 ptxdiff_out,\n",
      "    .param .u32 ptxdiff_n)\n", "{\n", "  .reg .pred %p;\n",
      "  .reg .b32 %i, %n, %t, %stride, %first;\n",
      "  .reg .b64 %in, %out, %tuple, %slot, %result;\n", declarations,
      "  ld.param.u64 %in, [ptxdiff_in];\n", "  cvta.to.global.u64 %in, %in;\n",
      "  ld.param.u64 %out, [ptxdiff_out];\n",
      "  cvta.to.global.u64 %out, %out;\n", "  ld.param.u32 %n, [ptxdiff_n];\n",
      "  mov.u32 %first, %ctaid.x;\n", "  mov.u32 %t, %ntid.x;\n",
      "  mov.u32 %stride, %tid.x;\n",
      "  mad.lo.u32 %first, %first, %t, %stride;\n",
      "  mov.u32 %stride, %nctaid.x;\n", "  mul.lo.u32 %stride, %stride, %t;\n",
      loops, "  ret;\n", "}\n");
}

bool UsesImmediate(const Variant& v, int i, uint64_t bits) {
  if (MustBeImmediate(v, i)) return true;
  if (!MayBeImmediate(v, i)) return false;
  // ptxas: "Arguments mismatch" for an immediate packed operand.
  if (IsPacked(v.type)) return false;
  // ptxas: "value '300' out of range, expected to be in range [0..255]" for
  // bfe's pos/len and bfi's pos/len, which are 32-bit in a register.
  const bool position = (v.family == Family::kBfe && i >= 1) ||
                        (v.family == Family::kBfi && i >= 2);
  if (position) return (bits & 0xffffffff) <= 255;
  return true;
}

std::string ImmediateBody(const Variant& v, const Operands& tuple, int slot) {
  std::string comment = absl::StrCat("  // tuple ", slot, ":");
  std::string moves;
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(v); ++i) {
    absl::StrAppend(&comment, " ", Immediate(v, i, tuple.v[i]));
    sources.push_back(ImmediateSource("", v, i, tuple.v[i], moves));
  }
  const int offset = ResultBytes(v) * slot;
  return absl::StrCat(
      comment, "\n", moves, InstructionWithCarries("", v, sources),
      StoreResult("", v, absl::StrCat("%out+", offset)),
      HasCarryOut(v) ? StoreFlagWord("", absl::StrCat("%out+", offset + 8))
                     : "");
}

std::string ImmediateKernel(absl::string_view entry,
                            absl::string_view declarations,
                            absl::string_view bodies) {
  return absl::StrCat(
      ".visible .entry ", entry, "(\n", "    .param .u64 ptxdiff_out)\n", "{\n",
      "  .reg .b64 %out, %result;\n", declarations,
      "  ld.param.u64 %out, [ptxdiff_out];\n",
      "  cvta.to.global.u64 %out, %out;\n", bodies, "  ret;\n", "}\n");
}

std::string ImmediateEntryName(int k) {
  return absl::StrCat("ptxdiff_immediate_", k);
}

std::string ImmediateModule(const Variant& v, const PtxTarget& target,
                            std::span<const Operands> tuples, int group_size) {
  std::string out = ModuleHeader(v, target);
  const std::string declarations = OperandDeclarations(v);
  for (size_t first = 0, k = 0; first < tuples.size();
       first += group_size, ++k) {
    const size_t end = std::min(tuples.size(), first + group_size);
    std::string bodies;
    for (size_t j = first; j < end; ++j) {
      absl::StrAppend(&bodies, ImmediateBody(v, tuples[j], j - first));
    }
    absl::StrAppend(
        &out, ImmediateKernel(ImmediateEntryName(k), declarations, bodies));
  }
  return out;
}

}  // namespace ptxdiff
