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
// the known errata).
void Judge(const Tuple& t, const SlotValue& slot, TupleCalibration& out) {
  const Result want =
      EvaluateWithReading(Reading::kHardware, t.variant, t.operands);
  out.outcome = CalibrationOutcome::kAgrees;
  if (!want.defined()) {
    out.undefined = true;
    return;
  }
  bool carry = false;
  if (slot.flag_word.has_value()) {
    const std::optional<bool> c = CarryOfFlagWord(t.variant, *slot.flag_word);
    carry = c.value_or(!want.carry);  // an unreadable flag word disagrees
  }
  if (slot.bits == want.bits && carry == want.carry) return;
  out.outcome = CalibrationOutcome::kDisagrees;
  out.line = absl::StrFormat("%s: the evaluator gives 0x%x%s",
                             ReplayLine(t.variant, t.operands, want), slot.bits,
                             slot.flag_word ? absl::StrCat(" cf=", carry) : "");
}

// Runs kernel k of a compiled module for tuple t.
TupleCalibration RunOne(const SassArchInfo& arch, const PtxModule& module,
                        int k, absl::string_view text, const Tuple& t,
                        std::string* trace) {
  TupleCalibration out;
  absl::StatusOr<std::vector<SassSlot>> kernel = DecodeSassKernel(arch, text);
  if (!kernel.ok()) {
    out.blocker = out.why_not = std::string(kernel.status().message());
    return out;
  }
  const std::vector<KernelArgument> args = RuntimeArguments(t);
  const KernelExecution run = ExecuteKernel(arch, *kernel, args, 16);
  if (!run.ran) {
    out.blocker = run.blocker;
    out.why_not = run.why_not;
    return out;
  }
  const auto values = KernelResults(module, k, run.stores);
  if (!values.has_value()) {
    out.blocker = out.why_not = "stores that are not the tuple's result";
    return out;
  }
  Judge(t, (*values)[0], out);
  if (out.outcome == CalibrationOutcome::kDisagrees && trace != nullptr &&
      trace->empty()) {
    *trace = TraceText(arch, *kernel, args);
  }
  return out;
}

absl::Status CalibrateInto(const std::string& ptxas, const SassArchInfo& arch,
                           std::span<const Tuple> tuples, int opt_level,
                           TupleCalibration* out, std::string* trace) {
  if (tuples.empty()) return absl::OkStatus();
  const PtxModule module =
      BuildPtxModule(tuples, {.target = arch.name, .tuples_per_kernel = 1});
  PTXDIFF_ASSIGN_OR_RETURN(const PtxasOutput compiled,
                           RunPtxas(ptxas, arch.name, module.text, opt_level));
  if (!compiled.ok) {
    // Split until what ptxas rejects is alone.
    if (tuples.size() == 1) {
      out->rejected = true;
      out->blocker = out->why_not = "rejected by ptxas";
      return absl::OkStatus();
    }
    const size_t half = tuples.size() / 2;
    PTXDIFF_RETURN_IF_ERROR(
        CalibrateInto(ptxas, arch, tuples.first(half), opt_level, out, trace));
    return CalibrateInto(ptxas, arch, tuples.subspan(half), opt_level,
                         out + half, trace);
  }
  PTXDIFF_ASSIGN_OR_RETURN(const ElfFile elf, ParseElf(compiled.cubin));
  PTXDIFF_ASSIGN_OR_RETURN(const auto texts, KernelTexts(elf));
  for (size_t k = 0; k < tuples.size(); ++k) {
    const auto text = texts.find(module.kernels[k]);
    if (text == texts.end()) {
      return absl::InternalError(absl::StrCat("no kernel ", module.kernels[k]));
    }
    out[k] = RunOne(arch, module, static_cast<int>(k), text->second, tuples[k],
                    trace);
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<KernelArgument> RuntimeArguments(const Tuple& t) {
  std::vector<KernelArgument> out;
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (!t.IsRuntime(i)) continue;
    const int width = SourceWidth(t.variant, i);
    out.push_back({.bytes = width == 1 ? 4 : std::max(width, 16) / 8,
                   .value = t.operands.v[i]});
  }
  return out;
}

absl::StatusOr<std::vector<TupleCalibration>> CalibrateEach(
    const std::string& ptxas, const SassArchInfo& arch,
    std::span<const Tuple> tuples, int opt_level) {
  std::vector<TupleCalibration> out(tuples.size());
  PTXDIFF_RETURN_IF_ERROR(
      CalibrateInto(ptxas, arch, tuples, opt_level, out.data(), nullptr));
  return out;
}

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
  std::vector<TupleCalibration> each(tuples.size());
  CalibrationReport report;
  PTXDIFF_RETURN_IF_ERROR(CalibrateInto(ptxas, arch, tuples, opt_level,
                                        each.data(), &report.first_trace));
  for (size_t k = 0; k < tuples.size(); ++k) {
    const TupleCalibration& c = each[k];
    ++report.tuples;
    if (c.rejected) {
      ++report.rejected;
      continue;
    }
    if (c.outcome == CalibrationOutcome::kNotRun) {
      ++report.not_run[c.blocker];
      report.not_run_example.emplace(
          c.blocker, absl::StrCat(Spell(tuples[k].variant), ": ", c.why_not));
      continue;
    }
    ++report.executed;
    if (c.outcome == CalibrationOutcome::kAgrees) {
      ++report.agreed;
      report.undefined += c.undefined;
      continue;
    }
    report.disagreements.push_back(c.line);
    report.disagreeing.push_back(tuples[k]);
  }
  return report;
}

}  // namespace ptxdiff
