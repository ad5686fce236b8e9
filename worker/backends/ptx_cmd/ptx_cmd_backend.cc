#include "worker/backends/ptx_cmd/ptx_cmd_backend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"
#include "worker/backends/carry_support.h"
#include "worker/backends/cuda/kernel_gen.h"
#include "worker/backends/ptx_cmd/tool_run.h"

namespace ptxdiff {
namespace {

// The buffers are the GPU's memory image, which is little-endian.
static_assert(std::endian::native == std::endian::little);

// How big one batch module may grow: a plain variant's segment is ~20 lines,
// a 2-lane SIMD variant's ~1,300 (its selector dispatch), so a module stays
// under ~50k lines, which a tool parses in well under a second.
constexpr int kModuleWeight = 2048;
// A written segment (operands as the case's form has them) takes ~6 lines a
// tuple, so it is cut every kWrittenSegmentTuples tuples.
constexpr size_t kWrittenSegmentTuples = 1024;
int SegmentWeight(const Variant& v, bool written, size_t tuples) {
  if (written) return 1 + static_cast<int>(tuples / 3);
  return SimdLanes(v.family) == 2 ? 64 : 1;
}

// A tool run that ends at the timeout is a hang; the timeout adapts to what
// runs of the tool have cost: this many times the expected time, plus the
// floor, never more than the `timeout_ms` option.
constexpr double kTimeoutMargin = 4;
constexpr absl::Duration kTimeoutFloor = absl::Seconds(1);

struct Config {
  std::string command;
  PtxTarget target;
  absl::Duration timeout = absl::Seconds(10);
  absl::Duration batch_timeout = absl::Seconds(45);
  int jobs = 2;
  int abi = 2;  // 2: one module per batch; 1: one module per variant
  // Tuples run as written: runtime sources from the buffer, the others as
  // immediates (ABI 2 only). Off: every source from the buffer.
  bool forms = true;
};

absl::StatusOr<PtxTarget> ParseArch(absl::string_view arch) {
  absl::string_view digits = arch;
  int sm = 0;
  if (absl::ConsumePrefix(&digits, "sm_")) {
    // sm_90a, sm_100f: the suffix names features these kernels do not use.
    while (!digits.empty() && absl::ascii_isalpha(digits.back())) {
      digits.remove_suffix(1);
    }
  }
  std::optional<PtxTarget> target;
  if (absl::SimpleAtoi(digits, &sm) && digits != arch) {
    target = TargetForDevice(sm);
  }
  if (!target.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ptx-cmd backend option arch=", arch, ": expected sm_50 or newer"));
  }
  return *target;
}

// The options from the environment (PTXDIFF_PTX_CMD_ABI=1, ...), then
// HELLO's, which win: a user sets them for every worker a command starts.
KeyValues WithEnvironment(const KeyValues& hello) {
  KeyValues options;
  for (const char* key :
       {"abi", "timeout_ms", "batch_timeout_ms", "jobs", "forms"}) {
    const std::string name =
        absl::StrCat("PTXDIFF_PTX_CMD_", absl::AsciiStrToUpper(key));
    if (const char* value = std::getenv(name.c_str())) {
      options.emplace_back(key, value);
    }
  }
  options.insert(options.end(), hello.begin(), hello.end());
  return options;
}

absl::StatusOr<Config> ParseConfig(const KeyValues& hello) {
  const KeyValues options = WithEnvironment(hello);
  Config config;
  config.command = OptionValue(options, "command").value_or("");
  for (absl::string_view placeholder : {"{ptx}", "{in}", "{out}"}) {
    if (!absl::StrContains(config.command, placeholder)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the ptx-cmd command '", config.command,
                       "' does not mention ", placeholder,
                       "; it runs a PTX module: e.g. ptx-cmd:'my-tool {ptx} "
                       "{in} {out}' (docs/kernel-abi.md)"));
    }
  }
  PTXDIFF_ASSIGN_OR_RETURN(
      config.target, ParseArch(OptionValue(options, "arch").value_or("sm_90")));
  int timeout_ms = 10000, batch_timeout_ms = 45000;
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptx-cmd", "timeout_ms", 1,
                                    24 * 3600 * 1000, timeout_ms));
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptx-cmd", "batch_timeout_ms", 1,
                                    24 * 3600 * 1000, batch_timeout_ms));
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptx-cmd", "jobs", 1, 64, config.jobs));
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptx-cmd", "abi", 1, 2, config.abi));
  int forms = 1;
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptx-cmd", "forms", 0, 1, forms));
  // ABI 1's module is the one-variant loop: it has no written tuples.
  config.forms = forms == 1 && config.abi == 2;
  config.timeout = absl::Milliseconds(timeout_ms);
  config.batch_timeout = absl::Milliseconds(batch_timeout_ms);
  return config;
}

// One variant's tuples in a tool run: positions into the request's tuples.
// A written segment runs them as their forms say (BatchSegment::written);
// the others every source from the input buffer.
struct Segment {
  Variant variant;
  std::vector<uint32_t> positions;
  bool written = false;
};

// What the tool may refuse: a variant in one of the two shapes.
using RefusalKey = std::pair<Variant, bool>;  // variant, written

// "bfe.s32" (every operand in a register), or "bfe.s32 with immediates": a
// segment in messages.
std::string SegmentName(const Segment& s) {
  return s.written ? absl::StrCat(Spell(s.variant), " with immediates")
                   : Spell(s.variant);
}

// The tuples one run of the tool evaluates: a module of one segment per
// variant (kernel ABI 2), or of exactly one variant (ABI 1).
struct Part {
  std::vector<Segment> segments;
  // Why it is run again on its own, if it is a half of a part whose run
  // failed: the failure, kept for the decline of tuples left when the
  // batch's time runs out.
  std::string isolating;

  size_t tuples() const {
    size_t n = 0;
    for (const Segment& s : segments) n += s.positions.size();
    return n;
  }
};

// Every tuple of `part` declined with `code` and `message`.
void DeclineAll(const Part& part, DeclineCode code, const std::string& message,
                Declines& declines) {
  for (const Segment& s : part.segments)
    declines.Add(s.positions, code, message);
}

// The input buffer: each tuple's a, b, c, d as u64, 32 bytes per tuple, in
// segment order.
std::string InputBuffer(const ResolvedBatch& request, const Part& part) {
  std::string bytes(part.tuples() * kTupleBytes, '\0');
  size_t i = 0;
  for (const Segment& s : part.segments) {
    for (uint32_t p : s.positions) {
      const Operands& operands = request.tuples[p].operands;
      static_assert(sizeof(operands.v) == kTupleBytes);
      std::memcpy(bytes.data() + i++ * kTupleBytes, operands.v, kTupleBytes);
    }
  }
  return bytes;
}

// The expected cost of a tool run, learned from the runs that succeeded: a
// fixed start-up and a cost per tuple, for the timeout of the next run.
class CostModel {
 public:
  void Learn(size_t tuples, absl::Duration took) {
    const double seconds = absl::ToDoubleSeconds(took);
    startup_ = runs_ == 0 ? seconds : std::min(startup_, seconds);
    if (tuples > 0) {
      per_tuple_ = std::max(per_tuple_, (seconds - startup_) / tuples);
    }
    ++runs_;
  }
  bool learned() const { return runs_ > 0; }
  absl::Duration Timeout(size_t tuples, absl::Duration ceiling) const {
    if (runs_ == 0) return ceiling;
    const double expected = startup_ + per_tuple_ * tuples;
    return std::min(ceiling,
                    absl::Seconds(kTimeoutMargin * expected) + kTimeoutFloor);
  }

 private:
  int runs_ = 0;
  double startup_ = 0, per_tuple_ = 0;
};

class PtxCmdBackend : public Backend {
 public:
  PtxCmdBackend(Config config, std::string files_root)
      : config_(std::move(config)), files_root_(std::move(files_root)) {}
  ~PtxCmdBackend() override { RemoveTree(files_root_); }

 protected:
  WorkerIdentity Describe() const override {
    return {.name = std::string(kPtxCmdBackend),
            .version = "2",
            .toolchain = config_.command,
            .device = absl::StrCat("PTX for sm_", config_.target.sm),
            // The kernels read CC.CF back after every `.cc` instruction.
            .carry = true,
            .forms = config_.forms,
            // A tool runs the loop of all-register tuples fastest.
            .runtime_by_default = config_.forms};
  }

  std::optional<std::string> WhyUnsupported(const Variant& v) const override {
    std::optional<std::string> why = ::ptxdiff::WhyUnsupported(
        v, config_.target.sm, MaxPtxOfDriver(INT_MAX));
    if (!why.has_value()) return std::nullopt;
    return absl::StrCat("not run as PTX for sm_", config_.target.sm, ": ",
                        *why);
  }

  absl::Status RunSupported(const ResolvedBatch& request,
                            RunReply& reply) override;

 private:
  // The batch's variants as parts, each one run of the tool; the tuples of
  // variants the tool refused before are declined instead.
  std::vector<Part> MakeParts(const ResolvedBatch& request,
                              Declines& declines) const;
  // Before the first batch: one run of one tuple, to learn the tool's
  // start-up cost (the adaptive timeout's base).
  void LearnStartUp(const ResolvedBatch& request,
                    const std::vector<Part>& parts, absl::Time deadline);
  // Runs every part at once (up to `jobs` at a time).
  std::vector<ToolRun> RunParts(const ResolvedBatch& request,
                                const std::vector<Part>& parts,
                                absl::Time deadline) const;
  ToolRun RunTool(const ResolvedBatch& request, const Part& part,
                  absl::Time deadline) const;
  // Reads a run's results into the reply, or, for a run that failed, the
  // halves to run again (`next`), a refusal, or a fault.
  void Settle(const Part& part, const ToolRun& run, RunReply& reply,
              Declines& declines, std::vector<Part>& next);
  void AddResults(const Part& part, absl::string_view out,
                  std::span<TupleResult> results, Declines& declines) const;
  // "command 'T' on add.sat.s32 (16 tuples): exit status 1; its output ends:
  // ..."
  std::string Failure(const Part& part, const ToolRun& run) const;

  Config config_;
  std::string files_root_;  // ProcessTempDir(kPtxCmdTempPrefix, getpid())
  CostModel cost_;
  // Variants the tool refused (a non-zero exit on a module of that variant
  // alone), with why: declined without another run.
  absl::flat_hash_map<RefusalKey, std::string> refused_;
};

absl::Status PtxCmdBackend::RunSupported(const ResolvedBatch& request,
                                         RunReply& reply) {
  reply.messages.clear();
  reply.results.assign(request.tuples.size(), TupleResult{});
  Declines declines(reply);
  const absl::Time deadline = absl::Now() + config_.batch_timeout;
  std::vector<Part> parts = MakeParts(request, declines);
  LearnStartUp(request, parts, deadline);
  while (!parts.empty()) {
    if (absl::Now() >= deadline) {
      for (const Part& part : parts) {
        DeclineAll(
            part, DeclineCode::kOther,
            absl::StrCat(kNotRunPrefix,
                         "ptx-cmd: the batch's time budget "
                         "(batch_timeout_ms=",
                         absl::ToInt64Milliseconds(config_.batch_timeout),
                         ") was spent",
                         part.isolating.empty()
                             ? ""
                             : absl::StrCat(" isolating a failure of the "
                                            "tool: ",
                                            part.isolating)),
            declines);
      }
      break;
    }
    const std::vector<ToolRun> runs = RunParts(request, parts, deadline);
    std::vector<Part> next;
    for (size_t i = 0; i < parts.size(); ++i) {
      PTXDIFF_RETURN_IF_ERROR(runs[i].error);
      Settle(parts[i], runs[i], reply, declines, next);
    }
    parts = std::move(next);
  }
  return absl::OkStatus();
}

void PtxCmdBackend::LearnStartUp(const ResolvedBatch& request,
                                 const std::vector<Part>& parts,
                                 absl::Time deadline) {
  if (cost_.learned() || parts.empty()) return;
  // One tuple, run once before the first batch: what a run costs besides
  // its tuples, so that the first hang is not waited for timeout_ms. Its
  // outcome is only learned from; the tuple runs again with its batch.
  const Segment& first = parts[0].segments[0];
  const Part probe{
      .segments = {{first.variant, {first.positions[0]}, first.written}}};
  const ToolRun run = RunTool(request, probe, deadline);
  if (run.error.ok() && run.end == ToolRun::kOk) cost_.Learn(1, run.took);
}

// `group`'s tuples as segments: those whose every source that may be a
// runtime value is one run in the loop (the register shape); the others,
// where `forms` is on, as written, in segments of at most
// kWrittenSegmentTuples.
std::vector<Segment> SegmentsOf(const ResolvedBatch& request,
                                const VariantGroup& group, bool forms) {
  const Variant& v = request.variants[group.variant_index];
  Segment loop{.variant = v};
  std::vector<Segment> segments;
  for (uint32_t p : group.positions) {
    if (!forms || IsRegisterShape(v, request.tuples[p].runtime)) {
      loop.positions.push_back(p);
      continue;
    }
    if (segments.empty() ||
        segments.back().positions.size() == kWrittenSegmentTuples) {
      segments.push_back({.variant = v, .written = true});
    }
    segments.back().positions.push_back(p);
  }
  if (!loop.positions.empty())
    segments.insert(segments.begin(), std::move(loop));
  return segments;
}

std::vector<Part> PtxCmdBackend::MakeParts(const ResolvedBatch& request,
                                           Declines& declines) const {
  std::vector<Part> parts;
  int weight = kModuleWeight;  // of the last part
  for (const VariantGroup& group : GroupByVariant(request)) {
    for (Segment& s : SegmentsOf(request, group, config_.forms)) {
      if (auto it = refused_.find(RefusalKey{s.variant, s.written});
          it != refused_.end()) {
        declines.Add(s.positions, DeclineCode::kUnsupportedVariant, it->second);
        continue;
      }
      const int w = SegmentWeight(s.variant, s.written, s.positions.size());
      if (config_.abi == 1 || weight + w > kModuleWeight) {
        parts.emplace_back();
        weight = 0;
      }
      weight += w;
      parts.back().segments.push_back(std::move(s));
    }
  }
  return parts;
}

std::vector<ToolRun> PtxCmdBackend::RunParts(const ResolvedBatch& request,
                                             const std::vector<Part>& parts,
                                             absl::Time deadline) const {
  std::vector<ToolRun> runs(parts.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < parts.size(); i = next++) {
      runs[i] = RunTool(request, parts[i], deadline);
    }
  };
  const int threads = std::min<int>(config_.jobs, parts.size());
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return runs;
}

// The module for `part`: ABI 2's batch module, or ABI 1's one-variant one.
std::string ModuleFor(const ResolvedBatch& request, const Part& part,
                      const PtxTarget& target, int abi) {
  if (abi == 1) return RegisterModule(part.segments[0].variant, target);
  std::vector<BatchSegment> segments;
  uint32_t first = 0;
  for (const Segment& s : part.segments) {
    const uint32_t count = s.positions.size();
    BatchSegment& segment = segments.emplace_back(
        BatchSegment{.variant = s.variant, .first = first, .count = count});
    if (s.written) {
      for (uint32_t p : s.positions) {
        const WireTuple& t = request.tuples[p];
        segment.written.push_back({s.variant, t.operands, t.runtime});
      }
    }
    first += count;
  }
  return BatchModule(segments, target);
}

// The bytes of one tuple's result in {out}.
int SlotBytes(const Part& part, int abi) {
  return abi == 1 ? ResultBytes(part.segments[0].variant) : kBatchResultBytes;
}

ToolRun PtxCmdBackend::RunTool(const ResolvedBatch& request, const Part& part,
                               absl::Time deadline) const {
  const size_t n = part.tuples();
  // Whole milliseconds: the timeout is quoted in messages.
  return RunToolOnce(
      {.command = config_.command,
       .files_root = files_root_,
       .module = ModuleFor(request, part, config_.target, config_.abi),
       .in = InputBuffer(request, part),
       .n = n,
       .slot_bytes = static_cast<size_t>(SlotBytes(part, config_.abi)),
       .timeout = absl::Trunc(cost_.Timeout(n, config_.timeout),
                              absl::Milliseconds(1)),
       .deadline = deadline});
}

// `part` in two: its segments' halves, or one segment's tuples' halves.
std::vector<Part> Halves(const Part& part, std::string why) {
  Part first{.isolating = why}, second{.isolating = why};
  if (part.segments.size() > 1) {
    const size_t half = part.segments.size() / 2;
    first.segments.assign(part.segments.begin(), part.segments.begin() + half);
    second.segments.assign(part.segments.begin() + half, part.segments.end());
  } else {
    const Segment& s = part.segments[0];
    const size_t half = s.positions.size() / 2;
    first.segments.push_back({s.variant,
                              {s.positions.begin(), s.positions.begin() + half},
                              s.written});
    second.segments.push_back({s.variant,
                               {s.positions.begin() + half, s.positions.end()},
                               s.written});
  }
  return {std::move(first), std::move(second)};
}

void PtxCmdBackend::Settle(const Part& part, const ToolRun& run,
                           RunReply& reply, Declines& declines,
                           std::vector<Part>& next) {
  switch (run.end) {
    case ToolRun::kOk:
      cost_.Learn(part.tuples(), run.took);
      AddResults(part, run.out, reply.results, declines);
      return;
    case ToolRun::kCut:
      DeclineAll(part, DeclineCode::kOther,
                 absl::StrCat(kNotRunPrefix,
                              "ptx-cmd: not finished: the batch's time "
                              "budget (batch_timeout_ms=",
                              absl::ToInt64Milliseconds(config_.batch_timeout),
                              ") was spent while it ran"),
                 declines);
      return;
    case ToolRun::kRefused:
      // A refusal is of a variant (a module it cannot parse), never of
      // operands: find the variant, never retry its tuples one by one.
      if (part.segments.size() == 1) {
        const std::string why = Failure(part, run);
        const Segment& s = part.segments[0];
        refused_.try_emplace(RefusalKey{s.variant, s.written}, why);
        DeclineAll(part, DeclineCode::kUnsupportedVariant, why, declines);
        return;
      }
      break;
    case ToolRun::kCrashed:
    case ToolRun::kHung:
      // A crash or a hang is a finding: find the tuple that causes it.
      if (part.tuples() == 1) {
        reply.results[part.segments[0].positions[0]] = {
            .kind = ResultKind::kFault,
            .message = reply.InternMessage(Failure(part, run)),
            .fault = run.end == ToolRun::kHung ? TupleFault::kHang
                                               : TupleFault::kCrash};
        return;
      }
      break;
  }
  for (Part& half : Halves(part, Failure(part, run))) {
    next.push_back(std::move(half));
  }
}

// `out`'s values into `results`, with the carry its flag words say for a
// carry variant; a flag word no correct CC.CF reader leaves is declined.
void PtxCmdBackend::AddResults(const Part& part, absl::string_view out,
                               std::span<TupleResult> results,
                               Declines& declines) const {
  const size_t slot = SlotBytes(part, config_.abi);
  size_t i = 0;
  for (const Segment& s : part.segments) {
    for (uint32_t p : s.positions) {
      uint64_t bits = 0, flag_word = 0;
      std::memcpy(&bits, out.data() + i * slot, kResultBytes);
      if (slot == kCarryResultBytes) {
        std::memcpy(&flag_word, out.data() + i * slot + kResultBytes,
                    kResultBytes);
      }
      ++i;
      results[p] = {.bits = bits};
      if (!HasCarryOut(s.variant)) continue;
      if (const std::optional<bool> carry =
              CarryOfFlagWord(s.variant, flag_word)) {
        results[p].carry = *carry;
      } else {
        declines.Add({&p, 1}, DeclineCode::kNotEvaluable,
                     UnreadableFlagWordMessage(s.variant, flag_word));
      }
    }
  }
}

std::string PtxCmdBackend::Failure(const Part& part, const ToolRun& run) const {
  const size_t n = part.tuples();
  const std::string variants =
      part.segments.size() == 1
          ? SegmentName(part.segments[0])
          : absl::StrCat(part.segments.size(), " segments");
  return absl::StrCat(
      "ptx-cmd: command '", config_.command, "' failed on ", variants, " (", n,
      n == 1 ? " tuple): " : " tuples): ", run.what,
      run.output.empty() ? "; it printed nothing"
                         : absl::StrCat("; its output ends:\n", run.output));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakePtxCmdBackend(
    const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  // What workers killed in the middle of a run left behind, then ours.
  RemoveOrphanedProcessTempDirs(kPtxCmdTempPrefix);
  std::string root = ProcessTempDir(kPtxCmdTempPrefix, getpid());
  if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("cannot create ", root, ": ", std::strerror(errno)));
  }
  return std::make_unique<PtxCmdBackend>(std::move(config), std::move(root));
}

}  // namespace ptxdiff
