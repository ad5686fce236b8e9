#include "triage/repro_ptx.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"
#include "oracle/bits.h"
#include "oracle/oracle.h"

namespace ptxdiff {
namespace {


std::string BitType(int width) { return absl::StrCat(".b", width); }

}  // namespace

std::string ReproPtx(const Tuple& t, int sm) {
  const Variant& v = t.variant;
  sm = std::max(sm, LevelOf(v).sm);
  const int ptx_version = std::max(LevelOf(v).ptx, 80);
  const int result_width = ResultWidth(v);
  std::string out = absl::StrFormat(
      "// ptxdiff reproducer: %s\n"
      "// expected by the oracle: %s (%s)\n"
      "// Assemble: ptxas -arch=sm_%d repro.ptx -o repro.cubin\n"
      "// The kernel takes one .u64 pointer and stores the result there.\n"
      ".version %d.%d\n.target sm_%d\n.address_size 64\n\n"
      ".visible .entry repro(.param .u64 out)\n{\n"
      "  .reg .pred %%p<8>;\n  .reg .b16 %%h<8>;\n  .reg .b32 %%r<8>;\n"
      "  .reg .b64 %%rd<8>;\n"
      "  ld.param.u64 %%rd7, [out];\n  cvta.to.global.u64 %%rd7, %%rd7;\n",
      Spell(v), HexOperand(Evaluate(v, t.operands).bits, result_width),
      Token(Evaluate(v, t.operands).undefined), sm, ptx_version / 10,
      ptx_version % 10, sm);
  std::vector<std::string> sources;
  for (int i = 0; i < NumSources(v); ++i) {
    const int width = SourceWidth(v, i);
    sources.push_back(PtxRegister(width, i + 1));
    absl::StrAppend(&out, PtxSetRegister(width, sources.back(),
                                         HexOperand(Low(t.operands.v[i], width), width)));
  }
  std::string dest = PtxRegister(result_width, 0);
  absl::StrAppend(&out, "  ", PtxInstruction(v, dest, sources), ";\n");
  if (result_width == 1) {  // setp's predicate: stored as the byte 1 or 0
    absl::StrAppend(&out, "  selp.u16 %h0, 1, 0, ", dest, ";\n");
    dest = "%h0";
  }
  absl::StrAppend(&out, "  st.global", BitType(std::max(result_width, 8)),
                  " [%rd7], ", dest, ";\n", "  ret;\n}\n");
  return out;
}

}  // namespace ptxdiff
