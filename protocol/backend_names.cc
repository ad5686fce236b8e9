#include "protocol/backend_names.h"

#include "absl/strings/str_join.h"

namespace ptxdiff {

const BuiltinBackend* FindBuiltinBackend(absl::string_view name) {
  for (const BuiltinBackend& backend : kBuiltinBackends) {
    if (backend.name == name) return &backend;
  }
  return nullptr;
}

std::string BuiltinBackendNames() {
  return absl::StrJoin(kBuiltinBackends, ", ",
                       [](std::string* out, const BuiltinBackend& b) {
                         out->append(b.name.data(), b.name.size());
                       });
}

}  // namespace ptxdiff
