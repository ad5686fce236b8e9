// Which tuples a campaign has already queued: a lossy set of 64-bit
// fingerprints that needs no lock, so that deduplication runs outside the
// queue's mutex (under it, on two cores, the dedup's cache misses were a
// fifth of the campaign process's time and made the fuzz loop, the
// systematic source and the senders wait on each other).
//
// A table of 2^k slots in buckets of four (half a cache line); a
// fingerprint lives in the bucket its high bits pick, in a free slot, or
// else in place of one of the four that its low bits pick. So a repeat is
// recognised until four later tuples of its bucket came and one of them
// took its slot (with 2^22 slots, entries live for millions of inserts): a
// repeat that slips through costs one more evaluation, never a lost tuple.
// The table is zeroed memory from the kernel (common/zeroed_pages.h).

#ifndef PTXDIFF_CAMPAIGN_SEEN_FILTER_H_
#define PTXDIFF_CAMPAIGN_SEEN_FILTER_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>

#include "common/zeroed_pages.h"

namespace ptxdiff {

class SeenFilter {
 public:
  static constexpr int kWays = 4;

  // `slots` is rounded up to a power of two, at least one bucket.
  explicit SeenFilter(size_t slots)
      : shift_(64 - std::countr_zero(
                        std::bit_ceil(std::max<size_t>(kWays, slots) / kWays))),
        slots_(kWays * (size_t{1} << (64 - shift_))) {}

  // True if `fingerprint` was not in the set; either way it is now. Of
  // threads inserting the same fingerprint at once, exactly one gets true.
  bool Insert(uint64_t fingerprint);

  // Starts loading the bucket of `fingerprint`: a caller with many to
  // insert prefetches them all first, so that their cache misses overlap.
  void Prefetch(uint64_t fingerprint) const {
    __builtin_prefetch(Bucket(Key(fingerprint)), /*rw=*/1);
  }

  // Takes back an Insert whose tuple was then turned away, so that it may
  // come again; a no-op if other fingerprints took its slot since.
  void Erase(uint64_t fingerprint);

 private:
  // 0 marks a free slot, so no key is 0.
  static uint64_t Key(uint64_t fingerprint) { return fingerprint | 1; }
  // `way` in [0, kWays).
  uint64_t* Bucket(uint64_t key) const {
    const size_t bucket = shift_ == 64 ? 0 : key >> shift_;
    return &slots_[bucket * kWays];
  }
  std::atomic_ref<uint64_t> Slot(uint64_t key, int way) const {
    return std::atomic_ref<uint64_t>(Bucket(key)[way]);
  }

  int shift_;  // 64 - log2(buckets)
  ZeroedArray<uint64_t> slots_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_CAMPAIGN_SEEN_FILTER_H_
