// The ptxas backend's executed code (ptxas_backend_internal.h): a kernel's
// SASS run on the evaluator, kept for the run and run again for every tuple
// of its key, and the executed values the oracle refutes checked on the
// tuple's -O0 code.

#include "worker/backends/ptxas/ptxas_backend_internal.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "isa/tuple.h"
#include "isa/variant.h"
#include "oracle/errata.h"
#include "sass/sass_decoder.h"
#include "sass/sass_departure.h"
#include "sass/sass_machine.h"
#include "worker/backends/ptxas/chunk_plan.h"
#include "worker/backends/ptxas/compiled_code.h"
#include "worker/backends/ptxas/cubin_link.h"
#include "worker/backends/ptxas/ptx_module.h"
#include "worker/backends/ptxas/sass_calibration.h"
#include "worker/backends/ptxas/sass_execution.h"

namespace ptxdiff {
namespace ptxas_backend_internal {

std::optional<std::vector<SlotValue>> PtxasBackend::Execute(
    Batch& batch, const Chunk& chunk, const PtxModule& module, int k,
    const ElfFile& cubin) const {
  const int begin = module.kernel_begin[k];
  const int end = module.kernel_begin[k + 1];
  std::string why;
  std::optional<std::vector<SlotValue>> values;
  std::shared_ptr<const CompiledKernel> kernel;
  const absl::StatusOr<std::string> text =
      LinkKernel(cubin, module.kernels[k]);
  absl::StatusOr<std::vector<SassSlot>> code =
      text.ok() ? DecodeSassKernel(*executable_, *text) : text.status();
  if (code.ok()) {
    std::vector<PtxTuple> tuples;
    for (int t = begin; t < end; ++t) {
      tuples.push_back(batch.tuples[chunk.tuples[t]]);
    }
    kernel = std::make_shared<const CompiledKernel>(
        KernelOf(module, k, tuples, *std::move(code)));
    values = RunCompiled(*executable_, *kernel, {}, {}, why);
  } else {
    why = std::string(code.status().message());
  }
  for (int t = begin; t < end; ++t) {
    const int tuple = chunk.tuples[t];
    if (values.has_value()) {
      batch.executed[tuple] = 1;
      batch.kernels[tuple] = kernel;
      batch.slots[tuple] = t - begin;
    } else {
      batch.not_run[tuple] = why;
    }
  }
  return values;
}

void PtxasBackend::AnswerFromCompiledCode(
    Batch& batch, const std::vector<int>& copy_of,
    const std::vector<std::optional<CachedCode>>& cached) const {
  std::vector<CompiledRun> runs;
  for (size_t i = 0; i < copy_of.size(); ++i) {
    const int tuple = static_cast<int>(i);
    const int first = copy_of[i];
    // A repeat of a tuple whose key the cache held is answered the same way.
    const std::optional<CachedCode>& code =
        first < 0 ? cached[i] : cached[first];
    if (code.has_value()) {
      batch.reused[i] = 1;
      if (code->kernel == nullptr) {
        batch.outcomes[i] = Noted(
            Outcome::Value(code->claimed_bits, code->claimed_carry),
            notes_.claimed);
        continue;
      }
      runs.push_back({tuple, &code->kernel, code->slots});
      continue;
    }
    if (first < 0) continue;
    batch.outcomes[i] = batch.outcomes[first];
    const std::shared_ptr<const CompiledKernel>& kernel = batch.kernels[first];
    if (kernel == nullptr) {
      // A claim answers every runtime value; a decline, every tuple of the
      // key. Neither is reused code: the compile was the first tuple's.
      batch.reused[i] = batch.outcomes[i].kind == ResultKind::kValue &&
                        batch.tuples[i].runtime != 0;
      continue;
    }
    batch.reused[i] = 1;
    if (batch.tuples[i] == batch.tuples[first]) {
      // The same run: cross-checked like the first (CrossCheckExecuted).
      batch.executed[i] = batch.executed[first];
      batch.kernels[i] = kernel;
      batch.slots[i] = batch.slots[first];
      continue;
    }
    runs.push_back({tuple, &kernel, std::span<const int>(&batch.slots[first], 1)});
  }
  RunGrouped(batch, std::move(runs));
}

void PtxasBackend::RunGrouped(Batch& batch,
                              std::vector<CompiledRun> runs) const {
  // Each kernel's runs in rounds: a tuple goes to the least used of its
  // slots, and round r of a kernel runs every slot's r-th tuple at once.
  struct Round {
    std::vector<int> slots;
    std::vector<const PtxTuple*> at;
    std::vector<int> tuples;
  };
  struct Rounds {
    std::vector<int> used;  // per slot: the rounds that fill it
    std::vector<Round> rounds;
  };
  absl::flat_hash_map<const CompiledKernel*, Rounds> by_kernel;
  for (const CompiledRun& run : runs) {
    const CompiledKernel* kernel = run.kernel->get();
    Rounds& of_kernel = by_kernel[kernel];
    std::vector<int>& used = of_kernel.used;
    used.resize(kernel->compiled_for.size());
    int slot = run.slots.front();
    for (int s : run.slots) slot = used[s] < used[slot] ? s : slot;
    const int r = used[slot]++;
    if (r == static_cast<int>(of_kernel.rounds.size())) {
      of_kernel.rounds.emplace_back();
    }
    Round& round = of_kernel.rounds[r];
    round.slots.push_back(slot);
    round.at.push_back(&batch.tuples[run.tuple]);
    round.tuples.push_back(run.tuple);
    batch.kernels[run.tuple] = *run.kernel;
    batch.slots[run.tuple] = slot;
  }
  for (const auto& [kernel, of_kernel] : by_kernel) {
    for (const Round& round : of_kernel.rounds) {
      std::string why;
      const auto values =
          RunCompiled(*executable_, *kernel, round.slots, round.at, why);
      for (size_t k = 0; k < round.tuples.size(); ++k) {
        const int t = round.tuples[k];
        if (!values.has_value()) {
          batch.outcomes[t] = Outcome::Decline(
              DeclineCode::kNotEvaluable, NotFoldedMessage(batch.tuples[t], why));
          batch.kernels[t] = nullptr;
          continue;
        }
        batch.outcomes[t] = Noted(
            OutcomeOfSlot(batch.tuples[t].variant, (*values)[round.slots[k]]),
            notes_.executed);
        batch.executed[t] = 1;
      }
    }
  }
}

void PtxasBackend::KeepCompiledCode(const Batch& batch,
                                    const std::vector<int>& compiled) {
  for (int t : compiled) {
    const PtxTuple& tuple = batch.tuples[t];
    if (tuple.runtime == 0) continue;  // a folding check: compiled each time
    if (batch.kernels[t] != nullptr) {
      code_cache_.Insert(KeyOf(tuple), {.kernel = batch.kernels[t],
                                        .slots = {batch.slots[t]}});
      continue;
    }
    const Outcome& o = batch.outcomes[t];
    if (o.kind == ResultKind::kValue) {  // a claim
      code_cache_.Insert(KeyOf(tuple), {.claimed_bits = o.bits,
                                        .claimed_carry = o.carry});
    }
  }
}

namespace {

// Where `kernel`'s code departs from `reference` (the tuple's -O0 run) on
// the way to the tuple's wrong result (or, its bits right, its flag word).
std::optional<SassDeparture> TupleDeparture(const SassArchInfo& arch,
                                            const CompiledKernel& kernel,
                                            const PtxTuple& tuple, int slot,
                                            bool bits_wrong,
                                            const SassRun& reference) {
  const PtxTuple* at[] = {&tuple};
  const std::vector<KernelArgument> args =
      RunArguments(kernel, std::span<const int>(&slot, 1), at);
  const int64_t offset =
      kernel.layout.slots[slot].offset + (bits_wrong ? 0 : kFlagWordOffset);
  return DepartureAt(arch, kernel.code, args, kernel.output_bytes, offset,
                     reference);
}

// Why an executed value the oracle refutes is not judged, its -O0 code not
// having run to the oracle's value: where ptxas's -O0 code is known to
// disagree for such an instruction and operands (a finding of its own,
// written down in docs/sass-evaluator.md), that; else the evaluator's
// calibration gap.
std::string NotCalibratedMessage(const PtxTuple& t, CalibrationOutcome at_o0) {
  if (at_o0 == CalibrationOutcome::kDisagrees) {
    if (std::optional<std::string> known =
            KnownCalibrationFinding(t.variant, t.operands, 0)) {
      return absl::StrCat(
          "ptxas's code disagrees with the oracle, and so does its -O0 code, "
          "as it is known to for this instruction (",
          *known,
          "; docs/sass-evaluator.md): not judged, the -O0 code being no "
          "reference here");
    }
  }
  return absl::StrCat(
      "the SASS evaluator's run of ptxas's code disagrees with the oracle, "
      "but its run of the -O0 code ",
      at_o0 == CalibrationOutcome::kDisagrees ? "disagrees too" : "did not run",
      ": not judged (the evaluator is not calibrated on it)");
}

}  // namespace

absl::StatusOr<std::vector<TupleCalibration>> PtxasBackend::CalibrateAtO0(
    std::span<const PtxTuple> tuples) {
  // Each key's -O0 kernel is compiled once and kept beside the -O3 code: a
  // variant wrong at many inputs costs one -O0 compile, not one a batch. By
  // the assembler the -O3 code came from: its code is what is calibrated.
  std::vector<ReferenceKernel> references(tuples.size());
  std::vector<int> compiled_as(tuples.size(), -1);
  absl::flat_hash_map<CodeKey, int> first_of_key;
  std::vector<Tuple> to_compile;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const CodeKey key = CodeKeyOf(tuples[i], arch_.sm, /*opt_level=*/0);
    if (const CachedCode* code = code_cache_.Find(key)) {
      references[i].kernel = code->kernel;
      continue;
    }
    auto [it, added] = first_of_key.try_emplace(key, to_compile.size());
    if (added) to_compile.push_back(tuples[i]);
    compiled_as[i] = it->second;
  }
  PTXDIFF_ASSIGN_OR_RETURN(
      const std::vector<ReferenceKernel> compiled,
      CompileReferenceKernels(
          [this](absl::string_view ptx, int opt_level) {
            return Assemble(ptx, opt_level);
          },
          *executable_, to_compile, /*opt_level=*/0));
  for (size_t k = 0; k < compiled.size(); ++k) {
    if (compiled[k].kernel == nullptr) continue;
    code_cache_.Insert(CodeKeyOf(to_compile[k], arch_.sm, 0),
                       {.kernel = compiled[k].kernel, .slots = {0}});
  }
  std::vector<TupleCalibration> out;
  for (size_t i = 0; i < tuples.size(); ++i) {
    if (compiled_as[i] >= 0) references[i] = compiled[compiled_as[i]];
    // Traced only where it agrees (a finding, whose departure the trace
    // tells): most refuted tuples are known -O0 disagreements.
    TupleCalibration c = CalibrateOn(*executable_, references[i], tuples[i],
                                     /*opt_level=*/0, /*keep_run=*/false);
    if (c.outcome == CalibrationOutcome::kAgrees) {
      c = CalibrateOn(*executable_, references[i], tuples[i], 0, true);
    }
    out.push_back(std::move(c));
  }
  return out;
}

absl::Status PtxasBackend::CrossCheckExecuted(Batch& batch) {
  std::vector<int> refuted;
  std::vector<bool> bits_wrong;
  for (size_t i = 0; i < batch.tuples.size(); ++i) {
    if (!batch.executed[i] || batch.outcomes[i].kind != ResultKind::kValue) {
      continue;
    }
    const PtxTuple& t = batch.tuples[i];
    const Result want =
        EvaluateWithReading(Reading::kHardware, t.variant, t.operands);
    const Outcome& got = batch.outcomes[i];
    if (want.defined() && (got.bits != want.bits || got.carry != want.carry)) {
      refuted.push_back(static_cast<int>(i));
      bits_wrong.push_back(got.bits != want.bits);
    }
  }
  if (refuted.empty()) return absl::OkStatus();
  std::vector<Tuple> tuples;
  for (int i : refuted) tuples.push_back(batch.tuples[i]);
  PTXDIFF_ASSIGN_OR_RETURN(const std::vector<TupleCalibration> at_o0,
                           CalibrateAtO0(tuples));
  for (size_t j = 0; j < refuted.size(); ++j) {
    if (at_o0[j].outcome == CalibrationOutcome::kAgrees) {
      // It stands: the note says why, where the code departs, and the code
      // that ran.
      Outcome& o = batch.outcomes[refuted[j]];
      const CompiledKernel* kernel = batch.kernels[refuted[j]].get();
      const std::optional<SassDeparture> departure =
          kernel != nullptr
              ? TupleDeparture(*executable_, *kernel,
                               batch.tuples[refuted[j]],
                               batch.slots[refuted[j]], bits_wrong[j],
                               at_o0[j].run)
              : std::nullopt;
      o.message = absl::StrCat(
          o.Text(), "; its -O0 code runs to the oracle's value",
          departure.has_value()
              ? absl::StrCat("; the code ", DescribeDeparture(*departure),
                             "\ncause: ", DepartureCause(*departure))
              : "",
          kernel != nullptr
              ? absl::StrCat("\nThe SASS that ran:\n",
                             absl::StripTrailingAsciiWhitespace(
                                 SassListing(kernel->code)))
              : "");
      o.note = nullptr;
      continue;
    }
    batch.outcomes[refuted[j]] =
        Outcome::Decline(DeclineCode::kNotEvaluable,
                         NotCalibratedMessage(batch.tuples[refuted[j]],
                                              at_o0[j].outcome));
  }
  return absl::OkStatus();
}

}  // namespace ptxas_backend_internal
}  // namespace ptxdiff
