// `ptxdiff program FILE`: a program case (program/program.h) on the composed
// oracle and, with --backend ptxas, through ptxas in both input forms
// (program_command.cc); `ptxdiff programs`, a campaign of them, and
// `ptxdiff minimize` of one (programs_command.cc).

#ifndef PTXDIFF_CLI_PROGRAM_COMMAND_H_
#define PTXDIFF_CLI_PROGRAM_COMMAND_H_

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "program/program_backends.h"

namespace ptxdiff {

// `ptxdiff programs`: a campaign of random programs through ptxas
// (program/program_campaign.h), its findings filed in the triage directory.
int RunPrograms(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);

// `ptxdiff minimize FILE` for a program case: its disagreement (or a tool's
// crash) minimized and filed in the triage directory, as a campaign would.
// `text` is the case as read from `path` (once: a pipe is read once).
int MinimizeProgramCase(const std::string& path, const std::string& text,
                        const ParsedArgs& args, std::ostream& out,
                        std::ostream& err);

int RunProgram(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err);

// What --backend (with --arch, --timeout, --cuda-driver) names for
// programs: ptxas (the default), a tool that runs PTX (program_backends.h),
// or a GPU. Its workers' start-up ends by `run_deadline` at the latest (a
// campaign's --max-time).
absl::StatusOr<ProgramBackendOptions> ProgramBackendFlags(
    const ParsedArgs& args, absl::Time run_deadline = absl::InfiniteFuture());
// That backend, on a worker of its own (started).
absl::StatusOr<ProgramWorker> ChooseProgramBackend(
    const ParsedArgs& args, absl::Time run_deadline = absl::InfiniteFuture());
// The same for another command that shows a program case (`repro`), which
// names itself in its errors; `text`, where given, is the case's file as
// the command read it (a pipe is read once).
int RunProgramAs(std::string_view command, const std::vector<std::string>& args,
                 std::ostream& out, std::ostream& err,
                 const std::optional<std::string>& text = std::nullopt);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_PROGRAM_COMMAND_H_
