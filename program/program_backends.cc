#include "program/program_backends.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "program/program_ptxas.h"
#include "program/program_tool.h"
#include "worker/backends/cuda/kernel_gen.h"
#include "worker/backends/ptxas/ptxas_toolchain.h"
#include "worker/backends/ptxas/sass_constants.h"

namespace ptxdiff {

absl::StatusOr<PtxTarget> TargetOfArch(const std::string& arch) {
  int sm = 0;
  absl::string_view digits = arch;
  if (!absl::ConsumePrefix(&digits, "sm_") || !absl::SimpleAtoi(digits, &sm)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--arch ", arch, ": not an sm_NN target"));
  }
  const std::optional<PtxTarget> target = TargetForDevice(sm);
  if (!target)
    return absl::InvalidArgumentError(absl::StrCat("no PTX target for ", arch));
  return *target;
}

namespace {

absl::StatusOr<ChosenProgramBackend> Ptxas(const ProgramBackendOptions& o) {
  PTXDIFF_ASSIGN_OR_RETURN(const std::string ptxas, FindPtxas({}));
  PTXDIFF_RETURN_IF_ERROR(FindSassArch(o.arch).status());
  return ChosenProgramBackend{
      .backend = MakePtxasProgramBackend(ptxas, o.arch, o.timeout),
      .arch = o.arch};
}

absl::StatusOr<ChosenProgramBackend> Tool(absl::string_view command,
                                          const ProgramBackendOptions& o) {
  for (absl::string_view placeholder : {"{ptx}", "{in}", "{out}"}) {
    if (!absl::StrContains(command, placeholder)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--backend ", o.backend, ": the command has no ",
                       placeholder, " (docs/kernel-abi.md)"));
    }
  }
  PTXDIFF_ASSIGN_OR_RETURN(const PtxTarget target, TargetOfArch(o.arch));
  ChosenProgramBackend chosen{.is_ptxas = false, .arch = o.arch};
  PTXDIFF_ASSIGN_OR_RETURN(chosen.files, TempDir::Create("ptxdiff-programs"));
  chosen.backend = MakeToolProgramBackend({.command = std::string(command),
                                           .files_root = chosen.files->path(),
                                           .target = target,
                                           .timeout = o.timeout});
  return chosen;
}

}  // namespace

absl::StatusOr<ChosenProgramBackend> MakeProgramBackend(
    const ProgramBackendOptions& options) {
  if (options.backend == "ptxas") return Ptxas(options);
  absl::string_view command = options.backend;
  if (absl::ConsumePrefix(&command, "ptx-cmd:")) return Tool(command, options);
  if (options.backend == "cuda") {
    return absl::InvalidArgumentError(
        "--backend cuda: programs run on a GPU from `ptxdiff program` and "
        "`ptxdiff programs`; here, on ptxas or ptx-cmd:COMMAND");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--backend ", options.backend,
                   ": programs run on ptxas, cuda or ptx-cmd:COMMAND"));
}

}  // namespace ptxdiff
