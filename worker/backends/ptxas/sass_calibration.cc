#include "worker/backends/ptxas/sass_calibration.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "worker/backends/carry_support.h"
#include "worker/backends/ptxas/cubin.h"
#include "worker/backends/ptxas/ptx_module.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"
#include "worker/backends/ptxas/sass_execution.h"

namespace ptxdiff {
namespace {

// The kernel parameters after the output pointer: each runtime source, as
// PtxParamType declares it (a predicate as a 32-bit word, 8 bits as 16).
std::vector<KernelArgument> Arguments(const Tuple& t) {
  std::vector<KernelArgument> out;
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (!t.IsRuntime(i)) continue;
    const int width = SourceWidth(t.variant, i);
    out.push_back({.bytes = width == 1 ? 4 : std::max(width, 16) / 8,
                   .value = t.operands.v[i]});
  }
  return out;
}

// The run of `kernel` on `args` as its trace.
std::string TraceText(const SassArchInfo& arch,
                      const std::vector<SassSlot>& kernel,
                      std::span<const KernelArgument> args) {
  const SassRun run = ExecuteKernel(arch, kernel, args, 16, /*trace=*/true).run;
  std::string out;
  for (const SassTraceStep& s : run.trace) {
    absl::StrAppendFormat(
        &out, "/*%04x*/  %-46s %016x %011x  %s\n", s.pc, s.text, s.word_lo,
        s.word_hi,
        s.executed ? absl::StrFormat("-> 0x%x", s.dst_value) : "(guard false)");
  }
  return out;
}

// Judges one executed tuple against the hardware reading (the oracle with
// the known errata); false where they disagree.
bool Judge(const Tuple& t, const SlotValue& slot, CalibrationReport& report) {
  const Result want =
      EvaluateWithReading(Reading::kHardware, t.variant, t.operands);
  if (!want.defined()) {
    ++report.undefined;
    ++report.agreed;
    return true;
  }
  bool carry = false;
  if (slot.flag_word.has_value()) {
    const std::optional<bool> c = CarryOfFlagWord(t.variant, *slot.flag_word);
    carry = c.value_or(!want.carry);  // an unreadable flag word disagrees
  }
  if (slot.bits == want.bits && carry == want.carry) {
    ++report.agreed;
    return true;
  }
  report.disagreements.push_back(absl::StrFormat(
      "%s: the evaluator gives 0x%x%s", ReplayLine(t.variant, t.operands, want),
      slot.bits, slot.flag_word ? absl::StrCat(" cf=", carry) : ""));
  report.disagreeing.push_back(t);
  return false;
}

}  // namespace

void CalibrationReport::Merge(const CalibrationReport& o) {
  tuples += o.tuples;
  rejected += o.rejected;
  executed += o.executed;
  agreed += o.agreed;
  undefined += o.undefined;
  for (const auto& [k, n] : o.not_run) not_run[k] += n;
  not_run_example.insert(o.not_run_example.begin(), o.not_run_example.end());
  disagreements.insert(disagreements.end(), o.disagreements.begin(),
                       o.disagreements.end());
  disagreeing.insert(disagreeing.end(), o.disagreeing.begin(),
                     o.disagreeing.end());
  if (first_trace.empty()) first_trace = o.first_trace;
}

std::string CalibrationReport::Summary() const {
  std::vector<std::pair<int64_t, std::string>> blockers;
  for (const auto& [k, n] : not_run) blockers.emplace_back(n, k);
  std::sort(blockers.rbegin(), blockers.rend());
  std::vector<std::string> parts;
  for (const auto& [n, k] : blockers) {
    parts.push_back(absl::StrCat(n, "x ", k, " (", not_run_example.at(k), ")"));
  }
  return absl::StrFormat(
      "%d tuples: %d executed (%.1f%%), %d agree (%d left open by the spec), "
      "%d disagreements, %d rejected by ptxas; not run: %s",
      tuples, executed, tuples ? 100.0 * executed / tuples : 0.0, agreed,
      undefined, disagreements.size(), rejected,
      parts.empty() ? "none" : absl::StrJoin(parts, "; "));
}

absl::StatusOr<CalibrationReport> CalibrateTuples(const std::string& ptxas,
                                                  const SassArchInfo& arch,
                                                  std::span<const Tuple> tuples,
                                                  int opt_level) {
  CalibrationReport report;
  if (tuples.empty()) return report;
  const PtxModule module =
      BuildPtxModule(tuples, {.target = arch.name, .tuples_per_kernel = 1});
  PTXDIFF_ASSIGN_OR_RETURN(const PtxasOutput out,
                           RunPtxas(ptxas, arch.name, module.text, opt_level));
  if (!out.ok) {
    // Split until what ptxas rejects is alone.
    if (tuples.size() == 1) {
      report.tuples = report.rejected = 1;
      return report;
    }
    const size_t half = tuples.size() / 2;
    PTXDIFF_ASSIGN_OR_RETURN(
        report, CalibrateTuples(ptxas, arch, tuples.first(half), opt_level));
    PTXDIFF_ASSIGN_OR_RETURN(
        const CalibrationReport second,
        CalibrateTuples(ptxas, arch, tuples.subspan(half), opt_level));
    report.Merge(second);
    return report;
  }
  PTXDIFF_ASSIGN_OR_RETURN(const ElfFile elf, ParseElf(out.cubin));
  PTXDIFF_ASSIGN_OR_RETURN(const auto texts, KernelTexts(elf));
  for (size_t k = 0; k < tuples.size(); ++k) {
    ++report.tuples;
    const auto text = texts.find(module.kernels[k]);
    if (text == texts.end()) {
      return absl::InternalError(absl::StrCat("no kernel ", module.kernels[k]));
    }
    PTXDIFF_ASSIGN_OR_RETURN(const std::vector<SassSlot> kernel,
                             DecodeSassKernel(arch, text->second));
    const std::vector<KernelArgument> args = Arguments(tuples[k]);
    const KernelExecution run = ExecuteKernel(arch, kernel, args, 16);
    if (!run.ran) {
      ++report.not_run[run.blocker];
      report.not_run_example.emplace(
          run.blocker,
          absl::StrCat(Spell(tuples[k].variant), ": ", run.why_not));
      continue;
    }
    const auto values = KernelResults(module, static_cast<int>(k), run.stores);
    if (!values.has_value()) {
      ++report.not_run["stores that are not the tuple's result"];
      continue;
    }
    ++report.executed;
    if (!Judge(tuples[k], (*values)[0], report) && report.first_trace.empty()) {
      report.first_trace = TraceText(arch, kernel, args);
    }
  }
  return report;
}

}  // namespace ptxdiff
