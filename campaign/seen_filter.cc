#include "campaign/seen_filter.h"

namespace ptxdiff {

bool SeenFilter::Insert(uint64_t fingerprint) {
  const uint64_t key = Key(fingerprint);
  // The whole bucket is looked at before a free slot is claimed (an Erase
  // may have left a hole before the key's slot), and claimed by
  // compare-and-swap: two racing inserts of one key pick the same first
  // free slot, and the loser looks again and finds the key.
  for (int attempt = 0; attempt <= kWays; ++attempt) {
    int free_way = -1;
    for (int way = 0; way < kWays; ++way) {
      const uint64_t seen = Slot(key, way).load(std::memory_order_relaxed);
      if (seen == key) return false;
      if (seen == 0 && free_way < 0) free_way = way;
    }
    if (free_way < 0) break;
    uint64_t expected = 0;
    if (Slot(key, free_way)
            .compare_exchange_strong(expected, key,
                                     std::memory_order_relaxed)) {
      return true;
    }
  }
  // The bucket is full: the key takes the slot its low bits pick. The
  // remainder is taken unsigned: as an int's, a key with bit 32 set picked
  // way -1..-3, a slot of the bucket before (and for bucket 0, memory before
  // the table: the campaign's intermittent SEGV).
  const int victim = static_cast<int>((key >> 1) % kWays);
  return Slot(key, victim).exchange(key, std::memory_order_relaxed) != key;
}

void SeenFilter::Erase(uint64_t fingerprint) {
  const uint64_t key = Key(fingerprint);
  for (int way = 0; way < kWays; ++way) {
    uint64_t expected = key;
    if (Slot(key, way).compare_exchange_strong(expected, 0,
                                               std::memory_order_relaxed))
      return;
  }
}

}  // namespace ptxdiff
