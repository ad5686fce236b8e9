// How the ptxas backend paces a variant whose tuples crash or hang ptxas
// (the twenty-first fault run: a ptxas that died on every module holding
// `add.sat` was started for each of its tuples, each batch halved down to
// single tuples, and the campaign checked little else). A tuple that crashes or
// hangs ptxas alone is a fault, its finding; its variant is a suspect from
// then on: its tuples are compiled apart from the others, in small modules
// (kSuspectTuplesPerModule), so that the clean variants keep their big
// ones; and once it has faulted kFaultsPerSuspectInBatch times in a batch,
// the rest of its tuples there are left unrun (the campaign sends them
// again a few times, then declines them).

#ifndef PTXDIFF_BACKENDS_PTXAS_PTXAS_FAULTS_H_
#define PTXDIFF_BACKENDS_PTXAS_PTXAS_FAULTS_H_

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "isa/variant.h"

namespace ptxdiff {

inline constexpr int kSuspectTuplesPerModule = 4;
inline constexpr int kFaultsPerSuspectInBatch = 3;

// Thread-safe: a batch's chunks compile on several threads.
class PtxasSuspects {
 public:
  bool IsSuspect(const Variant& v) const {
    if (!any_) return false;  // asked of every tuple a batch compiles
    std::lock_guard<std::mutex> lock(mu_);
    return suspects_.contains(v);
  }
  // A new batch: its faults are counted afresh.
  void StartBatch() {
    std::lock_guard<std::mutex> lock(mu_);
    in_batch_.clear();
  }
  // A tuple of `v` crashed or hung ptxas alone.
  void Faulted(const Variant& v) {
    std::lock_guard<std::mutex> lock(mu_);
    suspects_.insert(v);
    ++in_batch_[v];
    any_ = true;
  }
  // Why the rest of `v`'s tuples in this batch are not compiled, if it has
  // faulted enough in it.
  std::optional<std::string> EnoughInBatch(const Variant& v) const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_set<Variant> suspects_;
  absl::flat_hash_map<Variant, int> in_batch_;  // faults in this batch
  std::atomic<bool> any_{false};
};

}  // namespace ptxdiff

#endif  // PTXDIFF_BACKENDS_PTXAS_PTXAS_FAULTS_H_
