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
#include "backends/ptx_cmd/fault_pacing.h"
#include "backends/ptx_cmd/module_parts.h"
#include "backends/ptx_cmd/ptx_cmd_config.h"
#include "backends/ptx_cmd/refusal_classes.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "backends/ptx_cmd/refusal_recheck.h"
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
namespace ptx_cmd_internal {
namespace {

// The buffers are the GPU's memory image, which is little-endian.
static_assert(std::endian::native == std::endian::little);

// The tuple run to learn the tool's start-up: add.u32 1, 2.
constexpr WireTuple kProbeTuple[] = {{.operands = {{1, 2}}}};
// The operands of a variant run alone to test a class of refusals: none 0
// (a division by it would crash a tool), none small (a `bfind` of it hangs
// the dense-fault fixture).
constexpr Operands kSampleOperands = {{0x12345678, 0x3f5, 0x2a1, 0x1c3}};
// A random variant of a confirmed class is run alone every kRecheckEvery
// batches (RefusalClasses::Recheck).
constexpr int kRecheckEvery = 16;

class PtxCmdBackend : public Backend {
 public:
  PtxCmdBackend(Config config, std::optional<RefusalMemory> memory,
                Remembered remembered)
      : config_(std::move(config)),
        memory_(std::move(memory)),
        refused_(std::move(remembered.variants)),
        kept_(std::move(remembered.kept)),
        classes_(
            [sm = config_.target.sm](const Variant& v) {
              return !::ptxdiff::WhyUnsupported(v, sm, MaxPtxOfDriver(INT_MAX))
                          .has_value();
            },
            std::move(remembered.classes)) {}

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

 public:
  // Before anything is offered: what the memory holds re-checked, and what
  // the tool accepts now forgotten (refusal_recheck.h).
  absl::Status ForgetWhatTheToolAccepts();

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
              std::vector<Part>& next, absl::Time deadline);
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

  // Why the tool refuses `v` in shape `written` as a member of a class it
  // refused, if it does.
  std::optional<std::string> RefusedAsClass(const Variant& v,
                                            bool written) const;
  // Tests the classes the round's fresh refusals are evidence for
  // (refusal_classes.h), and remembers those confirmed.
  void LearnClasses(absl::Time deadline);
  // True if the segment a refused run's error named is in a class the tool
  // refuses, known or learned now from what it said.
  bool InAClassRefused(const Segment& named, const ToolRun& run,
                       absl::Time deadline);
  // Says and remembers a class confirmed.
  void Learned(const RefusalClass& c);
  // The classes the campaign's other workers confirmed since this one last
  // looked (they share the memory's file): adopted, so that a class is
  // learned once a campaign, not once a worker.
  void AdoptOthersClasses();
  // `parts` without the segments of classes the tool refuses, declined.
  std::vector<Part> WithoutRefusedClasses(std::vector<Part> parts,
                                          Declines& declines) const;
  // Every kRecheckEvery batches: a variant of a class run alone, and the
  // class dropped if it is not refused alike.
  void RecheckAClass(absl::Time deadline);
  // `v` alone, one tuple in shape `written`, for RefusalClasses.
  AloneRun RunAlone(const Variant& v, bool written, absl::Time deadline);

  // The tool runs' directories are made in it (MakeFilesRoot).
  absl::Status MakeFilesRoot();

  Config config_;
  // Under this process's ProcessTempRoot (common/files.h): its remover takes
  // it however the worker ends. A worker its client kills and never reaps
  // (a fuzzer's campaign stopped, then _Exit) left TMPDIR/ptxdiff-ptx-cmd-PID
  // when this was a directory of its own that the client removed.
  std::unique_ptr<TempDir> files_root_;
  ToolCostModel cost_;
  std::optional<RefusalMemory> memory_;
  // Variants the tool refused (a non-zero exit on a module of that variant
  // alone), with why: declined without another run.
  Refusals refused_;
  // When re-checks of this run last kept each message (refusal_recheck.h).
  absl::flat_hash_map<std::string, Kept> kept_;
  // The classes it refuses, and the refusals of the batch's last round that
  // may be evidence of new ones.
  RefusalClasses classes_;
  struct FreshRefusal {
    Variant variant;
    bool written;
    std::string message;  // RefusalMessage
  };
  std::vector<FreshRefusal> fresh_;
  int64_t batches_ = 0;
  off_t memory_bytes_seen_ = -1;  // AdoptOthersClasses
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

absl::Status PtxCmdBackend::MakeFilesRoot() {
  // Made with the first batch, so that a worker that only checks programs
  // makes none; and again if it was removed under a long run.
  if (files_root_ != nullptr && IsDirectory(files_root_->path()))
    return absl::OkStatus();
  files_root_.reset();
  PTXDIFF_ASSIGN_OR_RETURN(files_root_, TempDir::Create("ptx-cmd"));
  return absl::OkStatus();
}

absl::Status PtxCmdBackend::RunSupported(const ResolvedBatch& request,
                                         RunReply& reply) {
  reply.messages.clear();
  reply.results.assign(request.tuples.size(), TupleResult{});
  PTXDIFF_RETURN_IF_ERROR(MakeFilesRoot());
  Declines declines(reply);
  const absl::Time deadline = absl::Now() + config_.batch_timeout;
  AdoptOthersClasses();
  std::vector<Part> parts = MakeParts(request, declines);
  if (!parts.empty()) LearnStartUp(deadline);
  if (++batches_ % kRecheckEvery == 0) RecheckAClass(deadline);
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
      Settle(request, parts[i], runs[i], reply, declines, next, deadline);
    }
    LearnClasses(deadline);
    parts = WithoutRefusedClasses(std::move(next), declines);
  }
  return absl::OkStatus();
}

absl::Status PtxCmdBackend::ForgetWhatTheToolAccepts() {
  if (!memory_ || (refused_.empty() && classes_.classes().empty()))
    return absl::OkStatus();
  PTXDIFF_RETURN_IF_ERROR(MakeFilesRoot());
  // Half a tool timeout for them all: the client waits for the handshake
  // about one --timeout (a re-check cut short keeps its refusals).
  const absl::Time deadline = absl::Now() + config_.timeout / 2;
  Remembered remembered{.variants = refused_,
                        .classes = classes_.classes(),
                        .kept = std::move(kept_)};
  absl::Status unwritten;
  const std::vector<Forgotten> forgotten = RecheckRemembered(
      *memory_, remembered,
      [sm = config_.target.sm](const Variant& v) {
        return !::ptxdiff::WhyUnsupported(v, sm, MaxPtxOfDriver(INT_MAX))
                    .has_value();
      },
      [&](const Variant& v, bool written) {
        return RunAlone(v, written, deadline);
      },
      NowInThisRun(), &unwritten);
  for (const Forgotten& f : forgotten) {
    classes_.Forget(f.message);
    std::fprintf(stderr,
                 "ptxdiff-worker: ptx-cmd: the tool runs now what it was "
                 "remembered refusing: %s forgotten, sent again\n",
                 DescribeForgotten(f).c_str());
  }
  refused_ = std::move(remembered.variants);
  if (!unwritten.ok()) {
    std::fprintf(stderr, "ptxdiff-worker: ptx-cmd: %s\n",
                 std::string(unwritten.message()).c_str());
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
      if (std::optional<std::string> why =
              RefusedAsClass(s.variant, s.written)) {
        declines.Add(s.positions, DeclineCode::kUnsupportedVariant, *why);
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

ToolRun PtxCmdBackend::RunTool(const ResolvedBatch& request, const Part& part,
                               absl::Time deadline) const {
  const size_t n = part.tuples();
  // Whole milliseconds: the timeout is quoted in messages.
  return RunToolOnce(
      {.command = config_.command,
       .files_root = files_root_->path(),
       .module = ModuleFor(request, part, config_.target, config_.abi),
       .in = InputBuffer(request, part),
       .n = n,
       .slot_bytes = static_cast<size_t>(SlotBytes(part, config_.abi)),
       .timeout = absl::Trunc(cost_.Timeout(n, config_.timeout),
                              absl::Milliseconds(1)),
       .deadline = deadline});
}

void PtxCmdBackend::Settle(const ResolvedBatch& request, const Part& part,
                           const ToolRun& run, RunReply& reply,
                           Declines& declines, std::vector<Part>& next,
                           absl::Time deadline) {
  switch (run.end) {
    case ToolRun::kOk:
      cost_.Learn(part.tuples(), run.took);
      for (const Segment& s : part.segments) classes_.Ran(s.variant, s.written);
      if (part.segments.size() == 1) {
        if (auto faulted = faulting_.find(part.segments[0].variant);
            faulted != faulting_.end())
          faulted->second.Clean();
      }
      AddResults(part, run.out, reply.results, declines);
      return;
    case ToolRun::kCut:
      // Not the tool's doing: the batch's time ran out, the worker was
      // told to stop (the campaign's end), or the machine failed the run (a
      // full disk). A campaign sends them again.
      DeclineAll(
          part, DeclineCode::kOther,
          absl::StrCat(
              kNotRunPrefix, "ptx-cmd: not finished: ",
              !run.machine_failure.empty()
                  ? absl::StrCat("the machine failed the run, not the module (",
                                 run.what, ": \"", run.machine_failure, "\")")
              : Interrupted()
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
        fresh_.push_back(
            {s.variant, s.written,
             RefusalMessage(s.variant, run.error_lines, run.output)});
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
        // A class of the named segment's, learned now: the module's other
        // segments of it are declined, and the rest runs whole, its next
        // refusal named by the next run (a halving per refused variant
        // was most of the runs on a tool that refuses whole classes).
        if (InAClassRefused(part.segments[*k], run, deadline)) {
          for (Part& rest : WithoutRefusedClasses({part}, declines)) {
            rest.isolating = why;
            next.push_back(std::move(rest));
          }
          return;
        }
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
            .fault = run.end == ToolRun::kHung ? CaseFault::kHang
                                               : CaseFault::kCrash};
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
  const bool both_shapes = config_.forms == Config::Forms::kAsWritten;
  if (both_shapes && !refused_.contains(RefusalKey{v, true}) &&
      classes_.Find(v, true) == nullptr)
    return std::nullopt;
  if (std::optional<std::string> why = RefusedAsClass(v, false)) return why;
  const auto registers = refused_.find(RefusalKey{v, false});
  if (registers == refused_.end()) return std::nullopt;
  return absl::StrCat("refused by the tool in an earlier run (remembered in ",
                      memory_ ? memory_->path() : "this worker",
                      "): ", registers->second);
}

std::optional<std::string> PtxCmdBackend::RefusedAsClass(const Variant& v,
                                                         bool written) const {
  const RefusalClass* c = classes_.Find(v, written);
  if (c == nullptr) return std::nullopt;
  return absl::StrCat("ptx-cmd: refused by the tool as a class (", c->Describe(),
                      ": ", c->sampled,
                      " of its variants run alone were refused alike; "
                      "remembered in ",
                      memory_ ? memory_->path() : "this worker",
                      "): ", c->message);
}

AloneRun PtxCmdBackend::RunAlone(const Variant& v, bool written,
                                 absl::Time deadline) {
  const WireTuple tuple[] = {
      {.operands = kSampleOperands,
       .runtime = written ? uint8_t{0} : RuntimeCapableSources(v)}};
  const ResolvedBatch batch{.variants = {v}, .tuples = tuple};
  const Part part{.segments = {{v, {0}, written}}};
  if (absl::Now() >= deadline) return {};
  const ToolRun run = RunTool(batch, part, deadline);
  if (!run.error.ok() || run.end == ToolRun::kCut) return {};
  if (run.end != ToolRun::kRefused) return {.end = AloneRun::kNotRefused};
  Refused(RefusalKey{v, written}, Failure(part, run));
  return {.end = AloneRun::kRefused,
          .message = RefusalMessage(v, run.error_lines, run.output)};
}

void PtxCmdBackend::LearnClasses(absl::Time deadline) {
  std::vector<FreshRefusal> fresh = std::move(fresh_);
  fresh_.clear();
  if (!fresh.empty()) AdoptOthersClasses();
  const auto run = [&](const Variant& v, bool written) {
    return RunAlone(v, written, deadline);
  };
  for (const FreshRefusal& r : fresh) {
    const std::optional<RefusalClass> learned =
        classes_.Learn(r.variant, r.written, r.message, run);
    if (learned.has_value()) Learned(*learned);
  }
}

bool PtxCmdBackend::InAClassRefused(const Segment& named, const ToolRun& run,
                                    absl::Time deadline) {
  AdoptOthersClasses();
  if (classes_.Find(named.variant, named.written) != nullptr) return true;
  const std::optional<RefusalClass> learned = classes_.Learn(
      named.variant, named.written,
      RefusalMessage(named.variant, run.error_lines, run.output),
      [&](const Variant& v, bool written) {
        return RunAlone(v, written, deadline);
      });
  if (!learned.has_value()) return false;
  Learned(*learned);
  return learned->Contains(named.variant, named.written);
}

void PtxCmdBackend::AdoptOthersClasses() {
  struct stat st;
  if (!memory_ || stat(memory_->path().c_str(), &st) != 0 ||
      st.st_size == memory_bytes_seen_) {
    return;
  }
  memory_bytes_seen_ = st.st_size;
  const absl::StatusOr<Remembered> remembered = memory_->Load();
  if (!remembered.ok()) return;
  for (const RefusalClass& c : remembered->classes) classes_.Adopt(c);
}

void PtxCmdBackend::Learned(const RefusalClass& c) {
  std::fprintf(stderr, "ptxdiff-worker: ptx-cmd: the tool refuses %s: %s\n",
               c.Describe().c_str(), c.message.c_str());
  if (!memory_) return;
  if (absl::Status s = memory_->RememberClass(c); !s.ok()) {
    std::fprintf(stderr, "ptxdiff-worker: ptx-cmd: %s\n",
                 std::string(s.message()).c_str());
  }
}

std::vector<Part> PtxCmdBackend::WithoutRefusedClasses(
    std::vector<Part> parts, Declines& declines) const {
  if (classes_.classes().empty()) return parts;
  std::vector<Part> kept;
  for (Part& part : parts) {
    std::vector<Segment> segments;
    for (Segment& s : part.segments) {
      if (std::optional<std::string> why = RefusedAsClass(s.variant, s.written))
        declines.Add(s.positions, DeclineCode::kUnsupportedVariant, *why);
      else
        segments.push_back(std::move(s));
    }
    part.segments = std::move(segments);
    if (!part.segments.empty()) kept.push_back(std::move(part));
  }
  return kept;
}

void PtxCmdBackend::RecheckAClass(absl::Time deadline) {
  const std::optional<RefusalClass> dropped = classes_.Recheck(
      [&](const Variant& v, bool written) {
        return RunAlone(v, written, deadline);
      });
  if (!dropped.has_value()) return;
  std::fprintf(stderr,
               "ptxdiff-worker: ptx-cmd: a re-check found a variant of %s "
               "that is not refused alike: the class is dropped\n",
               dropped->Describe().c_str());
  if (memory_) (void)memory_->ForgetClass(*dropped);
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
  // A hang called well before timeout_ms: said to be the adaptive timeout,
  // which --timeout does not set (the eighteenth fault run: a variant only
  // slower than the others was a hang, and nothing said which limit).
  const std::string adaptive =
      run.end == ToolRun::kHung &&
              run.took + absl::Milliseconds(100) < config_.timeout
          ? absl::StrCat(" (the adaptive timeout: 4 times what a run of ", n,
                         n == 1 ? " tuple" : " tuples",
                         " took this tool so far, plus 500 ms, never above "
                         "timeout_ms, here ",
                         absl::FormatDuration(config_.timeout),
                         ": PTXDIFF_PTX_CMD_TIMEOUT_MS; docs/kernel-abi.md)")
          : "";
  return absl::StrCat(
      "ptx-cmd: command '", config_.command, "' failed on ", variants, " (", n,
      n == 1 ? " tuple): " : " tuples): ", run.what, adaptive, printed);
}

}  // namespace
}  // namespace ptx_cmd_internal

absl::StatusOr<std::unique_ptr<Backend>> MakePtxCmdBackend(
    const KeyValues& options) {
  using ptx_cmd_internal::Config;
  using ptx_cmd_internal::ParseConfig;
  using ptx_cmd_internal::PtxCmdBackend;
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  // What workers of an older ptxdiff, killed unreaped, left behind.
  RemoveOrphanedProcessTempDirs(kPtxCmdTempPrefix);
  std::optional<RefusalMemory> memory;
  Remembered remembered;
  if (!config.refusals_dir.empty()) {
    memory.emplace(config.refusals_dir, config.command,
                   absl::StrCat("sm_", config.target.sm));
    PTXDIFF_ASSIGN_OR_RETURN(remembered, memory->Load());
  }
  auto backend = std::make_unique<PtxCmdBackend>(
      std::move(config), std::move(memory), std::move(remembered));
  PTXDIFF_RETURN_IF_ERROR(backend->ForgetWhatTheToolAccepts());
  return backend;
}

}  // namespace ptxdiff
