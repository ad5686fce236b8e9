// The `ptxdiff` subcommands, as functions from arguments to an exit code, so
// that tests run them without a process. Exit codes: 0 success, 2 bad input
// (a clear message on `err`, nothing on `out`).

#ifndef PTXDIFF_CLI_COMMANDS_H_
#define PTXDIFF_CLI_COMMANDS_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace ptxdiff {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 2;
// A backend was named and nothing could be judged on it (it declined, or
// the spec leaves the result open): not 0, which says that what was judged
// agrees.
inline constexpr int kExitNotJudged = 3;
// Ctrl-C or SIGTERM stopped the command, as a shell says of SIGINT.
inline constexpr int kExitInterrupted = 130;

// The most a case file (a program, a text case, a crash file) may hold: a
// file a user names may be endless (/dev/zero) or not a case at all.
inline constexpr size_t kMaxCaseFileBytes = size_t{4} << 20;

// 100 * part / whole, or 0 when there is no whole: a summary's share.
double Percent(int64_t part, int64_t whole);

// Writes "ptxdiff COMMAND: <message>" to `err`; returns kExitBadInput.
int Fail(std::ostream& err, std::string_view command,
         const absl::Status& status);

// `ptxdiff eval '<variant>' A [B [C [D]]] [--json]`
int RunEval(const std::vector<std::string>& args, std::ostream& out,
            std::ostream& err);

// `ptxdiff variants [--count] [--family NAME] [--json]`
int RunVariants(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);

// `ptxdiff compare '<variant>' '<variant>' [--tuples N] [--seed S]`: exit 1
// when the two differ on a tuple where both are defined.
int RunCompare(const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err);

// Dispatches argv[1] to a subcommand; prints usage for `help` or nothing.
int RunMain(const std::vector<std::string>& argv, std::ostream& out,
            std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_COMMANDS_H_
