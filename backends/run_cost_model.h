// What a tool's runs cost (a user's PTX tool, ptxas), learned from the
// runs that succeeded, for the timeout of the next: a run past it hangs.
// The ptx-cmd backend, programs on a tool and the ptxas backend share it.

#ifndef PTXDIFF_BACKENDS_RUN_COST_MODEL_H_
#define PTXDIFF_BACKENDS_RUN_COST_MODEL_H_

#include <cstddef>
#include <mutex>
#include <vector>

#include "absl/time/time.h"

namespace ptxdiff {

// The expected cost of a tool's runs, learned from those that succeeded, for
// the timeout of the next (a run that ends at it hangs): kTimeoutMargin
// times the expected time plus a floor (kTimeoutFloor unless given), never
// more than a ceiling.
// The expected time is a start-up plus a cost per slot, each the slowest of
// the fastest nine tenths of its last kStartupsKept measures (a real tool's
// varies from run to run, and one run slowed by a busy machine must not make
// every later hang cost more): the start-up from small runs, the cost per
// slot from runs big enough that their slots, not the start-up's jitter,
// show in their time. Thread-safe.
class ToolCostModel {
 public:
  static constexpr double kTimeoutMargin = 4;
  static constexpr absl::Duration kTimeoutFloor = absl::Milliseconds(500);
  static constexpr size_t kPerSlotFrom = 256;
  static constexpr size_t kStartupsKept = 32;

  explicit ToolCostModel(absl::Duration floor = kTimeoutFloor)
      : floor_(floor) {}

  void Learn(size_t slots, absl::Duration took);
  bool learned() const;
  // The ceiling until a run succeeded, and for a run of kPerSlotFrom slots
  // or more until one of those did.
  absl::Duration Timeout(size_t slots, absl::Duration ceiling) const;
  // The fewest slots a run needs for the start-up to be at most `share` of
  // its expected time; 0 until both are learned.
  size_t SlotsForStartupShare(double share) const;

 private:
  // The last kStartupsKept of `runs`, a ring.
  struct Recent {
    std::vector<double> runs;
    size_t next = 0;
    void Add(double x);
    double NinthDecile() const;  // 0 if empty
  };

  const absl::Duration floor_;
  mutable std::mutex mu_;
  Recent startups_, per_slot_;
  double fastest_startup_ = 0;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_BACKENDS_RUN_COST_MODEL_H_
