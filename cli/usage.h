// The CLI's help, from one table of commands (usage.cc): `ptxdiff help`
// lists every command's synopsis and what it does; `ptxdiff COMMAND --help`
// adds its flags, each with its default, and an example.

#ifndef PTXDIFF_CLI_USAGE_H_
#define PTXDIFF_CLI_USAGE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ptxdiff {

// Every command, in brief.
std::string MainUsage();

// One command in full; MainUsage() for a command there is none of.
std::string CommandUsage(absl::string_view command);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_USAGE_H_
