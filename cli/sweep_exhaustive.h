// `ptxdiff sweep --exhaustive`: every input of the narrow variants, a sample
// of the wide ones (harness/exhaustive_sweep.h), with progress and an
// estimate of the time left on stderr, and a summary of what it proved
// agrees and what it found.

#ifndef PTXDIFF_CLI_SWEEP_EXHAUSTIVE_H_
#define PTXDIFF_CLI_SWEEP_EXHAUSTIVE_H_

#include <ostream>
#include <vector>

#include "cli/flags.h"
#include "client/worker_client.h"
#include "isa/variant.h"
#include "oracle/errata.h"

namespace ptxdiff {

// The flags it adds to `sweep`.
inline constexpr char kMaxBitsFlag[] = "max-bits";
inline constexpr char kSampleFlag[] = "sample";

// Runs the exhaustive sweep of `variants` on `client` (Ctrl-C stops it
// between batches) and prints it. The exit status: 0 when nothing
// disagreed, 1 on a disagreement, a fault or nothing tested, 2 on bad
// flags, 130 when stopped.
int RunExhaustiveSweepCommand(const ParsedArgs& args, WorkerClient& client,
                              const std::vector<Variant>& variants,
                              Reading reading, std::ostream& out,
                              std::ostream& err);

}  // namespace ptxdiff

#endif  // PTXDIFF_CLI_SWEEP_EXHAUSTIVE_H_
