#include "backends/cuda/entry_point_lookup.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace ptxdiff {
namespace {

bool HasSuffix(const EntryPointNames& names) {
  return std::strcmp(names.symbol, names.exported) != 0;
}

// "2 by exported name (cuLinkCreate_v2, cuStreamQuery)", or without the
// names.
std::string Count(absl::string_view how, const std::vector<std::string>& names,
                  bool list) {
  if (!list) return absl::StrCat(names.size(), " by ", how);
  return absl::StrCat(names.size(), " by ", how, " (",
                      absl::StrJoin(names, ", "), ")");
}

std::string WhatItSeems(DriverLibraryKind kind) {
  switch (kind) {
    case DriverLibraryKind::kNvidiaSince12:
      return "it seems to be NVIDIA's driver of CUDA 12.0 or later (it "
             "exports cuGetProcAddress_v2), yet neither that nor its exported "
             "names give them at the CUDA 12.0 ABI";
    case DriverLibraryKind::kNvidia11:
      return "it seems to be NVIDIA's driver of CUDA 11.3 to 11.8 (it "
             "exports cuGetProcAddress but not cuGetProcAddress_v2); install "
             "a driver of CUDA 12.0 or later";
    case DriverLibraryKind::kOther:
      break;
  }
  return "it seems to be another implementation of the driver API than "
         "NVIDIA's driver (it exports no cuGetProcAddress), which must export "
         "each of them under the name given, or give them through "
         "cuGetProcAddress_v2 (backends/cuda/README.md, \"Another "
         "driver library\")";
}

}  // namespace

FoundEntryPoint FindEntryPoint(const EntryPointNames& names,
                               const SymbolLookup& proc_address,
                               const SymbolLookup& exported) {
  if (proc_address) {
    if (void* address = proc_address(names.symbol)) {
      return {address, EntryPointSource::kProcAddress};
    }
  }
  if (void* address = exported(names.exported)) {
    return {address, EntryPointSource::kExportedName};
  }
  if (HasSuffix(names)) {
    if (void* address = exported(names.symbol)) {
      return {address, EntryPointSource::kBareName};
    }
  }
  return {};
}

void EntryPointReport::Add(const EntryPointNames& names,
                           EntryPointSource source) {
  ++total_;
  switch (source) {
    case EntryPointSource::kProcAddress:
      ++by_proc_address_;
      return;
    case EntryPointSource::kExportedName:
      by_exported_name_.push_back(names.exported);
      return;
    case EntryPointSource::kBareName:
      by_bare_name_.push_back(
          absl::StrCat(names.symbol, " for ", names.exported));
      return;
    case EntryPointSource::kMissing:
      missing_.push_back(
          HasSuffix(names)
              ? absl::StrCat(names.exported, " (or ", names.symbol, ")")
              : names.exported);
      return;
  }
}

std::string EntryPointReport::Summary() const {
  std::vector<std::string> parts;
  if (by_proc_address_ > 0) {
    parts.push_back(absl::StrCat(by_proc_address_, " by cuGetProcAddress"));
  }
  if (!by_exported_name_.empty()) {
    // Named when they are the exceptions.
    parts.push_back(
        Count("exported name", by_exported_name_, by_proc_address_ > 0));
  }
  if (!by_bare_name_.empty()) {
    parts.push_back(
        Count("its name without the ABI suffix", by_bare_name_, true));
  }
  if (!missing_.empty()) {
    parts.push_back(absl::StrCat(missing_.size(), " missing"));
  }
  return absl::StrCat("entry points: ", absl::StrJoin(parts, ", "));
}

std::string EntryPointReport::Missing() const {
  return absl::StrJoin(missing_, ", ");
}

DriverLibraryKind KindOfDriverLibrary(bool exports_proc_address_v2,
                                      bool exports_proc_address) {
  if (exports_proc_address_v2) return DriverLibraryKind::kNvidiaSince12;
  if (exports_proc_address) return DriverLibraryKind::kNvidia11;
  return DriverLibraryKind::kOther;
}

absl::Status MissingEntryPointsError(const std::string& library,
                                     const EntryPointReport& report,
                                     DriverLibraryKind kind) {
  return absl::FailedPreconditionError(absl::StrCat(
      library, " lacks ", report.missing_count(), " of the ", report.size(),
      " CUDA driver entry points the cuda backend looks up: ", report.Missing(),
      "; ", WhatItSeems(kind)));
}

}  // namespace ptxdiff
