// The campaign's queue between the tuple producers (the fuzz loop, the
// systematic source) and the senders that ship batches to the backend.
//
// It never makes the fuzz loop wait: Offer() admits or drops at once. It is
// bounded: each lane holds at most `lane_capacity` tuples. It deduplicates:
// a tuple admitted once on this run is not admitted again, as long as the
// dedup table (`seen_slots` slots, seen_filter.h) still remembers it; the
// dedup runs before the lock is taken. Under backpressure it favours what
// is new: batches are taken from the novel lane first (tuples of a variant
// or semantic class not sent before), then the systematic lane (at least
// half a batch when it has tuples, so the planned search always advances),
// then the routine lane (repeats), which is what a full queue drops. The
// compiled lane is apart: tuples a backend runs on code it compiled before
// (a runtime form whose kernel it keeps), each costing a run, not a
// compile; a batch takes up to `compiled_per_batch` of them besides its
// `max` others. The compiled lane is one per sender: a tuple there runs on
// code one worker keeps, and would be compiled again by another.

#ifndef PTXDIFF_CAMPAIGN_TUPLE_QUEUE_H_
#define PTXDIFF_CAMPAIGN_TUPLE_QUEUE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/time/time.h"
#include "campaign/seen_filter.h"
#include "isa/tuple.h"

namespace ptxdiff {

enum class Lane : uint8_t {
  kNovel,       // a variant or semantic class this run has not sent yet
  kSystematic,  // the planned edge and boundary combinations
  kRoutine,     // everything else from the fuzz loop: first to be dropped
  kCompiled,    // runtime forms whose code the backend compiled: cheap
};
inline constexpr int kNumLanes = 4;

// The share of a batch the systematic lane gets with the compiled lane: its
// runtime forms each pay for thousands of checks on kept code, a fuzz
// input's folding check for one.
inline constexpr double kSystematicShareWithCompiledLane = 0.75;

enum class Admission : uint8_t { kQueued, kDuplicate, kDropped, kClosed };

struct QueueCounts {
  int64_t queued = 0, duplicates = 0, dropped = 0, taken = 0;
  int64_t requeued = 0;  // Requeue
};

class TupleQueue {
 public:
  struct Options {
    size_t lane_capacity = size_t{1} << 16;
    size_t seen_slots = size_t{1} << 22;  // the dedup table: 32 MB
    // The compiled lane's capacity, and how many of its tuples a batch
    // takes besides the others (0: none, the lane unused).
    size_t compiled_capacity = 0;
    size_t compiled_per_batch = 0;
    // The share of a batch kept for the systematic lane when it has that
    // many tuples (the novel lane, taken first, gets the rest).
    double systematic_share = 0.5;
  };
  explicit TupleQueue(Options options)
      : options_(options), seen_(options_.seen_slots) {}

  // Before the producers start: the lane capacity once the batch size is known.
  void SetLaneCapacity(size_t n) { options_.lane_capacity = n; }
  // `senders` compiled lanes of `capacity` each, one per sender; the
  // systematic lane's share of a batch becomes
  // kSystematicShareWithCompiledLane.
  void SetCompiledLane(size_t capacity, size_t per_batch, int senders = 1);
  // The share of each batch kept for the systematic lane from now on.
  void SetSystematicShare(double share);
  TupleQueue() : TupleQueue(Options{}) {}

  // Never blocks: a duplicate or a tuple for a full lane is not admitted.
  // `sender` picks the compiled lane (the sender whose worker keeps the
  // code); the other lanes are shared.
  Admission Offer(const Tuple& t, Lane lane, int sender = 0);

  // Blocks while `lane` is full (for producers that may wait, like the
  // systematic source); kClosed once Close() was called.
  Admission Put(const Tuple& t, Lane lane);
  // Put for a run of tuples under one lock (blocking while the lane is full);
  // false once closed. `admit(i)` is asked, under the lock, about each
  // tuples[i] that is not a duplicate, and may turn it away (it then stays
  // unseen): so a caller's share rule counts only what is queued.
  bool PutMany(std::span<const Tuple> tuples, Lane lane,
               absl::FunctionRef<bool(size_t i)> admit, int sender = 0);
  bool PutMany(std::span<const Tuple> tuples, Lane lane) {
    return PutMany(tuples, lane, [](size_t) { return true; });
  }

  // Waits until at least `min` tuples are queued (or `wait` passes, or the
  // queue is closed), then takes up to `max`: novel first, then systematic
  // (at least systematic_share of `max` when there are that many), then
  // routine; and
  // besides those up to `compiled_per_batch` of `sender`'s compiled lane.
  // Empty only when the wait ran out with nothing queued, or closed and
  // drained. `after_close`, if given, says whether the queue was closed
  // when the batch was taken (a batch taken before is in flight).
  std::vector<Tuple> TakeBatch(size_t max, size_t min, absl::Duration wait,
                               int sender = 0, bool* after_close = nullptr);

  // Wakes every waiter; Offer and Put then return kClosed, TakeBatch drains
  // what is left.
  void Close();
  bool closed() const;

  // Puts back tuples a batch left unrun (a backend's time budget ran out
  // before it got to them): into the novel lane, taken first, past the dedup
  // and the lane's capacity (they were admitted once already). Never blocks.
  void Requeue(std::span<const Tuple> tuples);

  // Adds tuples sent some other way (the campaign's calibration) to the
  // dedup window, so that they are not sent again.
  void MarkSent(std::span<const Tuple> tuples);

  // Senders call Done with a batch's size once it is judged.
  void Done(size_t n);
  // True when the novel and routine lanes are empty and every batch taken
  // is done (the systematic and compiled lanes, fed by endless sources,
  // may still hold tuples).
  bool Idle() const;

  size_t size() const;
  QueueCounts counts() const;

  // True while the routine lane is full: the producers are faster than the
  // backend, and more repeats would only be dropped. Lock-free.
  bool Saturated() const { return saturated_.load(std::memory_order_relaxed); }
  // True while `sender`'s compiled lane can take more. Lock-free.
  bool CompiledHasRoom(int sender = 0) const {
    return !compiled_full_[LaneOf(sender)].load(std::memory_order_relaxed);
  }

 private:
  size_t SizeLocked() const;
  // What `sender` may take: the shared lanes and its compiled lane.
  size_t SizeForLocked(int sender) const;
  // The deque of `lane` (for kCompiled, `sender`'s).
  std::deque<Tuple>& Queue(Lane lane, int sender) {
    return lane == Lane::kCompiled ? compiled_[LaneOf(sender)]
                                   : lanes_[static_cast<int>(lane)];
  }
  // `sender`'s compiled lane: senders past those SetCompiledLane was told
  // of (or all, where it was not called) share the first.
  size_t LaneOf(int sender) const {
    return static_cast<size_t>(sender) < compiled_.size() ? sender : 0;
  }
  size_t CapacityOf(Lane lane) const {
    return lane == Lane::kCompiled ? options_.compiled_capacity
                                   : options_.lane_capacity;
  }
  // Sets compiled_full_ from the compiled lanes' sizes (mu_ held).
  void UpdateCompiledFullLocked();
  void TakeFrom(std::deque<Tuple>& q, size_t n, std::vector<Tuple>& out);
  // Adds the tuple to the dedup table; false (and counted) if it was there.
  bool Admit(uint64_t fingerprint);
  static uint64_t Fingerprint(const Tuple& t) { return absl::Hash<Tuple>{}(t); }
  // Wakes a taker once the queue holds what it waits for: a notify per
  // offered tuple would wake a sleeping sender thousands of times a batch.
  void NotifyTakerLocked();

  Options options_;
  mutable std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Tuple> lanes_[kNumLanes];  // but kCompiled's: compiled_
  // One per sender; sized (SetCompiledLane) before the producers and senders
  // start, so CompiledHasRoom may read its size without the lock.
  std::vector<std::deque<Tuple>> compiled_{1};
  SeenFilter seen_;
  QueueCounts counts_;  // but `duplicates`, counted without the lock:
  std::atomic<int64_t> duplicates_{0};
  size_t outstanding_ = 0;  // taken, not yet Done
  // Takers in TakeBatch, and the `min` the last one asked for (the senders
  // all ask alike).
  size_t takers_waiting_ = 0, taker_wants_ = 1;
  bool closed_ = false;
  std::atomic<bool> saturated_{false};
  // One per compiled lane (an array: atomics do not move).
  std::unique_ptr<std::atomic<bool>[]> compiled_full_ =
      std::make_unique<std::atomic<bool>[]>(1);
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_TUPLE_QUEUE_H_
