#include "absl/strings/string_view.h"
#include "isa/coverage_doc.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

std::string Level(const IsaLevel& level) {
  if (level.ptx == 0) return "n/a (Intel vISA)";
  const std::string sm =
      level.sm == 0 ? "all targets" : absl::StrCat("sm_", level.sm);
  return absl::StrFormat("PTX %d.%d, %s", level.ptx / 10, level.ptx % 10, sm);
}

template <typename E, typename F>
std::string Values(const std::vector<E>& values, F spell) {
  std::vector<std::string> out;
  for (E e : values) {
    absl::string_view s = spell(e);
    out.push_back(s.empty() ? "(none)" : absl::StrCat("`.", s, "`"));
  }
  return absl::StrJoin(out, " ");
}

// "type: `.u32` `.s32`; sat: optional; ..." for one family.
std::string Axes(const FamilyInfo& f) {
  const bool visa = f.family == Family::kVisaShl;
  auto type = [visa](Type t) { return visa ? SpellVisaType(t) : SpellType(t); };
  std::vector<std::string> axes;
  auto add = [&](absl::string_view name, const std::string& values) {
    if (!values.empty()) axes.push_back(absl::StrCat(name, ": ", values));
  };
  add(visa ? "dst" : (IsVideo(f.family) ? "dtype" : "type"),
      Values(f.types, type));
  add(visa ? "src0" : "atype", Values(f.atypes, type));
  add(visa ? "src1" : "btype", Values(f.btypes, type));
  add("mode", Values(f.mul_modes, SpellMulMode));
  add("mode", Values(f.shift_modes, SpellShiftMode));
  add("direction", Values(f.directions, SpellDirection));
  add("cmp", Values(f.cmps, SpellCmp));
  add("scale", Values(f.scales, SpellScale));
  if (f.optional_sat) axes.push_back("`.sat` optional");
  if (f.optional_relu) axes.push_back("`.relu` optional");
  if (f.optional_shiftamt) axes.push_back("`.shiftamt` optional");
  add("secop", Values(f.secops, SpellSecOp));
  add("dsel", Values(f.dsels, SpellSel));
  add("asel", Values(f.asels, SpellSel));
  add("bsel", Values(f.bsels, SpellSel));
  if (!f.vmad_forms.empty()) {
    axes.push_back("form: plain, `-a` (negated product), `-c`, `.po`");
  }
  return absl::StrJoin(axes, "; ");
}

}  // namespace

std::string RenderIsaCoverage() {
  std::string out =
      "# ISA coverage\n\n"
      "Generated from the instruction table (`isa/family_table.cc`) by\n"
      "`cmake --build build/asan --target update_isa_coverage`; the test\n"
      "`CoverageDocTest.CheckedInDocIsCurrent` fails when this file is "
      "stale.\n\n";
  std::map<Family, int> counts;
  std::map<Family, IsaLevel> highest;
  for (const Variant& v : AllVariants()) {
    ++counts[v.family];
    IsaLevel level = LevelOf(v);
    IsaLevel& h = highest[v.family];
    if (level.ptx > h.ptx) h = level;
  }
  absl::StrAppend(&out, "Variants in all: ", AllVariants().size(), " in ",
                  AllFamilies().size(), " families.\n\n");
  absl::StrAppend(&out,
                  "| family | variants | minimum | newest forms need | "
                  "section | source | semantics |\n"
                  "|---|---:|---|---|---|---|---|\n");
  for (const FamilyInfo& f : AllFamilies()) {
    const IsaLevel& h = highest[f.family];
    const bool same = h.ptx == f.min_level.ptx && h.sm == f.min_level.sm;
    absl::StrAppend(&out, "| `", f.opcode, "` | ", counts[f.family], " | ",
                    Level(f.min_level), " | ", same ? "-" : Level(h), " | ",
                    f.section, " | ", f.source, " | ", f.summary, " |\n");
  }
  absl::StrAppend(&out, "\n## Axes per family\n\n");
  for (const FamilyInfo& f : AllFamilies()) {
    Variant first;
    bool found = false;
    ForEachVariant(f.family, [&](const Variant& v) {
      if (!found) first = v, found = true;
    });
    absl::StrAppend(&out, "- `", f.opcode, "` (e.g. `", Spell(first), "`): ",
                    Axes(f), "\n");
  }
  absl::StrAppend(
      &out,
      "\nIntel vISA Q/UQ types are not supported on every platform (those "
      "without int64:\nICL, TGL, DG2, MTL, ...).\n");
  return out;
}

}  // namespace ptxdiff
