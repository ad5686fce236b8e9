// What the ptx-cmd tools run from a campaign's --out refused, for the
// report (issue 62): the classes confirmed (a line each, with what the tool
// said and how many variants they hold) and the variants learned one by
// one, grouped by what the tool said. Read from <out>/refusals/
// (backends/ptx_cmd/refusal_memory.h), which `ptxdiff fuzz` and
// `ptxdiff programs` on the tool both keep: a few lines where the refused
// variants are tens of thousands.

#ifndef PTXDIFF_REPORT_TOOL_REFUSALS_H_
#define PTXDIFF_REPORT_TOOL_REFUSALS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ptxdiff {

struct ToolRefusals {
  std::string out_dir, command, target;
  struct Class {
    std::string what;     // RefusalClass::Describe()
    std::string message;  // what the tool said, for each sample alike
    int64_t variants = 0;  // the variants it holds
    int sampled = 0;       // run alone to confirm it
  };
  std::vector<Class> classes;
  // Variants refused one by one (in no class), by what the tool said.
  struct Message {
    std::string message;
    int64_t variants = 0;
    std::vector<std::string> examples;  // a few spellings, with their shape
  };
  std::vector<Message> messages;
  int64_t variants_refused = 0;  // by class or alone, in either shape
};

// The tools `out_dir`/refusals holds, by command then target; none if it
// has no such directory. A memory that cannot be read (no regular file,
// past its bound) is left out and said in `damage`, a line each.
std::vector<ToolRefusals> ReadToolRefusals(const std::string& out_dir,
                                           std::vector<std::string>& damage);

// As the report's JSON: an array (docs/report.md).
std::string ToolRefusalsJson(const std::vector<ToolRefusals>& tools);

}  // namespace ptxdiff

#endif  // PTXDIFF_REPORT_TOOL_REFUSALS_H_
