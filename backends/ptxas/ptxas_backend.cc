#include "backends/ptxas/ptxas_backend.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/backend.h"
#include "backends/ptxas/chunk_plan.h"
#include "backends/ptxas/compiled_code.h"
#include "backends/ptxas/cubin.h"
#include "backends/ptxas/foldability.h"
#include "backends/ptxas/nvjitlink.h"
#include "backends/ptxas/ptx_module.h"
#include "backends/ptxas/ptxas_backend_internal.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "backends/ptxas/sass_constants.h"
#include "common/status_macros.h"
#include "common/subprocess.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/operand_shape.h"
#include "isa/spelling.h"
#include "isa/tuple.h"

namespace ptxdiff {
namespace {

using ptxas_backend_internal::Config;
using ptxas_backend_internal::PtxasBackend;

// ---------------------------------------------------------------------------
// Options.

// A batch's budget: batch_timeout_ms, else three quarters of the client's
// reply timeout (kReplyTimeoutKey), which leaves it the time to read the
// reply and a compile cut at the budget the time to end.
absl::Status ParseTimeouts(const KeyValues& options, Config& config) {
  constexpr int kDay = 24 * 3600 * 1000;
  int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(config.timeout));
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptxas", "timeout_ms", 1, kDay, timeout_ms));
  config.timeout = absl::Milliseconds(timeout_ms);
  int reply_ms = 0;
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptxas", kReplyTimeoutKey, 0, kDay, reply_ms));
  int batch_ms =
      reply_ms > 0
          ? reply_ms / 4 * 3
          : static_cast<int>(absl::ToInt64Milliseconds(config.batch_timeout));
  PTXDIFF_RETURN_IF_ERROR(
      IntOption(options, "ptxas", "batch_timeout_ms", 1, kDay, batch_ms));
  config.batch_timeout = absl::Milliseconds(std::max(1, batch_ms));
  return absl::OkStatus();
}

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
  PTXDIFF_RETURN_IF_ERROR(ParseTimeouts(options, config));
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

}  // namespace

namespace ptxas_backend_internal {

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

namespace {

// Adds tuple `t` to `chunks`, whose last is its variant's while that has
// room (`apart.tuples`), in kernels of at most `kernel_size` tuples of one
// form (all-immediate or with runtime sources).
void AddApart(const std::vector<PtxTuple>& tuples, int t,
              const ApartModule& apart, int kernel_size,
              std::vector<Chunk>& chunks) {
  auto same = [&](int other) {
    return tuples[other].variant == tuples[t].variant;
  };
  auto same_form = [&](int other) {
    return (tuples[other].runtime != 0) == (tuples[t].runtime != 0);
  };
  if (chunks.empty() || !same(chunks.back().tuples.back()) ||
      chunks.back().tuples.size() >= static_cast<size_t>(apart.tuples)) {
    chunks.emplace_back();
  }
  Chunk& chunk = chunks.back();
  if (!chunk.tuples.empty() && same_form(chunk.tuples.back()) &&
      chunk.kernel_sizes.back() < kernel_size) {
    chunk.tuples.push_back(t);
    ++chunk.kernel_sizes.back();
  } else {
    chunk.AddKernel(std::span<const int>(&t, 1));
  }
}

}  // namespace

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
  std::vector<Chunk> apart_chunks;
  std::vector<int> stalls;  // of each apart chunk's variant
  for (int t : pending) {
    const PtxTuple& tuple = batch.tuples[t];
    const int runtime = tuple.runtime != 0;
    const int size = std::min(per_kernel[runtime],
                              sizes_.Of(tuple.variant, OperandShape(tuple)));
    if (const std::optional<ApartModule> apart =
            suspects_.Apart(tuple.variant)) {
      // Modules of its own (`pending` is grouped by variant).
      AddApart(batch.tuples, t, *apart, apart->faulted ? 1 : size,
               apart_chunks);
      stalls.resize(apart_chunks.size(), apart->stalls);
      continue;
    }
    sized[runtime].push_back({size, t});
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
  // The variants apart last, those that stalled ptxas least first: what is
  // left of the budget goes to them.
  std::vector<size_t> order(apart_chunks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return stalls[a] < stalls[b]; });
  for (size_t i : order) chunks.push_back(std::move(apart_chunks[i]));
  return chunks;
}

absl::Status PtxasBackend::Bisect(Batch& batch,
                                  std::vector<std::vector<int>> failed) const {
  // A kernel usually fails for one or two tuples ptxas does not fold; finding
  // them by halves costs about 2·log2(k) kernels instead of k kernels of one.
  while (!failed.empty()) {
    ChunkReport report =
        CompileChunks(batch, PlanHalves(failed, config_.jobs), "halves");
    PTXDIFF_RETURN_IF_ERROR(report.status);
    failed = std::move(report.failed_kernels);
  }
  return absl::OkStatus();
}

ChunkReport PtxasBackend::CompileChunks(Batch& batch,
                                        std::vector<Chunk> chunks,
                                        absl::string_view purpose) const {
  std::vector<ChunkReport> reports(chunks.size());
  ParallelFor(config_.jobs, chunks.size(), [&](size_t c) {
    reports[c].status =
        CompileChunk(batch, std::move(chunks[c]), reports[c], purpose);
  });
  ChunkReport all;
  for (ChunkReport& report : reports) all.Merge(std::move(report));
  return all;
}

absl::Status PtxasBackend::CompileChunk(Batch& batch, Chunk chunk,
                                        ChunkReport& report,
                                        absl::string_view purpose) const {
  // Each pass drops the tuples ptxas names, until it compiles or fails
  // without naming any.
  // A hang to confirm, or a slow variant's module: the longer timeout.
  absl::Duration at_least = absl::ZeroDuration();
  bool confirming = false;
  while (!chunk.tuples.empty()) {
    chunk = WithoutSuspectsFaultedEnough(batch, std::move(chunk));
    if (chunk.tuples.empty()) break;
    if (suspects_.IsSlow(batch.tuples[chunk.tuples[0]].variant))
      at_least = std::max(at_least, HangConfirmTimeout());
    std::vector<PtxTuple> tuples;
    for (int t : chunk.tuples) tuples.push_back(batch.tuples[t]);
    const PtxModule module =
        BuildPtxModule(tuples, {.target = arch_.name,
                                .ptx_version = ptx_version_,
                                .kernel_sizes = chunk.kernel_sizes});
    int runtime = 0;
    for (const PtxTuple& t : tuples) runtime += t.runtime != 0;
    PTXDIFF_ASSIGN_OR_RETURN(
        const PtxasOutput out,
        Assemble(module.text, kPtxasDefaultOptLevel,
                 {.purpose = purpose,
                  .tuples = static_cast<int>(tuples.size()),
                  .runtime_tuples = runtime},
                 at_least));
    if (out.ok) {
      const auto variants = VariantsOf(batch, chunk);
      if (confirming) suspects_.Slow(variants[0].first);
      if (variants.size() == 1) suspects_.CompiledClean(variants[0].first);
      Decode(batch, chunk, module, out.cubin, report);
      return absl::OkStatus();
    }
    if (out.out_of_budget) {
      // Cut, not left unrun: next batch its variants apart (or its one
      // variant in halves), so that a hang among them is found within the
      // budget.
      if (out.how.timed_out) {
        const auto variants = VariantsOf(batch, chunk);
        for (const auto& [v, n] : variants)
          suspects_.Cut(v, n, variants.size() == 1);
      }
      DeclineOutOfBudget(batch, chunk);
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
    // ptxas failed without naming a tuple (a crash, a hang, a fatal error).
    if (rejected.empty()) {
      if (auto confirm = HangToConfirm(batch, chunk, out)) {
        at_least = *confirm;
        confirming = true;
        continue;
      }
      return CompileAfterFailure(batch, chunk, out, report);
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
          values = Execute(batch, chunk, module, static_cast<int>(k), *elf);
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

namespace {

// Fills `reply` from the outcomes, values answered by code compiled for
// another tuple flagged so (`reused`).
void BuildReply(const std::vector<Outcome>& outcomes,
                const std::vector<uint8_t>& reused, RunReply& reply) {
  reply.results.reserve(reply.results.size() + outcomes.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    if (o.kind == ResultKind::kValue) {
      reply.AddValue(o.bits, o.carry, o.Text(), reused[i] != 0);
    } else if (o.kind == ResultKind::kFault) {
      reply.AddFault(o.fault, o.message);
    } else {
      reply.AddDecline(o.code, o.message, o.kept_code);
    }
  }
}

}  // namespace

namespace {

// What Admit reads of a variant for each of its tuples, looked up once a
// batch: its sources, the runtime-capable ones, and each one's width as a
// mask.
struct SourceMasks {
  int sources = 0;
  uint8_t runtime_capable = 0;
  std::array<uint64_t, kMaxSources> width = {};
};

std::vector<SourceMasks> MasksOf(const std::vector<Variant>& variants) {
  std::vector<SourceMasks> out(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    out[i].sources = NumSources(v);
    out[i].runtime_capable = RuntimeCapableSources(v);
    for (int s = 0; s < out[i].sources; ++s) {
      const int width = SourceWidth(v, s);
      out[i].width[s] = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    }
  }
  return out;
}

}  // namespace

std::vector<int> PtxasBackend::Admit(
    Batch& batch, std::vector<int>& copy_of,
    std::vector<std::optional<CachedCode>>& cached) {
  const ResolvedBatch& request = batch.request;
  std::vector<int> pending;
  // The first tuple of each (variant, form, immediates), the immediates cut
  // to their widths: tuples that differ only in runtime values are one
  // kernel's instruction, whose claim answers them all.
  absl::flat_hash_map<std::array<uint64_t, 1 + kMaxSources>, int> first;
  const std::vector<SourceMasks> masks = MasksOf(request.variants);
  for (size_t i = 0; i < request.tuples.size(); ++i) {
    const WireTuple& wire = request.tuples[i];
    const Variant& v = request.variants[wire.variant_index];
    const SourceMasks& m = masks[wire.variant_index];
    const uint8_t runtime = wire.runtime & m.runtime_capable;
    std::array<uint64_t, 1 + kMaxSources> key = {wire.variant_index |
                                                 uint64_t{runtime} << 32};
    for (int s = 0; s < m.sources; ++s) {
      // A claim answers every runtime value at once; executed code is run
      // again for each (AnswerFromCompiledCode).
      if (IsRuntimeSource(runtime, s)) continue;
      key[1 + s] = wire.operands.v[s] & m.width[s];
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
  suspects_.StartBatch();
  // The self-test runs before the handshake's reply, within its own wait.
  batch_deadline_ = in_self_test_ ? absl::InfiniteFuture()
                                  : absl::Now() + config_.batch_timeout;
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
  using Known = SelfTestTuple;
  static constexpr Known kKnown[] = {
      {"add.s32", 0x11223344, 0x01020304, 0x12243648},
      {"add.u32", 0xffffffff, 0, 0xffffffff},
      {"add.u32", 0, 0, 0},
      {"add.u64", 0x1122334455667788, 0, 0x1122334455667788},
      {"add.u64", 0xffffffffffffffff, 2, 1},
      {"add.u16", 0x7fff, 0, 0x7fff},
  };
  in_self_test_ = true;
  absl::Cleanup done = [this] { in_self_test_ = false; };
  std::vector<Known> known(std::begin(kKnown), std::end(kKnown));
  PTXDIFF_RETURN_IF_ERROR(SelfTestOn(known));
  // Then, for the executable, a batch big enough that a run's cost per
  // tuple is learned (ToolCostModel::kPerSlotFrom in each module), so that
  // the first batch's modules get timeouts of their size, not the ceiling.
  if (in_process_ != nullptr) return absl::OkStatus();  // not cut
  known.clear();
  for (uint64_t i = 0; i < kSelfTestTuplesTimed; ++i) {
    known.push_back({"add.u32", i, 3 * i + 1, 4 * i + 1});
  }
  return SelfTestOn(known);
}

absl::Status PtxasBackend::SelfTestOn(std::span<const SelfTestTuple> known) {
  RunRequest request;
  for (const SelfTestTuple& k : known) {
    request.spellings.emplace_back(k.spelling);
    request.tuples.push_back(
        {static_cast<uint32_t>(request.spellings.size() - 1), {{k.a, k.b}}});
  }
  RunReply reply;
  PTXDIFF_RETURN_IF_ERROR(Run(request, reply));
  for (size_t i = 0; i < reply.results.size(); ++i) {
    const TupleResult& r = reply.results[i];
    if (r.kind != ResultKind::kValue || r.bits != known[i].result) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the ptxas backend's self-test failed: ", toolchain_, " on ",
          arch_.name, " gives ",
          r.kind == ResultKind::kValue
              ? absl::StrCat("0x", absl::Hex(r.bits))
              : absl::StrCat("no value (", reply.messages[r.message], ")"),
          " for ", known[i].spelling, " ", known[i].a, " ", known[i].b,
          "; expected 0x", absl::Hex(known[i].result)));
    }
  }
  return absl::OkStatus();
}

}  // namespace ptxas_backend_internal

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

absl::StatusOr<std::shared_ptr<const NvJitLink>> LoadPtxasInProcess(
    const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  PTXDIFF_ASSIGN_OR_RETURN(config.ptxas, FindPtxas(options));
  PTXDIFF_ASSIGN_OR_RETURN(const absl::Duration query_timeout,
                           PtxasQueryTimeout(options));
  PTXDIFF_ASSIGN_OR_RETURN(const std::string toolchain,
                           ToolchainOf(config.ptxas, query_timeout));
  return InProcessAssembler(config, toolchain);
}

absl::StatusOr<PtxasAssembler> MakePtxasAssembler(const KeyValues& options,
                                                  absl::string_view arch,
                                                  absl::Time deadline,
                                                  absl::Duration timeout) {
  PTXDIFF_ASSIGN_OR_RETURN(std::shared_ptr<const NvJitLink> in_process,
                           LoadPtxasInProcess(options));
  if (in_process == nullptr) {
    PTXDIFF_ASSIGN_OR_RETURN(const std::string ptxas, FindPtxas(options));
    return PtxasAssembler{
        .assemble = ExecutableAssembler(ptxas, arch, deadline, timeout),
        .description = ptxas};
  }
  return PtxasAssembler{
      .assemble =
          [in_process, arch = std::string(arch), deadline, timeout](
              absl::string_view ptx, int opt_level) {
            return CompileWithin(in_process, arch, ptx, opt_level,
                                 TimeoutBefore(deadline, timeout));
          },
      .description = absl::StrCat(in_process->path(), " (nvJitLink ",
                                  in_process->version(),
                                  ", as the ptxas "
                                  "backend assembles)")};
}

absl::StatusOr<std::unique_ptr<Backend>> MakePtxasBackend(
    const KeyValues& options) {
  PTXDIFF_ASSIGN_OR_RETURN(Config config, ParseConfig(options));
  PTXDIFF_ASSIGN_OR_RETURN(SassArch arch, FindSassArch(config.arch));
  PTXDIFF_ASSIGN_OR_RETURN(config.ptxas, FindPtxas(options));
  PTXDIFF_ASSIGN_OR_RETURN(const absl::Duration query_timeout,
                           PtxasQueryTimeout(options));
  PTXDIFF_ASSIGN_OR_RETURN(std::string toolchain,
                           ToolchainOf(config.ptxas, query_timeout));
  PTXDIFF_ASSIGN_OR_RETURN(const int ptx_version,
                           NewestPtxVersion(config.ptxas, query_timeout));
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
