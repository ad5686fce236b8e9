#include "backends/ptxas/sass_calibration.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "backends/carry_support.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/cubin_link.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_execution.h"
#include "backends/ptxas/scalar_video_findings.h"
#include "common/parallel_jobs.h"
#include "common/run_by_halves.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "oracle/edge_operands.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"

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
// the known errata); a disagreement's replay line where `describe`.
void Judge(const Tuple& t, const SlotValue& slot, bool describe,
           TupleCalibration& out) {
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
  if (!describe) return;
  out.line = absl::StrFormat("%s: the evaluator gives 0x%x%s",
                             ReplayLine(t.variant, t.operands, want), slot.bits,
                             slot.flag_word ? absl::StrCat(" cf=", carry) : "");
}

// Runs `runner`'s kernel (one slot, compiled for t's key) for tuple t.
TupleCalibration RunOne(CompiledKernelRunner& runner, const Tuple& t,
                        int opt_level, bool keep_run, bool describe,
                        std::string* trace) {
  TupleCalibration out;
  const int slot = 0;
  const Tuple* at[] = {&t};
  KernelExecution& run =
      runner.Execute(std::span<const int>(&slot, 1), at, keep_run);
  if (!run.ran) {
    out.blocker = run.blocker;
    out.why_not = run.why_not;
    return out;
  }
  const std::vector<SlotValue>* values = runner.Results();
  if (values == nullptr) {
    out.blocker = out.why_not = "stores that are not the tuple's result";
    return out;
  }
  Judge(t, (*values)[0], describe, out);
  if (keep_run) out.run = std::move(run.run);
  if (out.outcome == CalibrationOutcome::kDisagrees && trace != nullptr &&
      trace->empty() &&
      !KnownCalibrationFinding(t.variant, t.operands, opt_level)) {
    *trace =
        TraceText(runner.arch(), runner.kernel().code, RuntimeArguments(t));
  }
  return out;
}

// Tuples [begin, end) that one kernel answers: those of one variant and
// form whose immediates are the same (kernels differ only there).
struct KernelGroup {
  size_t begin = 0;
  size_t end = 0;
};

bool SameKernel(const Tuple& a, const Tuple& b) {
  if (!(a.variant == b.variant) || a.runtime != b.runtime) return false;
  for (int i = 0; i < kMaxSources; ++i) {
    if (!a.IsRuntime(i) && a.operands.v[i] != b.operands.v[i]) return false;
  }
  return true;
}

std::vector<KernelGroup> GroupsOf(std::span<const Tuple> tuples) {
  std::vector<KernelGroup> out;
  for (size_t k = 0; k < tuples.size(); ++k) {
    if (out.empty() || !SameKernel(tuples[out.back().begin], tuples[k])) {
      out.push_back({k, k});
    }
    out.back().end = k + 1;
  }
  return out;
}

constexpr absl::string_view kUnfinishedCompile =
    "ptxas did not finish the compile";

// A compile that ended without ptxas's verdict: killed by a signal, past
// its timeout, or cut by a stop.
bool Unfinished(const ProcessOutcome& how) {
  return how.signal != 0 || how.timed_out || how.interrupted;
}

std::string LastLine(absl::string_view log) {
  log = absl::StripTrailingAsciiWhitespace(log);
  const size_t newline = log.rfind('\n');
  return std::string(
      newline == absl::string_view::npos ? log : log.substr(newline + 1));
}

// The reference kernels of one ptxas run of `tuples` (a part of
// RunByHalves) into `out`; a module ptxas rejects is halved until what it
// rejects is alone.
absl::StatusOr<PartEnd> CompileReferencePart(const Assembler& assemble,
                                             const SassArchInfo& arch,
                                             std::span<const Tuple> tuples,
                                             int opt_level,
                                             ReferenceKernel* out) {
  const PtxModule module =
      BuildPtxModule(tuples, {.target = arch.name, .tuples_per_kernel = 1});
  PTXDIFF_ASSIGN_OR_RETURN(const PtxasOutput compiled,
                           assemble(module.text, opt_level));
  if (!compiled.ok) {
    if (tuples.size() > 1) return PartEnd::kHalve;
    // A crash or a hang is no verdict on the PTX (the fifteenth fault run:
    // a ptxas that crashed on every compile was said to reject them all).
    out[0].rejected = !Unfinished(compiled.how);
    out[0].why_not =
        out[0].rejected
            ? absl::StrCat("rejected by ptxas: ", LogSummary(compiled.log))
            : absl::StrCat(kUnfinishedCompile, ": ", LastLine(compiled.log));
    return PartEnd::kDone;
  }
  PTXDIFF_ASSIGN_OR_RETURN(const ElfFile elf, ParseElf(compiled.cubin));
  PTXDIFF_RETURN_IF_ERROR(KernelTexts(elf).status());
  for (size_t k = 0; k < tuples.size(); ++k) {
    // With the subroutines it calls: nvJitLink keeps them apart.
    const absl::StatusOr<std::string> text = LinkKernel(elf, module.kernels[k]);
    if (absl::IsNotFound(text.status())) {
      return absl::InternalError(absl::StrCat("no kernel ", module.kernels[k]));
    }
    absl::StatusOr<std::vector<SassSlot>> code =
        text.ok() ? DecodeSassKernel(arch, *text) : text.status();
    if (!code.ok()) {
      out[k].why_not = std::string(code.status().message());
      continue;
    }
    out[k].kernel = std::make_shared<const CompiledKernel>(KernelOf(
        module, static_cast<int>(k), tuples.subspan(k, 1), *std::move(code)));
  }
  return PartEnd::kDone;
}

}  // namespace

void AppendRuntimeArguments(const Tuple& t, std::vector<KernelArgument>& out) {
  for (int i = 0; i < NumSources(t.variant); ++i) {
    if (!t.IsRuntime(i)) continue;
    const int width = SourceWidth(t.variant, i);
    out.push_back({.bytes = PtxParamBytes(width),
                   .value = t.operands.v[i]});
  }
}

std::vector<KernelArgument> RuntimeArguments(const Tuple& t) {
  std::vector<KernelArgument> out;
  AppendRuntimeArguments(t, out);
  return out;
}

absl::StatusOr<std::vector<ReferenceKernel>> CompileReferenceKernels(
    const Assembler& assemble, const SassArchInfo& arch,
    std::span<const Tuple> tuples, int opt_level) {
  std::vector<ReferenceKernel> out(tuples.size());
  PTXDIFF_RETURN_IF_ERROR(
      RunByHalves(0, tuples.size(), [&](size_t begin, size_t end) {
        return CompileReferencePart(assemble, arch,
                                    tuples.subspan(begin, end - begin),
                                    opt_level, &out[begin]);
      }));
  return out;
}

namespace {

// CalibrateOn, keeping the first unexplained disagreement's run in `trace`.
TupleCalibration CalibrateOn(const SassArchInfo& arch,
                             const ReferenceKernel& reference, const Tuple& t,
                             int opt_level, bool keep_run, std::string* trace) {
  if (reference.kernel == nullptr) {
    TupleCalibration out;
    out.rejected = reference.rejected;
    out.why_not = reference.why_not;
    // Crashes and hangs of ptxas are one row of the census, whatever signal.
    out.blocker = absl::StartsWith(reference.why_not, kUnfinishedCompile)
                      ? std::string(kUnfinishedCompile)
                      : reference.why_not;
    return out;
  }
  CompiledKernelRunner runner(arch, *reference.kernel);
  return RunOne(runner, t, opt_level, keep_run, /*describe=*/true, trace);
}

// Each group's first tuple compiled by `assemble` into a kernel of its own,
// and every tuple of the group run on it.
absl::Status CalibrateInto(const Assembler& assemble, const SassArchInfo& arch,
                           std::span<const Tuple> tuples,
                           std::span<const KernelGroup> groups, int opt_level,
                           bool keep_runs, TupleCalibration* out,
                           std::string* trace) {
  std::vector<Tuple> firsts;
  for (const KernelGroup& g : groups) firsts.push_back(tuples[g.begin]);
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::vector<ReferenceKernel> kernels,
      CompileReferenceKernels(assemble, arch, firsts, opt_level));
  for (size_t k = 0; k < groups.size(); ++k) {
    for (size_t i = groups[k].begin; i < groups[k].end; ++i) {
      out[i] = CalibrateOn(arch, kernels[k], tuples[i], opt_level, keep_runs,
                           trace);
    }
  }
  return absl::OkStatus();
}

}  // namespace

TupleCalibration CalibrateOn(const SassArchInfo& arch,
                             const ReferenceKernel& reference, const Tuple& t,
                             int opt_level, bool keep_run) {
  return CalibrateOn(arch, reference, t, opt_level, keep_run, nullptr);
}

TupleCalibration CalibrateOn(CompiledKernelRunner& runner, const Tuple& t,
                             int opt_level, bool keep_run, bool describe) {
  return RunOne(runner, t, opt_level, keep_run, describe, nullptr);
}

absl::StatusOr<std::vector<TupleCalibration>> CalibrateEach(
    const std::string& ptxas, const SassArchInfo& arch,
    std::span<const Tuple> tuples, int opt_level, bool keep_runs) {
  std::vector<TupleCalibration> out(tuples.size());
  PTXDIFF_RETURN_IF_ERROR(CalibrateInto(ExecutableAssembler(ptxas, arch.name),
                                        arch, tuples, GroupsOf(tuples),
                                        opt_level, keep_runs, out.data(),
                                        nullptr));
  return out;
}

std::optional<std::string> KnownCalibrationFinding(const Variant& v,
                                                   int opt_level) {
  if (IsScalarVideoFamily(v.family)) return ScalarVideoFinding(v, nullptr);
  // madc.hi[.cc].{u64,s64} at -O1..-O3: the code never adds c into d (c's
  // registers feed only the carry out), where -O0 code runs to the
  // oracle's values. The 32-bit forms agree.
  const std::string spelling = Spell(v);
  if (opt_level > 0 && absl::StartsWith(spelling, "madc.hi.") &&
      absl::EndsWith(spelling.substr(0, spelling.find(' ')), "64")) {
    return "madc.hi 64-bit above -O0: ptxas's code never adds c";
  }
  return std::nullopt;
}

std::optional<std::string> KnownCalibrationFinding(const Variant& v,
                                                   const Operands& o,
                                                   int opt_level) {
  if (IsScalarVideoFamily(v.family)) return ScalarVideoFinding(v, &o);
  return KnownCalibrationFinding(v, opt_level);
}

void CalibrationReport::Merge(const CalibrationReport& o) {
  tuples += o.tuples;
  rejected += o.rejected;
  if (rejected_example.empty()) rejected_example = o.rejected_example;
  executed += o.executed;
  agreed += o.agreed;
  undefined += o.undefined;
  kernels += o.kernels;
  kernels_run += o.kernels_run;
  for (const auto& [k, n] : o.not_run) not_run[k] += n;
  not_run_example.insert(o.not_run_example.begin(), o.not_run_example.end());
  for (const auto& [k, n] : o.known) known[k] += n;
  known_example.insert(o.known_example.begin(), o.known_example.end());
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
  int64_t known_tuples = 0;
  for (const auto& [k, n] : known) known_tuples += n;
  return absl::StrFormat(
      "%d tuples on %d kernels: %d kernels run to the end (%.1f%%), %d tuples "
      "executed (%.1f%%), %d agree (%d left open by the spec), %d "
      "disagreements, %d known findings of ptxas's code, %d rejected by "
      "ptxas; not run: %s",
      tuples, kernels, kernels_run, kernels ? 100.0 * kernels_run / kernels : 0.0,
      executed, tuples ? 100.0 * executed / tuples : 0.0, agreed, undefined,
      disagreements.size(), known_tuples, rejected,
      parts.empty() ? "none" : absl::StrJoin(parts, "; "));
}

namespace {

// Adds one kernel's tuples, judged, to `report`.
void Count(std::span<const Tuple> tuples, KernelGroup group,
           const TupleCalibration* each, int opt_level,
           CalibrationReport& report) {
  bool all_ran = true;
  for (size_t k = group.begin; k < group.end; ++k) {
    const TupleCalibration& c = each[k];
    ++report.tuples;
    if (c.rejected) {
      ++report.rejected;
      if (report.rejected_example.empty()) {
        report.rejected_example =
            absl::StrCat(Spell(tuples[k].variant), ": ", c.why_not);
      }
      all_ran = false;
      continue;
    }
    if (c.outcome == CalibrationOutcome::kNotRun) {
      all_ran = false;
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
    if (auto known = KnownCalibrationFinding(tuples[k].variant,
                                             tuples[k].operands, opt_level)) {
      ++report.known[*known];
      report.known_example.emplace(*known, c.line);
      continue;
    }
    report.disagreements.push_back(c.line);
    report.disagreeing.push_back(tuples[k]);
  }
  if (!each[group.begin].rejected) {
    ++report.kernels;
    report.kernels_run += all_ran;
  }
}

}  // namespace

Assembler ExecutableAssembler(const std::string& ptxas, absl::string_view arch,
                              absl::Time deadline, absl::Duration timeout) {
  return [ptxas, arch = std::string(arch), deadline, timeout](
             absl::string_view ptx, int level) {
    return RunPtxas(ptxas, arch, ptx, level, TimeoutBefore(deadline, timeout));
  };
}

absl::StatusOr<CalibrationReport> CalibrateTuples(const Assembler& assemble,
                                                  const SassArchInfo& arch,
                                                  std::span<const Tuple> tuples,
                                                  int opt_level) {
  std::vector<TupleCalibration> each(tuples.size());
  const std::vector<KernelGroup> groups = GroupsOf(tuples);
  CalibrationReport report;
  PTXDIFF_RETURN_IF_ERROR(CalibrateInto(assemble, arch, tuples, groups, opt_level,
                                        /*keep_runs=*/false, each.data(),
                                        &report.first_trace));
  for (const KernelGroup& g : groups) {
    Count(tuples, g, each.data(), opt_level, report);
  }
  return report;
}

std::vector<Tuple> CalibrationTuples(const Variant& v, int n,
                                     std::mt19937_64& rng) {
  std::vector<Operands> operands(n);
  FillEdgeTuples(v, rng, operands);
  const uint8_t runtime = RuntimeCapableSources(v);
  std::vector<Tuple> out;
  for (Operands& o : operands) {
    for (int i = 0; i < kMaxSources; ++i) {
      if (!IsRuntimeSource(runtime, i)) o.v[i] = operands[0].v[i];
    }
    out.push_back({.variant = v, .operands = o, .runtime = runtime});
  }
  return out;
}

absl::StatusOr<CalibrationReport> RunCalibrationCampaign(
    const CalibrationCampaignOptions& o) {
  PTXDIFF_ASSIGN_OR_RETURN(const SassArchInfo arch, FindSassArchInfo(o.arch));
  const Assembler assemble =
      o.assemble ? o.assemble : ExecutableAssembler(o.ptxas, arch.name);
  const size_t per_module = std::max(1, o.variants_per_module);
  const size_t modules = (o.variants.size() + per_module - 1) / per_module;
  auto first = [&](int64_t m) { return static_cast<size_t>(m) * per_module; };
  auto end = [&](int64_t m) {
    return std::min(o.variants.size(), first(m) + per_module);
  };
  auto module = [&](int64_t m) -> absl::StatusOr<CalibrationReport> {
    // Each module's operands from its own seed: the same campaign whatever
    // the threads.
    std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(m));
    std::vector<Tuple> tuples;
    for (size_t i = first(m); i < end(m); ++i) {
      for (Tuple& t :
           CalibrationTuples(o.variants[i], o.tuples_per_variant, rng)) {
        tuples.push_back(t);
      }
    }
    return CalibrateTuples(assemble, arch, tuples, o.opt_level);
  };
  CalibrationReport report;
  int64_t variants_done = 0;
  PTXDIFF_RETURN_IF_ERROR(RunParallelJobs(
      static_cast<int64_t>(modules), o.threads, o.deadline, module,
      [&](int64_t m, const CalibrationReport& part) {
        report.Merge(part);
        variants_done += static_cast<int64_t>(end(m) - first(m));
        if (o.progress) o.progress(report, variants_done);
      }));
  return report;
}

}  // namespace ptxdiff
