// How the ptxas backend paces a variant whose tuples crash or hang ptxas,
// and keeps each batch within its time budget.
//
// A tuple that crashes or hangs ptxas alone is a fault, its finding (the
// twenty-first fault run: a ptxas that died on every module holding
// `add.sat` was started for each of its tuples, and the campaign checked
// little else). Its variant is then compiled apart from the others, in
// modules of its own (ApartModule), so that the clean variants keep their
// big ones; once it has faulted kFaultsPerSuspectInBatch times in a batch,
// the rest of its tuples there are left unrun (the campaign sends them again
// a few times, then declines them).
//
// A module of several variants that hangs ptxas is compiled again a variant
// to a module, at once, and one that the batch's budget cut is, in the next
// batch: a hang is found by the variant, not by halves, each of which would
// cost a timeout (the twenty-second run). A module of one variant that hangs
// makes that variant's modules one tuple each, so that every hang isolates a
// tuple.

#ifndef PTXDIFF_BACKENDS_PTXAS_PTXAS_FAULTS_H_
#define PTXDIFF_BACKENDS_PTXAS_PTXAS_FAULTS_H_

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "backends/ptxas/chunk_plan.h"
#include "isa/variant.h"

namespace ptxdiff {

// A variant's modules after one of its tuples crashed ptxas alone.
inline constexpr int kSuspectTuplesPerModule = 4;
// ... grow back after each clean compile, up to these (after a hang: each
// hang costs a timeout at every halving).
inline constexpr int kMaxSuspectTuplesPerModule = 256;
inline constexpr int kMaxSuspectTuplesAfterAHang = 16;
inline constexpr int kFaultsPerSuspectInBatch = 3;

// The floor of a compile's adaptive timeout (ToolCostModel): a one-tuple
// module's compile takes tens of milliseconds, so a loaded machine does not
// make one a hang.
inline constexpr absl::Duration kPtxasHangFloor = absl::Seconds(1);
// A tuple alone past the adaptive timeout is run again with at least this
// long (at most half the batch's budget) before it is said to hang: a ptxas
// only slow on it (the twenty-third fault run: 5 s on `add.sat`) was filed
// as hanging. Once one of a variant's tuples hung past it, the others are
// not run again.
inline constexpr absl::Duration kPtxasHangConfirm = absl::Seconds(10);

// How a variant's tuples are compiled while it is apart.
struct ApartModule {
  int tuples = kSuspectTuplesPerModule;  // at most, in one module
  bool faulted = false;  // a tuple of it crashed or hung ptxas alone
  bool hung = false;     // a module of it alone hung
  // A tuple of it alone ran past kPtxasHangConfirm too: its tuples that
  // pass the adaptive timeout hang, without a second run each.
  bool hang_confirmed = false;
  // A tuple of it alone passed the adaptive timeout and compiled within
  // kPtxasHangConfirm: ptxas is slow on it, not hung. Its tuples go in one
  // module of their own, compiled with that longer timeout.
  bool slow = false;
  // Its modules that hung or ran out of a batch's budget: compiled after
  // the others' in a batch, so that a variant that stalls ptxas does not
  // keep the budget from those that do not.
  int stalls = 0;
};

// Thread-safe: a batch's chunks compile on several threads.
class PtxasSuspects {
 public:
  // How `v`'s tuples are compiled, if apart from the others.
  std::optional<ApartModule> Apart(const Variant& v) const;
  // A new batch: its faults are counted afresh.
  void StartBatch();
  // A tuple of `v` crashed or hung ptxas alone (a hang past
  // kPtxasHangConfirm, or the adaptive timeout once one was).
  void Faulted(const Variant& v, bool hang);
  // Whether a tuple of `v` alone hung past kPtxasHangConfirm.
  bool HangConfirmed(const Variant& v) const;
  // A tuple of `v` alone passed the adaptive timeout, and compiled within
  // kPtxasHangConfirm (ApartModule::slow).
  void Slow(const Variant& v);
  bool IsSlow(const Variant& v) const;
  // A module of `v`'s tuples alone hung.
  void HungAlone(const Variant& v);
  // A module holding `tuples` of `v`'s tuples, with other variants', hung
  // or ran out of the batch's budget: `v` is compiled apart, in modules of
  // that size; or `v`'s own module ran out of it: in halves.
  void Cut(const Variant& v, int tuples, bool alone);
  // A module of `v`'s tuples alone compiled: its modules grow back, and a
  // variant none of whose tuples failed alone shares again (its module's
  // hang was a slow compile, or another variant's).
  void CompiledClean(const Variant& v);
  // Why the rest of `v`'s tuples in this batch are not compiled, if it has
  // faulted enough in it.
  std::optional<std::string> EnoughInBatch(const Variant& v) const;

 private:
  mutable std::mutex mu_;
  absl::flat_hash_map<Variant, ApartModule> apart_;
  absl::flat_hash_map<Variant, int> in_batch_;  // faults in this batch
  std::atomic<bool> any_{false};
};

// The chunk's tuples, a chunk per variant, each kernel split where the
// variant changes: a module that hung, compiled again a variant at a time.
std::vector<Chunk> ByVariant(const Chunk& chunk,
                             absl::FunctionRef<const Variant&(int)> variant_of);

}  // namespace ptxdiff

#endif  // PTXDIFF_BACKENDS_PTXAS_PTXAS_FAULTS_H_
