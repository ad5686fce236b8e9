// ptxas's assembler in-process: libnvJitLink, the CUDA toolkit's JIT linker,
// embeds the same PTX assembler as the ptxas executable of its release (its
// errors even read "ptxas application ptx input, line N; error ..."), and
// compiles a module without a process, a temporary directory or two files.
// Where starting a ptxas process is costly, that fixed cost bounded the
// campaign on the ptxas backend (docs/campaign.md; ptxas_backend_benchmark
// compares the two).
//
// The library is opened with dlopen, so a worker runs without it (with the
// ptxas executable), and only from the toolkit the ptxas belongs to:
// `<ptxas's dir>/../lib64/libnvJitLink.so` (a wrapper script standing in
// for ptxas has none, and is run).

#ifndef PTXDIFF_WORKER_BACKENDS_PTXAS_NVJITLINK_H_
#define PTXDIFF_WORKER_BACKENDS_PTXAS_NVJITLINK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "backends/ptxas/ptxas_toolchain.h"

namespace ptxdiff {

class NvJitLink {
 public:
  // FailedPrecondition naming where it looked, or what is missing.
  static absl::StatusOr<std::unique_ptr<NvJitLink>> Load(
      const std::string& ptxas);
  ~NvJitLink();
  NvJitLink(const NvJitLink&) = delete;
  NvJitLink& operator=(const NvJitLink&) = delete;

  // "13.0": the release, to compare with the ptxas executable's.
  const std::string& version() const { return version_; }
  const std::string& path() const { return path_; }

  // As RunPtxas: ok == false with the assembler's log where it rejects the
  // module; a non-OK status where the library fails otherwise. Safe to call
  // from several threads at once (a handle per call). `opt_level` is
  // ptxas's -O (nvJitLink's -O passes it on).
  absl::StatusOr<PtxasOutput> Compile(
      absl::string_view arch, absl::string_view ptx,
      int opt_level = kPtxasDefaultOptLevel) const;

 private:
  struct Api;
  NvJitLink(std::string path, std::unique_ptr<Api> api, std::string version);

  std::string path_;  // of the library, loaded for good (nvjitlink.cc)
  std::unique_ptr<Api> api_;
  std::string version_;
};

// `library`'s Compile, bounded as a ptxas process is (common/call_within.h):
// past `timeout`, or at a stop of this process, a run that did not finish
// (`how.timed_out` or `how.interrupted`, as RunPtxas says of a ptxas it
// killed; its log "timed out after 1s (in-process, left to run on)"), while
// the compile runs on to its end on a thread of its own.
absl::StatusOr<PtxasOutput> CompileWithin(
    std::shared_ptr<const NvJitLink> library, absl::string_view arch,
    absl::string_view ptx, int opt_level, absl::Duration timeout);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTXAS_NVJITLINK_H_
