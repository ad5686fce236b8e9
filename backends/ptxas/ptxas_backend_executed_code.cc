// The ptxas backend's executed code (ptxas_backend_internal.h): a kernel's
// SASS run on the evaluator, kept for the run and run again for every tuple
// of its key, and the executed values the oracle refutes checked on the
// tuple's -O0 code.

#include "backends/ptxas/ptxas_backend_internal.h"

#include <algorithm>
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
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "backends/ptxas/chunk_plan.h"
#include "backends/ptxas/compiled_code.h"
#include "backends/ptxas/cubin_link.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/sass_calibration.h"
#include "backends/ptxas/sass_execution.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/tuple.h"
#include "isa/variant.h"
#include "oracle/errata.h"
#include "sass/sass_decoder.h"
#include "sass/sass_departure.h"
#include "sass/sass_machine.h"

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

namespace {

// A batch's runs of cached code in rounds, each kernel's apart: a tuple
// goes to the least used of its slots, and round r of a kernel runs every
// slot's r-th tuple at once. Flat arrays, not a vector per round: a batch
// holds tens of thousands of runs in a few thousand rounds.
class RunRounds {
 public:
  // One run of a kernel: its tuples are [begin, end) of those sorted.
  struct Round {
    const CompiledKernel* kernel;
    int begin, end;
  };

  // Puts `tuple` in the next round of the least used of `slots` of
  // `kernel`; the slot it gets.
  int Add(int tuple, const CompiledKernel* kernel, std::span<const int> slots) {
    auto [it, added] = index_.try_emplace(kernel, kernels_.size());
    if (added) {
      kernels_.push_back(kernel);
      used_begin_.push_back(static_cast<int>(used_.size()));
      used_.resize(used_.size() + kernel->compiled_for.size());
      rounds_.push_back(0);
    }
    const int k = it->second;
    int* used = used_.data() + used_begin_[k];
    int slot = slots.front();
    for (int s : slots) slot = used[s] < used[slot] ? s : slot;
    const int round = used[slot]++;
    rounds_[k] = std::max(rounds_[k], round + 1);
    added_.push_back({tuple, k, round, slot});
    return slot;
  }

  // The rounds, kernel by kernel, once every tuple is added; each round's
  // tuples (Tuples) and their slots (Slots) in the order added.
  std::vector<Round> Sort() {
    // The rounds numbered over all kernels, kernel k's from first_round[k];
    // where each begins (a counting sort of the tuples added).
    std::vector<int> first_round(kernels_.size() + 1, 0);
    for (size_t k = 0; k < kernels_.size(); ++k) {
      first_round[k + 1] = first_round[k] + rounds_[k];
    }
    std::vector<int> next(first_round.back() + 1, 0);
    for (const Added& a : added_) ++next[first_round[a.kernel] + a.round + 1];
    for (size_t r = 1; r < next.size(); ++r) next[r] += next[r - 1];
    std::vector<Round> rounds;
    for (size_t k = 0; k < kernels_.size(); ++k) {
      for (int r = first_round[k]; r < first_round[k + 1]; ++r) {
        rounds.push_back({kernels_[k], next[r], next[r + 1]});
      }
    }
    tuples_.resize(added_.size());
    slots_.resize(added_.size());
    for (const Added& a : added_) {
      const int at = next[first_round[a.kernel] + a.round]++;
      tuples_[at] = a.tuple;
      slots_[at] = a.slot;
    }
    return rounds;
  }

  std::span<const int> Tuples(const Round& r) const {
    return std::span<const int>(tuples_.data() + r.begin, r.end - r.begin);
  }
  std::span<const int> Slots(const Round& r) const {
    return std::span<const int>(slots_.data() + r.begin, r.end - r.begin);
  }

 private:
  struct Added {
    int tuple, kernel, round, slot;
  };
  absl::flat_hash_map<const CompiledKernel*, int> index_;
  std::vector<const CompiledKernel*> kernels_;
  std::vector<int> used_begin_;  // per kernel: its slots' counts in used_
  std::vector<int> used_;        // per slot: the rounds that fill it
  std::vector<int> rounds_;      // per kernel
  std::vector<Added> added_;
  std::vector<int> tuples_, slots_;  // Sort's
};

}  // namespace

void PtxasBackend::RunGrouped(Batch& batch,
                              std::vector<CompiledRun> runs) const {
  RunRounds grouped;
  for (const CompiledRun& run : runs) {
    const int slot = grouped.Add(run.tuple, run.kernel->get(), run.slots);
    batch.kernels[run.tuple] = *run.kernel;
    batch.slots[run.tuple] = slot;
  }
  const std::vector<RunRounds::Round> rounds = grouped.Sort();
  // A round's tuples lie anywhere in the batch: the next round's are
  // fetched while this one runs (both ends: a tuple may span two lines).
  const auto prefetch = [&](const RunRounds::Round& round) {
    for (int t : grouped.Tuples(round)) {
      const char* tuple = reinterpret_cast<const char*>(&batch.tuples[t]);
      __builtin_prefetch(tuple);
      __builtin_prefetch(tuple + sizeof(PtxTuple) - 1);
      __builtin_prefetch(&batch.outcomes[t], /*rw=*/1);
    }
  };
  std::unique_ptr<CompiledKernelRunner> runner;
  std::vector<const PtxTuple*> at;
  for (size_t r = 0; r < rounds.size(); ++r) {
    const RunRounds::Round& round = rounds[r];
    if (r + 1 < rounds.size()) prefetch(rounds[r + 1]);
    if (r == 0 || rounds[r - 1].kernel != round.kernel) {
      runner =
          std::make_unique<CompiledKernelRunner>(*executable_, *round.kernel);
    }
    const std::span<const int> tuples = grouped.Tuples(round);
    const std::span<const int> slots = grouped.Slots(round);
    at.clear();
    for (int t : tuples) at.push_back(&batch.tuples[t]);
    std::string why;
    const std::vector<SlotValue>* values = runner->Run(slots, at, why);
    for (size_t k = 0; k < tuples.size(); ++k) {
      const int t = tuples[k];
      if (values == nullptr) {
        batch.outcomes[t] = Outcome::Decline(
            DeclineCode::kNotEvaluable, NotFoldedMessage(batch.tuples[t], why));
        batch.kernels[t] = nullptr;
        continue;
      }
      batch.outcomes[t] =
          Noted(OutcomeOfSlot(batch.tuples[t].variant, (*values)[slots[k]]),
                notes_.executed);
      batch.executed[t] = 1;
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

// Where no departure is seen because the wrong value is one of the tuple's
// own sources, stored unchanged (its -O0 code reads that source too, so no
// written value is new: madc.hi.s64 and madc.hi.u64 at -O3 store b), what
// the note says of it and the root cause it is filed under, one per family
// and source: the same wrong data flow in the signed and unsigned variants
// is one cause. A source of 0, or of another width than the result, is too
// common a coincidence to name; several such sources are all named.
struct StoredSource {
  std::string words;  // "the code stores its source b (0x1) unchanged"
  std::string cause;  // "executed code of madc that stores its source b ..."
};
std::optional<StoredSource> StoredSourceOf(const PtxTuple& t, uint64_t bits) {
  const int width = ResultWidth(t.variant);
  std::vector<std::string> names;
  for (int i = 0; i < NumSources(t.variant); ++i) {
    const uint64_t v = t.operands.v[i];
    if (SourceWidth(t.variant, i) == width && v != 0 && v == bits)
      names.push_back(std::string(SourceName(t.variant, i)));
  }
  if (names.empty()) return std::nullopt;
  const std::string sources = absl::StrCat(
      names.size() == 1 ? "its source " : "its sources ",
      absl::StrJoin(names, ", "));
  return StoredSource{
      .words = absl::StrCat("; the code stores ", sources, " (0x",
                            absl::Hex(bits),
                            ") unchanged, a value its -O0 code reads too, so "
                            "no departure is seen"),
      .cause = absl::StrCat("executed code of ", InfoOf(t.variant.family).opcode,
                            " that stores ", sources,
                            " in place of its result")};
}

// What an executed value that stands says of its wrong value: where the
// code departs, or the source it stores, with the cause line (docs/
// worker-protocol.md); "" where neither is seen.
std::string WhereItGoesWrong(const std::optional<SassDeparture>& departure,
                             const PtxTuple& t, const Outcome& got,
                             bool bits_wrong) {
  if (departure.has_value()) {
    return absl::StrCat("; the code ", DescribeDeparture(*departure),
                        "\ncause: ", DepartureCause(*departure));
  }
  const std::optional<StoredSource> stored =
      bits_wrong ? StoredSourceOf(t, got.bits) : std::nullopt;
  if (!stored.has_value()) return "";
  return absl::StrCat(stored->words, "\ncause: ", stored->cause);
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
            return Assemble(ptx, opt_level, {.purpose = "reference"});
          },
          *executable_, to_compile, /*opt_level=*/0));
  for (size_t k = 0; k < compiled.size(); ++k) {
    if (compiled[k].kernel == nullptr) continue;
    code_cache_.Insert(CodeKeyOf(to_compile[k], arch_.sm, 0),
                       {.kernel = compiled[k].kernel, .slots = {0}});
  }
  for (size_t i = 0; i < tuples.size(); ++i) {
    if (compiled_as[i] >= 0) references[i] = compiled[compiled_as[i]];
  }
  // Each -O0 kernel's tuples one after another, on one runner: a variant
  // wrong at many inputs is run many times on one kernel, whose SASS (a few
  // kilobytes, read at every step) then stays in the cache.
  std::vector<std::pair<const CompiledKernel*, size_t>> order;
  for (size_t i = 0; i < tuples.size(); ++i) {
    order.push_back({references[i].kernel.get(), i});
  }
  std::sort(order.begin(), order.end());
  std::unique_ptr<CompiledKernelRunner> runner;
  std::vector<TupleCalibration> out(tuples.size());
  for (size_t j = 0; j < order.size(); ++j) {
    const auto [kernel, i] = order[j];
    if (kernel == nullptr) {
      out[i] = CalibrateOn(*executable_, references[i], tuples[i],
                           /*opt_level=*/0, /*keep_run=*/false);
      continue;
    }
    if (j == 0 || order[j - 1].first != kernel) {
      runner = std::make_unique<CompiledKernelRunner>(*executable_, *kernel);
    }
    // Traced only where it agrees (a finding, whose departure the trace
    // tells): most refuted tuples are known -O0 disagreements. Only the
    // outcome and the run are read: no replay line.
    out[i] = CalibrateOn(*runner, tuples[i], /*opt_level=*/0,
                         /*keep_run=*/false, /*describe=*/false);
    if (out[i].outcome == CalibrationOutcome::kAgrees) {
      out[i] = CalibrateOn(*runner, tuples[i], 0, true, false);
    }
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
          WhereItGoesWrong(departure, batch.tuples[refuted[j]], o,
                           bits_wrong[j]),
          kernel != nullptr
              ? absl::StrCat("\nThe SASS that ran:\n",
                             absl::StripTrailingAsciiWhitespace(
                                 SassListing(kernel->code)))
              : "");
      o.note = nullptr;
      continue;
    }
    Outcome& declined = batch.outcomes[refuted[j]] = Outcome::Decline(
        DeclineCode::kNotEvaluable,
        NotCalibratedMessage(batch.tuples[refuted[j]], at_o0[j].outcome));
    // A runtime form's code is kept (KeepCompiledCode): its other values
    // may be judged.
    declined.kept_code = batch.tuples[refuted[j]].runtime != 0 &&
                         batch.kernels[refuted[j]] != nullptr &&
                         config_.code_cache_mb > 0;
  }
  return absl::OkStatus();
}

}  // namespace ptxas_backend_internal
}  // namespace ptxdiff
