#include "common/progress.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/time/clock.h"

namespace ptxdiff {
namespace {

struct Listener {
  std::function<void()> say;
  absl::Duration every;
  absl::Time last_said = absl::InfinitePast();
};

// The listener's fields are read and written under `mu`; `listening` lets
// NoteProgress return without the lock where nobody listens.
std::mutex mu;
Listener* listener = nullptr;
std::atomic<bool> listening{false};

}  // namespace

ScopedProgressListener::ScopedProgressListener(std::function<void()> say,
                                               absl::Duration every) {
  std::lock_guard<std::mutex> lock(mu);
  listener = new Listener{.say = std::move(say), .every = every};
  listening.store(true);
}

ScopedProgressListener::~ScopedProgressListener() {
  std::lock_guard<std::mutex> lock(mu);
  listening.store(false);
  delete listener;
  listener = nullptr;
}

void NoteProgress() {
  if (!listening.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu);
  if (listener == nullptr) return;
  const absl::Time now = absl::Now();
  if (now - listener->last_said < listener->every) return;
  listener->last_said = now;
  listener->say();
}

}  // namespace ptxdiff
