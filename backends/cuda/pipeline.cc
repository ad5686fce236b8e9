#include "backends/cuda/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "backends/carry_support.h"
#include "common/status_macros.h"
#include "isa/family_table.h"

namespace ptxdiff {
namespace {

static_assert(sizeof(Operands) == kTupleBytes,
              "operands are copied to the device as they are in memory");

// How long to wait between stream queries: spin (yield) through short
// stages, whose results are wanted at once, then sleep so that a long one
// does not burn a host core.
void Backoff(int polls) {
  if (polls < 1000) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

uint64_t WordAt(const uint8_t* bytes) {
  uint64_t word = 0;
  std::memcpy(&word, bytes, sizeof(word));
  return word;
}

// The results of `launch`'s tuples (at `positions`) from its output bytes:
// the result bits, and for a carry variant the carry its flag word says.
void CollectResults(const StagedLaunch& launch, const uint8_t* out,
                    std::span<const uint32_t> positions,
                    std::span<TupleResult> results, Declines& declines) {
  const Variant& v = launch.variant;
  const int bytes = launch.ResultSlotBytes();
  for (size_t j = 0; j < positions.size(); ++j) {
    TupleResult& result = results[positions[j]];
    result = TupleResult{.bits = WordAt(out + j * bytes)};
    if (!HasCarryOut(v)) continue;
    const uint64_t word = WordAt(out + j * bytes + kResultBytes);
    if (const std::optional<bool> carry = CarryOfFlagWord(v, word)) {
      result.carry = *carry;
    } else {
      declines.Add(positions.subspan(j, 1), DeclineCode::kNotEvaluable,
                   UnreadableFlagWordMessage(v, word));
    }
  }
}

}  // namespace

void Stage::AddLaunch(StagedLaunch launch) {
  launch.out_offset = out_bytes;
  out_bytes += uint64_t{launch.count} * launch.ResultSlotBytes();
  launches.push_back(std::move(launch));
}

unsigned int GridSize(uint32_t count, unsigned int max_blocks) {
  const uint32_t blocks = (count + kBlockSize - 1) / kBlockSize;
  return std::max(1u, std::min<unsigned int>(blocks, max_blocks));
}

absl::StatusOr<std::unique_ptr<StagePipeline>> StagePipeline::Create(
    CudaDriver& driver, const Limits& limits) {
  std::unique_ptr<StagePipeline> pipeline(new StagePipeline(driver, limits));
  for (Slot& slot : pipeline->slots_) {
    PTXDIFF_RETURN_IF_ERROR(pipeline->AllocateSlot(slot));
  }
  return pipeline;
}

absl::Status StagePipeline::AllocateSlot(Slot& slot) {
  const size_t tuples = limits_.stage_tuples;
  PTXDIFF_ASSIGN_OR_RETURN(slot.stream, CreateStream(driver_));
  PTXDIFF_ASSIGN_OR_RETURN(slot.host_in,
                           AllocatePinned(driver_, tuples * kTupleBytes));
  // Room for the widest results: a carry variant's flag word doubles them.
  PTXDIFF_ASSIGN_OR_RETURN(slot.host_out,
                           AllocatePinned(driver_, tuples * kCarryResultBytes));
  PTXDIFF_ASSIGN_OR_RETURN(slot.device_in,
                           AllocateDevice(driver_, tuples * kTupleBytes));
  PTXDIFF_ASSIGN_OR_RETURN(slot.device_out,
                           AllocateDevice(driver_, tuples * kCarryResultBytes));
  return absl::OkStatus();
}

absl::Status StagePipeline::Submit(Stage stage,
                                   std::span<const WireTuple> tuples,
                                   std::span<TupleResult> results,
                                   Declines& declines) {
  if (stage.size() == 0) return absl::OkStatus();
  if (stage.size() > limits_.stage_tuples) {
    return absl::InternalError(absl::StrCat("a stage of ", stage.size(),
                                            " tuples exceeds the slot size ",
                                            limits_.stage_tuples));
  }
  Slot& slot = slots_[next_];
  next_ ^= 1;
  // The slot's buffers are about to be overwritten: its previous stage must
  // be done, and its results read, first.
  PTXDIFF_RETURN_IF_ERROR(Finish(slot, results, declines));
  slot.stage = std::move(stage);
  slot.deadline = absl::Now() + limits_.timeout;
  return Enqueue(slot, tuples);
}

absl::Status StagePipeline::Enqueue(Slot& slot,
                                    std::span<const WireTuple> tuples) {
  const Stage& stage = *slot.stage;
  const size_t n = stage.size();
  const bool needs_input = std::any_of(
      stage.launches.begin(), stage.launches.end(),
      [](const StagedLaunch& l) { return l.mode == KernelMode::kRegister; });
  if (needs_input) {
    auto* in = static_cast<Operands*>(slot.host_in.get());
    for (size_t j = 0; j < n; ++j) in[j] = tuples[stage.positions[j]].operands;
    PTXDIFF_RETURN_IF_ERROR(
        PTXDIFF_CU_CALL(driver_, "copy operands to the device",
                        MemcpyHtoDAsync(slot.device_in.get(), in,
                                        n * kTupleBytes, slot.stream.get())));
  }
  for (const StagedLaunch& launch : stage.launches) {
    PTXDIFF_RETURN_IF_ERROR(Launch(slot, launch));
  }
  return PTXDIFF_CU_CALL(
      driver_, "copy results from the device",
      MemcpyDtoHAsync(slot.host_out.get(), slot.device_out.get(),
                      stage.out_bytes, slot.stream.get()));
}

absl::Status StagePipeline::Launch(Slot& slot, const StagedLaunch& launch) {
  // The driver copies the parameter values during cuLaunchKernel, so locals
  // are enough.
  CUdeviceptr in =
      slot.device_in.get() + CUdeviceptr{launch.first} * kTupleBytes;
  CUdeviceptr out = slot.device_out.get() + launch.out_offset;
  uint32_t count = launch.count;
  if (launch.written) {  // thread 0 runs the tuples one after the other
    void* params[] = {&in, &out, &count};
    return PTXDIFF_CU_CALL(driver_, "launch a kernel of tuples as written",
                           LaunchKernel(launch.function, 1, 1, 1, 1, 1, 1, 0,
                                        slot.stream.get(), params, nullptr));
  }
  if (launch.mode == KernelMode::kImmediate) {
    void* params[] = {&out};
    return PTXDIFF_CU_CALL(driver_, "launch an immediate-mode kernel",
                           LaunchKernel(launch.function, 1, 1, 1, 1, 1, 1, 0,
                                        slot.stream.get(), params, nullptr));
  }
  void* params[] = {&in, &out, &count};
  return PTXDIFF_CU_CALL(
      driver_, "launch a register-mode kernel",
      LaunchKernel(launch.function, GridSize(count, limits_.max_blocks), 1, 1,
                   kBlockSize, 1, 1, 0, slot.stream.get(), params, nullptr));
}

absl::Status StagePipeline::Wait(const Slot& slot) {
  for (int polls = 0;; ++polls) {
    const CUresult result = driver_.StreamQuery(slot.stream.get());
    if (result != CUDA_ERROR_NOT_READY) {
      return CheckCudaResult(driver_, result, "run the batch's kernels",
                             "cuStreamQuery(stream)", __FILE__, __LINE__);
    }
    if (absl::Now() > slot.deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("the batch's kernels ran longer than the timeout of ",
                       absl::FormatDuration(limits_.timeout)));
    }
    Backoff(polls);
  }
}

absl::Status StagePipeline::Finish(Slot& slot, std::span<TupleResult> results,
                                   Declines& declines) {
  if (!slot.stage.has_value()) return absl::OkStatus();
  PTXDIFF_RETURN_IF_ERROR(Wait(slot));
  const Stage& stage = *slot.stage;
  const auto* out = static_cast<const uint8_t*>(slot.host_out.get());
  for (const StagedLaunch& launch : stage.launches) {
    CollectResults(
        launch, out + launch.out_offset,
        std::span(stage.positions).subspan(launch.first, launch.count), results,
        declines);
  }
  slot.stage.reset();  // unloads its immediate-mode modules
  return absl::OkStatus();
}

absl::Status StagePipeline::Drain(std::span<TupleResult> results,
                                  Declines& declines) {
  PTXDIFF_RETURN_IF_ERROR(Finish(slots_[next_], results, declines));
  return Finish(slots_[next_ ^ 1], results, declines);
}

void StagePipeline::Abandon() {
  for (Slot& slot : slots_) {
    if (!slot.stage.has_value()) continue;
    (void)driver_.StreamSynchronize(slot.stream.get());
    slot.stage.reset();
  }
}

std::vector<std::string> StagePipeline::InFlight() const {
  std::vector<std::string> variants;
  for (int i : {next_, next_ ^ 1}) {
    if (!slots_[i].stage.has_value()) continue;
    for (const std::string& v : slots_[i].stage->variants) {
      if (std::find(variants.begin(), variants.end(), v) == variants.end()) {
        variants.push_back(v);
      }
    }
  }
  return variants;
}

}  // namespace ptxdiff
