// Command-line flags of the ptxdiff subcommands: `--name`, `--name=value`
// and `--name value`; everything else is positional (so "-1" is an operand).

#ifndef PTXDIFF_CLI_FLAGS_H_
#define PTXDIFF_CLI_FLAGS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace ptxdiff {

struct ParsedArgs {
  std::vector<std::string> positional;
  // Every value of each flag, in order (a flag may repeat: --family a --family
  // b).
  absl::flat_hash_map<std::string, std::vector<std::string>> flags;

  bool Has(const std::string& name) const { return flags.contains(name); }
  // The last value of `name`, or `otherwise`.
  std::string Get(const std::string& name,
                  const std::string& otherwise = "") const;
  std::vector<std::string> All(const std::string& name) const;
};

// `booleans` take no value; `valued` take one. Any other `--flag`, and an
// empty argument or value, is an InvalidArgument naming it.
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::set<std::string>& booleans,
                                     const std::set<std::string>& valued);

// The whole number flag `name` gives, or `otherwise` when it is not given;
// InvalidArgument naming the flag, its range and the text when it is not a
// whole number from `min` to `max`.
absl::StatusOr<int64_t> IntFlag(const ParsedArgs& args, const std::string& name,
                                int64_t otherwise, int64_t min, int64_t max);

// The longest --max-time any command takes: 30 days, in seconds.
inline constexpr int64_t kMaxTimeSeconds = 30 * 24 * 3600;

// --max-time SECONDS, one rule for every command that takes it: a whole
// number from 1 to kMaxTimeSeconds (0 would end the run before it starts),
// or `otherwise` when it is not given.
absl::StatusOr<int64_t> MaxTimeFlag(const ParsedArgs& args, int64_t otherwise);

// The longest --timeout (a worker's reply, a tool's run) any command takes.
inline constexpr double kMaxTimeoutSeconds = 3600;

// --timeout SECONDS of the worker commands (fuzz, sweep, eval, repro,
// minimize): a number above 0 and at most kMaxTimeoutSeconds (`nan`, `inf`
// or 1e300 never let a hanging worker be restarted), or `otherwise`.
absl::StatusOr<double> TimeoutSecondsFlag(const ParsedArgs& args,
                                          double otherwise);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_FLAGS_H_
