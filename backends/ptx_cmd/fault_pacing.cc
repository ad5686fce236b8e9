#include "backends/ptx_cmd/fault_pacing.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "protocol/protocol.h"

namespace ptxdiff {
namespace ptx_cmd_internal {

std::optional<std::string> FaultedEnough(
    const Variant& v, const absl::flat_hash_map<Variant, BatchFaults>& faults,
    const absl::flat_hash_map<Family, int>& family_hang_runs) {
  const auto it = faults.find(v);
  const auto family = family_hang_runs.find(v.family);
  const bool family_hangs = family != family_hang_runs.end() &&
                            family->second >= kHangRunsPerFamilyInBatch;
  if ((it == faults.end() || !it->second.Enough()) && !family_hangs)
    return std::nullopt;
  return absl::StrCat(
      kNotRunPrefix, "ptx-cmd: ",
      family_hangs ? absl::StrCat(InfoOf(v.family).opcode, " hung the tool in ",
                                  family->second, " runs of this batch")
                   : absl::StrCat(Spell(v), " crashed or hung the tool in ",
                                  it->second.crash_runs + it->second.hang_runs,
                                  " runs of this batch"),
      "; its other tuples were not run, each would cost a run");
}

std::vector<Part> WithoutFaultyVariants(
    std::vector<Part> parts,
    const absl::flat_hash_map<Variant, BatchFaults>& faults,
    const absl::flat_hash_map<Family, int>& family_hang_runs,
    Declines& declines) {
  if (faults.empty()) return parts;
  std::vector<Part> kept;
  for (Part& part : parts) {
    Part rest{.isolating = part.isolating, .apart = part.apart};
    for (Segment& s : part.segments) {
      if (const std::optional<std::string> why =
              FaultedEnough(s.variant, faults, family_hang_runs)) {
        declines.Add(s.positions, DeclineCode::kOther, *why);
      } else {
        rest.segments.push_back(std::move(s));
      }
    }
    if (!rest.segments.empty()) kept.push_back(std::move(rest));
  }
  return kept;
}

HeldApartParts::HeldApartParts(std::vector<Part>& parts) {
  absl::flat_hash_map<Variant, size_t> index;
  std::vector<Part> rest;
  for (Part& part : parts) {
    if (!part.apart) {
      rest.push_back(std::move(part));
      continue;
    }
    const Variant& v = part.segments[0].variant;
    const auto [it, added] = index.try_emplace(v, held_.size());
    if (added) held_.push_back({.variant = v});
    held_[it->second].parts.push_back(std::move(part));
  }
  parts = std::move(rest);
}

void HeldApartParts::Release(
    std::vector<Part>& parts,
    absl::FunctionRef<std::optional<std::string>(const Variant&)> enough,
    Declines& declines) {
  for (Held& h : held_) {
    if (const std::optional<std::string> why = enough(h.variant)) {
      for (const Part& part : h.parts)
        DeclineAll(part, DeclineCode::kOther, *why, declines);
      h.parts.clear();
      continue;
    }
    for (size_t i = 0; i < h.release && !h.parts.empty(); ++i) {
      parts.push_back(std::move(h.parts.front()));
      h.parts.pop_front();
    }
    h.release *= 2;
  }
  std::erase_if(held_, [](const Held& h) { return h.parts.empty(); });
}

void HeldApartParts::DeclineHeld(DeclineCode code, const std::string& why,
                                 Declines& declines) {
  for (const Held& h : held_) {
    for (const Part& part : h.parts) DeclineAll(part, code, why, declines);
  }
  held_.clear();
}

}  // namespace ptx_cmd_internal
}  // namespace ptxdiff
