// The extended-precision instructions (PTX ISA 9.7.2) in the kernel-writing
// backends (ptxas, cuda, ptx-cmd): not yet. Their kernels hold one result
// per tuple and no condition code, so a `.cc` variant's carry-out and a
// carry-in source (addc, subc, madc) have nowhere to come from or go to.
// Until they do (issue #11), these backends decline such variants through
// WhyUnsupported with this reason; the oracle backend runs them all.

#ifndef PTXDIFF_WORKER_BACKENDS_CARRY_SUPPORT_H_
#define PTXDIFF_WORKER_BACKENDS_CARRY_SUPPORT_H_

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {

// Why a kernel-writing backend cannot run `v` for its condition code;
// nullopt where `v` neither reads nor writes CC.CF.
inline std::optional<std::string> WhyCarryNotGenerated(const Variant& v) {
  if (!HasCarryOut(v) && !HasCarryIn(v)) return std::nullopt;
  return absl::StrCat(SpellOpcode(v),
                      HasCarryIn(v) ? " reads" : " writes",
                      " CC.CF: carry flags are not generated in this "
                      "backend's kernels yet (issue #11)");
}

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CARRY_SUPPORT_H_
