// Double-buffered execution of a batch on the device.
//
// A batch is cut into stages of at most `stage_tuples` tuples; a stage holds
// consecutive pieces of one or more variant groups and one launch per piece.
// Two slots, each with its own stream, pinned host buffers and device buffers,
// take stages in turn: while the device runs stage k in one slot, the host
// collects the results of stage k-1 from the other slot, packs stage k+1's
// operands into it and queues its copy in, launches and copy out, so that
// copies overlap kernels and host work overlaps both.
//
// Waiting polls the stream against a deadline (`timeout` from submission), so
// a kernel that never ends is reported as DeadlineExceeded instead of hanging
// the worker.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_PIPELINE_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_PIPELINE_H_

#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/backend.h"
#include "backends/cuda/device.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/kernel_gen.h"
#include "isa/variant.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// One kernel launch over tuples [first, first + count) of its stage, of
// `variant`, whose results it writes from byte `out_offset` of the stage's
// output, ResultBytes(variant) per tuple.
//
// A launch of tuples as written (operand forms: a batch module's written
// segment, kernel_gen.h) is a register-mode launch run by one thread, whose
// result slots are kBatchResultBytes.
struct StagedLaunch {
  CUfunction function = nullptr;
  KernelMode mode = KernelMode::kRegister;
  uint32_t first = 0;
  uint32_t count = 0;
  Variant variant;
  uint64_t out_offset = 0;
  bool written = false;

  // The bytes of one tuple's result in the output.
  int ResultSlotBytes() const {
    return written ? kBatchResultBytes : ResultBytes(variant);
  }
};

struct Stage {
  std::vector<uint32_t> positions;  // the request's tuple index, per tuple
  std::vector<StagedLaunch> launches;
  std::vector<OwnedModule> modules;   // unloaded once the stage is done
  std::vector<std::string> variants;  // spellings, for fault reports
  uint64_t out_bytes = 0;             // the launches' output, in all

  size_t size() const { return positions.size(); }
  // Adds `launch` (all but its out_offset), its output after the others'.
  void AddLaunch(StagedLaunch launch);
};

// The block size of register-mode launches, and their grid for `count`
// tuples: enough blocks to cover them, at most `max_blocks` (the kernel's
// grid-stride loop covers the rest).
inline constexpr unsigned int kBlockSize = 256;
unsigned int GridSize(uint32_t count, unsigned int max_blocks);

class StagePipeline {
 public:
  struct Limits {
    uint32_t stage_tuples = 1u << 20;
    unsigned int max_blocks = 1024;
    absl::Duration timeout = absl::Seconds(10);
  };

  // Allocates both slots (2 streams, 4 pinned and 4 device buffers).
  static absl::StatusOr<std::unique_ptr<StagePipeline>> Create(
      CudaDriver& driver, const Limits& limits);

  // Queues `stage` (at most stage_tuples tuples, operands read from
  // `tuples` at its positions) in the next slot, after finishing the stage
  // that slot held: its results go to `results` at its positions, and a
  // carry variant's result whose flag word no correct CC.CF reader leaves
  // to `declines`.
  absl::Status Submit(Stage stage, std::span<const WireTuple> tuples,
                      std::span<TupleResult> results, Declines& declines);
  // Finishes every stage in flight, oldest first.
  absl::Status Drain(std::span<TupleResult> results, Declines& declines);
  // After a failure: waits for both streams, ignoring errors, and drops the
  // stages without results. Not after a timeout (the wait would hang).
  void Abandon();

  // The spellings of the variants of every stage in flight: a fault reported
  // by one stream may come from either slot's kernels.
  std::vector<std::string> InFlight() const;
  const Limits& limits() const { return limits_; }

 private:
  struct Slot {
    OwnedStream stream;
    OwnedPinnedMemory host_in, host_out;
    OwnedDeviceMemory device_in, device_out;
    std::optional<Stage> stage;
    absl::Time deadline;
  };

  StagePipeline(CudaDriver& driver, const Limits& limits)
      : driver_(driver), limits_(limits) {}
  absl::Status AllocateSlot(Slot& slot);
  absl::Status Enqueue(Slot& slot, std::span<const WireTuple> tuples);
  absl::Status Launch(Slot& slot, const StagedLaunch& launch);
  absl::Status Wait(const Slot& slot);
  absl::Status Finish(Slot& slot, std::span<TupleResult> results,
                      Declines& declines);

  CudaDriver& driver_;
  Limits limits_;
  std::array<Slot, 2> slots_;
  int next_ = 0;  // the slot the next stage goes to: also the oldest in flight
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_PIPELINE_H_
