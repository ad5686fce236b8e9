#include "backends/cuda/cuda_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "backends/cuda/device.h"
#include "backends/cuda/jit.h"
#include "backends/cuda/module_cache.h"
#include "backends/cuda/module_run.h"
#include "backends/cuda/pipeline.h"
#include "common/fnv1a.h"
#include "common/status_macros.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace {

// Tuples per immediate-mode module: bounds the text one JIT call compiles.
constexpr uint32_t kImmediateModuleTuples = 1024;
// Decline messages quote the JIT log; keep them readable.
constexpr size_t kMaxLogInDecline = 1500;

absl::StatusOr<int64_t> ParseInt(const std::string& key,
                                 const std::string& value, int64_t low,
                                 int64_t high) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < low || n > high) {
    return absl::InvalidArgumentError(absl::StrCat("option ", key, "=", value,
                                                   ": expected an integer in ",
                                                   low, "..", high));
  }
  return n;
}

std::string Excerpt(absl::string_view text) {
  if (text.size() <= kMaxLogInDecline) return std::string(text);
  return absl::StrCat(text.substr(0, kMaxLogInDecline), " ...");
}

// "CUDA 13.0 driver at /usr/lib/x86_64-linux-gnu/libcuda.so.1 (entry points:
// 26 by cuGetProcAddress)": the version the driver reports, the library it
// was loaded from and how its entry points were found, so that a finding
// says which implementation of the driver API produced it, and through
// which ABI.
std::string DriverIdentity(absl::string_view version,
                           const CudaDriver& driver) {
  const std::string location = driver.Location();
  if (location.empty()) return absl::StrCat("CUDA ", version);
  const std::string entry_points = driver.EntryPoints();
  return absl::StrCat("CUDA ", version, " driver at ", location,
                      entry_points.empty() ? "" : " (", entry_points,
                      entry_points.empty() ? "" : ")");
}

// Another driver library's images are not NVIDIA's (nor is its version
// numbering), so it gets a cache directory of its own.
std::string CacheDirForDriver(const std::string& cache_dir,
                              const std::string& driver_library) {
  if (cache_dir.empty() || driver_library == kDefaultCudaDriverLibrary) {
    return cache_dir;
  }
  return absl::StrCat(cache_dir, "/driver-",
                      absl::Hex(Fnv1a64(driver_library), absl::kZeroPad16));
}

// A JIT rejection (the code, not the machine), as opposed to a failure.
bool IsRejection(const absl::Status& status) {
  const std::optional<CUresult> result = CudaResultOf(status);
  return result.has_value() && IsJitRejection(*result);
}

class CudaBackend : public Backend {
 public:
  CudaBackend(std::unique_ptr<CudaDriver> driver,
              const CudaBackendOptions& options, FatalHandler on_fatal)
      : driver_(std::move(driver)),
        options_(options),
        on_fatal_(std::move(on_fatal)) {}

  // Opens the device and allocates the pipeline; FailedPrecondition naming
  // the entry point where one the library does not support fails it.
  absl::Status Init();

 protected:
  WorkerIdentity Describe() const override { return identity_; }
  std::optional<std::string> WhyUnsupported(const Variant& v) const override;
  absl::Status RunSupported(const ResolvedBatch& request,
                            RunReply& reply) override;

 public:
  absl::StatusOr<ModuleRun> RunModule(const std::string& module,
                                      const std::string& in,
                                      size_t n) override;

 private:
  // What one batch is being built into.
  struct Batch {
    const ResolvedBatch& request;
    RunReply& reply;
    Declines declines;
    Stage stage;
  };

  absl::Status Open();
  absl::Status RunGroups(Batch& batch, const std::vector<VariantGroup>& groups);
  absl::Status AddRegisterGroup(Batch& batch, const Variant& v,
                                const VariantGroup& group);
  // `positions` in pieces of at most kImmediateModuleTuples that fit the
  // stage, each handed to `add` (which compiles a module for it).
  absl::Status AddPieces(
      Batch& batch, std::span<const uint32_t> positions,
      absl::FunctionRef<absl::Status(std::span<const uint32_t>)> add);
  absl::Status AddImmediatePiece(Batch& batch, const Variant& v,
                                 std::span<const uint32_t> positions);
  // Register mode's tuples whose form has an immediate: run as written.
  absl::Status AddWrittenPiece(Batch& batch, const Variant& v,
                               std::span<const uint32_t> positions);
  // A batch that failed on a call the driver does not support: every tuple
  // declined (not run), saying which entry point, in which call.
  void DeclineUnsupported(Batch& batch, const std::string& why);
  // `ptx` compiled and loaded for the tuples at `positions`; nullopt, with
  // the tuples declined, where the JIT rejects it.
  absl::StatusOr<std::optional<OwnedModule>> LoadBatchModule(
      Batch& batch, std::span<const uint32_t> positions,
      const std::string& ptx);
  // Makes room in the stage, submitting it when full; returns the room.
  absl::StatusOr<uint32_t> Room(Batch& batch);
  absl::Status SubmitStage(Batch& batch);
  void Append(Batch& batch, const Variant& v,
              std::span<const uint32_t> positions);
  absl::StatusOr<CUfunction> RegisterFunction(const Variant& v);
  absl::StatusOr<CUfunction> Function(CUmodule module, const std::string& name);
  absl::Status Fail(absl::Status status);
  // The context is lost: the fatal handler ends the worker with `code`.
  absl::Status LoseContext(int code, absl::string_view what);

  // Destroyed bottom-up: kernels and buffers before the context, the
  // context before the driver.
  std::unique_ptr<CudaDriver> driver_;
  std::unique_ptr<DeviceContext> context_;
  std::unique_ptr<ModuleCache> cache_;
  std::unique_ptr<StagePipeline> pipeline_;
  CudaBackendOptions options_;
  FatalHandler on_fatal_;
  PtxTarget target_;
  int max_ptx_ = 0;
  WorkerIdentity identity_;
  // Register-mode kernels the JIT rejected, by StableId, with the JIT's
  // error: a variant is not compiled again in every batch.
  absl::flat_hash_map<uint64_t, absl::Status> rejected_;
  bool lost_ = false;
};

absl::Status CudaBackend::Init() {
  const absl::Status status = Open();
  if (std::optional<std::string> unsupported =
          DescribeUnsupportedCall(*driver_, status)) {
    return absl::FailedPreconditionError(*unsupported);
  }
  return status;
}

absl::Status CudaBackend::Open() {
  PTXDIFF_ASSIGN_OR_RETURN(context_,
                           DeviceContext::Open(*driver_, options_.device));
  const std::optional<PtxTarget> target = TargetForDevice(context_->sm());
  if (!target.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        context_->Describe(), " is older than sm_50, which ptxdiff needs"));
  }
  target_ = *target;
  max_ptx_ = MaxPtxOfDriver(context_->driver_version());
  cache_ = std::make_unique<ModuleCache>(
      *driver_, ImageCache(CacheDirForDriver(options_.cache_dir,
                                             options_.driver_library)));
  PTXDIFF_ASSIGN_OR_RETURN(
      pipeline_,
      StagePipeline::Create(
          *driver_,
          {.stage_tuples = options_.stage_tuples,
           // Enough resident blocks to fill every SM several times over.
           .max_blocks = static_cast<unsigned int>(
               std::max(1, context_->multiprocessors()) * 32),
           .timeout = options_.kernel_timeout}));
  const std::string driver = CudaVersionText(context_->driver_version());
  identity_ = {
      .name = std::string(kCudaBackend),
      .version = "1",
      .toolchain = absl::StrCat("CUDA ", driver, " driver JIT, ",
                                KernelModeName(options_.mode),
                                " mode (ptxdiff built with CUDA ",
                                CudaVersionText(CUDA_VERSION), ")"),
      .driver = DriverIdentity(driver, *driver_),
      .device = context_->Describe(),
      // The kernels read CC.CF back after every `.cc` instruction.
      .carry = true,
      // Register mode runs each tuple in its form: registers in the cached
      // kernels (the cheapest, so the default), immediates as written.
      .forms = options_.mode == KernelMode::kRegister,
      .runtime_by_default = options_.mode == KernelMode::kRegister,
  };
  return absl::OkStatus();
}

std::optional<std::string> CudaBackend::WhyUnsupported(const Variant& v) const {
  std::optional<std::string> why =
      ::ptxdiff::WhyUnsupported(v, context_->sm(), max_ptx_);
  if (!why.has_value()) return std::nullopt;
  return absl::StrCat("not run on ", context_->Describe(), ": ", *why);
}

absl::Status CudaBackend::RunSupported(const ResolvedBatch& request,
                                       RunReply& reply) {
  if (lost_) {
    return absl::FailedPreconditionError(
        "the CUDA context was lost to an earlier fault; restart the worker");
  }
  const std::vector<VariantGroup> groups = GroupByVariant(request);
  reply.messages.clear();
  reply.results.assign(request.tuples.size(), TupleResult{});
  Batch batch{request, reply, Declines(reply), Stage()};
  const absl::Status status = RunGroups(batch, groups);
  if (std::optional<std::string> unsupported =
          DescribeUnsupportedCall(*driver_, status)) {
    DeclineUnsupported(batch, *unsupported);
    return absl::OkStatus();
  }
  if (!status.ok()) return Fail(status);
  // Between batches nothing is in flight: the one safe time to unload.
  cache_->Trim(options_.max_modules);
  return absl::OkStatus();
}

absl::Status CudaBackend::RunGroups(Batch& batch,
                                    const std::vector<VariantGroup>& groups) {
  for (const VariantGroup& group : groups) {
    const Variant& v = batch.request.variants[group.variant_index];
    if (options_.mode == KernelMode::kImmediate) {
      PTXDIFF_RETURN_IF_ERROR(AddPieces(
          batch, group.positions,
          [&](auto piece) { return AddImmediatePiece(batch, v, piece); }));
      continue;
    }
    // Every source that may be a runtime value one: the cached kernel.
    VariantGroup registers{.variant_index = group.variant_index};
    std::vector<uint32_t> written;
    for (uint32_t p : group.positions) {
      (IsRegisterShape(v, batch.request.tuples[p].runtime) ? registers.positions
                                                           : written)
          .push_back(p);
    }
    if (!registers.positions.empty()) {
      PTXDIFF_RETURN_IF_ERROR(AddRegisterGroup(batch, v, registers));
    }
    PTXDIFF_RETURN_IF_ERROR(AddPieces(batch, written, [&](auto piece) {
      return AddWrittenPiece(batch, v, piece);
    }));
  }
  PTXDIFF_RETURN_IF_ERROR(SubmitStage(batch));
  return pipeline_->Drain(batch.reply.results, batch.declines);
}

absl::StatusOr<uint32_t> CudaBackend::Room(Batch& batch) {
  if (batch.stage.size() == options_.stage_tuples) {
    PTXDIFF_RETURN_IF_ERROR(SubmitStage(batch));
  }
  return options_.stage_tuples - static_cast<uint32_t>(batch.stage.size());
}

absl::Status CudaBackend::SubmitStage(Batch& batch) {
  Stage stage = std::exchange(batch.stage, Stage());
  return pipeline_->Submit(std::move(stage), batch.request.tuples,
                           batch.reply.results, batch.declines);
}

void CudaBackend::Append(Batch& batch, const Variant& v,
                         std::span<const uint32_t> positions) {
  Stage& stage = batch.stage;
  stage.positions.insert(stage.positions.end(), positions.begin(),
                         positions.end());
  std::string spelling = Spell(v);
  if (stage.variants.empty() || stage.variants.back() != spelling) {
    stage.variants.push_back(std::move(spelling));
  }
}

absl::Status CudaBackend::AddRegisterGroup(Batch& batch, const Variant& v,
                                           const VariantGroup& group) {
  absl::StatusOr<CUfunction> function = RegisterFunction(v);
  if (!function.ok()) {
    if (!IsRejection(function.status())) return function.status();
    batch.declines.Add(group.positions, DeclineCode::kNotEvaluable,
                       absl::StrCat("the driver's JIT rejected the kernel: ",
                                    Excerpt(function.status().message())));
    return absl::OkStatus();
  }
  std::span<const uint32_t> rest = group.positions;
  while (!rest.empty()) {
    PTXDIFF_ASSIGN_OR_RETURN(const uint32_t room, Room(batch));
    const uint32_t take = std::min<size_t>(room, rest.size());
    batch.stage.AddLaunch({.function = *function,
                           .mode = KernelMode::kRegister,
                           .first = static_cast<uint32_t>(batch.stage.size()),
                           .count = take,
                           .variant = v});
    Append(batch, v, rest.first(take));
    rest = rest.subspan(take);
  }
  return absl::OkStatus();
}

absl::StatusOr<CUfunction> CudaBackend::RegisterFunction(const Variant& v) {
  const uint64_t id = StableId(v);
  if (auto it = rejected_.find(id); it != rejected_.end()) return it->second;
  const std::string ptx = RegisterModule(v, target_);
  const ModuleKey key = {.variant_id = id,
                         .mode = KernelMode::kRegister,
                         .sm = context_->sm(),
                         .driver_version = context_->driver_version(),
                         .toolkit_version = CUDA_VERSION,
                         .ptx_hash = Fnv1a64(ptx)};
  absl::StatusOr<CUmodule> module = cache_->Get(key, ptx);
  if (!module.ok()) {
    if (IsRejection(module.status())) rejected_[id] = module.status();
    return module.status();
  }
  return Function(*module, kRegisterEntry);
}

absl::StatusOr<CUfunction> CudaBackend::Function(CUmodule module,
                                                 const std::string& name) {
  CUfunction function = nullptr;
  PTXDIFF_RETURN_IF_ERROR(
      PTXDIFF_CU_CALL(*driver_, "find the kernel in its module",
                      ModuleGetFunction(&function, module, name.c_str())));
  return function;
}

absl::Status CudaBackend::AddPieces(
    Batch& batch, std::span<const uint32_t> positions,
    absl::FunctionRef<absl::Status(std::span<const uint32_t>)> add) {
  std::span<const uint32_t> rest = positions;
  while (!rest.empty()) {
    PTXDIFF_ASSIGN_OR_RETURN(const uint32_t room, Room(batch));
    const uint32_t take =
        std::min<size_t>({room, kImmediateModuleTuples, rest.size()});
    PTXDIFF_RETURN_IF_ERROR(add(rest.first(take)));
    rest = rest.subspan(take);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<OwnedModule>> CudaBackend::LoadBatchModule(
    Batch& batch, std::span<const uint32_t> positions, const std::string& ptx) {
  absl::StatusOr<std::string> image = CompilePtx(*driver_, ptx);
  if (!image.ok() && IsRejection(image.status())) {
    batch.declines.Add(positions, DeclineCode::kOperandForm,
                       absl::StrCat("the driver's JIT rejected the kernel: ",
                                    Excerpt(image.status().message())));
    return std::nullopt;
  }
  if (!image.ok()) return image.status();
  PTXDIFF_ASSIGN_OR_RETURN(const CUmodule loaded, LoadModule(*driver_, *image));
  return std::optional<OwnedModule>(std::in_place, *driver_, loaded);
}

// One module for `positions` (compiled now, while the device runs the
// previous stage), one launch per group of its tuples.
absl::Status CudaBackend::AddImmediatePiece(
    Batch& batch, const Variant& v, std::span<const uint32_t> positions) {
  std::vector<Operands> operands;
  operands.reserve(positions.size());
  for (uint32_t p : positions) {
    operands.push_back(batch.request.tuples[p].operands);
  }
  const int group = options_.immediate_group;
  PTXDIFF_ASSIGN_OR_RETURN(
      std::optional<OwnedModule> module,
      LoadBatchModule(batch, positions,
                      ImmediateModule(v, target_, operands, group)));
  if (!module.has_value()) return absl::OkStatus();
  const uint32_t first = static_cast<uint32_t>(batch.stage.size());
  for (uint32_t k = 0; k * group < positions.size(); ++k) {
    PTXDIFF_ASSIGN_OR_RETURN(const CUfunction function,
                             Function(module->get(), ImmediateEntryName(k)));
    batch.stage.AddLaunch(
        {.function = function,
         .mode = KernelMode::kImmediate,
         .first = first + k * group,
         .count = std::min<uint32_t>(group, positions.size() - k * group),
         .variant = v});
  }
  batch.stage.modules.push_back(*std::move(module));
  Append(batch, v, positions);
  return absl::OkStatus();
}

// One module for `positions` (a batch module of one written segment,
// compiled now, while the device runs the previous stage), one launch.
absl::Status CudaBackend::AddWrittenPiece(Batch& batch, const Variant& v,
                                          std::span<const uint32_t> positions) {
  BatchSegment segment{.variant = v,
                       .first = 0,
                       .count = static_cast<uint32_t>(positions.size())};
  for (uint32_t p : positions) {
    const WireTuple& t = batch.request.tuples[p];
    segment.written.push_back({v, t.operands, t.runtime});
  }
  PTXDIFF_ASSIGN_OR_RETURN(
      std::optional<OwnedModule> module,
      LoadBatchModule(batch, positions, BatchModule({&segment, 1}, target_)));
  if (!module.has_value()) return absl::OkStatus();
  PTXDIFF_ASSIGN_OR_RETURN(const CUfunction function,
                           Function(module->get(), kRegisterEntry));
  batch.stage.AddLaunch({.function = function,
                         .mode = KernelMode::kRegister,
                         .first = static_cast<uint32_t>(batch.stage.size()),
                         .count = static_cast<uint32_t>(positions.size()),
                         .variant = v,
                         .written = true});
  batch.stage.modules.push_back(*std::move(module));
  Append(batch, v, positions);
  return absl::OkStatus();
}

// A partial implementation of the driver API answers what it does not
// implement so in every batch that calls it: not a fault of the batch (which
// the client would retry and bisect, batch after batch), but tuples the
// backend cannot run here, declined with one reason, which a campaign's and
// a sweep's summaries count once. The same entry point may work in another
// batch (one that finds its kernels in the cache calls no JIT), so the next
// batch tries again.
void CudaBackend::DeclineUnsupported(Batch& batch, const std::string& why) {
  pipeline_->Abandon();
  batch.reply.messages.clear();  // of declines now overwritten
  std::vector<uint32_t> all(batch.request.tuples.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  batch.declines.Add(all, DeclineCode::kOther,
                     absl::StrCat(kNotRunPrefix, why));
}

// Ordinary errors fail the batch (the worker answers ERROR and goes on); a
// lost context or a hung kernel ends the worker.
absl::Status CudaBackend::Fail(absl::Status status) {
  const std::optional<CUresult> result = CudaResultOf(status);
  const bool timeout = absl::IsDeadlineExceeded(status);
  const bool sticky = result.has_value() && IsStickyCudaError(*result);
  if (!timeout && !sticky) {
    pipeline_->Abandon();
    return status;
  }
  return LoseContext(timeout ? kExitKernelTimeout : kExitDeviceFault,
                     absl::StrCat(status.message(), "; in flight: ",
                                  absl::StrJoin(pipeline_->InFlight(), " | ")));
}

absl::Status CudaBackend::LoseContext(int code, absl::string_view what) {
  lost_ = true;
  const std::string message = absl::StrReplaceAll(
      absl::StrCat(code == kExitKernelTimeout ? "cuda kernel timeout: "
                                              : "cuda device fault: ",
                   what, "; the CUDA context is lost, exiting with status ",
                   code),
      {{"\n", " "}});
  on_fatal_(code, message);
  return absl::InternalError(message);
}

// A program module (the worker's programs) on the device, between batches.
absl::StatusOr<ModuleRun> CudaBackend::RunModule(const std::string& module,
                                                 const std::string& in,
                                                 size_t n) {
  if (lost_) return absl::FailedPreconditionError("the CUDA context is lost");
  absl::StatusOr<CudaModuleRun> ran =
      RunModuleOnDevice(*driver_, module, in, n, options_.kernel_timeout);
  if (!ran.ok()) {
    // A call the library does not support fails every module alike: the
    // harness's error, naming the entry point.
    if (std::optional<std::string> why =
            DescribeUnsupportedCall(*driver_, ran.status())) {
      return absl::FailedPreconditionError(*why);
    }
    return ran.status();
  }
  CudaModuleRun& run = *ran;
  switch (run.end) {
    case CudaModuleRun::kOk:
      return ModuleRun{.out = std::move(run.out)};
    case CudaModuleRun::kRejected:
      return ModuleRun{.refused = std::move(run.what)};
    case CudaModuleRun::kDeviceFault:
      return LoseContext(kExitDeviceFault,
                         absl::StrCat(run.what, "; in a module of programs"));
    case CudaModuleRun::kTimeout:
      return LoseContext(kExitKernelTimeout,
                         absl::StrCat(run.what, "; in a module of programs"));
  }
  return absl::InternalError("unknown end of a module's run");
}

}  // namespace

absl::StatusOr<CudaBackendOptions> ParseCudaBackendOptions(
    const KeyValues& options) {
  CudaBackendOptions parsed;
  parsed.cache_dir = DefaultCacheDir();
  for (const auto& [key, value] : options) {
    if (key == "driver_library") {
      if (value.empty()) {
        return absl::InvalidArgumentError(
            "option driver_library=: expected the path of a CUDA driver "
            "library");
      }
      parsed.driver_library = value;
    } else if (key == "device") {
      PTXDIFF_ASSIGN_OR_RETURN(parsed.device, ParseInt(key, value, 0, 1023));
    } else if (key == "mode") {
      const std::optional<KernelMode> mode = ParseKernelMode(value);
      if (!mode.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option mode=", value, ": expected register or immediate"));
      }
      parsed.mode = *mode;
    } else if (key == "cache_dir") {
      parsed.cache_dir = value;
    } else if (key == "kernel_timeout_ms") {
      PTXDIFF_ASSIGN_OR_RETURN(const int64_t ms,
                               ParseInt(key, value, 1, int64_t{1} << 40));
      parsed.kernel_timeout = absl::Milliseconds(ms);
    } else if (key == "stage_tuples") {
      PTXDIFF_ASSIGN_OR_RETURN(parsed.stage_tuples,
                               ParseInt(key, value, 1, kMaxTuplesPerBatch));
    } else if (key == "immediate_group") {
      PTXDIFF_ASSIGN_OR_RETURN(parsed.immediate_group,
                               ParseInt(key, value, 1, 1024));
    } else if (key == "max_modules") {
      PTXDIFF_ASSIGN_OR_RETURN(parsed.max_modules,
                               ParseInt(key, value, 1, int64_t{1} << 30));
    }
  }
  return parsed;
}

void ExitWorker(int exit_code, const std::string& message) {
  std::fprintf(stderr, "ptxdiff-worker: %s\n", message.c_str());
  std::fflush(stderr);
  _exit(exit_code);
}

absl::StatusOr<std::unique_ptr<Backend>> MakeCudaBackend(
    const KeyValues& options, std::unique_ptr<CudaDriver> driver,
    FatalHandler on_fatal) {
  PTXDIFF_ASSIGN_OR_RETURN(const CudaBackendOptions parsed,
                           ParseCudaBackendOptions(options));
  absl::Status status;
  if (driver == nullptr) {
    absl::StatusOr<std::unique_ptr<CudaDriver>> loaded =
        LoadCudaDriver(parsed.driver_library);
    if (loaded.ok()) driver = std::move(*loaded);
    status = loaded.status();
  }
  std::unique_ptr<CudaBackend> backend;
  if (status.ok()) {
    backend = std::make_unique<CudaBackend>(std::move(driver), parsed,
                                            std::move(on_fatal));
    status = backend->Init();
  }
  if (absl::IsFailedPrecondition(status)) {
    // The hint is for NVIDIA's driver; another library's author wants only
    // what went wrong with it.
    const bool nvidia = parsed.driver_library == kDefaultCudaDriverLibrary;
    return absl::FailedPreconditionError(absl::StrCat(
        "the cuda backend cannot run here: ", status.message(),
        nvidia ? ". Without a GPU, try --backend=ptxas: it judges what "
                 "ptxas folds, and its code run on the CPU"
               : ""));
  }
  if (!status.ok()) return status;
  return backend;
}

}  // namespace ptxdiff
