// The backends ptxdiff-worker has built in, by the name `--backend` and the
// worker's HELLO use: the one list that the worker's registry, the client's
// command builder, the campaign's batch sizes and the CLI's messages read.

#ifndef PTXDIFF_PROTOCOL_BACKEND_NAMES_H_
#define PTXDIFF_PROTOCOL_BACKEND_NAMES_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {

inline constexpr absl::string_view kOracleBackend = "oracle";
inline constexpr absl::string_view kPtxasBackend = "ptxas";
inline constexpr absl::string_view kCudaBackend = "cuda";
// Reached as ptx-cmd:'TOOL {ptx} {in} {out}': the worker runs TOOL.
inline constexpr absl::string_view kPtxCmdBackend = "ptx-cmd";

// --backend=exec:PATH runs PATH as the worker; --backend=ptx-cmd:TEMPLATE
// runs the built-in ptx-cmd backend with TEMPLATE.
inline constexpr absl::string_view kExecPrefix = "exec:";
inline constexpr absl::string_view kPtxCmdPrefix = "ptx-cmd:";

// Whether `command`, a ptx-cmd template (what follows kPtxCmdPrefix), can
// run: one line that names {ptx}, {in} and {out}, whose program exists and
// is executable (CheckCommandProgram, common/subprocess.h). The client's
// command builder and the worker both check it, so that every command says
// the same before anything runs. InvalidArgument saying what is wrong.
absl::Status CheckPtxCmdCommand(absl::string_view command);

// Where a ptx-cmd worker of an older ptxdiff kept its tool runs' files,
// ProcessTempDir(kPtxCmdTempPrefix, its pid) (common/files.h), which stayed
// when it was killed and not reaped: a worker removes those of processes
// gone. Its own are under its ProcessTempRoot, gone with it however it ends.
inline constexpr absl::string_view kPtxCmdTempPrefix = "ptxdiff-ptx-cmd";

struct BuiltinBackend {
  absl::string_view name;
  // Tuples the campaign sends per batch: what one call digests well.
  size_t batch_tuples;
  // Tuples of one variant the systematic source gives at a time: more
  // where each variant in a batch costs the backend (ptx-cmd: a segment of
  // the module the tool parses, ~20 lines).
  int systematic_run = 8;
};

inline constexpr BuiltinBackend kBuiltinBackends[] = {
    {kOracleBackend, 16384},
    {kPtxasBackend, 4096},  // one module of 64 kernels x 64 tuples
    {kCudaBackend, size_t{1} << 20},
    {kPtxCmdBackend, 16384, 64},
};

// The built-in backend called `name`, or nullptr (an exec: worker, a typo).
const BuiltinBackend* FindBuiltinBackend(absl::string_view name);

// "oracle, ptxas, cuda, ptx-cmd": for messages.
std::string BuiltinBackendNames();

}  // namespace ptxdiff

#endif  // PTXDIFF_PROTOCOL_BACKEND_NAMES_H_
