#include "campaign/tuple_queue.h"

#include <algorithm>
#include <thread>

#include "gtest/gtest.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

Tuple T(uint64_t a) { return {*ParseVariant("add.s32"), {{a, 1, 0, 0}}}; }

TEST(TupleQueueTest, ATupleAdmittedOnceIsNotAdmittedAgain) {
  TupleQueue q;
  EXPECT_EQ(q.Offer(T(1), Lane::kRoutine), Admission::kQueued);
  EXPECT_EQ(q.Offer(T(1), Lane::kNovel), Admission::kDuplicate);
  EXPECT_EQ(q.TakeBatch(10, 1, absl::ZeroDuration()).size(), 1u);
  // Still a duplicate after it was sent.
  EXPECT_EQ(q.Offer(T(1), Lane::kRoutine), Admission::kDuplicate);
  EXPECT_EQ(q.counts().duplicates, 2);
}

// A tuple a batch left unrun goes back past the dedup and the lane's
// capacity, and is taken before the routine and systematic lanes.
TEST(TupleQueueTest, ARequeuedTupleIsTakenFirstThoughSeen) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 1});
  EXPECT_EQ(q.Offer(T(1), Lane::kNovel), Admission::kQueued);
  EXPECT_EQ(q.TakeBatch(10, 1, absl::ZeroDuration()).size(), 1u);
  EXPECT_EQ(q.Offer(T(2), Lane::kRoutine), Admission::kQueued);
  const std::vector<Tuple> unrun = {T(1), T(3)};
  q.Requeue(unrun);
  const std::vector<Tuple> next = q.TakeBatch(2, 1, absl::ZeroDuration());
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0], T(1));
  EXPECT_EQ(next[1], T(3));
  EXPECT_EQ(q.counts().requeued, 2);
  q.Close();
  q.Requeue(unrun);  // closed: dropped
  EXPECT_EQ(q.TakeBatch(10, 1, absl::ZeroDuration()).size(), 1u);  // T(2)
}

// Producers on several threads offering the same tuples: each is queued
// once, whoever wins (the dedup takes no lock).
TEST(TupleQueueTest, ConcurrentOffersOfOneTupleQueueItOnce) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 1 << 20});
  constexpr uint64_t kTuples = 20000;
  std::vector<std::thread> producers;
  for (int p = 0; p < 4; ++p) {
    producers.emplace_back([&] {
      for (uint64_t a = 0; a < kTuples; ++a) q.Offer(T(a), Lane::kRoutine);
    });
  }
  for (std::thread& t : producers) t.join();
  EXPECT_EQ(q.counts().queued, static_cast<int64_t>(kTuples));
  EXPECT_EQ(q.counts().duplicates, static_cast<int64_t>(3 * kTuples));
  std::vector<Tuple> all = q.TakeBatch(2 * kTuples, 1, absl::ZeroDuration());
  std::sort(all.begin(), all.end(), [](const Tuple& x, const Tuple& y) {
    return x.operands.v[0] < y.operands.v[0];
  });
  ASSERT_EQ(all.size(), kTuples);
  for (uint64_t a = 0; a < kTuples; ++a)
    EXPECT_EQ(all[a].operands.v[0], a) << a;
}

// The campaign's two producers on a dedup table of one bucket, so that
// every insert past the fourth evicts: the fuzz loop's Offer, and the
// systematic source's PutMany on another thread. (An eviction whose way was
// a negative int's remainder wrote before the table: the SEGV in
// SeenFilter::Insert under PutMany that one smoke run in three hit.)
TEST(TupleQueueTest, OfferAndPutManyOnAnOverflowingDedupTable) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 1 << 20,
                                   .seen_slots = SeenFilter::kWays});
  constexpr uint64_t kEach = 20000;
  std::thread systematic([&] {
    std::vector<Tuple> run;
    for (uint64_t a = 0; a < kEach; a += 8) {
      run.clear();
      for (uint64_t i = a; i < a + 8; ++i) run.push_back(T(i));
      ASSERT_TRUE(q.PutMany(run, Lane::kSystematic));
    }
  });
  for (uint64_t a = kEach; a < 2 * kEach; ++a) q.Offer(T(a), Lane::kRoutine);
  systematic.join();
  // Distinct tuples: each new to a table that remembers four.
  EXPECT_EQ(q.counts().queued, static_cast<int64_t>(2 * kEach));
  EXPECT_EQ(q.counts().duplicates, 0);
}

TEST(TupleQueueTest, AFullLaneDropsWithoutBlockingAndFavoursNovelTuples) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 2});
  EXPECT_EQ(q.Offer(T(1), Lane::kRoutine), Admission::kQueued);
  EXPECT_EQ(q.Offer(T(2), Lane::kRoutine), Admission::kQueued);
  EXPECT_EQ(q.Offer(T(3), Lane::kRoutine), Admission::kDropped);
  // Backpressure on repeats does not stop new classes.
  EXPECT_EQ(q.Offer(T(4), Lane::kNovel), Admission::kQueued);
  const std::vector<Tuple> batch = q.TakeBatch(2, 1, absl::ZeroDuration());
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0], T(4));  // novel first
  EXPECT_EQ(batch[1], T(1));
  EXPECT_EQ(q.counts().dropped, 1);
  // A dropped tuple was never admitted: it may come again.
  EXPECT_EQ(q.Offer(T(3), Lane::kRoutine), Admission::kQueued);
}

TEST(TupleQueueTest, PutManyAsksOnlyAboutNewTuplesAndForgetsTheTurnedAway) {
  TupleQueue q;
  ASSERT_EQ(q.Offer(T(1), Lane::kRoutine), Admission::kQueued);
  const std::vector<Tuple> run = {T(1), T(2), T(3)};
  std::vector<size_t> asked;
  ASSERT_TRUE(q.PutMany(run, Lane::kSystematic, [&](size_t i) {
    asked.push_back(i);
    return i != 2;  // T(3) turned away
  }));
  EXPECT_EQ(asked, (std::vector<size_t>{1, 2}));  // T(1) was a duplicate
  EXPECT_EQ(q.counts().queued, 2);
  EXPECT_EQ(q.counts().duplicates, 1);
  // Turned away is not seen: it may be queued later.
  EXPECT_EQ(q.Offer(T(3), Lane::kRoutine), Admission::kQueued);
}

// Ten novel and ten systematic tuples queued, a batch of 8 taken: how many
// of it are systematic.
int SystematicInABatchOfEight(TupleQueue& q) {
  for (uint64_t i = 0; i < 10; ++i) q.Offer(T(i), Lane::kNovel);
  for (uint64_t i = 100; i < 110; ++i) q.Offer(T(i), Lane::kSystematic);
  const std::vector<Tuple> batch = q.TakeBatch(8, 8, absl::ZeroDuration());
  EXPECT_EQ(batch.size(), 8u);
  int systematic = 0;
  for (const Tuple& t : batch) systematic += t.operands.v[0] >= 100;
  return systematic;
}

TEST(TupleQueueTest, TheSystematicLaneGetsHalfOfEachBatch) {
  TupleQueue q;
  EXPECT_EQ(SystematicInABatchOfEight(q), 4);
}

// With the compiled lane, the systematic lane's runtime forms pay for many
// checks each: it gets three quarters of each batch.
TEST(TupleQueueTest, WithTheCompiledLaneTheSystematicLaneGetsThreeQuarters) {
  TupleQueue q;
  q.SetCompiledLane(/*capacity=*/4, /*per_batch=*/0);
  EXPECT_EQ(SystematicInABatchOfEight(q), 6);
}

TEST(TupleQueueTest, TheSystematicShareMayBeSetAsTheCampaignGoes) {
  TupleQueue q;
  q.SetCompiledLane(/*capacity=*/4, /*per_batch=*/0);
  q.SetSystematicShare(0.9);
  EXPECT_EQ(SystematicInABatchOfEight(q), 7);
}

TEST(TupleQueueTest, IdleOnlyWhenEveryTakenBatchIsDone) {
  TupleQueue q;
  q.Offer(T(1), Lane::kNovel);
  EXPECT_FALSE(q.Idle());
  const auto batch = q.TakeBatch(10, 1, absl::ZeroDuration());
  EXPECT_FALSE(q.Idle());  // taken, not judged yet
  q.Done(batch.size());
  EXPECT_TRUE(q.Idle());
}

TEST(TupleQueueTest, PutBlocksOnAFullLaneUntilTakenOrClosed) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 1});
  EXPECT_EQ(q.Put(T(1), Lane::kSystematic), Admission::kQueued);
  std::thread producer(
      [&] { EXPECT_EQ(q.Put(T(2), Lane::kSystematic), Admission::kQueued); });
  EXPECT_EQ(q.TakeBatch(1, 1, absl::Seconds(5)).size(), 1u);
  producer.join();
  std::thread blocked(
      [&] { EXPECT_EQ(q.Put(T(3), Lane::kSystematic), Admission::kClosed); });
  q.Close();
  blocked.join();
  // Closing drains: what was queued can still be taken.
  EXPECT_EQ(q.TakeBatch(10, 1, absl::ZeroDuration()).size(), 1u);
  EXPECT_EQ(q.Offer(T(9), Lane::kNovel), Admission::kClosed);
}

// The campaign finishes a batch taken before Stop closed the queue (its
// repeats are counted) and drops one taken after: TakeBatch says which.
TEST(TupleQueueTest, ATakerIsToldWhetherTheQueueWasClosedWhenItTook) {
  TupleQueue q;
  q.Offer(T(1), Lane::kNovel);
  q.Offer(T(2), Lane::kNovel);
  bool after_close = true;
  EXPECT_EQ(q.TakeBatch(1, 1, absl::ZeroDuration(), 0, &after_close).size(),
            1u);
  EXPECT_FALSE(after_close);
  q.Close();
  EXPECT_EQ(q.TakeBatch(1, 1, absl::ZeroDuration(), 0, &after_close).size(),
            1u);
  EXPECT_TRUE(after_close);
}

TEST(TupleQueueTest, AWaitingTakerWakesWhenItsMinimumIsQueued) {
  TupleQueue q;
  // No deadline to speak of: only the producers' notification ends the wait.
  std::vector<Tuple> batch;
  std::thread taker([&] { batch = q.TakeBatch(8, 3, absl::Hours(1)); });
  std::thread offerer([&] {
    for (uint64_t a = 1; a <= 2; ++a) q.Offer(T(a), Lane::kRoutine);
    const std::vector<Tuple> more = {T(3), T(4)};
    q.PutMany(more, Lane::kSystematic, [](size_t) { return true; });
  });
  offerer.join();
  taker.join();
  EXPECT_EQ(batch.size(), 4u);
}

}  // namespace
}  // namespace ptxdiff

namespace ptxdiff {
namespace {

// The compiled lane: up to compiled_per_batch of its tuples go with a batch
// besides its `max` others, it has a capacity of its own, and it says when
// it has room; a queue that never set it up takes none of it.
TEST(TupleQueueTest, TheCompiledLaneGoesBesideABatch) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 8});
  EXPECT_EQ(q.Offer(T(100), Lane::kCompiled), Admission::kDropped);
  q.SetCompiledLane(/*capacity=*/4, /*per_batch=*/3);
  for (uint64_t a = 0; a < 4; ++a) {
    EXPECT_TRUE(q.CompiledHasRoom());
    EXPECT_EQ(q.Offer(T(a), Lane::kCompiled), Admission::kQueued);
  }
  EXPECT_FALSE(q.CompiledHasRoom());
  EXPECT_EQ(q.Offer(T(4), Lane::kCompiled), Admission::kDropped);
  EXPECT_EQ(q.Offer(T(10), Lane::kRoutine), Admission::kQueued);
  EXPECT_EQ(q.Offer(T(11), Lane::kNovel), Admission::kQueued);
  const std::vector<Tuple> batch = q.TakeBatch(2, 1, absl::ZeroDuration());
  ASSERT_EQ(batch.size(), 5u);
  EXPECT_EQ(batch[0], T(11));
  EXPECT_EQ(batch[1], T(10));
  EXPECT_EQ(batch[2], T(0));
  EXPECT_EQ(batch[4], T(2));
  EXPECT_TRUE(q.CompiledHasRoom());
  // The compiled lane is fed by an endless source: the queue is idle
  // without it being empty.
  q.Done(batch.size());
  EXPECT_TRUE(q.Idle());
  EXPECT_EQ(q.TakeBatch(2, 1, absl::ZeroDuration()).size(), 1u);  // T(3)
}

}  // namespace
}  // namespace ptxdiff

#include "campaign/batch_pacer.h"

namespace ptxdiff {
namespace {

TEST(BatchPacerTest, SlowBatchesShrinkAndQuickOnesGrowWithinBounds) {
  BatchPacer pacer(4096, absl::Seconds(1));
  EXPECT_EQ(pacer.size(), 4096u);
  pacer.Took(absl::Seconds(1));  // on target: kept
  EXPECT_EQ(pacer.size(), 4096u);
  pacer.Took(absl::Seconds(10));
  EXPECT_EQ(pacer.size(), 2048u);
  for (int i = 0; i < 20; ++i) pacer.Took(absl::Seconds(10));
  EXPECT_EQ(pacer.size(), 64u);  // a 64th of the batch at least
  pacer.Took(absl::Milliseconds(100));
  EXPECT_EQ(pacer.size(), 128u);
  for (int i = 0; i < 20; ++i) pacer.Took(absl::Milliseconds(100));
  EXPECT_EQ(pacer.size(), 4096u);  // never past the backend's batch
}

// With a compiled lane per sender, a sender takes only its own (the code
// its worker keeps) besides the shared lanes, and each lane says when it
// has room.
TEST(TupleQueueTest, EachSenderTakesItsOwnCompiledLane) {
  TupleQueue q(TupleQueue::Options{.lane_capacity = 8});
  q.SetCompiledLane(/*capacity=*/2, /*per_batch=*/4, /*senders=*/2);
  EXPECT_EQ(q.Offer(T(0), Lane::kCompiled, /*sender=*/1), Admission::kQueued);
  EXPECT_EQ(q.Offer(T(1), Lane::kCompiled, 1), Admission::kQueued);
  EXPECT_FALSE(q.CompiledHasRoom(1));
  EXPECT_TRUE(q.CompiledHasRoom(0));
  EXPECT_EQ(q.Offer(T(2), Lane::kCompiled, 1), Admission::kDropped);
  EXPECT_EQ(q.Offer(T(3), Lane::kCompiled, 0), Admission::kQueued);
  EXPECT_EQ(q.Offer(T(10), Lane::kNovel), Admission::kQueued);
  const std::vector<Tuple> first = q.TakeBatch(4, 1, absl::ZeroDuration(), 0);
  EXPECT_EQ(first, (std::vector<Tuple>{T(10), T(3)}));
  const std::vector<Tuple> second = q.TakeBatch(4, 1, absl::ZeroDuration(), 1);
  EXPECT_EQ(second, (std::vector<Tuple>{T(0), T(1)}));
  EXPECT_TRUE(q.CompiledHasRoom(1));
}

}  // namespace
}  // namespace ptxdiff
