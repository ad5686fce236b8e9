// How the ptx-cmd backend cuts a batch into runs of the tool: segments (a
// variant's tuples, in a loop or as written), parts (the segments of one
// module, one run), the module and the input buffer of a part, and the
// smaller parts a failed run is retried as. No state: the backend
// (ptx_cmd_backend.cc) decides which parts to run and learns from them.

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_MODULE_PARTS_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_MODULE_PARTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "backends/backend.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptx_cmd/ptx_cmd_config.h"
#include "isa/variant.h"
#include "protocol/protocol.h"

namespace ptxdiff {
namespace ptx_cmd_internal {

// How big one batch module may grow: a plain variant's segment is ~20 lines,
// a 2-lane SIMD variant's ~1,300 (its selector dispatch), so a module stays
// under ~50k lines, which a tool parses in well under a second. Past that a
// module grows, up to kMaxModuleWeight, while its tuples are too few for the
// tool's start-up to be at most kStartupShare of its run (ToolCostModel): a
// simulator whose start-up costs far more than a tuple otherwise pays it
// again every few thousand tuples.
inline constexpr int kModuleWeight = 2048;
inline constexpr int kMaxModuleWeight = 4 * kModuleWeight;
inline constexpr double kStartupShare = 0.125;
// A written segment (operands as the case's form has them) takes ~6 lines a
// tuple, so it is cut every kWrittenSegmentTuples tuples. A loop's dispatch
// (DispatchSource) takes ~4 lines for each value its tuples hold.
inline constexpr size_t kWrittenSegmentTuples = 1024;
// A segment's weight in a module (kModuleWeight).
int SegmentWeight(bool written, size_t tuples, size_t dispatch_values);

// One variant's tuples in a tool run: positions into the request's tuples.
// A written segment runs them as their forms say (BatchSegment::written);
// the others every source from the input buffer.
struct Segment {
  Variant variant;
  std::vector<uint32_t> positions;
  bool written = false;
};

// "bfe.s32" (every operand in a register), or "bfe.s32 with immediates": a
// segment in messages.
std::string SegmentName(const Segment& s);

// The tuples one run of the tool evaluates: a module of one segment per
// variant (kernel ABI 2), or of exactly one variant (ABI 1).
struct Part {
  std::vector<Segment> segments;
  // Why it is run again on its own, if it is a half of a part whose run
  // failed: the failure, kept for the decline of tuples left when the
  // batch's time runs out.
  std::string isolating;
  // A part of a variant that faulted the tool before, run apart (MakeParts).
  bool apart = false;

  size_t tuples() const {
    size_t n = 0;
    for (const Segment& s : segments) n += s.positions.size();
    return n;
  }
};

// Every tuple of `part` declined with `code` and `message`.
void DeclineAll(const Part& part, DeclineCode code, const std::string& message,
                Declines& declines);

// The input buffer: each tuple's a, b, c, d as u64, 32 bytes per tuple, in
// segment order.
std::string InputBuffer(const ResolvedBatch& request, const Part& part);

// `group`'s tuples as segments: those whose every source that may be a
// runtime value is one run in the loop (the register shape); the others as
// written, in segments of at most kWrittenSegmentTuples, or declined, or in
// the loop too, as `forms` says.
std::vector<Segment> SegmentsOf(const ResolvedBatch& request,
                                const VariantGroup& group, Config::Forms forms,
                                Declines& declines);

// The dispatch values of `s`'s tuples (kernel_gen.h's DispatchValuesOf).
std::vector<int> DispatchValuesOf(const ResolvedBatch& request,
                                  const Segment& s);

// The module for `part`: ABI 2's batch module, or ABI 1's one-variant one.
std::string ModuleFor(const ResolvedBatch& request, const Part& part,
                      const PtxTarget& target, int abi);

// The bytes of one tuple's result in {out}.
int SlotBytes(const Part& part, int abi);

// What to run instead of `part`, whose run failed: its segments' halves;
// or, for one segment, its first tuple alone and the halves of the rest: a
// tool that faults on a whole class of inputs has its first faulting tuple
// found in one run, where halving alone would spend a hang's timeout on
// each of log2(n) levels.
std::vector<Part> Split(const Part& part, const std::string& why);

// The index of the segment of `module` on a line that one of a tool's
// `error_lines` names ("kernel.ptx:123: ...", "line 123"), by the segment's
// register and label prefix there (`%v7_a`, `$v7_loop`: segment 7).
std::optional<size_t> SegmentOnErrorLine(
    const std::vector<std::string>& error_lines, absl::string_view module);

}  // namespace ptx_cmd_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_MODULE_PARTS_H_
