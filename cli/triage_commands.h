// `ptxdiff repro`, `ptxdiff minimize` and `ptxdiff triage ...`: replaying a
// crash file or text case, minimizing it into a triage entry, and managing
// triage directories. Exit codes: 0 agree / done, 1 disagree (repro) or
// nothing to minimize, 2 bad input or error (nothing written half-way).

#ifndef PTXDIFF_CLI_TRIAGE_COMMANDS_H_
#define PTXDIFF_CLI_TRIAGE_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace ptxdiff {

// The triage directory when --dir is not given: $PTXDIFF_TRIAGE_DIR, else
// out/triage.
std::string DefaultTriageDir();

int RunRepro(const std::vector<std::string>& args, std::ostream& out,
             std::ostream& err);
int RunMinimize(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);
int RunTriage(const std::vector<std::string>& args, std::ostream& out,
              std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_TRIAGE_COMMANDS_H_
