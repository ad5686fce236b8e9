// The SIMD video instructions (PTX ISA 9.7.18.2) in the kernel-writing
// backends (ptxas, cuda, ptx-cmd): not yet. Their selector is an immediate
// written as the `.asel`/`.bsel` suffixes of a and b, so a register kernel
// needs one instruction per selector value (16M of them for the 4-lane
// families), and ptxas's folding of them has not been measured. Until it
// is (issue #11), these backends decline them through WhyUnsupported with
// this reason; the oracle backend runs them all.

#ifndef PTXDIFF_WORKER_BACKENDS_SIMD_SUPPORT_H_
#define PTXDIFF_WORKER_BACKENDS_SIMD_SUPPORT_H_

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {

// Why a kernel-writing backend cannot run `v` for its selector; nullopt for
// every family but the SIMD video ones.
inline std::optional<std::string> WhySimdVideoNotGenerated(const Variant& v) {
  if (!IsSimdVideo(v.family)) return std::nullopt;
  return absl::StrCat(SpellOpcode(v),
                      " is SIMD video: kernels with its immediate .asel/.bsel "
                      "selectors are not generated in this backend yet "
                      "(issue #11)");
}

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_SIMD_SUPPORT_H_
