#include "triage/repro_ptx.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {

std::string BitType(int width) { return absl::StrCat(".b", width); }

// The entry's parameters: the output pointer, then each runtime source by
// its name.
std::string Parameters(const Tuple& t) {
  return KernelParamList({&t, 1}, [&](int, int i) {
    return std::string(SourceName(t.variant, i));
  });
}

// How to run it: where the result goes, and which values the runtime
// sources take for the oracle's answer above.
std::string Usage(const Tuple& t) {
  const Variant& v = t.variant;
  std::string out = absl::StrCat(
      "// The kernel takes one .u64 pointer and stores the result there",
      HasCarryOut(v)
          ? (CarryIsBorrow(v) ? ", and CC.CF as a u32 at +8 (subc.u32 r, 0, 0: "
                                "0xffffffff after a borrow)"
                              : ", and CC.CF as a u32 at +8 (addc.u32 r, 0, 0)")
          : "",
      ".\n");
  if (t.runtime != 0) {
    std::vector<std::string> witness;
    const std::vector<std::string> values = HexOperands(v, t.operands);
    for (int i = 0; i < NumSources(v); ++i) {
      if (t.IsRuntime(i))
        witness.push_back(absl::StrCat(SourceName(v, i), " = ", values[i]));
    }
    absl::StrAppend(
        &out,
        "// Runtime operands, unknown to the compiler, are parameters; the "
        "oracle's answer is for ",
        absl::StrJoin(witness, ", "), ".\n");
  }
  return out;
}

}  // namespace

std::string ReproPtx(const Tuple& t, int sm) {
  const Variant& v = t.variant;
  sm = std::max(sm, LevelOf(v).sm);
  const int ptx_version = std::max(LevelOf(v).ptx, 80);
  const int result_width = ResultWidth(v);
  const Result expected = Evaluate(v, t.operands);
  std::string out = absl::StrFormat(
      "// ptxdiff reproducer: %s\n"
      "// expected by the oracle: %s (%s)\n"
      "// Assemble: ptxas -arch=sm_%d repro.ptx -o repro.cubin\n"
      "%s"
      ".version %d.%d\n.target sm_%d\n.address_size 64\n\n"
      ".visible .entry repro(%s)\n{\n"
      "  .reg .pred %%p<8>;\n  .reg .b16 %%h<8>;\n  .reg .b32 %%r<8>;\n"
      "  .reg .b64 %%rd<8>;\n"
      "  ld.param.u64 %%rd7, [out];\n  cvta.to.global.u64 %%rd7, %%rd7;\n",
      FormattedInstruction(t), ResultText(v, expected.bits, expected.carry),
      Token(expected.undefined), sm, Usage(t), ptx_version / 10,
      ptx_version % 10, sm, Parameters(t));
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(v); ++i) {
    const int width = SourceWidth(v, i);
    if (IsCarryInSource(v, i)) {  // implicit: set CC.CF below
      sources.emplace_back();
      continue;
    }
    if (MustBeImmediate(v, i)) {  // lop3's LUT, a SIMD selector: in the text
      sources.push_back(HexOperand(Low(t.operands.v[i], width), width));
      continue;
    }
    sources.push_back(PtxRegister(width, i + 1));
    absl::StrAppend(
        &out,
        t.IsRuntime(i)
            ? PtxLoadParam(width, sources.back(), SourceName(v, i))
            : PtxSetRegister(width, sources.back(),
                             HexOperand(Low(t.operands.v[i], width), width)));
  }
  // CC.CF is set and read with an instruction of the variant's own kind:
  // the spec leaves open how an add reads a sub's borrow and the reverse.
  const bool borrow = CarryIsBorrow(v);
  if (const int cf = CarryInSource(v); cf >= 0) {
    absl::StrAppend(
        &out, "  mov.b32 %r5, ", t.operands.v[cf] & 1, ";\n",
        borrow ? "  sub.cc.u32 %r6, 0, %r5;  // CC.CF = borrow of 0 - cf\n"
               : "  add.cc.u32 %r6, %r5, 0xffffffff;  // CC.CF = carry of "
                 "cf + 0xffffffff\n");
  }
  std::string dest = PtxRegister(result_width, 0);
  absl::StrAppend(&out, "  ", PtxInstruction(v, dest, sources), ";\n");
  if (result_width == 1) {  // setp's predicate: stored as the byte 1 or 0
    absl::StrAppend(&out, "  selp.u16 %h0, 1, 0, ", dest, ";\n");
    dest = "%h0";
  }
  absl::StrAppend(&out, "  st.global", BitType(std::max(result_width, 8)),
                  " [%rd7], ", dest, ";\n");
  if (HasCarryOut(v)) {
    absl::StrAppend(
        &out,
        borrow ? "  subc.u32 %r6, 0, 0;  // 0xffffffff after a borrow, else 0\n"
               : "  addc.u32 %r6, 0, 0;  // the carry: 1 or 0\n",
        "  st.global.b32 [%rd7+8], %r6;\n");
  }
  absl::StrAppend(&out, "  ret;\n}\n");
  return out;
}

}  // namespace ptxdiff
