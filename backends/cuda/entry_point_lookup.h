// How LoadCudaDriver finds the driver's entry points in a library, and what
// it says about them.
//
// NVIDIA's driver hands every entry point out through cuGetProcAddress_v2,
// at the ABI asked for (kCudaAbiVersion). Simulators, translators and
// compatibility layers often export the driver API's symbols without it, so
// each entry point is looked for three ways, in order:
//   1. cuGetProcAddress_v2, where the library has it and it gives the entry
//      point;
//   2. its exported name for that ABI, the name cuda.h `#define`s it to
//      (cuMemAlloc_v2 for cuMemAlloc: driver_entry_points.h);
//   3. its name without the ABI suffix (cuMemAlloc), where cuda.h adds one:
//      a library that exports only that is taken to give it the current
//      signature, and the handshake names every entry point found so.
// The handshake says which way they were found (EntryPointReport::Summary);
// a library that lacks some is refused naming them, with what it seems to be
// (MissingEntryPointsError).

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_ENTRY_POINT_LOOKUP_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_ENTRY_POINT_LOOKUP_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace ptxdiff {

// One entry point's names: `symbol` as cuGetProcAddress_v2 takes it
// ("cuMemAlloc"), `exported` as cuda.h names its current ABI
// ("cuMemAlloc_v2"; the same as `symbol` where cuda.h adds no suffix).
struct EntryPointNames {
  const char* symbol;
  const char* exported;
};

// How an entry point was found.
enum class EntryPointSource {
  kMissing,
  kProcAddress,   // cuGetProcAddress_v2 gave it
  kExportedName,  // exported under `exported`
  kBareName,      // exported only under `symbol`, though cuda.h suffixes it
};

// Looks a name up in a library; nullptr when it has none. For
// cuGetProcAddress_v2, also nullptr when it fails for that name.
using SymbolLookup = std::function<void*(const char* name)>;

struct FoundEntryPoint {
  void* address = nullptr;
  EntryPointSource source = EntryPointSource::kMissing;
};

// `names` through `proc_address` (empty where the library has no
// cuGetProcAddress_v2), then `exported` (dlsym) under names.exported, then
// under names.symbol.
FoundEntryPoint FindEntryPoint(const EntryPointNames& names,
                               const SymbolLookup& proc_address,
                               const SymbolLookup& exported);

// Which way each entry point of a library was found.
class EntryPointReport {
 public:
  void Add(const EntryPointNames& names, EntryPointSource source);

  bool complete() const { return missing_.empty(); }
  int size() const { return total_; }
  int missing_count() const { return static_cast<int>(missing_.size()); }

  // For the handshake: "entry points: 26 by cuGetProcAddress",
  // "entry points: 26 by exported name", and when they were found more than
  // one way, the names of the others: "entry points: 24 by cuGetProcAddress,
  // 2 by exported name (cuLinkCreate_v2, cuStreamQuery)"; entry points found
  // without their ABI suffix are always named: "1 by its name without the
  // ABI suffix (cuMemAlloc for cuMemAlloc_v2)".
  std::string Summary() const;
  // "cuLinkCreate_v2 (or cuLinkCreate), cuStreamQuery".
  std::string Missing() const;

 private:
  int total_ = 0;
  int by_proc_address_ = 0;
  std::vector<std::string> by_exported_name_;
  std::vector<std::string> by_bare_name_;  // "cuMemAlloc for cuMemAlloc_v2"
  std::vector<std::string> missing_;
};

// What a library seems to be, from the cuGetProcAddress it exports.
enum class DriverLibraryKind {
  // cuGetProcAddress_v2: NVIDIA's driver of CUDA 12.0 or later (or another
  // implementation that copies its interface that far).
  kNvidiaSince12,
  // cuGetProcAddress but not _v2: NVIDIA's driver of CUDA 11.3 to 11.8.
  kNvidia11,
  // Neither: another implementation of the driver API (a simulator, a
  // translator, a compatibility layer), or NVIDIA's driver older than 11.3.
  kOther,
};
DriverLibraryKind KindOfDriverLibrary(bool exports_proc_address_v2,
                                      bool exports_proc_address);

// FailedPrecondition for a library whose entry points are not all found:
//   <library> lacks 2 of the 26 CUDA driver entry points the cuda backend
//   looks up: cuLinkCreate_v2 (or cuLinkCreate), cuStreamQuery; it seems to
//   be another implementation of the driver API than NVIDIA's driver (it
//   exports no cuGetProcAddress), which must export each of them ...
// (The 26 of driver_entry_points.h; cuInit and cuGetErrorName, looked for
// before them, are not counted.)
absl::Status MissingEntryPointsError(const std::string& library,
                                     const EntryPointReport& report,
                                     DriverLibraryKind kind);

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_ENTRY_POINT_LOOKUP_H_
