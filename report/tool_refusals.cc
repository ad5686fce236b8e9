#include "report/tool_refusals.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "report/report_data.h"

namespace ptxdiff {
namespace {

// Spellings of a message's variants shown in the report.
constexpr size_t kExamples = 4;

std::string ShapeName(bool written) {
  return written ? "as written" : "in registers";
}

ToolRefusals Summarize(const std::string& out_dir, const RememberedTool& t) {
  ToolRefusals out{.out_dir = out_dir, .command = t.command, .target = t.target};
  // Each (variant, shape) refused, by class or alone, once.
  absl::flat_hash_set<std::pair<int, bool>> refused;
  for (const RefusalClass& c : t.remembered.classes) {
    ToolRefusals::Class line{.what = c.Describe(),
                             .message = c.message,
                             .sampled = c.sampled};
    for (const Variant& v : VariantsOf(c.family)) {
      if (!c.Contains(v, c.written)) continue;
      ++line.variants;
      refused.insert({VariantIndex(v), c.written});
    }
    out.classes.push_back(std::move(line));
  }
  std::map<std::string, ToolRefusals::Message> by_message;
  for (const auto& [key, why] : t.remembered.variants) {
    if (!refused.insert({VariantIndex(key.first), key.second}).second) continue;
    ToolRefusals::Message& m = by_message[why];
    m.message = why;
    ++m.variants;
    if (m.examples.size() < kExamples) {
      m.examples.push_back(
          absl::StrCat(Spell(key.first), " (", ShapeName(key.second), ")"));
    }
  }
  for (auto& [why, m] : by_message) {
    std::sort(m.examples.begin(), m.examples.end());
    out.messages.push_back(std::move(m));
  }
  std::sort(out.messages.begin(), out.messages.end(),
            [](const auto& a, const auto& b) { return a.variants > b.variants; });
  absl::flat_hash_set<int> variants;
  for (const auto& [index, written] : refused) variants.insert(index);
  out.variants_refused = static_cast<int64_t>(variants.size());
  return out;
}

std::string StringsJson(const std::vector<std::string>& strings) {
  std::vector<std::string> out;
  for (const std::string& s : strings) out.push_back(JsonString(s));
  return absl::StrCat("[", absl::StrJoin(out, ","), "]");
}

}  // namespace

std::vector<ToolRefusals> ReadToolRefusals(const std::string& out_dir,
                                           std::vector<std::string>& damage) {
  std::vector<ToolRefusals> out;
  for (const RememberedTool& t :
       RememberedTools(out_dir + "/refusals", &damage))
    out.push_back(Summarize(out_dir, t));
  return out;
}

std::string ToolRefusalsJson(const std::vector<ToolRefusals>& tools) {
  std::vector<std::string> out;
  for (const ToolRefusals& t : tools) {
    std::vector<std::string> classes, messages;
    for (const ToolRefusals::Class& c : t.classes) {
      classes.push_back(absl::StrCat(
          "{\"what\":", JsonString(c.what), ",\"message\":",
          JsonString(c.message), ",\"variants\":", c.variants,
          ",\"sampled\":", c.sampled, "}"));
    }
    for (const ToolRefusals::Message& m : t.messages) {
      messages.push_back(absl::StrCat(
          "{\"message\":", JsonString(m.message), ",\"variants\":", m.variants,
          ",\"examples\":", StringsJson(m.examples), "}"));
    }
    out.push_back(absl::StrCat(
        "{\"out_dir\":", JsonString(t.out_dir), ",\"tool\":",
        JsonString(t.command), ",\"target\":", JsonString(t.target),
        ",\"variants_refused\":", t.variants_refused, ",\"classes\":[",
        absl::StrJoin(classes, ","), "],\"alone\":[",
        absl::StrJoin(messages, ","), "]}"));
  }
  return absl::StrCat("[", absl::StrJoin(out, ","), "]");
}

}  // namespace ptxdiff
