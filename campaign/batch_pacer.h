// How many tuples a sender takes per batch where the backend's cost per
// tuple swings by kind: against ptxas a runtime form's compile costs several
// times a folding check's, and a batch that outlasts the campaign's stop
// grace is cut off at the deadline, its work lost. The size is halved while
// batches take over twice the target, doubled (up to the backend's batch)
// while they take under half of it.

#ifndef PTXDIFF_CAMPAIGN_BATCH_PACER_H_
#define PTXDIFF_CAMPAIGN_BATCH_PACER_H_

#include <algorithm>
#include <cstddef>

#include "absl/time/time.h"

namespace ptxdiff {

class BatchPacer {
 public:
  BatchPacer(size_t max, absl::Duration target)
      : max_(max), min_(std::max<size_t>(1, max / 64)), size_(max),
        target_(target) {}

  size_t size() const { return size_; }

  // A batch of size() tuples took `took`.
  void Took(absl::Duration took) {
    if (took > 2 * target_) size_ = std::max(min_, size_ / 2);
    if (took < target_ / 2) size_ = std::min(max_, size_ * 2);
  }

 private:
  size_t max_, min_, size_;
  absl::Duration target_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_BATCH_PACER_H_
