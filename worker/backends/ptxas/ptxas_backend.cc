#include "worker/backends/ptxas/ptxas_backend.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_shape.h"
#include "isa/spelling.h"
#include "oracle/errata.h"
#include "protocol/backend_names.h"
#include "sass/sass_decoder.h"
#include "sass/sass_departure.h"
#include "worker/backends/carry_support.h"
#include "worker/backends/ptxas/chunk_plan.h"
#include "worker/backends/ptxas/compiled_code.h"
#include "worker/backends/ptxas/cubin.h"
#include "worker/backends/ptxas/nvjitlink.h"
#include "worker/backends/ptxas/ptx_module.h"
#include "worker/backends/ptxas/sass_calibration.h"
#include "worker/backends/ptxas/sass_constants.h"
#include "worker/backends/ptxas/sass_execution.h"

namespace ptxdiff {
namespace {

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
};

absl::StatusOr<Config> ParseConfig(const KeyValues& options) {
  Config config;
  config.arch = OptionValue(options, "arch").value_or(config.arch);
  // Up to 4096 tuples of 8 bytes keep every store offset far below the 8 MiB
  // a STG encodes directly (research §1.4); 4096 kernels keep the cubin's
  // section count below ELF's 65280.
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptxas", "tuples_per_kernel", 1,
                                    4096, config.tuples_per_kernel));
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptxas", "kernels_per_module", 1,
                                    4096, config.kernels_per_module));
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptxas", "jobs", 1, 64, config.jobs));
  PTXDIFF_RETURN_IF_ERROR(IntOption(options, "ptxas", "code_cache_mb", 0,
                                    1 << 16, config.code_cache_mb));
  int all_variants = 0;
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptxas", "all_variants", 0, 1, all_variants));
  config.all_variants = all_variants == 1;
  // $PTXDIFF_PTXAS_EXECUTE=0: the default for workers the CLI starts.
  int execute = GetEnv("PTXDIFF_PTXAS_EXECUTE") == "0" ? 0 : 1;
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptxas", "execute", 0, 1, execute));
  config.execute = execute == 1;
  // $PTXDIFF_PTXAS_COMPILER: the default for workers the CLI starts.
  if (std::string env = GetEnv("PTXDIFF_PTXAS_COMPILER"); !env.empty())
    config.compiler = env;
  config.compiler = OptionValue(options, "compiler").value_or(config.compiler);
  if (config.compiler != "auto" && config.compiler != "ptxas" &&
      config.compiler != "nvjitlink") {
    return absl::InvalidArgumentError(
        absl::StrCat("ptxas: compiler (or $PTXDIFF_PTXAS_COMPILER) must be "
                     "auto, ptxas or nvjitlink, not '",
                     config.compiler, "'"));
  }
  return config;
}

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

  static Outcome Value(uint64_t bits, bool carry = false) {
    return {ResultKind::kValue, DeclineCode::kNone, "", bits, carry};
  }
  static Outcome Decline(DeclineCode code, std::string message) {
    return {ResultKind::kDecline, code, std::move(message), 0};
  }
  // A value's note, or a decline's message.
  const std::string& Text() const { return note != nullptr ? *note : message; }
};

// A decoded slot of a tuple of `v`: its value, with the carry its flag word
// says for a `.cc` variant, or a decline where no correct CC.CF reader
// leaves that word.
Outcome OutcomeOfSlot(const Variant& v, const SlotValue& slot) {
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
Outcome Noted(Outcome outcome, const std::string& note) {
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

// Calls fn(0) .. fn(count - 1) on up to `threads` threads.
void ParallelFor(int threads, size_t count,
                 const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < count;) fn(i);
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min<size_t>(threads, count) - (count > 0 ? 1 : 0);
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

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
  ChunkReport CompileChunks(Batch& batch, std::vector<Chunk> chunks) const;

  // Compiles one chunk, dropping the tuples ptxas rejects.
  absl::Status CompileChunk(Batch& batch, Chunk chunk,
                            ChunkReport& report) const;

  // Reads the values of a compiled chunk out of its cubin.
  void Decode(Batch& batch, const Chunk& chunk, const PtxModule& module,
              const std::string& cubin, ChunkReport& report) const;

  // Updates the kernel sizes from how the `compiled` tuples ended and
  // which `packed` kernels did not decode.
  void Learn(const Batch& batch, const std::vector<int>& compiled,
             const ChunkReport& packed);

  // Runs a compiled kernel that is not all constants; its tuples' values,
  // or nullopt (each tuple's not_run says why).
  std::optional<std::vector<SlotValue>> Execute(Batch& batch,
                                                const Chunk& chunk,
                                                const PtxModule& module, int k,
                                                absl::string_view text) const;

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
  // running the ptxas executable.
  absl::StatusOr<PtxasOutput> Assemble(
      absl::string_view ptx, int opt_level = kPtxasDefaultOptLevel) const {
    if (in_process_ != nullptr) {
      return in_process_->Compile(arch_.name, ptx, opt_level);
    }
    return RunPtxas(config_.ptxas, arch_.name, ptx, opt_level);
  }

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
};

std::optional<std::string> PtxasBackend::WhyUnsupported(
    const Variant& v) const {
  const absl::string_view opcode = InfoOf(v.family).opcode;
  if (InfoOf(v.family).isa != TargetIsa::kPtx) {
    return absl::StrCat(opcode, " is not a PTX instruction");
  }
  if (!foldable_[static_cast<int>(v.family)] && !executable_) {
    return absl::StrCat("ptxas never folds ", opcode, " on ", arch_.name);
  }
  const IsaLevel level = LevelOf(v);
  if (level.sm > arch_.sm) {
    return absl::StrCat(SpellOpcode(v), " needs sm_", level.sm,
                        "; the arch is ", arch_.name);
  }
  if (level.ptx > ptx_version_) {
    return absl::StrCat(SpellOpcode(v), " needs PTX ISA ", level.ptx / 10, ".",
                        level.ptx % 10, "; ptxas supports up to ",
                        ptx_version_ / 10, ".", ptx_version_ % 10);
  }
  if (NeverFolded(v) && !config_.all_variants && !executable_) {
    return absl::StrCat("ptxas 13.0 folds ", Spell(v),
                        " for no operands (all_variants=1 tries anyway)");
  }
  return std::nullopt;
}

std::vector<Chunk> PtxasBackend::MakeChunks(
    const Batch& batch, const std::vector<int>& pending) const {
  // All-immediate tuples and tuples with runtime sources in separate
  // kernels: a kernel with one runtime source is run, not read as constants,
  // and an all-immediate tuple's value should stay what ptxas folded it to.
  // A runtime form's kernel is compiled, not folded, and ptxas compiles
  // smaller kernels faster per tuple (kRuntimeTuplesPerKernel).
  const int per_kernel[2] = {
      config_.tuples_per_kernel,
      std::min(config_.tuples_per_kernel, kRuntimeTuplesPerKernel)};
  std::vector<SizedTuple> sized[2];
  for (int t : pending) {
    const int runtime = batch.tuples[t].runtime != 0;
    sized[runtime].push_back(
        {std::min(per_kernel[runtime],
                  sizes_.Of(batch.tuples[t].variant,
                            OperandShape(batch.tuples[t]))),
         t});
  }
  std::vector<Chunk> chunks;
  for (int runtime : {0, 1}) {
    if (sized[runtime].empty()) continue;
    for (Chunk& c :
         PlanChunks(std::move(sized[runtime]),
                    {.tuples_per_kernel = per_kernel[runtime],
                     .kernels_per_module = config_.kernels_per_module,
                     .jobs = config_.jobs})) {
      chunks.push_back(std::move(c));
    }
  }
  return chunks;
}

absl::Status PtxasBackend::Bisect(Batch& batch,
                                  std::vector<std::vector<int>> failed) const {
  // A kernel usually fails for one or two tuples ptxas does not fold; finding
  // them by halves costs about 2·log2(k) kernels instead of k kernels of one.
  while (!failed.empty()) {
    ChunkReport report = CompileChunks(batch, PlanHalves(failed, config_.jobs));
    PTXDIFF_RETURN_IF_ERROR(report.status);
    failed = std::move(report.failed_kernels);
  }
  return absl::OkStatus();
}

ChunkReport PtxasBackend::CompileChunks(Batch& batch,
                                        std::vector<Chunk> chunks) const {
  std::vector<ChunkReport> reports(chunks.size());
  ParallelFor(config_.jobs, chunks.size(), [&](size_t c) {
    reports[c].status = CompileChunk(batch, std::move(chunks[c]), reports[c]);
  });
  ChunkReport all;
  for (ChunkReport& report : reports) all.Merge(std::move(report));
  return all;
}

absl::Status PtxasBackend::CompileChunk(Batch& batch, Chunk chunk,
                                        ChunkReport& report) const {
  // Each pass drops the tuples ptxas names, until it compiles or fails
  // without naming any.
  while (!chunk.tuples.empty()) {
    std::vector<PtxTuple> tuples;
    for (int t : chunk.tuples) tuples.push_back(batch.tuples[t]);
    const PtxModule module =
        BuildPtxModule(tuples, {.target = arch_.name,
                                .ptx_version = ptx_version_,
                                .kernel_sizes = chunk.kernel_sizes});
    PTXDIFF_ASSIGN_OR_RETURN(const PtxasOutput out, Assemble(module.text));
    if (out.ok) {
      Decode(batch, chunk, module, out.cubin, report);
      return absl::OkStatus();
    }
    absl::flat_hash_map<int, std::string> rejected;  // position -> message
    for (absl::string_view line : absl::StrSplit(out.log, '\n')) {
      const auto error = ParseErrorLine(line);
      if (!error.has_value()) continue;
      const int at = TupleAtLine(module, error->first);
      if (at < 0) continue;
      std::string& message = rejected[at];
      absl::StrAppend(&message, message.empty() ? "" : "; ", error->second);
    }
    if (rejected.empty()) {
      // ptxas failed without naming a tuple (a crash, a fatal error): find
      // the culprit by halves.
      if (chunk.tuples.size() == 1) {
        batch.outcomes[chunk.tuples[0]] = Outcome::Decline(
            DeclineCode::kOther,
            absl::StrCat("ptxas failed: ", LogSummary(out.log)));
        return absl::OkStatus();
      }
      auto [first, second] = Halves(chunk);
      PTXDIFF_RETURN_IF_ERROR(CompileChunk(batch, std::move(first), report));
      return CompileChunk(batch, std::move(second), report);
    }
    std::vector<bool> dropped(chunk.tuples.size());
    for (auto& [p, message] : rejected) {
      dropped[p] = true;
      batch.outcomes[chunk.tuples[p]] =
          Outcome::Decline(DeclineCode::kOperandForm, std::move(message));
    }
    chunk = WithoutPositions(chunk, dropped);
  }
  return absl::OkStatus();
}

void PtxasBackend::Decode(Batch& batch, const Chunk& chunk,
                          const PtxModule& module, const std::string& cubin,
                          ChunkReport& report) const {
  absl::StatusOr<ElfFile> elf = ParseElf(cubin);
  absl::StatusOr<absl::flat_hash_map<std::string, absl::string_view>> texts =
      elf.ok() ? KernelTexts(*elf) : elf.status();
  if (texts.ok() && CubinSm(*elf) != arch_.sm) {
    texts = absl::InvalidArgumentError(
        absl::StrCat("cubin for sm_", CubinSm(*elf), ", not ", arch_.name));
  }
  for (size_t k = 0; k < module.kernels.size(); ++k) {
    const int begin = module.kernel_begin[k];
    const int end = module.kernel_begin[k + 1];
    std::optional<std::vector<SlotValue>> values;
    if (texts.ok()) {
      auto text = texts->find(module.kernels[k]);
      if (text != texts->end()) {
        auto stores = DecodeConstantStores(arch_, text->second);
        if (stores.ok()) values = KernelResults(module, k, *stores);
        if (!values.has_value() && executable_) {
          values =
              Execute(batch, chunk, module, static_cast<int>(k), text->second);
        }
      }
    }
    if (texts.ok() && !values.has_value() && end - begin > 1) {
      report.failed_kernels.emplace_back(chunk.tuples.begin() + begin,
                                         chunk.tuples.begin() + end);
      continue;
    }
    for (int t = begin; t < end; ++t) {
      const int tuple = chunk.tuples[t];
      if (!texts.ok()) {
        batch.outcomes[tuple] = Outcome::Decline(
            DeclineCode::kOther,
            absl::StrCat("unreadable cubin: ", texts.status().message()));
      } else if (values.has_value()) {
        batch.outcomes[tuple] = Noted(
            OutcomeOfSlot(batch.tuples[tuple].variant, (*values)[t - begin]),
            notes_.Of(batch.tuples[tuple], batch.executed[tuple]));
      } else {
        batch.outcomes[tuple] = Outcome::Decline(
            DeclineCode::kNotEvaluable,
            NotFoldedMessage(batch.tuples[tuple], batch.not_run[tuple]));
      }
    }
  }
}

std::optional<std::vector<SlotValue>> PtxasBackend::Execute(
    Batch& batch, const Chunk& chunk, const PtxModule& module, int k,
    absl::string_view text) const {
  const int begin = module.kernel_begin[k];
  const int end = module.kernel_begin[k + 1];
  std::string why;
  std::optional<std::vector<SlotValue>> values;
  std::shared_ptr<const CompiledKernel> kernel;
  absl::StatusOr<std::vector<SassSlot>> code =
      DecodeSassKernel(*executable_, text);
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
// disagree for such an instruction (a finding of its own, written down in
// docs/sass-evaluator.md), that; else the evaluator's calibration gap.
std::string NotCalibratedMessage(const Variant& v, CalibrationOutcome at_o0) {
  if (at_o0 == CalibrationOutcome::kDisagrees) {
    if (std::optional<std::string> known = KnownCalibrationFinding(v, 0)) {
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
                         NotCalibratedMessage(batch.tuples[refuted[j]].variant,
                                              at_o0[j].outcome));
  }
  return absl::OkStatus();
}

void PtxasBackend::Learn(const Batch& batch, const std::vector<int>& compiled,
                         const ChunkReport& packed) {
  struct Counts {
    const Variant* variant = nullptr;
    uint32_t shape = 0;
    int folded = 0, tuples = 0, spurious = 0;
  };
  // By (variant index in the request, operand shape).
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, Counts> counts;
  auto key = [&](int t) {
    return std::make_pair(batch.request.tuples[t].variant_index,
                          OperandShape(batch.tuples[t]));
  };
  auto of = [&](int t) -> Counts& {
    const auto k = key(t);
    Counts& c = counts[k];
    c.variant = &batch.tuples[t].variant;
    c.shape = k.second;
    return c;
  };
  for (int t : compiled) {
    Counts& c = of(t);
    c.folded += batch.outcomes[t].kind == ResultKind::kValue;
    ++c.tuples;
  }
  for (const std::vector<int>& kernel : packed.failed_kernels) {
    const bool all_folded = std::all_of(
        kernel.begin(), kernel.end(),
        [&](int t) { return batch.outcomes[t].kind == ResultKind::kValue; });
    if (!all_folded) continue;
    absl::flat_hash_set<std::pair<uint32_t, uint32_t>> seen;
    for (int t : kernel) {
      if (seen.insert(key(t)).second) ++of(t).spurious;
    }
  }
  for (const auto& [key, c] : counts) {
    sizes_.Learn(*c.variant, c.shape, c.folded, c.tuples, c.spurious);
  }
}

// Fills `reply` from the outcomes, values answered by code compiled for
// another tuple flagged so (`reused`).
void BuildReply(const std::vector<Outcome>& outcomes,
                const std::vector<uint8_t>& reused, RunReply& reply) {
  reply.results.reserve(reply.results.size() + outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    if (o.kind == ResultKind::kValue) {
      reply.AddValue(o.bits, o.carry, o.Text(), reused[i] != 0);
    } else {
      reply.AddDecline(o.code, o.message);
    }
  }
}

std::vector<int> PtxasBackend::Admit(
    Batch& batch, std::vector<int>& copy_of,
    std::vector<std::optional<CachedCode>>& cached) {
  const ResolvedBatch& request = batch.request;
  std::vector<int> pending;
  // The first tuple of each (variant, form, immediates), the immediates cut
  // to their widths: tuples that differ only in runtime values are one
  // kernel's instruction, whose claim answers them all.
  absl::flat_hash_map<std::array<uint64_t, 1 + kMaxSources>, int> first;
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const WireTuple& wire = request.tuples[i];
    const Variant& v = request.variants[wire.variant_index];
    const uint8_t runtime = wire.runtime & RuntimeCapableSources(v);
    std::array<uint64_t, 1 + kMaxSources> key = {wire.variant_index |
                                                 uint64_t{runtime} << 32};
    for (int s = 0; s < NumSources(v); ++s) {
      const int width = SourceWidth(v, s);
      // A claim answers every runtime value at once; executed code is run
      // again for each (AnswerFromCompiledCode).
      if (IsRuntimeSource(runtime, s)) continue;
      key[1 + s] = width == 64
                       ? wire.operands.v[s]
                       : wire.operands.v[s] & ((uint64_t{1} << width) - 1);
    }
    batch.tuples[i] = {v, wire.operands, runtime};
    auto [it, added] = first.try_emplace(key, static_cast<int>(i));
    if (!added) {
      copy_of[i] = it->second;
      continue;
    }
    if (runtime != 0) {
      if (const CachedCode* code = code_cache_.Find(KeyOf(batch.tuples[i]))) {
        cached[i] = *code;
        continue;
      }
    }
    if (!executable_ && !FoldsForSelector(v, wire.operands)) {
      batch.outcomes[i] = Outcome::Decline(
          DeclineCode::kNotEvaluable,
          "ptxas 13.0 folds SIMD video only with the default .asel/.bsel");
      continue;
    }
    pending.push_back(static_cast<int>(i));
  }
  // Tuples of one variant share kernels, so that a variant ptxas does not
  // fold spoils only its own kernels, not the folded tuples of others.
  std::stable_sort(pending.begin(), pending.end(), [&](int a, int b) {
    return request.tuples[a].variant_index < request.tuples[b].variant_index;
  });
  return pending;
}

absl::Status PtxasBackend::RunSupported(const ResolvedBatch& request,
                                        RunReply& reply) {
  Batch batch{request, std::vector<PtxTuple>(request.tuples.size()),
              std::vector<Outcome>(request.tuples.size())};
  std::vector<int> copy_of(request.tuples.size(), -1);
  std::vector<std::optional<CachedCode>> cached(request.tuples.size());
  const std::vector<int> pending = Admit(batch, copy_of, cached);
  ChunkReport packed = CompileChunks(batch, MakeChunks(batch, pending));
  PTXDIFF_RETURN_IF_ERROR(packed.status);
  PTXDIFF_RETURN_IF_ERROR(Bisect(batch, packed.failed_kernels));
  Learn(batch, pending, packed);
  KeepCompiledCode(batch, pending);
  AnswerFromCompiledCode(batch, copy_of, cached);
  PTXDIFF_RETURN_IF_ERROR(CrossCheckExecuted(batch));
  BuildReply(batch.outcomes, batch.reused, reply);
  return absl::OkStatus();
}

absl::Status PtxasBackend::SelfTest() {
  struct Known {
    absl::string_view spelling;
    uint64_t a, b, result;
  };
  static constexpr Known kKnown[] = {
      {"add.s32", 0x11223344, 0x01020304, 0x12243648},
      {"add.u32", 0xffffffff, 0, 0xffffffff},
      {"add.u32", 0, 0, 0},
      {"add.u64", 0x1122334455667788, 0, 0x1122334455667788},
      {"add.u64", 0xffffffffffffffff, 2, 1},
      {"add.u16", 0x7fff, 0, 0x7fff},
  };
  RunRequest request;
  for (const Known& k : kKnown) {
    request.spellings.emplace_back(k.spelling);
    request.tuples.push_back(
        {static_cast<uint32_t>(request.spellings.size() - 1), {{k.a, k.b}}});
  }
  RunReply reply;
  PTXDIFF_RETURN_IF_ERROR(Run(request, reply));
  for (size_t i = 0; i < reply.results.size(); ++i) {
    const TupleResult& r = reply.results[i];
    if (r.kind != ResultKind::kValue || r.bits != kKnown[i].result) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the ptxas backend's self-test failed: ", toolchain_, " on ",
          arch_.name, " gives ",
          r.kind == ResultKind::kValue
              ? absl::StrCat("0x", absl::Hex(r.bits))
              : absl::StrCat("no value (", reply.messages[r.message], ")"),
          " for ", kKnown[i].spelling, " ", kKnown[i].a, " ", kKnown[i].b,
          "; expected 0x", absl::Hex(kKnown[i].result)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The in-process assembler the config asks for: null for the ptxas
// executable. `auto` takes libnvJitLink only from the release of the ptxas
// found (`toolchain` is its --version line), so that the backend's answers
// are that ptxas's either way; `nvjitlink` insists.
absl::StatusOr<std::unique_ptr<NvJitLink>> InProcessAssembler(
    const Config& config, absl::string_view toolchain) {
  if (config.compiler == "ptxas") return nullptr;
  absl::StatusOr<std::unique_ptr<NvJitLink>> loaded =
      NvJitLink::Load(config.ptxas);
  if (loaded.ok() &&
      !absl::StrContains(toolchain,
                         absl::StrCat("release ", (*loaded)->version(), ","))) {
    loaded = absl::FailedPreconditionError(
        absl::StrCat((*loaded)->path(), " is nvJitLink ", (*loaded)->version(),
                     "; ", config.ptxas, " is ", toolchain));
  }
  if (loaded.ok() || config.compiler == "nvjitlink") return loaded;
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakePtxasBackend(
    const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  PTXDIFF_ASSIGN_OR_RETURN(SassArch arch, FindSassArch(config.arch));
  PTXDIFF_ASSIGN_OR_RETURN(config.ptxas, FindPtxas(options));
  PTXDIFF_ASSIGN_OR_RETURN(std::string toolchain, ToolchainOf(config.ptxas));
  PTXDIFF_ASSIGN_OR_RETURN(const int ptx_version,
                           NewestPtxVersion(config.ptxas));
  PTXDIFF_ASSIGN_OR_RETURN(std::unique_ptr<NvJitLink> in_process,
                           InProcessAssembler(config, toolchain));
  if (in_process != nullptr) {
    absl::StrAppend(&toolchain, "; assembled in-process by ",
                    in_process->path(), " (nvJitLink ", in_process->version(),
                    ")");
  }
  if (config.jobs == 0) config.jobs = in_process != nullptr ? 1 : 2;
  auto backend = std::make_unique<PtxasBackend>(
      std::move(config), std::move(arch), std::move(toolchain), ptx_version,
      std::move(in_process));
  PTXDIFF_RETURN_IF_ERROR(backend->SelfTest());
  return backend;
}

}  // namespace ptxdiff
