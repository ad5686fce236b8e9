#include "isa/coverage_doc.h"

#include <map>
#include <span>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
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

// The order the doc lists a family's axes in (which predates axes.inc, whose
// order is the order variants are listed in); every axis exactly once.
constexpr Axis kDocOrder[] = {
    Axis::kType,      Axis::kAtype,     Axis::kBtype,    Axis::kMulMode,
    Axis::kShiftMode, Axis::kDirection, Axis::kPrmtMode, Axis::kCmp,
    Axis::kBoolOp,    Axis::kScale,     Axis::kSat,      Axis::kCc,
    Axis::kRelu,      Axis::kShiftamt,  Axis::kSecOp,    Axis::kDsel,
    Axis::kAsel,      Axis::kBsel,      Axis::kVmadForm, Axis::kMask};

constexpr bool ListsEveryAxisOnce(std::span<const Axis> order) {
  bool seen[kNumAxes] = {};
  for (Axis a : order) {
    if (seen[static_cast<int>(a)]) return false;
    seen[static_cast<int>(a)] = true;
  }
  return order.size() == kNumAxes;
}
static_assert(ListsEveryAxisOnce(kDocOrder), "add the new axis to kDocOrder");

// Intel vISA calls its types dst, src0 and src1; the video instructions call
// their `.type` `.dtype`; set calls its `.atype` `.stype`.
absl::string_view Label(const FamilyInfo& f, const AxisInfo& axis) {
  const bool visa = f.isa == TargetIsa::kIntelVisa;
  switch (axis.axis) {
    case Axis::kType:
      if (visa) return "dst";
      // The spec's `.dtype` where the instruction also has an `.atype`.
      return IsVideo(f.family) || IsSimdVideo(f.family) ||
                     f.family == Family::kSlct || f.family == Family::kCvt ||
                     f.family == Family::kSet
                 ? "dtype"
                 : axis.label;
    case Axis::kAtype:
      if (f.family == Family::kSet) return "stype";
      return visa ? "src0" : axis.label;
    case Axis::kBtype:
      return visa ? "src1" : axis.label;
    default:
      return axis.label;
  }
}

// "type: `.u32` `.s32`", "`.sat` optional", or "" if `f` lacks the axis.
std::string AxisEntry(const FamilyInfo& f, const AxisInfo& axis) {
  const std::vector<int> values = axis.values(f);
  if (values.empty()) return "";
  if (axis.is_flag) return absl::StrCat("`.", axis.token, "` optional");
  if (axis.axis == Axis::kVmadForm) {
    // Only `.po` is an opcode token; the negations are written on operands.
    return absl::StrCat(axis.label,
                        ": plain, `-a` (negated product), `-c`, `.po`");
  }
  std::vector<std::string> spelled;
  for (int value : values) {
    const absl::string_view s = axis.spell(f.family, value);
    // A SIMD mask's kNone is every lane (`.h10`, `.b3210`), not none.
    const absl::string_view none =
        axis.axis == Axis::kMask ? "(all lanes)" : "(none)";
    spelled.push_back(s.empty() ? std::string(none)
                                : absl::StrCat("`.", s, "`"));
  }
  return absl::StrCat(Label(f, axis), ": ", absl::StrJoin(spelled, " "));
}

// "type: `.u32` `.s32`; `.sat` optional; ..." for one family.
std::string Axes(const FamilyInfo& f) {
  std::vector<std::string> entries;
  for (Axis a : kDocOrder) {
    std::string entry = AxisEntry(f, AllAxes()[static_cast<int>(a)]);
    if (!entry.empty()) entries.push_back(std::move(entry));
  }
  return absl::StrJoin(entries, "; ");
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
    absl::StrAppend(&out, "- `", f.opcode, "` (e.g. `", Spell(first),
                    "`): ", Axes(f), "\n");
  }
  absl::StrAppend(
      &out,
      "\nIntel vISA Q/UQ types are not supported on every platform (those "
      "without int64:\nICL, TGL, DG2, MTL, ...).\n"
      "\nThe SIMD video families' `.asel`/`.bsel` selectors (`a.h01`, "
      "`b.b7654`) are no axis:\nthey are the value of a fourth source, "
      "`sel`, an immediate that the instruction\ntext writes as those "
      "suffixes (`isa/family_table.h`, SimdSelector).\n");
  return out;
}

}  // namespace ptxdiff
