#include "backends/run_cost_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ptxdiff {

void ToolCostModel::Recent::Add(double x) {
  if (runs.size() < kStartupsKept) {
    runs.push_back(x);
  } else {
    runs[next] = x;
  }
  next = (next + 1) % kStartupsKept;
}

double ToolCostModel::Recent::NinthDecile() const {
  if (runs.empty()) return 0;
  std::vector<double> sorted = runs;
  const size_t at = sorted.size() * 9 / 10;
  std::nth_element(sorted.begin(), sorted.begin() + at, sorted.end());
  return sorted[at];
}

void ToolCostModel::Learn(size_t slots, absl::Duration took) {
  const double seconds = absl::ToDoubleSeconds(took);
  std::lock_guard<std::mutex> lock(mu_);
  if (slots < kPerSlotFrom) {
    fastest_startup_ =
        startups_.runs.empty() ? seconds : std::min(fastest_startup_, seconds);
    startups_.Add(seconds);
  } else if (!startups_.runs.empty()) {
    per_slot_.Add(std::max(0.0, seconds - fastest_startup_) / slots);
  }
}

bool ToolCostModel::learned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !startups_.runs.empty();
}

absl::Duration ToolCostModel::Timeout(size_t slots,
                                      absl::Duration ceiling) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (startups_.runs.empty()) return ceiling;
  // A run big enough for its slots to show, before one was timed: a tool
  // that takes 400 us a tuple ran its first batch's modules for seconds, and
  // was killed as hung at four times its start-up.
  if (per_slot_.runs.empty() && slots >= kPerSlotFrom) return ceiling;
  const double expected =
      startups_.NinthDecile() + per_slot_.NinthDecile() * slots;
  return std::min(ceiling, absl::Seconds(kTimeoutMargin * expected) + floor_);
}

size_t ToolCostModel::SlotsForStartupShare(double share) const {
  constexpr size_t kUnbounded = size_t{1} << 40;
  std::lock_guard<std::mutex> lock(mu_);
  if (startups_.runs.empty() || per_slot_.runs.empty()) return 0;
  // The slots' time that makes the start-up `share` of a run.
  const double slots_time = startups_.NinthDecile() * (1 - share) / share;
  if (slots_time <= 0) return 0;
  const double per_slot = per_slot_.NinthDecile();
  if (slots_time >= per_slot * kUnbounded) return kUnbounded;
  return static_cast<size_t>(std::ceil(slots_time / per_slot));
}

}  // namespace ptxdiff
