#include "campaign/tuple_queue.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

namespace ptxdiff {

Admission TupleQueue::Offer(const Tuple& t, Lane lane, int sender) {
  const uint64_t fingerprint = Fingerprint(t);
  if (!Admit(fingerprint)) return Admission::kDuplicate;
  std::lock_guard<std::mutex> lock(mu_);
  std::deque<Tuple>& q = Queue(lane, sender);
  if (closed_ || q.size() >= CapacityOf(lane)) {
    // Never queued, so not seen: it may come again.
    seen_.Erase(fingerprint);
    if (closed_) return Admission::kClosed;
    ++counts_.dropped;
    if (lane == Lane::kRoutine)
      saturated_.store(true, std::memory_order_relaxed);
    if (lane == Lane::kCompiled) UpdateCompiledFullLocked();
    return Admission::kDropped;
  }
  q.push_back(t);
  ++counts_.queued;
  if (lane == Lane::kCompiled) UpdateCompiledFullLocked();
  NotifyTakerLocked();
  return Admission::kQueued;
}

bool TupleQueue::Admit(uint64_t fingerprint) {
  if (seen_.Insert(fingerprint)) return true;
  duplicates_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool TupleQueue::PutMany(std::span<const Tuple> tuples, Lane lane,
                         absl::FunctionRef<bool(size_t i)> admit, int sender) {
  // The dedup first, without the lock; every bucket prefetched before the
  // first is looked at (the table is far larger than the cache).
  absl::InlinedVector<uint64_t, 16> fingerprints;
  absl::InlinedVector<size_t, 16> fresh;
  for (const Tuple& t : tuples) {
    fingerprints.push_back(Fingerprint(t));
    seen_.Prefetch(fingerprints.back());
  }
  for (size_t i = 0; i < tuples.size(); ++i) {
    if (Admit(fingerprints[i])) fresh.push_back(i);
  }
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Tuple>& q = Queue(lane, sender);
  not_full_.wait(lock,
                 [&] { return closed_ || q.size() < CapacityOf(lane); });
  for (size_t i : fresh) {
    if (closed_ || !admit(i)) {
      seen_.Erase(fingerprints[i]);
      continue;
    }
    q.push_back(tuples[i]);
    ++counts_.queued;
  }
  if (lane == Lane::kCompiled) UpdateCompiledFullLocked();
  if (closed_) return false;
  NotifyTakerLocked();
  return true;
}

Admission TupleQueue::Put(const Tuple& t, Lane lane) {
  const uint64_t fingerprint = Fingerprint(t);
  if (!Admit(fingerprint)) return Admission::kDuplicate;
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<Tuple>& q = Queue(lane, 0);
  not_full_.wait(lock,
                 [&] { return closed_ || q.size() < CapacityOf(lane); });
  if (closed_) {
    seen_.Erase(fingerprint);
    return Admission::kClosed;
  }
  q.push_back(t);
  ++counts_.queued;
  NotifyTakerLocked();
  return Admission::kQueued;
}

void TupleQueue::TakeFrom(std::deque<Tuple>& q, size_t n,
                          std::vector<Tuple>& out) {
  n = std::min(n, q.size());
  out.insert(out.end(), q.begin(), q.begin() + n);
  q.erase(q.begin(), q.begin() + n);
}

std::vector<Tuple> TupleQueue::TakeBatch(size_t max, size_t min,
                                         absl::Duration wait, int sender,
                                         bool* after_close) {
  std::unique_lock<std::mutex> lock(mu_);
  min = std::max<size_t>(1, std::min(min, max));
  ++takers_waiting_;
  taker_wants_ = min;
  not_empty_.wait_for(lock, absl::ToChronoNanoseconds(wait),
                      [&] { return closed_ || SizeForLocked(sender) >= min; });
  --takers_waiting_;
  if (after_close != nullptr) *after_close = closed_;
  std::vector<Tuple> out;
  out.reserve(
      std::min(max + options_.compiled_per_batch, SizeForLocked(sender)));
  const size_t systematic = lanes_[static_cast<int>(Lane::kSystematic)].size();
  const size_t reserved = std::min(
      systematic, static_cast<size_t>(max * options_.systematic_share));
  TakeFrom(Queue(Lane::kNovel, sender), max - reserved, out);
  TakeFrom(Queue(Lane::kSystematic, sender), max - out.size(), out);
  TakeFrom(Queue(Lane::kRoutine, sender), max - out.size(), out);
  TakeFrom(Queue(Lane::kCompiled, sender), options_.compiled_per_batch, out);
  UpdateCompiledFullLocked();
  counts_.taken += out.size();
  if (lanes_[static_cast<int>(Lane::kRoutine)].size() <
      options_.lane_capacity) {
    saturated_.store(false, std::memory_order_relaxed);
  }
  outstanding_ += out.size();
  if (!out.empty()) not_full_.notify_all();
  return out;
}

void TupleQueue::NotifyTakerLocked() {
  // Every waiter: with a compiled lane per sender, the one woken might not
  // be the one whose lane filled.
  if (takers_waiting_ > 0 && SizeLocked() >= taker_wants_)
    not_empty_.notify_all();
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
  size_t n = lanes_[0].size() + lanes_[1].size() + lanes_[2].size();
  for (const std::deque<Tuple>& q : compiled_) n += q.size();
  return n;
}

size_t TupleQueue::SizeForLocked(int sender) const {
  return lanes_[0].size() + lanes_[1].size() + lanes_[2].size() +
         compiled_[LaneOf(sender)].size();
}

void TupleQueue::SetSystematicShare(double share) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.systematic_share = share;
}

void TupleQueue::SetCompiledLane(size_t capacity, size_t per_batch,
                                 int senders) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.compiled_capacity = capacity;
  options_.compiled_per_batch = per_batch;
  options_.systematic_share = kSystematicShareWithCompiledLane;
  compiled_.resize(std::max(senders, 1));
  compiled_full_ = std::make_unique<std::atomic<bool>[]>(compiled_.size());
  UpdateCompiledFullLocked();
}

void TupleQueue::UpdateCompiledFullLocked() {
  for (size_t s = 0; s < compiled_.size(); ++s) {
    compiled_full_[s].store(
        compiled_[s].size() >= options_.compiled_capacity,
        std::memory_order_relaxed);
  }
}

void TupleQueue::Requeue(std::span<const Tuple> tuples) {
  if (tuples.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  std::deque<Tuple>& q = lanes_[static_cast<int>(Lane::kNovel)];
  q.insert(q.end(), tuples.begin(), tuples.end());
  counts_.requeued += tuples.size();
  NotifyTakerLocked();
}

void TupleQueue::MarkSent(std::span<const Tuple> tuples) {
  for (const Tuple& t : tuples) seen_.Prefetch(Fingerprint(t));
  for (const Tuple& t : tuples) seen_.Insert(Fingerprint(t));
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
  QueueCounts c = counts_;
  c.duplicates = duplicates_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace ptxdiff
