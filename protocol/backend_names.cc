#include "protocol/backend_names.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/subprocess.h"

namespace ptxdiff {

const BuiltinBackend* FindBuiltinBackend(absl::string_view name) {
  for (const BuiltinBackend& backend : kBuiltinBackends) {
    if (backend.name == name) return &backend;
  }
  return nullptr;
}

std::string BuiltinBackendNames() {
  return absl::StrJoin(kBuiltinBackends, ", ",
                       [](std::string* out, const BuiltinBackend& b) {
                         out->append(b.name.data(), b.name.size());
                       });
}

absl::Status CheckPtxCmdCommand(absl::string_view command) {
  if (command.empty() || absl::StrContains(command, '\n')) {
    return absl::InvalidArgumentError(
        "ptx-cmd: needs a one-line command, e.g. ptx-cmd:'my-tool {ptx} {in} "
        "{out}'");
  }
  for (absl::string_view placeholder : {"{ptx}", "{in}", "{out}"}) {
    if (!absl::StrContains(command, placeholder)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the ptx-cmd command '", command, "' does not mention ", placeholder,
          "; it runs a PTX module: e.g. ptx-cmd:'my-tool {ptx} "
          "{in} {out}' (docs/kernel-abi.md)"));
    }
  }
  // Checked once, not learned as a refusal of every module (exit 127).
  if (absl::Status runs = CheckCommandProgram(command); !runs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ptx-cmd command '", command, "': ", runs.message()));
  }
  return absl::OkStatus();
}

}  // namespace ptxdiff
