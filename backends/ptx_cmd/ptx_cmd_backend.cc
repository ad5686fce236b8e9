#include "backends/ptx_cmd/ptx_cmd_backend.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "backends/carry_support.h"
#include "backends/cuda/kernel_gen.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/tool_run.h"
#include "common/files.h"
#include "common/interrupt.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

// The buffers are the GPU's memory image, which is little-endian.
static_assert(std::endian::native == std::endian::little);

// How big one batch module may grow: a plain variant's segment is ~20 lines,
// a 2-lane SIMD variant's ~1,300 (its selector dispatch), so a module stays
// under ~50k lines, which a tool parses in well under a second. Past that a
// module grows, up to kMaxModuleWeight, while its tuples are too few for the
// tool's start-up to be at most kStartupShare of its run (ToolCostModel): a
// simulator whose start-up costs far more than a tuple otherwise pays it
// again every few thousand tuples.
constexpr int kModuleWeight = 2048;
constexpr int kMaxModuleWeight = 4 * kModuleWeight;
constexpr double kStartupShare = 0.125;
// A written segment (operands as the case's form has them) takes ~6 lines a
// tuple, so it is cut every kWrittenSegmentTuples tuples. A loop's dispatch
// (DispatchSource) takes ~4 lines for each value its tuples hold.
constexpr size_t kWrittenSegmentTuples = 1024;
int SegmentWeight(bool written, size_t tuples, size_t dispatch_values) {
  if (written) return 1 + static_cast<int>(tuples / 3);
  return 1 + static_cast<int>(dispatch_values / 4);
}

// A variant that has crashed or hung the tool runs apart from the others,
// so that its next faults cost a few small runs and the clean variants keep
// their big ones, in parts of a size of its own (ApartSize): first
// kFirstApartPartTuples, twice that after each part that ran clean, half
// after each tuple that crashed, so that a variant that faults on every
// tuple runs them one by one and one whose faulting class is no longer sent
// soon runs in big parts again. A part that hangs costs a timeout at each
// halving, so a variant's part that hung makes its parts one tuple each
// (each hanging run then isolates a tuple: a tool that hangs on a whole
// class of inputs spent its hang cap on parts of 4, batch after batch,
// isolating none), growing back to at most 16.
constexpr size_t kFirstApartPartTuples = 4;
constexpr size_t kMaxApartPartTuples = 256;
constexpr size_t kMaxApartPartTuplesAfterAHang = 16;

// A variant that faults the tool this often in one batch has the rest of
// its tuples in that batch left unrun: each would cost a run, a hang a
// whole timeout, and a tool that faults on a class of inputs faults on most
// of them (the campaign quarantines the classes that faulted). Counted as
// tuples found faulting, and as runs of its tuples alone that crashed, or
// hung (each a timeout spent).
constexpr int kFaultsPerVariantInBatch = 3;
constexpr int kCrashRunsPerVariantInBatch = 12;
constexpr int kHangRunsPerVariantInBatch = 4;
// And a family whose variants hung the tool this often (bfind's 8 variants
// hanging on one class of inputs would cost 32 timeouts a batch).
constexpr int kHangRunsPerFamilyInBatch = 8;

// How a variant that faulted runs apart (see kFirstApartPartTuples).
struct ApartSize {
  size_t tuples = kFirstApartPartTuples;
  bool hung = false;

  void Clean() {
    tuples = std::min(
        2 * tuples, hung ? kMaxApartPartTuplesAfterAHang : kMaxApartPartTuples);
  }
  void Faulted(bool hang) {
    hung |= hang;
    tuples = hang ? 1 : std::max<size_t>(1, tuples / 2);
  }
};

// A variant's faults in the batch being run.
struct BatchFaults {
  int tuples = 0;
  int crash_runs = 0, hang_runs = 0;
  bool Enough() const {
    return tuples >= kFaultsPerVariantInBatch ||
           crash_runs >= kCrashRunsPerVariantInBatch ||
           hang_runs >= kHangRunsPerVariantInBatch;
  }
};

struct Config {
  std::string command;
  PtxTarget target;
  absl::Duration timeout = absl::Seconds(10);
  absl::Duration batch_timeout = absl::Seconds(45);
  int jobs = 2;
  int abi = 2;  // 2: one module per batch; 1: one module per variant
  // How operand forms run (ABI 2: `forms` 1 or 0; ABI 1 has no forms).
  enum class Forms {
    kAsWritten,          // the register shape in loops, the rest written
    kRegisterShapeOnly,  // the register shape in loops, the rest declined
    kAllInRegisters,     // every tuple in a loop (ABI 1: no forms said)
  } forms = Forms::kAsWritten;
  // Where what the tool refuses is remembered across runs (refusal_memory.h);
  // empty: nowhere.
  std::string refusals_dir;
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
  config.forms = config.abi == 1 ? Config::Forms::kAllInRegisters
                 : forms == 1    ? Config::Forms::kAsWritten
                                 : Config::Forms::kRegisterShapeOnly;
  config.refusals_dir = OptionValue(options, "refusals_dir").value_or("");
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
  // A part of a variant that faulted the tool before, run apart (MakeParts).
  bool apart = false;

  size_t tuples() const {
    size_t n = 0;
    for (const Segment& s : segments) n += s.positions.size();
    return n;
  }
};

// The tuple run to learn the tool's start-up: add.u32 1, 2.
constexpr WireTuple kProbeTuple[] = {{.operands = {{1, 2}}}};

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

// The worker's directory of tool runs, made if it is not there.
absl::Status MakeFilesRoot(const std::string& root) {
  if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("cannot create ", root, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

class PtxCmdBackend : public Backend {
 public:
  PtxCmdBackend(Config config, std::string files_root,
                std::optional<RefusalMemory> memory, Refusals remembered)
      : config_(std::move(config)),
        files_root_(std::move(files_root)),
        memory_(std::move(memory)),
        refused_(std::move(remembered)) {}
  ~PtxCmdBackend() override { RemoveTree(files_root_); }

 protected:
  WorkerIdentity Describe() const override {
    return {
        .name = std::string(kPtxCmdBackend),
        // The kernel ABI it writes, as the banner says ("ptx-cmd abi 2
        // (my-tool ...)"): a bare "2" read as the ABI with abi=1.
        .version = absl::StrCat("abi ", config_.abi),
        .toolchain = config_.command,
        .device = absl::StrCat("PTX for sm_", config_.target.sm),
        // The kernels read CC.CF back after every `.cc` instruction.
        .carry = true,
        .forms = config_.forms != Config::Forms::kAllInRegisters,
        // A tool runs the loop of all-register tuples fastest.
        .runtime_by_default = config_.forms != Config::Forms::kAllInRegisters};
  }

  std::optional<std::string> WhyUnsupported(const Variant& v) const override {
    std::optional<std::string> why = ::ptxdiff::WhyUnsupported(
        v, config_.target.sm, MaxPtxOfDriver(INT_MAX));
    if (why.has_value()) {
      return absl::StrCat("not run as PTX for sm_", config_.target.sm, ": ",
                          *why);
    }
    return RefusedInEveryShape(v);
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
  void LearnStartUp(absl::Time deadline);
  // Runs every part at once (up to `jobs` at a time).
  std::vector<ToolRun> RunParts(const ResolvedBatch& request,
                                const std::vector<Part>& parts,
                                absl::Time deadline) const;
  ToolRun RunTool(const ResolvedBatch& request, const Part& part,
                  absl::Time deadline) const;
  // Reads a run's results into the reply, or, for a run that failed, the
  // halves to run again (`next`), a refusal, or a fault.
  void Settle(const ResolvedBatch& request, const Part& part,
              const ToolRun& run, RunReply& reply, Declines& declines,
              std::vector<Part>& next);
  void AddResults(const Part& part, absl::string_view out,
                  std::span<TupleResult> results, Declines& declines) const;
  // "command 'T' on add.sat.s32 (16 tuples): exit status 1; its output ends:
  // ..."
  std::string Failure(const Part& part, const ToolRun& run) const;

  // The tool's refusal of `v` in every shape it may be sent in, as
  // remembered from earlier runs: such a variant is not offered at all.
  std::optional<std::string> RefusedInEveryShape(const Variant& v) const;
  // Records a refusal, and remembers it for later runs.
  void Refused(const RefusalKey& key, const std::string& why);

  Config config_;
  std::string files_root_;  // ProcessTempDir(kPtxCmdTempPrefix, getpid())
  ToolCostModel cost_;
  std::optional<RefusalMemory> memory_;
  // Variants the tool refused (a non-zero exit on a module of that variant
  // alone), with why: declined without another run.
  Refusals refused_;
  // Variants that crashed or hung the tool: run apart, in parts of their
  // own size.
  absl::flat_hash_map<Variant, ApartSize> faulting_;
  absl::flat_hash_set<Family> faulting_families_;  // theirs

  // `part`, which faulted, as the segments of faulting_families_ and the
  // rest; empty if that does not split it.
  std::vector<Part> SuspectsApart(const Part& part,
                                  const std::string& why) const;
  absl::flat_hash_map<Variant, BatchFaults> faults_in_batch_;
  absl::flat_hash_map<Family, int> family_hang_runs_;  // in the batch
};

// Why `v`'s tuples are left unrun in this batch, if it faulted the tool
// enough in it (BatchFaults::Enough), or its family hung it enough.
std::optional<std::string> FaultedEnough(
    const Variant& v, const absl::flat_hash_map<Variant, BatchFaults>& faults,
    const absl::flat_hash_map<Family, int>& family_hang_runs) {
  const auto it = faults.find(v);
  const auto family = family_hang_runs.find(v.family);
  const bool family_hangs = family != family_hang_runs.end() &&
                            family->second >= kHangRunsPerFamilyInBatch;
  if ((it == faults.end() || !it->second.Enough()) && !family_hangs)
    return std::nullopt;
  return absl::StrCat(
      kNotRunPrefix, "ptx-cmd: ",
      family_hangs ? absl::StrCat(InfoOf(v.family).opcode, " hung the tool in ",
                                  family->second, " runs of this batch")
                   : absl::StrCat(Spell(v), " crashed or hung the tool in ",
                                  it->second.crash_runs + it->second.hang_runs,
                                  " runs of this batch"),
      "; its other tuples were not run, each would cost a run");
}

// `parts` without the segments of variants that faulted the tool enough in
// this batch (FaultedEnough): those are declined as not run.
std::vector<Part> WithoutFaultyVariants(
    std::vector<Part> parts,
    const absl::flat_hash_map<Variant, BatchFaults>& faults,
    const absl::flat_hash_map<Family, int>& family_hang_runs,
    Declines& declines) {
  if (faults.empty()) return parts;
  std::vector<Part> kept;
  for (Part& part : parts) {
    Part rest{.isolating = part.isolating, .apart = part.apart};
    for (Segment& s : part.segments) {
      if (const std::optional<std::string> why =
              FaultedEnough(s.variant, faults, family_hang_runs)) {
        declines.Add(s.positions, DeclineCode::kOther, *why);
      } else {
        rest.segments.push_back(std::move(s));
      }
    }
    if (!rest.segments.empty()) kept.push_back(std::move(rest));
  }
  return kept;
}

// The decline of a part the batch's time budget left unrun.
std::string NotFinished(absl::Duration batch_timeout,
                        absl::string_view isolating) {
  return absl::StrCat(
      kNotRunPrefix, "ptx-cmd: the batch's time budget (batch_timeout_ms=",
      absl::ToInt64Milliseconds(batch_timeout), ") was spent",
      isolating.empty()
          ? ""
          : absl::StrCat(" isolating a failure of the tool: ", isolating));
}

// A faulting variant's parts apart, released to the runs a few at a time:
// the first kFaultsPerVariantInBatch, then twice as many each round, so that
// the batch's fault cap (BatchFaults::Enough) stops a variant that faults on
// every tuple after a few runs. All at once, a `sad` that aborts the tool on
// every tuple cost a crashing run for each of its tuples in the batch.
class HeldApartParts {
 public:
  // Takes the apart parts out of `parts`, in their order.
  explicit HeldApartParts(std::vector<Part>& parts) {
    absl::flat_hash_map<Variant, size_t> index;
    std::vector<Part> rest;
    for (Part& part : parts) {
      if (!part.apart) {
        rest.push_back(std::move(part));
        continue;
      }
      const Variant& v = part.segments[0].variant;
      const auto [it, added] = index.try_emplace(v, held_.size());
      if (added) held_.push_back({.variant = v});
      held_[it->second].parts.push_back(std::move(part));
    }
    parts = std::move(rest);
  }

  bool empty() const { return held_.empty(); }

  // Moves the next parts of each variant into `parts`; those of variants
  // that `enough` says faulted enough in this batch are declined as not run.
  void Release(
      std::vector<Part>& parts,
      absl::FunctionRef<std::optional<std::string>(const Variant&)> enough,
      Declines& declines) {
    for (Held& h : held_) {
      if (const std::optional<std::string> why = enough(h.variant)) {
        for (const Part& part : h.parts)
          DeclineAll(part, DeclineCode::kOther, *why, declines);
        h.parts.clear();
        continue;
      }
      for (size_t i = 0; i < h.release && !h.parts.empty(); ++i) {
        parts.push_back(std::move(h.parts.front()));
        h.parts.pop_front();
      }
      h.release *= 2;
    }
    std::erase_if(held_, [](const Held& h) { return h.parts.empty(); });
  }

  // Declines every part still held.
  void DeclineHeld(DeclineCode code, const std::string& why,
                   Declines& declines) {
    for (const Held& h : held_) {
      for (const Part& part : h.parts) DeclineAll(part, code, why, declines);
    }
    held_.clear();
  }

 private:
  struct Held {
    Variant variant;
    std::deque<Part> parts;
    size_t release = kFaultsPerVariantInBatch;
  };
  std::vector<Held> held_;
};

absl::Status PtxCmdBackend::RunSupported(const ResolvedBatch& request,
                                         RunReply& reply) {
  reply.messages.clear();
  reply.results.assign(request.tuples.size(), TupleResult{});
  PTXDIFF_RETURN_IF_ERROR(MakeFilesRoot(files_root_));
  Declines declines(reply);
  const absl::Time deadline = absl::Now() + config_.batch_timeout;
  std::vector<Part> parts = MakeParts(request, declines);
  if (!parts.empty()) LearnStartUp(deadline);
  faults_in_batch_.clear();
  family_hang_runs_.clear();
  HeldApartParts held(parts);
  const auto enough = [&](const Variant& v) {
    return FaultedEnough(v, faults_in_batch_, family_hang_runs_);
  };
  while (true) {
    held.Release(parts, enough, declines);
    parts = WithoutFaultyVariants(std::move(parts), faults_in_batch_,
                                  family_hang_runs_, declines);
    if (parts.empty() && held.empty()) break;
    if (absl::Now() >= deadline) {
      for (const Part& part : parts) {
        DeclineAll(part, DeclineCode::kOther,
                   NotFinished(config_.batch_timeout, part.isolating),
                   declines);
      }
      held.DeclineHeld(DeclineCode::kOther,
                       NotFinished(config_.batch_timeout, ""), declines);
      break;
    }
    const std::vector<ToolRun> runs = RunParts(request, parts, deadline);
    std::vector<Part> next;
    for (size_t i = 0; i < parts.size(); ++i) {
      PTXDIFF_RETURN_IF_ERROR(runs[i].error);
      Settle(request, parts[i], runs[i], reply, declines, next);
    }
    parts = std::move(next);
  }
  return absl::OkStatus();
}

void PtxCmdBackend::LearnStartUp(absl::Time deadline) {
  if (cost_.learned()) return;
  // One run before the first batch, of one tuple of the plainest variant
  // (never one of the batch: that may be the one that hangs the tool), to
  // learn what a run costs besides its tuples, so that the first hang is not
  // waited for timeout_ms. A tool that refuses it leaves the cost unlearned
  // until a run succeeds.
  const ResolvedBatch probe_batch{.variants = {*ParseVariant("add.u32")},
                                  .tuples = kProbeTuple};
  const Part probe{.segments = {{probe_batch.variants[0], {0}, false}}};
  const ToolRun run = RunTool(probe_batch, probe, deadline);
  if (run.error.ok() && run.end == ToolRun::kOk) cost_.Learn(1, run.took);
}

// `group`'s tuples as segments: those whose every source that may be a
// runtime value is one run in the loop (the register shape); the others as
// written, in segments of at most kWrittenSegmentTuples, or declined, or in
// the loop too, as `forms` says.
std::vector<Segment> SegmentsOf(const ResolvedBatch& request,
                                const VariantGroup& group, Config::Forms forms,
                                Declines& declines) {
  const Variant& v = request.variants[group.variant_index];
  Segment loop{.variant = v};
  std::vector<Segment> segments;
  for (uint32_t p : group.positions) {
    if (forms == Config::Forms::kAllInRegisters ||
        IsRegisterShape(v, request.tuples[p].runtime)) {
      loop.positions.push_back(p);
      continue;
    }
    if (forms == Config::Forms::kRegisterShapeOnly) {
      declines.Add({&p, 1}, DeclineCode::kOperandForm,
                   "ptx-cmd: forms=0 runs only the register shape (every "
                   "source that may be a runtime value one)");
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

// The dispatch values of `s`'s tuples (kernel_gen.h's DispatchValuesOf).
std::vector<int> DispatchValuesOf(const ResolvedBatch& request,
                                  const Segment& s) {
  if (DispatchSource(s.variant) < 0) return {};
  std::vector<Operands> operands;
  operands.reserve(s.positions.size());
  for (uint32_t p : s.positions) operands.push_back(request.tuples[p].operands);
  return DispatchValuesOf(s.variant, operands);
}

std::vector<Part> PtxCmdBackend::MakeParts(const ResolvedBatch& request,
                                           Declines& declines) const {
  std::vector<Part> parts, apart;
  const size_t enough_tuples = cost_.SlotsForStartupShare(kStartupShare);
  // Of the last part.
  int weight = kMaxModuleWeight;
  size_t tuples = 0;
  for (const VariantGroup& group : GroupByVariant(request)) {
    for (Segment& s : SegmentsOf(request, group, config_.forms, declines)) {
      if (auto it = refused_.find(RefusalKey{s.variant, s.written});
          it != refused_.end()) {
        declines.Add(s.positions, DeclineCode::kUnsupportedVariant, it->second);
        continue;
      }
      if (const auto faulted = faulting_.find(s.variant);
          faulted != faulting_.end()) {
        const size_t size = faulted->second.tuples;
        for (size_t i = 0; i < s.positions.size(); i += size) {
          const auto first = s.positions.begin() + i;
          const auto last =
              s.positions.begin() + std::min(s.positions.size(), i + size);
          apart.push_back({.segments = {{s.variant, {first, last}, s.written}},
                           .apart = true});
        }
        continue;
      }
      const int w =
          SegmentWeight(s.written, s.positions.size(),
                        s.written ? 0 : DispatchValuesOf(request, s).size());
      const bool full = weight + w > kMaxModuleWeight ||
                        (weight + w > kModuleWeight && tuples >= enough_tuples);
      if (config_.abi == 1 || full) {
        parts.emplace_back();
        weight = 0;
        tuples = 0;
      }
      weight += w;
      tuples += s.positions.size();
      parts.back().segments.push_back(std::move(s));
    }
  }
  // Last: the clean parts' runs go first to the jobs.
  parts.insert(parts.end(), std::make_move_iterator(apart.begin()),
               std::make_move_iterator(apart.end()));
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
    } else {
      segment.dispatch_values = DispatchValuesOf(request, s);
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

// What to run instead of `part`, whose run failed: its segments' halves;
// or, for one segment, its first tuple alone and the halves of the rest: a
// tool that faults on a whole class of inputs has its first faulting tuple
// found in one run, where halving alone would spend a hang's timeout on
// each of log2(n) levels.
std::vector<Part> Split(const Part& part, const std::string& why) {
  std::vector<Part> parts;
  if (part.segments.size() > 1) {
    const size_t half = part.segments.size() / 2;
    parts.push_back({.isolating = why});
    parts.back().segments.assign(part.segments.begin(),
                                 part.segments.begin() + half);
    parts.push_back({.isolating = why});
    parts.back().segments.assign(part.segments.begin() + half,
                                 part.segments.end());
    return parts;
  }
  const Segment& s = part.segments[0];
  auto add = [&](size_t from, size_t to) {
    if (from == to) return;
    parts.push_back(
        {.segments = {{s.variant,
                       {s.positions.begin() + from, s.positions.begin() + to},
                       s.written}},
         .isolating = why});
  };
  const size_t n = s.positions.size();
  const size_t middle = 1 + (n - 1) / 2;
  add(0, 1);
  add(1, middle);
  add(middle, n);
  return parts;
}

// k, for a line of segment k of a batch module: its registers and labels
// are `%vK_...` and `$vK_...` (kernel_gen.h's scopes).
std::optional<size_t> SegmentNamedIn(absl::string_view line) {
  for (size_t at = line.find("v"); at != absl::string_view::npos;
       at = line.find("v", at + 1)) {
    if (at == 0 || (line[at - 1] != '%' && line[at - 1] != '$')) continue;
    size_t end = at + 1;
    while (end < line.size() && absl::ascii_isdigit(line[end])) ++end;
    size_t k = 0;
    if (end > at + 1 && end < line.size() && line[end] == '_' &&
        absl::SimpleAtoi(line.substr(at + 1, end - at - 1), &k)) {
      return k;
    }
  }
  return std::nullopt;
}

// The index of the segment of `module` on a line that one of a tool's
// `error_lines` names ("kernel.ptx:123: ...", "line 123"), by the segment's
// register and label prefix there (`%v7_a`, `$v7_loop`: segment 7).
std::optional<size_t> SegmentOnErrorLine(
    const std::vector<std::string>& error_lines, absl::string_view module) {
  const std::vector<absl::string_view> lines = absl::StrSplit(module, '\n');
  for (absl::string_view error : error_lines) {
    for (size_t at = 0; at < error.size(); ++at) {
      if (!absl::ascii_isdigit(error[at])) continue;
      size_t end = at;
      while (end < error.size() && absl::ascii_isdigit(error[end])) ++end;
      const bool after_colon = at > 0 && error[at - 1] == ':';
      const bool after_line =
          at >= 5 && absl::EqualsIgnoreCase(error.substr(at - 5, 5), "line ");
      size_t number = 0;
      if ((after_colon || after_line) &&
          absl::SimpleAtoi(error.substr(at, end - at), &number) &&
          number >= 1 && number <= lines.size()) {
        if (const std::optional<size_t> k = SegmentNamedIn(lines[number - 1]))
          return k;
      }
      at = end;
    }
  }
  return std::nullopt;
}

void PtxCmdBackend::Settle(const ResolvedBatch& request, const Part& part,
                           const ToolRun& run, RunReply& reply,
                           Declines& declines, std::vector<Part>& next) {
  switch (run.end) {
    case ToolRun::kOk:
      cost_.Learn(part.tuples(), run.took);
      if (part.segments.size() == 1) {
        if (auto faulted = faulting_.find(part.segments[0].variant);
            faulted != faulting_.end())
          faulted->second.Clean();
      }
      AddResults(part, run.out, reply.results, declines);
      return;
    case ToolRun::kCut:
      // Not the tool's doing: the batch's time ran out, or the worker was
      // told to stop (the campaign's end). A campaign sends them again.
      DeclineAll(part, DeclineCode::kOther,
                 absl::StrCat(
                     kNotRunPrefix, "ptx-cmd: not finished: ",
                     Interrupted()
                         ? "the worker was told to stop while it ran"
                         : absl::StrCat(
                               "the batch's time budget (batch_timeout_ms=",
                               absl::ToInt64Milliseconds(config_.batch_timeout),
                               ") was spent while it ran")),
                 declines);
      return;
    case ToolRun::kRefused:
      // A refusal is of a variant (a module it cannot parse), never of
      // operands: find the variant, never retry its tuples one by one.
      if (part.segments.size() == 1) {
        const std::string why = Failure(part, run);
        const Segment& s = part.segments[0];
        Refused(RefusalKey{s.variant, s.written}, why);
        DeclineAll(part, DeclineCode::kUnsupportedVariant, why, declines);
        return;
      }
      // The segment the tool's error names by its line, alone, and the
      // rest in halves: a refusal costs a run of its own, not a halving, and
      // the module's next refusals (a parser stops at the first) are found
      // in halves at once, not by running the rest again for each.
      if (const std::optional<size_t> k = SegmentOnErrorLine(
              run.error_lines,
              ModuleFor(request, part, config_.target, config_.abi));
          k.has_value() && *k < part.segments.size()) {
        const std::string why = Failure(part, run);
        Part named{.isolating = why}, rest{.isolating = why};
        for (size_t i = 0; i < part.segments.size(); ++i) {
          (i == *k ? named : rest).segments.push_back(part.segments[i]);
        }
        next.push_back(std::move(named));
        if (rest.segments.size() < 2) {
          if (!rest.segments.empty()) next.push_back(std::move(rest));
          return;
        }
        for (Part& half : Split(rest, why)) next.push_back(std::move(half));
        return;
      }
      break;
    case ToolRun::kCrashed:
    case ToolRun::kHung:
      // A crash or a hang is a finding: find the tuple that causes it.
      if (part.segments.size() == 1) {
        const bool hung = run.end == ToolRun::kHung;
        // Its parts shrink after a tuple that crashed, or any part that hung.
        ApartSize& apart = faulting_[part.segments[0].variant];
        if (hung || part.tuples() == 1) apart.Faulted(hung);
        faulting_families_.insert(part.segments[0].variant.family);
        BatchFaults& faults = faults_in_batch_[part.segments[0].variant];
        ++(hung ? faults.hang_runs : faults.crash_runs);
        if (hung) ++family_hang_runs_[part.segments[0].variant.family];
      }
      if (part.tuples() == 1) {
        ++faults_in_batch_[part.segments[0].variant].tuples;
        reply.results[part.segments[0].positions[0]] = {
            .kind = ResultKind::kFault,
            .message = reply.InternMessage(Failure(part, run)),
            .fault = run.end == ToolRun::kHung ? TupleFault::kHang
                                               : TupleFault::kCrash};
        return;
      }
      // Suspects first: the segments of families that faulted the tool
      // before, apart from the rest, which then most likely runs at once (a
      // hang costs a timeout per split).
      if (std::vector<Part> split = SuspectsApart(part, Failure(part, run));
          !split.empty()) {
        for (Part& p : split) next.push_back(std::move(p));
        return;
      }
      break;
  }
  for (Part& smaller : Split(part, Failure(part, run))) {
    next.push_back(std::move(smaller));
  }
}

std::vector<Part> PtxCmdBackend::SuspectsApart(const Part& part,
                                               const std::string& why) const {
  Part suspects{.isolating = why}, rest{.isolating = why};
  for (const Segment& s : part.segments) {
    (faulting_families_.contains(s.variant.family) ? suspects : rest)
        .segments.push_back(s);
  }
  if (suspects.segments.empty() || rest.segments.empty()) return {};
  return {std::move(suspects), std::move(rest)};
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

std::optional<std::string> PtxCmdBackend::RefusedInEveryShape(
    const Variant& v) const {
  const auto registers = refused_.find(RefusalKey{v, false});
  if (registers == refused_.end()) return std::nullopt;
  if (config_.forms == Config::Forms::kAsWritten &&
      !refused_.contains(RefusalKey{v, true}))
    return std::nullopt;
  return absl::StrCat("refused by the tool in an earlier run (remembered in ",
                      memory_ ? memory_->path() : "this worker",
                      "): ", registers->second);
}

void PtxCmdBackend::Refused(const RefusalKey& key, const std::string& why) {
  if (!refused_.try_emplace(key, why).second || !memory_) return;
  if (absl::Status remembered = memory_->Remember(key, why); !remembered.ok()) {
    // Not fatal: the refusal holds for this run; the next finds it again.
    std::fprintf(stderr, "ptxdiff-worker: ptx-cmd: %s\n",
                 std::string(remembered.message()).c_str());
  }
}

std::string PtxCmdBackend::Failure(const Part& part, const ToolRun& run) const {
  const size_t n = part.tuples();
  const std::string variants =
      part.segments.size() == 1
          ? SegmentName(part.segments[0])
          : absl::StrCat(part.segments.size(), " segments");
  std::string printed = "; it printed nothing";
  if (!run.error_lines.empty()) {
    // A tool that logs much says why in a line of its own, rarely its last.
    printed =
        absl::StrCat("; it said: ", absl::StrJoin(run.error_lines, " / "));
  } else if (!run.output.empty()) {
    printed = absl::StrCat("; its output ends:\n", run.output);
  }
  return absl::StrCat("ptx-cmd: command '", config_.command, "' failed on ",
                      variants, " (", n,
                      n == 1 ? " tuple): " : " tuples): ", run.what, printed);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakePtxCmdBackend(
    const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  // What workers killed in the middle of a run left behind, then ours,
  // made with the first batch (MakeFilesRoot): a worker that only checks
  // programs never makes it, and a killed one leaves nothing behind.
  RemoveOrphanedProcessTempDirs(kPtxCmdTempPrefix);
  std::string root = ProcessTempDir(kPtxCmdTempPrefix, getpid());
  std::optional<RefusalMemory> memory;
  Refusals remembered;
  if (!config.refusals_dir.empty()) {
    memory.emplace(config.refusals_dir, config.command,
                   absl::StrCat("sm_", config.target.sm));
    PTXDIFF_ASSIGN_OR_RETURN(remembered, memory->Load());
  }
  return std::make_unique<PtxCmdBackend>(std::move(config), std::move(root),
                                         std::move(memory),
                                         std::move(remembered));
}

}  // namespace ptxdiff
