// What stands in for the libFuzzer loop when a benchmark drives a campaign:
// random edge tuples of random variants, in the worker's default form (as
// inputs without forms are run), offered as fast as they come.

#ifndef PTXDIFF_BENCH_FUZZ_LOOP_STAND_IN_H_
#define PTXDIFF_BENCH_FUZZ_LOOP_STAND_IN_H_

#include <atomic>

#include "campaign/campaign.h"

namespace ptxdiff {

// Offers random edge tuples of random variants until `stop`, yielding when
// the campaign is saturated, as DifferentialTarget::RunInput does.
void FuzzLoopStandIn(Campaign& campaign, const std::atomic<bool>& stop);

}  // namespace ptxdiff

#endif  // PTXDIFF_BENCH_FUZZ_LOOP_STAND_IN_H_
