// The ptxas backend's compiles, bounded and paced (ptxas_faults.h): one
// run of ptxas or of the in-process assembler within the batch's budget
// (Assemble), and what a compile that failed without naming a line teaches
// and leaves to compile: a fault, a variant apart, the rest in parts.
// ptxas_backend_internal.h says what each file of the backend does.

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "backends/ptxas/chunk_plan.h"
#include "backends/ptxas/compile_log.h"
#include "backends/ptxas/ptxas_backend_internal.h"
#include "backends/ptxas/ptxas_faults.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/run_cost_model.h"
#include "common/status_macros.h"
#include "common/subprocess.h"

namespace ptxdiff {
namespace ptxas_backend_internal {

Chunk PtxasBackend::WithoutSuspectsFaultedEnough(Batch& batch,
                                                 Chunk chunk) const {
  std::vector<bool> dropped(chunk.tuples.size());
  bool any = false;
  for (size_t p = 0; p < chunk.tuples.size(); ++p) {
    const int t = chunk.tuples[p];
    if (auto why = suspects_.EnoughInBatch(batch.tuples[t].variant)) {
      // Written by this chunk's thread only: each tuple is in one chunk.
      batch.outcomes[t] =
          Outcome::Decline(DeclineCode::kOther, *std::move(why));
      dropped[p] = any = true;
    }
  }
  return any ? WithoutPositions(chunk, dropped) : chunk;
}

Outcome PtxasBackend::AloneFailed(const Batch& batch, const Chunk& chunk,
                                  const PtxasOutput& out) const {
  // A crash or a hang of ptxas on the tuple alone is ptxas's fault, a
  // finding (the twenty-first fault run: declined, nothing filed); a stop
  // or a fatal error that names no line is no verdict.
  if (out.how.signal != 0 || out.how.timed_out) {
    suspects_.Faulted(batch.tuples[chunk.tuples[0]].variant, out.how.timed_out);
    return Outcome::Fault(
        out.how.timed_out ? CaseFault::kHang : CaseFault::kCrash,
        absl::StrCat(
            "ptxas ", out.how.timed_out ? "hung" : "crashed",
            " on the tuple alone: ", LogSummary(out.log),
            out.how.timed_out
                ? absl::StrCat(
                      " (a compile past ", ToolCostModel::kTimeoutMargin,
                      " times its expected time and ",
                      absl::FormatDuration(kPtxasHangFloor),
                      " is run again with up to ",
                      absl::FormatDuration(kPtxasHangConfirm),
                      ", at most half the batch's budget and timeout_ms=",
                      absl::ToInt64Milliseconds(config_.timeout),
                      ", before it is said to hang)")
                : ""));
  }
  return Outcome::Decline(DeclineCode::kOther,
                          absl::StrCat("ptxas failed: ", LogSummary(out.log)));
}

void PtxasBackend::DeclineOutOfBudget(Batch& batch, const Chunk& chunk) const {
  const std::string why = absl::StrCat(
      kNotRunPrefix, "the batch's time budget for ptxas (batch_timeout_ms=",
      absl::ToInt64Milliseconds(config_.batch_timeout),
      ", by default three quarters of the reply timeout) ran out before this "
      "tuple's module compiled");
  // Written by this chunk's thread only: each tuple is in one chunk.
  for (int t : chunk.tuples) {
    batch.outcomes[t] = Outcome::Decline(DeclineCode::kOther, why);
  }
}

std::vector<std::pair<Variant, int>> PtxasBackend::VariantsOf(
    const Batch& batch, const Chunk& chunk) const {
  std::vector<std::pair<Variant, int>> variants;
  for (int t : chunk.tuples) {
    const Variant& v = batch.tuples[t].variant;
    auto it = std::find_if(variants.begin(), variants.end(),
                           [&](const auto& e) { return e.first == v; });
    if (it == variants.end()) {
      variants.emplace_back(v, 1);
    } else {
      ++it->second;
    }
  }
  return variants;
}

absl::Status PtxasBackend::CompileAfterFailure(Batch& batch, const Chunk& chunk,
                                               const PtxasOutput& out,
                                               ChunkReport& report) const {
  if (chunk.tuples.size() == 1) {
    batch.outcomes[chunk.tuples[0]] = AloneFailed(batch, chunk, out);
    return absl::OkStatus();
  }
  std::vector<Chunk> parts;
  if (out.how.timed_out) {
    // Each halving of a module that hangs costs a timeout: its variants
    // apart first, then a variant whose module hung a tuple at a time.
    const auto variants = VariantsOf(batch, chunk);
    if (variants.size() > 1) {
      for (const auto& [v, n] : variants) suspects_.Cut(v, n, false);
      parts = ByVariant(chunk, [&](int t) -> const Variant& {
        return batch.tuples[t].variant;
      });
    } else {
      return CompileOneByOne(batch, chunk, report);
    }
  } else {
    // A crash, a fatal error: ptxas ended at once, halves are cheap.
    auto [first, second] = Halves(chunk);
    parts = {std::move(first), std::move(second)};
  }
  for (Chunk& part : parts) {
    PTXDIFF_RETURN_IF_ERROR(
        CompileChunk(batch, std::move(part), report, "halves"));
  }
  return absl::OkStatus();
}

std::optional<absl::Duration> PtxasBackend::HangToConfirm(
    const Batch& batch, const Chunk& chunk, const PtxasOutput& out) const {
  if (chunk.tuples.size() != 1 || !out.how.timed_out || in_process_ != nullptr)
    return std::nullopt;
  const absl::Duration confirm = HangConfirmTimeout();
  if (out.timeout >= confirm ||
      suspects_.HangConfirmed(batch.tuples[chunk.tuples[0]].variant))
    return std::nullopt;
  return confirm;
}

absl::Status PtxasBackend::CompileOneByOne(Batch& batch, const Chunk& chunk,
                                           ChunkReport& report) const {
  const Variant& v = batch.tuples[chunk.tuples[0]].variant;
  suspects_.HungAlone(v);
  for (size_t i = 0; i < chunk.tuples.size(); ++i) {
    Chunk part;
    if (suspects_.IsSlow(v)) {
      // Slow, not hung: the rest in one module, with the longer timeout.
      for (size_t j = i; j < chunk.tuples.size(); ++j) {
        part.AddKernel(std::span<const int>(&chunk.tuples[j], 1));
      }
      return CompileChunk(batch, std::move(part), report, "halves");
    }
    part.AddKernel(std::span<const int>(&chunk.tuples[i], 1));
    PTXDIFF_RETURN_IF_ERROR(
        CompileChunk(batch, std::move(part), report, "halves"));
  }
  return absl::OkStatus();
}

absl::StatusOr<PtxasOutput> PtxasBackend::Assemble(
    absl::string_view ptx, int opt_level, const CompileRecord& record,
    absl::Duration at_least) const {
  const absl::Time start = absl::Now();
  if (start >= batch_deadline_) {
    PtxasOutput out;
    out.out_of_budget = true;
    out.log = "not run: the batch's time budget ran out";
    return out;
  }
  if (in_process_ != nullptr) {
    // No timeout: a call cut short cannot be stopped and runs on in its
    // thread, a core busy (and the library perhaps held) for the rest of
    // the run. A hang in-process is the worker's, which the client restarts.
    absl::StatusOr<PtxasOutput> out =
        in_process_->Compile(arch_.name, ptx, opt_level);
    LogCompile(record, ptx, opt_level, start, absl::Now() - start);
    return out;
  }
  // All-immediate modules fold, runtime ones compile to code: two costs.
  // A module of no counted tuples (the -O0 reference kernels) has no
  // expected time: the ceiling.
  ToolCostModel& cost =
      compile_cost_[2 * record.runtime_tuples > record.tuples];
  // A small runtime module before any was timed (the self-test's are
  // all-immediate): the start-up is the same ptxas's.
  const ToolCostModel& timing =
      cost.learned() || record.tuples >= ToolCostModel::kPerSlotFrom
          ? cost
          : compile_cost_[0];
  const absl::Duration adaptive =
      record.tuples == 0
          ? config_.timeout
          : absl::Trunc(timing.Timeout(record.tuples, config_.timeout),
                        absl::Milliseconds(1));
  const absl::Duration own =
      std::min(config_.timeout, std::max(at_least, adaptive));
  const absl::Duration timeout = TimeoutBefore(batch_deadline_, own);
  absl::StatusOr<PtxasOutput> out =
      RunPtxas(config_.ptxas, arch_.name, ptx, opt_level, timeout);
  const absl::Duration took = absl::Now() - start;
  LogCompile(record, ptx, opt_level, start, took);
  if (!out.ok()) return out;
  if (out->ok && record.tuples > 0) cost.Learn(record.tuples, took);
  // Ended at the batch's deadline, not at its own timeout: no verdict.
  out->out_of_budget = out->how.timed_out && timeout < own;
  return out;
}

}  // namespace ptxas_backend_internal
}  // namespace ptxdiff
