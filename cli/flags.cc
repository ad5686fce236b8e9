#include "cli/flags.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ptxdiff {

std::string ParsedArgs::Get(const std::string& name,
                            const std::string& otherwise) const {
  auto it = flags.find(name);
  return it == flags.end() || it->second.empty() ? otherwise
                                                 : it->second.back();
}

std::vector<std::string> ParsedArgs::All(const std::string& name) const {
  auto it = flags.find(name);
  return it == flags.end() ? std::vector<std::string>{} : it->second;
}

namespace {

// An empty path is no directory: `--out ""` wrote the campaign's records
// under / ("" + "/stats"), as a shell variable left unset gives it.
absl::Status EmptyArgument(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is empty (an unset shell variable?)"));
}

}  // namespace

absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::set<std::string>& booleans,
                                     const std::set<std::string>& valued) {
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty()) return EmptyArgument("an argument");
    if (!absl::StartsWith(a, "--")) {
      out.positional.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name =
        a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (booleans.count(name) && eq == std::string::npos) {
      out.flags[name].push_back("");
    } else if (valued.count(name)) {
      if (eq != std::string::npos) {
        out.flags[name].push_back(a.substr(eq + 1));
      } else if (i + 1 < args.size()) {
        out.flags[name].push_back(args[++i]);
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " needs a value"));
      }
      if (out.flags[name].back().empty())
        return EmptyArgument(absl::StrCat("--", name, "'s value"));
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag '", a, "'"));
    }
  }
  return out;
}

absl::StatusOr<int64_t> IntFlag(const ParsedArgs& args, const std::string& name,
                                int64_t otherwise, int64_t min, int64_t max) {
  if (!args.Has(name)) return otherwise;
  const std::string text = args.Get(name);
  int64_t n = 0;
  if (absl::SimpleAtoi(text, &n) && n >= min && n <= max) return n;
  const std::string range =
      max < INT64_MAX ? absl::StrCat("a whole number from ", min, " to ", max)
      : min == 1      ? std::string("a positive whole number")
                      : absl::StrCat("a whole number of at least ", min);
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " takes ", range, ", not '", text, "'"));
}

absl::StatusOr<int64_t> MaxTimeFlag(const ParsedArgs& args, int64_t otherwise) {
  return IntFlag(args, "max-time", otherwise, 1, kMaxTimeSeconds);
}

absl::StatusOr<double> TimeoutSecondsFlag(const ParsedArgs& args,
                                          double otherwise) {
  if (!args.Has("timeout")) return otherwise;
  const std::string text = args.Get("timeout");
  double seconds = 0;
  // Written so that NaN fails it.
  if (absl::SimpleAtod(text, &seconds) && seconds > 0 &&
      seconds <= kMaxTimeoutSeconds)
    return seconds;
  return absl::InvalidArgumentError(
      absl::StrCat("--timeout takes a number of seconds above 0 and at most ",
                   kMaxTimeoutSeconds, ", not '", text, "'"));
}

}  // namespace ptxdiff
