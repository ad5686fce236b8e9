// The ptx-cmd backend's options (ptx_cmd_backend.h lists them): HELLO's
// key-values, over the PTXDIFF_PTX_CMD_* variables of the environment.

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_CONFIG_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_CONFIG_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "backends/cuda/kernel_gen.h"
#include "protocol/protocol.h"

namespace ptxdiff {
namespace ptx_cmd_internal {

// The options, parsed and checked.
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

// The options from the environment (PTXDIFF_PTX_CMD_ABI=1, ...), then
// HELLO's, which win. InvalidArgument for a command without {ptx}, {in} or
// {out}, an arch that is not sm_NN, a number out of its range.
absl::StatusOr<Config> ParseConfig(const KeyValues& hello);

}  // namespace ptx_cmd_internal
}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_PTX_CMD_CONFIG_H_
