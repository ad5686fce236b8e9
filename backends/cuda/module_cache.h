// Compiled kernels, cached in memory (loaded modules) and on disk (images),
// so that a variant is JIT-compiled once per device and driver, not once per
// batch or per worker restart.
//
// A key names everything that changes the machine code: the variant, the
// kernel mode, the device SM, the driver version (the JIT is in the driver),
// the toolkit ptxdiff was built with, and a hash of the PTX text itself, so
// that a changed kernel generator never picks up an old image.
//
// Disk files are never trusted: each records its key, size and checksum, and
// a file that fails any check (truncated, flipped, another key, garbage) is
// ignored and rewritten. Writes go to a temporary file renamed into place, so
// readers and crashed writers never leave half a file under the final name.
// Several workers may share a directory.

#ifndef PTXDIFF_WORKER_BACKENDS_CUDA_MODULE_CACHE_H_
#define PTXDIFF_WORKER_BACKENDS_CUDA_MODULE_CACHE_H_

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "backends/cuda/driver_api.h"
#include "backends/cuda/kernel_gen.h"

namespace ptxdiff {

struct ModuleKey {
  uint64_t variant_id = 0;  // StableId
  KernelMode mode = KernelMode::kRegister;
  int sm = 0;               // the device's compute capability, 90 for 9.0
  int driver_version = 0;   // cuDriverGetVersion
  int toolkit_version = 0;  // CUDA_VERSION of the cuda.h built against
  uint64_t ptx_hash = 0;    // FNV-1a of the PTX text

  // Every field, readable, usable as a file name:
  // "866d3c5830861652-register-sm90-driver13000-cuda13000-0123456789abcdef".
  std::string Name() const;

  friend bool operator==(const ModuleKey&, const ModuleKey&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const ModuleKey& k) {
    return H::combine(std::move(h), k.variant_id, k.mode, k.sm,
                      k.driver_version, k.toolkit_version, k.ptx_hash);
  }
};

// The default cache directory: $XDG_CACHE_HOME/ptxdiff, else
// $HOME/.cache/ptxdiff; empty (no disk cache) when neither is set.
std::string DefaultCacheDir();

// The bytes of a cache file holding `image` for `key`, and back. Decoding
// returns nullopt unless every check passes.
std::string EncodeImageFile(const ModuleKey& key, absl::string_view image);
std::optional<std::string> DecodeImageFile(const ModuleKey& key,
                                           absl::string_view contents);

// Images on disk, one file per key in `dir`/cuda/.
class ImageCache {
 public:
  // An empty `dir` disables the disk cache: Load misses, Store does nothing.
  explicit ImageCache(std::string dir);

  // The image stored for `key`, or nullopt if there is none or its file is
  // corrupt (counted in corrupt_files()).
  std::optional<std::string> Load(const ModuleKey& key);
  // Creates the directory if needed and writes atomically.
  absl::Status Store(const ModuleKey& key, absl::string_view image);
  // Removes `key`'s file (an image the driver refused).
  void Remove(const ModuleKey& key);

  std::string PathOf(const ModuleKey& key) const;
  bool enabled() const { return !dir_.empty(); }
  int corrupt_files() const { return corrupt_files_; }

 private:
  std::string dir_;  // `dir`/cuda, or empty
  int corrupt_files_ = 0;
};

// Loaded modules by key, in front of an ImageCache and the JIT. Owns the
// modules: they are unloaded by Trim and by the destructor, which must run
// while the context is still current.
class ModuleCache {
 public:
  struct Stats {
    int memory_hits = 0;
    int disk_hits = 0;
    int compiles = 0;
    int rejected_images = 0;  // valid files whose image the driver refused
  };

  ModuleCache(CudaDriver& driver, ImageCache images);
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // The module for `key`: from memory, else loaded from disk, else compiled
  // from `ptx` (whose hash must be key.ptx_hash) and stored on disk. A JIT
  // rejection is returned as jit.h describes.
  absl::StatusOr<CUmodule> Get(const ModuleKey& key, absl::string_view ptx);

  // Unloads the least recently used modules until at most `max_modules`
  // remain. Only between batches: no launch may be using them.
  void Trim(size_t max_modules);

  size_t size() const { return modules_.size(); }
  const Stats& stats() const { return stats_; }
  ImageCache& images() { return images_; }

 private:
  struct Entry {
    CUmodule module = nullptr;
    uint64_t last_use = 0;
  };

  absl::StatusOr<CUmodule> LoadOrCompile(const ModuleKey& key,
                                         absl::string_view ptx);
  void StoreImage(const ModuleKey& key, absl::string_view image);

  CudaDriver& driver_;
  ImageCache images_;
  absl::flat_hash_map<ModuleKey, Entry> modules_;
  uint64_t clock_ = 0;
  bool warned_store_ = false;
  Stats stats_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_CUDA_MODULE_CACHE_H_
