#include "bench/fuzz_loop_stand_in.h"

#include <unistd.h>

#include <random>
#include <vector>

#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "oracle/edge_operands.h"
#include "oracle/oracle.h"

namespace ptxdiff {

void FuzzLoopStandIn(Campaign& campaign, const std::atomic<bool>& stop) {
  std::mt19937_64 rng(1);
  const absl::Span<const Variant> all = AllVariants();
  std::vector<Operands> ops(8);
  // As the fuzz loop decodes an input without forms (isa/fuzz_input.h).
  const bool runtime_by_default = campaign.identity().runtime_by_default;
  while (!stop) {
    const Variant& v = all[rng() % all.size()];
    FillEdgeTuples(v, rng, ops);
    for (const Operands& o : ops) {
      const Tuple t{v, o, DefaultForm(v, runtime_by_default)};
      const Result r = Evaluate(v, o);
      campaign.Offer(t, r, SemanticClasses(t, r));
    }
    if (campaign.FuzzLoopShouldYield()) usleep(500);
  }
}

}  // namespace ptxdiff
