#include "isa/operand_form.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling.h"

namespace ptxdiff {

bool CanBeRuntime(const Variant& v, int i) {
  return InfoOf(v.family).isa == TargetIsa::kPtx && i < NumSources(v) &&
         !IsCarryInSource(v, i) && !IsSelectorSource(v, i) &&
         !MustBeImmediate(v, i);
}

uint8_t RuntimeCapableSources(const Variant& v) {
  uint8_t mask = 0;
  for (int i = 0; i < NumSources(v); ++i) {
    if (CanBeRuntime(v, i)) mask |= 1 << i;
  }
  return mask;
}

std::string RuntimeSourceNames(const Variant& v, uint8_t runtime) {
  std::vector<absl::string_view> names;
  for (int i = 0; i < NumSources(v); ++i) {
    if (IsRuntimeSource(runtime, i)) names.push_back(SourceName(v, i));
  }
  return absl::StrJoin(names, ",");
}

absl::StatusOr<uint8_t> ParseRuntimeSources(const Variant& v,
                                            absl::string_view names) {
  uint8_t runtime = 0;
  for (absl::string_view name :
       absl::StrSplit(names, absl::ByAnyChar(", "), absl::SkipEmpty())) {
    int source = -1;
    for (int i = 0; i < NumSources(v); ++i) {
      if (SourceName(v, i) == name) source = i;
    }
    if (source < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          Spell(v), " has no source '", name, "' to be a runtime value"));
    }
    if (!CanBeRuntime(v, source)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "source '", name, "' of ", Spell(v), " cannot be a runtime value",
          MustBeImmediate(v, source) ? " (PTX requires an immediate there)"
                                     : ""));
    }
    runtime |= 1 << source;
  }
  return runtime;
}

std::string KernelParamList(
    std::span<const Tuple> tuples,
    absl::FunctionRef<std::string(int t, int i)> param_name) {
  std::string out = ".param .u64 out";
  for (size_t t = 0; t < tuples.size(); ++t) {
    const Variant& v = tuples[t].variant;
    for (int i = 0; i < NumSources(v); ++i) {
      if (!tuples[t].IsRuntime(i)) continue;
      absl::StrAppend(&out, ", .param ", PtxParamType(SourceWidth(v, i)), " ",
                      param_name(static_cast<int>(t), i));
    }
  }
  return out;
}

std::string FormattedInstruction(const Tuple& t) {
  const Variant& v = t.variant;
  std::vector<std::string> sources = HexOperands(v, t.operands);
  for (int i = 0; i < NumSources(v); ++i) {
    if (t.IsRuntime(i)) sources[i] = absl::StrCat("%", SourceName(v, i));
  }
  return PtxInstruction(v, "d", sources);
}

}  // namespace ptxdiff
