#include "backends/ptxas/ptxas_faults.h"

#include "absl/strings/str_cat.h"
#include "isa/spelling.h"
#include "protocol/protocol.h"

namespace ptxdiff {

std::optional<std::string> PtxasSuspects::EnoughInBatch(
    const Variant& v) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = in_batch_.find(v);
  if (it == in_batch_.end() || it->second < kFaultsPerSuspectInBatch)
    return std::nullopt;
  return absl::StrCat(kNotRunPrefix, "ptxas crashed or hung on ", it->second,
                      " tuples of ", Spell(v),
                      " alone in this batch: its others were not compiled");
}

}  // namespace ptxdiff
