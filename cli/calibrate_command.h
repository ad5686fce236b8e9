// `ptxdiff calibrate`: the SASS evaluator's self-check as a campaign
// (backends/ptxas/sass_calibration.h). Every variant's kernel,
// compiled by ptxas with every runtime-capable source a parameter, is run on
// the CPU for many operand sets and judged by the oracle; at -O0 a
// disagreement is a defect of the evaluator, not a finding of ptxas's
// optimizer. Prints the census: the share of kernels run to the end, and
// what stopped the rest.

#ifndef PTXDIFF_CLI_CALIBRATE_COMMAND_H_
#define PTXDIFF_CLI_CALIBRATE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace ptxdiff {

// Exit 0 when every executed tuple agrees (or is a known finding of
// ptxas's code), 1 on a disagreement or when nothing was executed, 2 on bad
// input.
int RunCalibrate(const std::vector<std::string>& args, std::ostream& out,
                 std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_CALIBRATE_COMMAND_H_
