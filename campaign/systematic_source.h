// The systematic part of a campaign's search: every variant gets its
// likeliest bug triggers first, then its boundary relations, edge operand
// combinations and boundary operands, early, and time is spread over
// families rather than over variants (most variants are video).
//
// For each variant the source defines a fixed set of tuples, visited in
// these sections:
//   - the first tier, in order: each source alone at MIN, MAX, 0, all ones
//     and 1 (extreme by extreme: every source at MIN first), the others at
//     0, then -1, then 1; then a against b at each of MIN, MAX, 0 and all
//     ones (a == b, a == b + 1, a == b - 1): a variant's likeliest bug
//     triggers, so tuple 0 (the breadth pass's) has a at MIN; right after
//     tuple 0, in a variant that merges its result into a part of the
//     destination (a video `d.b1`, `d.h0`), a and b as their selectors read
//     them chosen so that their exact sum or difference is one past and one
//     inside the part's MIN and MAX: where the part saturates or wraps,
//     which no extreme reaches, early even among 60k video variants;
//   - the relations, rules over the instruction table rather than lists per
//     family (harness/semantic_classes.h names them):
//       destination bounds: a source wider than the destination (a
//       narrowing cvt) at the destination's signed and unsigned MIN and MAX,
//       each -1, +0, +1, as source values;
//       lane bounds: in a SIMD video variant, for each lane and each
//       selector edge under which a lane's a and b are different parts, the
//       parts the selector picks for that lane (read as .atype and .btype
//       read them) chosen so that their exact sum or difference is the
//       destination lane's MIN - 1 or MAX + 1;
//       equal extremes: every two numbers at MIN, MAX, 0 and all ones,
//       equal and one apart either way;
//       product bounds: where the result is a part of the product a * b
//       (`.hi`, `.lo`, `.wide`, mul24's 48 bits), the factors chosen so that
//       the product is at each edge of the part kept, and a saturating
//       part plus c at the s32 bounds (ProductBoundOperands);
//   - the middle tier: each number alone at values inside its range (of
//     the part its selector reads, put in place), the others at 0, value by
//     value across the sources (MiddleValues: byte and half boundaries
//     0x7f, 0x80, 0xff, 0x100 up to 0x100000000 below the width,
//     alternating patterns, 2^k + 1; an amount its byte and half
//     boundaries alone; a factor of a product with the other factor at 1,
//     not 0): where a clamp at the wrong bound, a
//     mask one bit short or a carry out of a byte shows, which no extreme
//     reaches;
//   - where the backend runs operand forms (isa/operand_form.h), the
//     runtime tier: each source that may be a runtime value made one, the
//     others as the first tier puts them (one alone at an extreme, the rest
//     at 0, -1 or 1), the runtime source's witnesses at MIN, MAX, 0, all
//     ones and 1: what a compiler claims for every value of an operand,
//     with the other operands at their likeliest triggers (bfe past the
//     top of its source, a shift by all ones). After the middle tier, which
//     it would otherwise delay: against ptxas a probe costs a compile of
//     its own, where immediates share kernels by the dozen; right after the
//     relations where the compiled code is kept and run at many inputs
//     (SetBreadthInBothForms), a probe's compile paying for thousands (the
//     relations stay before it: slct's NaN-pattern fold is among them);
//   - edge pairs: for each pair of sources, every combination of two values
//     from a short per-width edge list (0, 1, 2, -1, -2, MIN, MAX, MIN+1,
//     powers of two around the shift widths, 255/256, byte sign patterns),
//     the other sources held at a value from {0, 1, -1}; and boundary pairs:
//     for each pair of sources (i, j) and each bound B of the width (MAX,
//     MIN, 0, the width itself, 32, 64, 256), x_j chosen so that x_i + x_j or
//     x_i - x_j is exactly B - 1, B or B + 1: what puts a sum at a
//     saturation bound, position + length at the width, a difference at
//     zero — derived from operand widths alone.
// The relations and the pairs are each visited in a fixed pseudo-random
// order per variant (so a variant's first few tuples of a section are
// already spread over it). First a breadth pass gives every variant its
// tuple 0, so a bug confined to one variant of the 60k video variants is met
// within a pass of the variants (sooner, on average, than uniform random
// testing meets it). The pass takes one variant of each family in turn
// (each family's in an order shuffled by stable id), so a small family has
// had its pass long before the video families have.
// Then families are visited round-robin; within a family, one run of tuples
// per variant per pass, so small families are searched deeply early. An
// endless source (a campaign's) starts that for the families whose pass is
// over while the pass goes on, with a bounded share of the time: on a slow
// backend the pass over 80k variants takes minutes, and a small family's
// bugs are in its deeper tiers.
// Deterministic for a given variant list.

#ifndef PTXDIFF_CAMPAIGN_SYSTEMATIC_SOURCE_H_
#define PTXDIFF_CAMPAIGN_SYSTEMATIC_SOURCE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "isa/tuple.h"
#include "isa/variant.h"

namespace ptxdiff {

// The number of tuples of `v` in the systematic set, and the k-th of them
// (k < SystematicCount(v)). With `forms` (a backend that runs operand
// forms), the set has the runtime tier too.
uint64_t SystematicCount(const Variant& v, bool forms = false);
Tuple SystematicTuple(const Variant& v, uint64_t k, bool forms = false);
// Tuples k .. k + n - 1 (clipped to the count), appended to `out`.
void SystematicTuples(const Variant& v, uint64_t k, uint64_t n,
                      std::vector<Tuple>& out, bool forms = false);
// The planned tiers' size: the first tier, the relations and the middle
// tier (every tuple of the set before the runtime tier and the pairs): what
// each variant is planned to have early, extremes and narrowing points.
uint64_t PlannedCount(const Variant& v, bool forms = false);
// Tuples k .. k + n - 1 of the endless random tail that follows a variant's
// systematic set: each operand an edge value, a small amount (0..300) for
// amount sources, or random bits. Deterministic for (v, k).
void TailTuples(const Variant& v, uint64_t k, uint64_t n,
                std::vector<Tuple>& out);

// The short edge list for a width (each value fits the width).
const std::vector<uint64_t>& ShortEdgeValues(int width);
// The middle tier's values for a width (each fits it; none an extreme); for
// an amount (IsAmountSource), its byte and half boundaries alone.
const std::vector<uint64_t>& MiddleValues(int width, bool amount = false);

class SystematicSource {
 public:
  // `variants` in any order; `run` tuples per variant per visit. An
  // `endless` source goes on after a variant's set with its random tail
  // (TailTuples), with the same scheduling, so that a backend whose every
  // systematic set is done still gets fresh tuples; NextRun then never
  // returns false.
  // With `runtime_forms` (a backend that runs operand forms), every set
  // has its runtime tier.
  explicit SystematicSource(absl::Span<const Variant> variants, int run = 8,
                            bool endless = false, bool runtime_forms = false);

  // The next tuple, or nullopt when every variant's set is exhausted.
  std::optional<Tuple> Next();

  // The next run: up to `run` tuples of one variant (the same tuples Next()
  // would give, computed together), or in the breadth pass up to
  // kBreadthRun tuples of as many variants; false when every set is
  // exhausted. During an endless source's breadth pass, a run of a family
  // whose pass is over comes instead whenever such runs have had less than
  // the depth share of the breadth pass's time (by family costs:
  // kDepthShareDuringBreadth unless SetDepthShareDuringBreadth).
  static constexpr int kBreadthRun = 64;
  static constexpr double kDepthShareDuringBreadth = 0.25;
  // Where compiled code is kept (the campaign's compiled lane), the pass's
  // runtime forms of 80k variants outlast a short campaign, and the known
  // compiler bugs are in small families' deeper tiers (slct's relations,
  // bfe's runtime tier): depth gets half the pass's time, by the families'
  // calibrated costs (with as much, 19% fewer variants had a runtime
  // verdict in a 60 s job, and the four known ptxas causes came no sooner:
  // docs/performance.md, "The main job").
  static constexpr double kDepthShareWithKeptCode = 0.5;
  // The share of the pass's time its depth runs get (kDepthShareDuringBreadth
  // unless set). Set before the first tuple.
  void SetDepthShareDuringBreadth(double share) { depth_share_ = share; }
  // During the breadth pass, depth runs go only to families with a variant
  // still in its planned tiers (PlannedCount): where each tuple of depth
  // costs a compile, a small family's pairs and random tail would otherwise
  // take the time from the pass's runtime forms of the large families,
  // while its likeliest triggers were all tried already. Set before the
  // first tuple; off by default.
  void SetDepthPlannedOnlyDuringBreadth(bool planned_only) {
    depth_planned_only_ = planned_only;
  }
  bool NextRun(std::vector<Tuple>& out);

  // Tuples whose form the set leaves open (every tier but the runtime one)
  // get DefaultForm(v, runtime_by_default): for a worker that runs code,
  // every source a runtime value, its cheapest shape. Off by default.
  void SetRuntimeByDefault(bool runtime_by_default) {
    runtime_by_default_ = runtime_by_default;
  }

  // The breadth pass gives each variant its tuple 0 twice: in the default
  // form, then, once every variant of its family had that, in the same
  // order with every source that may be a runtime value one (where it has
  // any). For a
  // compiler whose code is also run (WorkerIdentity::both_forms: ptxas with
  // its SASS evaluator), so that every variant's emitted code is judged
  // before any variant goes deep. With `runtime_first` (a compiler whose
  // compiled code is kept and run at many more inputs, the campaign's
  // compiled lane) the pass gives each variant its runtime form alone (the
  // default form where no source can be a runtime value), and its set
  // starts at tuple 0 when its family goes deep: a runtime form's compile
  // pays for thousands of checks, a default form's for one, and the pass
  // over 80k variants outlasts a short campaign; and each set's runtime
  // tier comes right after its relations (what a compiler claims for every
  // value, and the code it keeps, before the middle tier's folding
  // checks).
  // Set before the first tuple; off by default.
  void SetBreadthInBothForms(bool both, bool runtime_first = false) {
    breadth_both_forms_ = both;
    breadth_runtime_first_ = runtime_first;
    PlanBreadth();
  }

  // The backend's time per tuple of each family (any unit; 1 by default).
  // Families are then given equal *time*, not equal tuples: stride
  // scheduling charges each run its count times its family's cost and picks
  // the family charged least (round-robin when the costs are equal). A
  // family whose variants are all in their random tail is charged 16 times
  // that, so the others' sets come first.
  void SetFamilyCost(Family f, double cost);

  // Variants whose whole set has been produced, and variants visited once.
  int64_t exhausted() const { return exhausted_; }
  // Variants whose planned tiers (PlannedCount) have all been produced.
  int64_t planned_done() const { return planned_done_; }
  int64_t produced() const { return produced_; }
  // Every variant has had its breadth-pass tuple (in both forms, where the
  // pass gives both).
  bool breadth_done() const { return breadth_cursor_ >= breadth_.size(); }

 private:
  struct VariantState {
    Variant variant;
    uint64_t count;  // the set's size (0 until the breadth pass visits it)
    uint64_t id;     // StableId(variant)
    uint64_t next = 0;
    uint64_t planned = 0;  // PlannedCount (set with count)
    bool tail = false;  // the set is done: counted in exhausted_
  };
  struct FamilyState {
    Family family;
    std::vector<VariantState> variants;  // still with tuples left
    size_t cursor = 0;
    double cost = 1;     // per tuple
    double charged = 0;  // runs so far x cost (x kTailWeight in the tail)
    size_t in_set = 0;   // variants not yet in their random tail
    size_t breadth_left = 0;  // of its breadth pass's tuples
    size_t planned_left = 0;  // variants not past their planned tiers
  };
  // One tuple of the breadth pass: a variant's tuple 0 in the default form,
  // or in the runtime form.
  struct BreadthItem {
    VariantState* variant;
    uint32_t family;  // index into families_
    bool runtime;
  };
  // Moves to the next (family, variant) run; with `passed_only`, of a family
  // whose breadth pass is over (false if there is none).
  bool Advance(bool passed_only = false);
  std::optional<Tuple> NextBreadth();  // the breadth pass, then nullopt
  // Lays out the breadth pass: the families' turns (see the header).
  void PlanBreadth();
  // Appends the current variant's next run (`left_in_run_` tuples).
  void AppendRun(std::vector<Tuple>& out);

  std::vector<FamilyState> families_;  // still with variants left
  size_t current_family_ = 0;          // index into families_ of current_
  int run_;
  bool endless_;
  bool forms_;
  bool runtime_by_default_ = false;
  bool breadth_both_forms_ = false;
  bool breadth_runtime_first_ = false;
  double depth_share_ = kDepthShareDuringBreadth;
  bool depth_planned_only_ = false;
  bool runtime_tier_early() const { return breadth_runtime_first_; }
  // `t`, or `t` in the default form if its form is open (all immediates).
  Tuple InDefaultForm(Tuple t) const;
  int left_in_run_ = 0;
  VariantState* current_ = nullptr;
  int64_t exhausted_ = 0, produced_ = 0, planned_done_ = 0;
  // Moves `v` (of `family`) on by `n` tuples, counting it in planned_done_
  // (and out of the family's planned_left) as it passes its planned tiers.
  void Produced(VariantState& v, FamilyState& family, uint64_t n);
  // The breadth pass (pointers into families_, which does not change until
  // the pass is over: a source that is not endless goes deep only after it).
  std::vector<BreadthItem> breadth_;
  size_t breadth_cursor_ = 0;
  // The time (family costs) the breadth pass and the runs of families
  // whose pass was over have taken while the pass went on.
  double breadth_charged_ = 0, depth_charged_ = 0;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_SYSTEMATIC_SOURCE_H_
