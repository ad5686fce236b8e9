#include "backends/ptx_cmd/ptx_cmd_config.h"

#include <cstdlib>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "backends/backend.h"
#include "common/status_macros.h"
#include "protocol/backend_names.h"

namespace ptxdiff {
namespace ptx_cmd_internal {
namespace {

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

}  // namespace

absl::StatusOr<Config> ParseConfig(const KeyValues& hello) {
  const KeyValues options = WithEnvironment(hello);
  Config config;
  config.command = OptionValue(options, "command").value_or("");
  PTXDIFF_RETURN_IF_ERROR(CheckPtxCmdCommand(config.command));
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

}  // namespace ptx_cmd_internal
}  // namespace ptxdiff
