#include "backends/ptxas/ptxas_faults.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "isa/spelling.h"
#include "protocol/protocol.h"

namespace ptxdiff {

std::optional<ApartModule> PtxasSuspects::Apart(const Variant& v) const {
  if (!any_) return std::nullopt;  // asked of every tuple a batch compiles
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = apart_.find(v);
  if (it == apart_.end()) return std::nullopt;
  return it->second;
}

void PtxasSuspects::StartBatch() {
  std::lock_guard<std::mutex> lock(mu_);
  in_batch_.clear();
}

void PtxasSuspects::Faulted(const Variant& v, bool hang) {
  std::lock_guard<std::mutex> lock(mu_);
  ApartModule& apart = apart_[v];
  if (!apart.faulted) apart = ApartModule{.faulted = true};
  apart.hung |= hang;
  apart.hang_confirmed |= hang;
  apart.tuples = hang ? 1 : std::max(1, apart.tuples / 2);
  ++in_batch_[v];
  any_ = true;
}

bool PtxasSuspects::HangConfirmed(const Variant& v) const {
  const std::optional<ApartModule> apart = Apart(v);
  return apart.has_value() && apart->hang_confirmed;
}

void PtxasSuspects::Slow(const Variant& v) {
  std::lock_guard<std::mutex> lock(mu_);
  ApartModule& apart = apart_[v];
  apart.slow = true;
  apart.hung = false;
  apart.tuples = std::numeric_limits<int>::max();
  any_ = true;
}

bool PtxasSuspects::IsSlow(const Variant& v) const {
  const std::optional<ApartModule> apart = Apart(v);
  return apart.has_value() && apart->slow;
}

void PtxasSuspects::HungAlone(const Variant& v) {
  std::lock_guard<std::mutex> lock(mu_);
  ApartModule& apart = apart_[v];
  apart.hung = true;
  apart.tuples = 1;
  ++apart.stalls;
  any_ = true;
}

void PtxasSuspects::Cut(const Variant& v, int tuples, bool alone) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto [it, added] =
      apart_.try_emplace(v, ApartModule{.tuples = std::max(1, tuples)});
  if (!added) {
    it->second.tuples =
        std::max(1, std::min(it->second.tuples, alone ? tuples / 2 : tuples));
  }
  ++it->second.stalls;
  any_ = true;
}

void PtxasSuspects::CompiledClean(const Variant& v) {
  if (!any_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = apart_.find(v);
  if (it == apart_.end()) return;
  ApartModule& apart = it->second;
  if (apart.slow) return;  // one module of its own, with the longer timeout
  if (!apart.faulted) {  // no tuple of it failed alone: it shares again
    apart_.erase(it);
    return;
  }
  apart.tuples =
      std::min(2 * apart.tuples, apart.hung ? kMaxSuspectTuplesAfterAHang
                                            : kMaxSuspectTuplesPerModule);
}

std::optional<std::string> PtxasSuspects::EnoughInBatch(
    const Variant& v) const {
  if (!any_) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = in_batch_.find(v);
  if (it == in_batch_.end() || it->second < kFaultsPerSuspectInBatch)
    return std::nullopt;
  return absl::StrCat(kNotRunPrefix, "ptxas crashed or hung on ", it->second,
                      " tuples of ", Spell(v),
                      " alone in this batch: its others were not compiled");
}

std::vector<Chunk> ByVariant(
    const Chunk& chunk, absl::FunctionRef<const Variant&(int)> variant_of) {
  std::vector<Chunk> pieces;
  absl::flat_hash_map<Variant, size_t> piece_of;
  size_t begin = 0;
  for (const int size : chunk.kernel_sizes) {
    const size_t end = begin + size;
    for (size_t run = begin; run < end;) {
      const Variant& v = variant_of(chunk.tuples[run]);
      size_t run_end = run + 1;
      while (run_end < end && variant_of(chunk.tuples[run_end]) == v) ++run_end;
      const auto [it, added] = piece_of.try_emplace(v, pieces.size());
      if (added) pieces.emplace_back();
      pieces[it->second].AddKernel(
          std::span<const int>(chunk.tuples.data() + run, run_end - run));
      run = run_end;
    }
    begin = end;
  }
  return pieces;
}

}  // namespace ptxdiff
