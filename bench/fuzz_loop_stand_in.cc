#include "bench/fuzz_loop_stand_in.h"

#include <unistd.h>

#include <random>
#include <vector>

#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {

void FuzzLoopStandIn(Campaign& campaign, const std::atomic<bool>& stop) {
  std::mt19937_64 rng(1);
  const absl::Span<const Variant> all = AllVariants();
  std::vector<Operands> ops(8);
  while (!stop) {
    const Variant& v = all[rng() % all.size()];
    FillEdgeTuples(v, rng, ops);
    for (const Operands& o : ops) {
      const Tuple t{v, o};
      const Result r = Evaluate(v, o);
      campaign.Offer(t, r, SemanticClasses(t, r));
    }
    if (campaign.FuzzLoopShouldYield()) usleep(500);
  }
}

}  // namespace ptxdiff
