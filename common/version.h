// ptxdiff's version: what `ptxdiff --version` prints and each triage entry
// records (meta.txt's ptxdiff_version).

#ifndef PTXDIFF_COMMON_VERSION_H_
#define PTXDIFF_COMMON_VERSION_H_

#include "absl/strings/string_view.h"

namespace ptxdiff {

inline constexpr absl::string_view kPtxdiffVersion = "0.1";

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_VERSION_H_
