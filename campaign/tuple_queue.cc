#include "campaign/tuple_queue.h"

#include <algorithm>

namespace ptxdiff {

Admission TupleQueue::Offer(const Tuple& t, Lane lane) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return Admission::kClosed;
  std::deque<Tuple>& q = lanes_[static_cast<int>(lane)];
  if (q.size() >= options_.lane_capacity) {
    ++counts_.dropped;
    if (lane == Lane::kRoutine) saturated_.store(true, std::memory_order_relaxed);
    return Admission::kDropped;
  }
  if (!AdmitLocked(t)) return Admission::kDuplicate;
  q.push_back(t);
  ++counts_.queued;
  NotifyTakerLocked();
  return Admission::kQueued;
}

bool TupleQueue::AdmitLocked(const Tuple& t) {
  const uint64_t fingerprint = absl::Hash<Tuple>{}(t);
  if (SeenLocked(fingerprint)) return false;
  MarkSeenLocked(fingerprint);
  return true;
}

bool TupleQueue::SeenLocked(uint64_t fingerprint) {
  if (!seen_.contains(fingerprint)) return false;
  ++counts_.duplicates;
  return true;
}

void TupleQueue::MarkSeenLocked(uint64_t fingerprint) {
  // The window forgets everything at once when full: cheaper than an LRU,
  // and a repeat after millions of tuples costs one more evaluation only.
  if (seen_.size() >= window_) {
    window_ = options_.seen_capacity;
    seen_.clear();
    // clear() frees a big table: sized again, so that the window never
    // rehashes on the producers' path (a 4M-tuple rehash takes ~100 ms).
    seen_.reserve(window_);
  }
  seen_.insert(fingerprint);
}

bool TupleQueue::PutMany(std::span<const Tuple> tuples, Lane lane,
                         absl::FunctionRef<bool(size_t i)> admit) {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Tuple>& q = lanes_[static_cast<int>(lane)];
  not_full_.wait(lock, [&] { return closed_ || q.size() < options_.lane_capacity; });
  if (closed_) return false;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const uint64_t fingerprint = absl::Hash<Tuple>{}(tuples[i]);
    if (SeenLocked(fingerprint) || !admit(i)) continue;
    MarkSeenLocked(fingerprint);
    q.push_back(tuples[i]);
    ++counts_.queued;
  }
  NotifyTakerLocked();
  return true;
}

Admission TupleQueue::Put(const Tuple& t, Lane lane) {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Tuple>& q = lanes_[static_cast<int>(lane)];
  not_full_.wait(lock, [&] { return closed_ || q.size() < options_.lane_capacity; });
  if (closed_) return Admission::kClosed;
  if (!AdmitLocked(t)) return Admission::kDuplicate;
  q.push_back(t);
  ++counts_.queued;
  NotifyTakerLocked();
  return Admission::kQueued;
}

void TupleQueue::TakeFrom(Lane lane, size_t n, std::vector<Tuple>& out) {
  std::deque<Tuple>& q = lanes_[static_cast<int>(lane)];
  n = std::min(n, q.size());
  out.insert(out.end(), q.begin(), q.begin() + n);
  q.erase(q.begin(), q.begin() + n);
}

std::vector<Tuple> TupleQueue::TakeBatch(size_t max, size_t min, absl::Duration wait) {
  std::unique_lock<std::mutex> lock(mu_);
  min = std::max<size_t>(1, std::min(min, max));
  ++takers_waiting_;
  taker_wants_ = min;
  not_empty_.wait_for(lock, absl::ToChronoNanoseconds(wait),
                      [&] { return closed_ || SizeLocked() >= min; });
  --takers_waiting_;
  std::vector<Tuple> out;
  out.reserve(std::min(max, SizeLocked()));
  const size_t systematic = lanes_[static_cast<int>(Lane::kSystematic)].size();
  const size_t reserved = std::min(systematic, max / 2);
  TakeFrom(Lane::kNovel, max - reserved, out);
  TakeFrom(Lane::kSystematic, max - out.size(), out);
  TakeFrom(Lane::kRoutine, max - out.size(), out);
  counts_.taken += out.size();
  if (lanes_[static_cast<int>(Lane::kRoutine)].size() < options_.lane_capacity) {
    saturated_.store(false, std::memory_order_relaxed);
  }
  outstanding_ += out.size();
  if (!out.empty()) not_full_.notify_all();
  return out;
}

void TupleQueue::NotifyTakerLocked() {
  if (takers_waiting_ > 0 && SizeLocked() >= taker_wants_) not_empty_.notify_one();
}

void TupleQueue::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  not_empty_.notify_all();
  not_full_.notify_all();
}

bool TupleQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

size_t TupleQueue::SizeLocked() const {
  return lanes_[0].size() + lanes_[1].size() + lanes_[2].size();
}

void TupleQueue::MarkSent(std::span<const Tuple> tuples) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Tuple& t : tuples) AdmitLocked(t);
}

void TupleQueue::Done(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  outstanding_ -= std::min(n, outstanding_);
}

bool TupleQueue::Idle() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outstanding_ == 0 && lanes_[static_cast<int>(Lane::kNovel)].empty() &&
         lanes_[static_cast<int>(Lane::kRoutine)].empty();
}

size_t TupleQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return SizeLocked();
}

QueueCounts TupleQueue::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace ptxdiff
