// An implementation under test, as the worker process runs it.
//
// A backend evaluates a batch of tuples and answers each with a value or a
// decline; a non-OK status means the backend itself failed (the worker then
// answers ERROR). The seam is here: Backend::Run parses the spellings and
// declines what the backend does not run, once for every backend, so that a
// backend only says which variants it runs (WhyUnsupported) and computes
// (RunSupported). Backends live in the worker process only: the harness
// reaches them through WorkerClient, never directly, so that a crash or hang
// of the implementation under test cannot take the harness down.

#ifndef PTXDIFF_WORKER_BACKEND_H_
#define PTXDIFF_WORKER_BACKEND_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// A batch as a backend runs it: the worker has parsed every spelling and
// declined the tuples of unknown and unsupported variants, so every variant
// here is legal and one the backend runs.
struct ResolvedBatch {
  std::vector<Variant> variants;
  std::span<const WireTuple> tuples;  // variant_index into `variants`
};

// The tuples of one variant of a batch: positions into its tuples, in order.
struct VariantGroup {
  uint32_t variant_index = 0;
  std::vector<uint32_t> positions;
};
// `batch`'s tuples by variant, the groups in order of first appearance: for
// backends that run a variant at a time.
std::vector<VariantGroup> GroupByVariant(const ResolvedBatch& batch);

// Declines written into a reply whose results are already sized and filled
// out of order (RunReply::AddDecline appends); messages interned by
// RunReply::InternMessage.
class Declines {
 public:
  explicit Declines(RunReply& reply) : reply_(reply) {}
  void Add(std::span<const uint32_t> positions, DeclineCode code,
           const std::string& message);

 private:
  RunReply& reply_;
};

// A module of kernel ABI 2 (docs/kernel-abi.md "Programs") run once by a
// backend that runs modules itself: its output buffer, or why the
// implementation refused it (a JIT rejection).
struct ModuleRun {
  std::string out;  // n slots of kBatchResultBytes, when not refused
  std::optional<std::string> refused;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Name, version, toolchain and device identity, and what it supports:
  // Describe()'s identity with `supports` from WhyUnsupported.
  WorkerIdentity Identity() const;

  // Answers every tuple of `request` in `reply` (one result per tuple, in
  // order). Unknown spellings and unsupported variants are declined here,
  // once, with kUnsupportedVariant and WhyUnsupported's reason; the other
  // tuples go to RunSupported. A non-OK status is RunSupported's.
  absl::Status Run(const RunRequest& request, RunReply& reply);

  // Runs `module` on the input buffer `in`, filling `n` slots: what a
  // worker's programs run on where the backend is a device (the cuda
  // backend). A fault that ends the implementation (a lost context, a
  // kernel past its timeout) ends the worker, as in a batch. Unimplemented
  // for the backends that run no modules.
  virtual absl::StatusOr<ModuleRun> RunModule(const std::string& module,
                                              const std::string& in,
                                              size_t n);

 protected:
  // Name, version, toolchain and device; `supports` is filled by Identity.
  virtual WorkerIdentity Describe() const = 0;

  // Why the backend declines every tuple of `v` (legal), or nullopt if it
  // runs them.
  virtual std::optional<std::string> WhyUnsupported(const Variant& v) const {
    return std::nullopt;
  }

  // Answers every tuple of `batch` in `reply`, in order.
  virtual absl::Status RunSupported(const ResolvedBatch& batch,
                                    RunReply& reply) = 0;

 private:
  std::vector<std::string> SupportsList() const;

  mutable std::optional<std::vector<std::string>> supports_;  // by Identity
};

// HELLO options, as the backends' factories read them.
// The last value of `key`, if any (keys may repeat; the last one wins).
std::optional<std::string> OptionValue(const KeyValues& options,
                                       absl::string_view key);
// Sets `out` to integer option `key` if it is given; InvalidArgument naming
// `backend`, the option and the range if it is not an integer in
// [min, max] (`out` is then left alone).
absl::Status IntOption(const KeyValues& options, absl::string_view backend,
                       absl::string_view key, int min, int max, int& out);

// The backends built into ptxdiff-worker (protocol/backend_names.h). `options`
// are HELLO's key-values (e.g. arch=sm_90). Unknown names are NotFound,
// listing the known ones; a backend that cannot work on this machine (no
// ptxas) is FailedPrecondition with what to do about it.
absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(absl::string_view name,
                                                     const KeyValues& options);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKEND_H_
