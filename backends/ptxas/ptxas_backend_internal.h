// The ptxas backend's internals, shared by its .cc files: not an API (the
// backend's API is ptxas_backend.h, MakePtxasBackend). The PtxasBackend class
// and the types its halves share:
//   - ptxas_backend.cc: the options, the construction and the self-test, and
//     a batch's way through ptxas: Admit (repeats and cached keys set
//     aside), the chunks compiled and their cubins decoded (Decode), the
//     kernels that did not decode compiled again in halves (Bisect), the
//     kernel sizes learned (Learn), the reply (RunSupported);
//   - ptxas_backend_faults.cc: a compile within the batch's budget
//     (Assemble), and what one that failed without naming a line teaches
//     (ptxas_faults.h): the crash or hang of a tuple alone a fault, a module
//     that hung compiled again a variant and then a tuple at a time;
//   - ptxas_backend_executed_code.cc: the code the backend runs: a kernel's
//     SASS run on the evaluator where it is not all constants (Execute),
//     kept for the run (KeepCompiledCode) and run again for every tuple of
//     its key (AnswerFromCompiledCode, RunGrouped), and the executed values
//     the oracle refutes checked on the tuple's -O0 code
//     (CrossCheckExecuted, CalibrateAtO0).

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_BACKEND_INTERNAL_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_BACKEND_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "backends/backend.h"
#include "backends/carry_support.h"
#include "backends/ptxas/chunk_plan.h"
#include "backends/ptxas/compile_log.h"
#include "backends/ptxas/compiled_code.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/foldability.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/ptxas_faults.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_calibration.h"
#include "backends/ptxas/sass_constants.h"
#include "backends/run_cost_model.h"
#include "isa/axes.h"
#include "isa/variant.h"
#include "protocol/backend_names.h"
#include "protocol/protocol.h"
#include "sass/sass_decoder.h"

namespace ptxdiff {
namespace ptxas_backend_internal {

// ---------------------------------------------------------------------------
// Options.

struct Config {
  std::string arch = "sm_90";
  std::string ptxas;
  int tuples_per_kernel = 64;
  int kernels_per_module = 64;
  // Modules assembled at once: 0 until chosen, then 2 for the executable
  // (processes), 1 in-process. A campaign runs a worker per batch in flight
  // (two), which keep two cores busy with one thread each in-process; a
  // second thread would only cut each batch into more, smaller modules.
  int jobs = 0;
  bool all_variants = false;  // compile NeverFolded variants too
  // Run the code ptxas keeps on the CPU (sass/sass_machine.h) where the arch
  // is one the evaluator reads: every tuple gets a value, not only the
  // folded and claimed ones. execute=0 judges folds and claims alone.
  bool execute = true;
  // What assembles the modules: "ptxas" (the executable, a process per
  // module), "nvjitlink" (the same release's assembler in-process,
  // nvjitlink.h) or "auto" (nvjitlink where it loads and is ptxas's release).
  std::string compiler = "auto";
  // The bound of the compiled code kept for the whole run (compiled_code.h),
  // in MiB; 0 keeps none, every runtime-form key compiled in each batch
  // it comes in (to measure what the cache is worth).
  int code_cache_mb = 512;
  // The most one compile may take (`timeout_ms`; less once compiles were
  // timed: ToolCostModel), and all compiles of a batch (`batch_timeout_ms`,
  // by default three quarters of the client's reply timeout, HELLO's
  // kReplyTimeoutKey): a hang is found, and the batch answered, before the
  // client gives up on the worker.
  absl::Duration timeout = kPtxasTimeout;
  absl::Duration batch_timeout = absl::Seconds(45);
};

// ---------------------------------------------------------------------------
// The backend.

// One tuple's answer while a batch is in flight.
struct Outcome {
  ResultKind kind = ResultKind::kDecline;
  DeclineCode code = DeclineCode::kOther;
  std::string message;  // a decline's reason, or a value's note
  uint64_t bits = 0;
  bool carry = false;  // a `.cc` variant's CC.CF out
  // A value's note where it is one of ValueNotes' (not copied per tuple:
  // a batch of cached code answers tens of thousands).
  const std::string* note = nullptr;
  // A decline of this value alone, its code kept (kResultFlagKeptCode).
  bool kept_code = false;
  CaseFault fault = CaseFault::kNone;  // for kFault

  static Outcome Value(uint64_t bits, bool carry = false) {
    return {ResultKind::kValue, DeclineCode::kNone, "", bits, carry};
  }
  static Outcome Decline(DeclineCode code, std::string message) {
    return {ResultKind::kDecline, code, std::move(message), 0};
  }
  // ptxas crashed or hung on the tuple alone: a finding.
  static Outcome Fault(CaseFault fault, std::string message) {
    Outcome o{ResultKind::kFault, DeclineCode::kNone, std::move(message), 0};
    o.fault = fault;
    return o;
  }
  // A value's note, or a decline's message.
  const std::string& Text() const { return note != nullptr ? *note : message; }
};

// A decoded slot of a tuple of `v`: its value, with the carry its flag word
// says for a `.cc` variant, or a decline where no correct CC.CF reader
// leaves that word.
inline Outcome OutcomeOfSlot(const Variant& v, const SlotValue& slot) {
  if (!slot.flag_word.has_value()) return Outcome::Value(slot.bits);
  const std::optional<bool> carry = CarryOfFlagWord(v, *slot.flag_word);
  if (!carry.has_value()) {
    return Outcome::Decline(DeclineCode::kNotEvaluable,
                            UnreadableFlagWordMessage(v, *slot.flag_word));
  }
  return Outcome::Value(slot.bits, *carry);
}

// A value's notes (TupleResult::has_note): how ptxas gave it, one text per
// way, made once per backend (a reply interns a few, not one per tuple).
struct ValueNotes {
  explicit ValueNotes(absl::string_view arch)
      : folded(absl::StrCat("folded: ptxas stored it as a constant (", arch,
                            ")")),
        claimed(absl::StrCat("claimed: ptxas stored it as a constant for "
                             "every value of the runtime sources (",
                             arch, ")")),
        executed(absl::StrCat("executed: ptxas's code for ", arch, " at -O",
                              kPtxasDefaultOptLevel,
                              ", run on the CPU by the SASS evaluator")) {}

  // The note of a value of `t`, which its kernel's run gave if `executed`,
  // else its stored constants.
  const std::string& Of(const PtxTuple& t, bool by_execution) const {
    return by_execution ? executed : t.runtime == 0 ? folded : claimed;
  }

  std::string folded, claimed, executed;
};

// `outcome` with `note`, if it is a value.
inline Outcome Noted(Outcome outcome, const std::string& note) {
  if (outcome.kind == ResultKind::kValue) outcome.note = &note;
  return outcome;
}

// What compiling chunks left to do and to learn.
struct ChunkReport {
  // The tuples of each multi-tuple kernel that did not decode: to compile
  // again in halves until each tuple is answered.
  std::vector<std::vector<int>> failed_kernels;
  absl::Status status;

  void Merge(ChunkReport&& other) {
    for (auto& k : other.failed_kernels) failed_kernels.push_back(std::move(k));
    if (status.ok()) status = other.status;
  }
};

class PtxasBackend : public Backend {
 public:
  PtxasBackend(Config config, SassArch arch, std::string toolchain,
               int ptx_version, std::unique_ptr<NvJitLink> in_process)
      : config_(std::move(config)),
        arch_(std::move(arch)),
        notes_(arch_.name),
        toolchain_(std::move(toolchain)),
        ptx_version_(ptx_version),
        in_process_(std::move(in_process)),
        sizes_(config_.tuples_per_kernel),
        code_cache_((size_t{1} << 20) * config_.code_cache_mb) {
    for (Family f : FoldableFamilies(arch_.sm)) {
      foldable_[static_cast<int>(f)] = true;
    }
    if (auto info = FindSassArchInfo(arch_.name);
        info.ok() && config_.execute) {
      executable_ = *std::move(info);
    }
  }

  // Compiles known tuples and checks that every value comes back: the
  // construction-time proof that this ptxas and the decoder agree.
  absl::Status SelfTest();

  // The self-test's second batch, whose modules are timed.
  static constexpr uint64_t kSelfTestTuplesTimed = 512;

 protected:
  WorkerIdentity Describe() const override {
    return {.name = std::string(kPtxasBackend),
            .version = "1",
            .toolchain = toolchain_,
            .device = arch_.name,
            // The modules read CC.CF back after every `.cc` instruction.
            .carry = true,
            // Runtime sources are kernel parameters: what ptxas still stores
            // as a constant, it claims for every value of them.
            .forms = true,
            // With the SASS evaluator, the code it emits for them is run
            // too: judged for every value, not only where it claims one.
            .both_forms = executable_.has_value()};
  }

  std::optional<std::string> WhyUnsupported(const Variant& v) const override;

  absl::Status RunSupported(const ResolvedBatch& request,
                            RunReply& reply) override;

 private:
  struct SelfTestTuple {
    absl::string_view spelling;
    uint64_t a, b, result;
  };
  absl::Status SelfTestOn(std::span<const SelfTestTuple> known);

  // The batch being run.
  struct Batch {
    const ResolvedBatch& request;
    std::vector<PtxTuple> tuples;  // valid where compiled
    std::vector<Outcome> outcomes;
    // Per tuple (written by the compiling threads, one element each): its
    // value came from running a kernel's SASS (`kernels`, at slot `slots`),
    // kept to run again for every tuple of its key; or, where the evaluator
    // did not run the kernel, why.
    std::vector<uint8_t> executed = std::vector<uint8_t>(tuples.size());
    std::vector<std::shared_ptr<const CompiledKernel>> kernels =
        std::vector<std::shared_ptr<const CompiledKernel>>(tuples.size());
    std::vector<int> slots = std::vector<int>(tuples.size());
    std::vector<std::string> not_run = std::vector<std::string>(tuples.size());
    // Answered without a compile of their own: by code (or a claim)
    // compiled for another tuple of their key, in this batch or before
    // (kResultFlagReused).
    std::vector<uint8_t> reused = std::vector<uint8_t>(tuples.size());
  };

  // A tuple to answer by a run of a kernel compiled for its key, at one of
  // `slots`.
  struct CompiledRun {
    int tuple;
    const std::shared_ptr<const CompiledKernel>* kernel;
    std::span<const int> slots;  // in the batch's cached code or slots
  };

  // Answers each repeat of a tuple (`copy_of`) and each tuple whose key the
  // cache held (`cached`): the first tuple's outcome, a claim, or a run of
  // the compiled code with the tuple's runtime values.
  void AnswerFromCompiledCode(
      Batch& batch, const std::vector<int>& copy_of,
      const std::vector<std::optional<CachedCode>>& cached) const;

  // Runs each of `runs` on its kernel, a run answering one tuple per slot
  // it can fill.
  void RunGrouped(Batch& batch, std::vector<CompiledRun> runs) const;

  // Keeps the compiled code of each `compiled` tuple with runtime sources
  // for the rest of the run (compiled_code.h).
  void KeepCompiledCode(const Batch& batch, const std::vector<int>& compiled);

  CodeKey KeyOf(const PtxTuple& t) const {
    return CodeKeyOf(t, arch_.sm, kPtxasDefaultOptLevel);
  }

  // Marks each repeat of an earlier tuple in `copy_of`, and each tuple
  // whose key the cache holds in `cached`, and returns the others, grouped
  // by variant.
  std::vector<int> Admit(Batch& batch, std::vector<int>& copy_of,
                         std::vector<std::optional<CachedCode>>& cached);

  // The chunks for `pending` (grouped by variant): PlanChunks with each
  // tuple's learned kernel size.
  std::vector<Chunk> MakeChunks(const Batch& batch,
                                const std::vector<int>& pending) const;

  // Compiles the kernels that did not decode again in halves, then the
  // halves of the halves that did not, until every tuple is answered.
  absl::Status Bisect(Batch& batch, std::vector<std::vector<int>> failed) const;

  // Compiles the chunks on `jobs` threads.
  // `purpose`: the compile log's (compile_log.h).
  ChunkReport CompileChunks(Batch& batch, std::vector<Chunk> chunks,
                            absl::string_view purpose = "check") const;

  // `chunk` without the tuples of suspects that faulted enough in this
  // batch (ptxas_faults.h), each declined as not run.
  Chunk WithoutSuspectsFaultedEnough(Batch& batch, Chunk chunk) const;
  // The outcome of a tuple ptxas failed on alone without naming a line: a
  // crash or a hang is a fault (and its variant a suspect), else a decline.
  Outcome AloneFailed(const Batch& batch, const Chunk& chunk,
                      const PtxasOutput& out) const;

  // Compiles one chunk, dropping the tuples ptxas rejects.
  absl::Status CompileChunk(Batch& batch, Chunk chunk, ChunkReport& report,
                            absl::string_view purpose = "check") const;

  // Reads the values of a compiled chunk out of its cubin.
  void Decode(Batch& batch, const Chunk& chunk, const PtxModule& module,
              const std::string& cubin, ChunkReport& report) const;

  // Updates the kernel sizes from how the `compiled` tuples ended and
  // which `packed` kernels did not decode.
  void Learn(const Batch& batch, const std::vector<int>& compiled,
             const ChunkReport& packed);

  // Runs kernel `k` of `cubin`, compiled but not all constants, linked
  // with the subroutines it calls (cubin_link.h); its tuples' values, or
  // nullopt (each tuple's not_run says why).
  std::optional<std::vector<SlotValue>> Execute(Batch& batch,
                                                const Chunk& chunk,
                                                const PtxModule& module, int k,
                                                const ElfFile& cubin) const;

  // Executed values the oracle refutes stand only where the tuple's -O0
  // code runs to the oracle's value (the evaluator calibrated on it); the
  // others are declined.
  absl::Status CrossCheckExecuted(Batch& batch);

  // Each tuple run on its key's -O0 code (compiled by the ptxas executable
  // where the cache does not hold it) and judged, traced.
  absl::StatusOr<std::vector<TupleCalibration>> CalibrateAtO0(
      std::span<const PtxTuple> tuples);

  std::string NotFoldedMessage(const PtxTuple& t,
                               const std::string& not_run) const {
    if (!not_run.empty()) {
      return absl::StrCat("ptxas keeps code on ", arch_.name,
                          " that the SASS evaluator does not run (", not_run,
                          "): not judged without a GPU");
    }
    if (t.runtime != 0) {
      return absl::StrCat(
          "ptxas claims no constant for every value of the runtime operands "
          "on ",
          arch_.name,
          " (the code reads them, or the SASS decoder does not "
          "read the kernel): not judged without a GPU");
    }
    return absl::StrCat("ptxas did not fold it to constants on ", arch_.name,
                        " (or the SASS decoder does not read the kernel)");
  }

  // Assembles a module: in-process where the library was loaded, else by
  // running the ptxas executable; noted in the compile log (compile_log.h)
  // as `record` says. None starts past the batch's deadline (out_of_budget);
  // the executable's is killed at it, and at a timeout that adapts to what
  // compiles of its size cost (compile_cost_).
  // `at_least`: the executable's timeout is never less (a hang confirmed).
  absl::StatusOr<PtxasOutput> Assemble(
      absl::string_view ptx, int opt_level = kPtxasDefaultOptLevel,
      const CompileRecord& record = {},
      absl::Duration at_least = absl::ZeroDuration()) const;
  // How long a tuple alone past the adaptive timeout is run again before it
  // is said to hang (kPtxasHangConfirm), and a slow variant's modules run.
  absl::Duration HangConfirmTimeout() const {
    return std::min(
        {kPtxasHangConfirm, config_.batch_timeout / 2, config_.timeout});
  }
  // Whether a tuple alone that ran past `out`'s timeout is to be run again
  // before it is said to hang (kPtxasHangConfirm), and with how long.
  std::optional<absl::Duration> HangToConfirm(const Batch& batch,
                                              const Chunk& chunk,
                                              const PtxasOutput& out) const;

  // The chunk's tuples declined as not run: the batch's budget ran out.
  void DeclineOutOfBudget(Batch& batch, const Chunk& chunk) const;
  // What a failed compile of `chunk` (no line named) teaches the suspects,
  // and the rest of the chunk compiled again: a variant at a time after a
  // hang of several, a tuple at a time after a hang of one, else in halves.
  absl::Status CompileAfterFailure(Batch& batch, const Chunk& chunk,
                                   const PtxasOutput& out,
                                   ChunkReport& report) const;
  // A variant whose module hung, its tuples a module each (each a hang
  // isolated), or, once one compiled slowly, the rest in one module.
  absl::Status CompileOneByOne(Batch& batch, const Chunk& chunk,
                               ChunkReport& report) const;
  // The variants of `chunk`'s tuples, each with its count, in order.
  std::vector<std::pair<Variant, int>> VariantsOf(const Batch& batch,
                                                  const Chunk& chunk) const;

  Config config_;
  SassArch arch_;
  ValueNotes notes_;
  std::string toolchain_;
  int ptx_version_;
  std::unique_ptr<NvJitLink> in_process_;  // null: the ptxas executable
  bool foldable_[kNumFamilies] = {};
  KernelSizes sizes_;
  std::optional<SassArchInfo> executable_;  // set where code is run
  CompiledCodeCache code_cache_;
  // The variants whose tuples crashed or hung ptxas alone (ptxas_faults.h).
  mutable PtxasSuspects suspects_;
  // What compiles of the executable cost, for their timeouts: of
  // all-immediate modules and of modules with runtime sources.
  mutable ToolCostModel compile_cost_[2] = {ToolCostModel(kPtxasHangFloor),
                                            ToolCostModel(kPtxasHangFloor)};
  // The running batch's: its compiles end by then.
  absl::Time batch_deadline_ = absl::InfiniteFuture();
  bool in_self_test_ = false;
};

}  // namespace ptxas_backend_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_PTXAS_BACKEND_INTERNAL_H_
