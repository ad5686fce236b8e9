#include "backends/cuda/module_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "backends/cuda/jit.h"
#include "common/fnv1a.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kMagic = "ptxdiff-cuda-image 1";

// Takes the next '\n'-terminated line off `rest`; nullopt if there is none.
std::optional<absl::string_view> TakeLine(absl::string_view& rest) {
  const size_t end = rest.find('\n');
  if (end == absl::string_view::npos) return std::nullopt;
  absl::string_view line = rest.substr(0, end);
  rest.remove_prefix(end + 1);
  return line;
}

absl::Status WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// A name no other writer uses at the same time: pid and a counter.
std::string TemporaryName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp.", getpid(), ".", counter++);
}

}  // namespace

std::string ModuleKey::Name() const {
  return absl::StrFormat("%016x-%s-sm%d-driver%d-cuda%d-%016x", variant_id,
                         KernelModeName(mode), sm, driver_version,
                         toolkit_version, ptx_hash);
}

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return absl::StrCat(xdg, "/ptxdiff");
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    return absl::StrCat(home, "/.cache/ptxdiff");
  }
  return "";
}

std::string EncodeImageFile(const ModuleKey& key, absl::string_view image) {
  return absl::StrFormat("%s\nkey %s\nsize %d\nfnv1a %016x\n%s", kMagic,
                         key.Name(), image.size(), Fnv1a64(image), image);
}

std::optional<std::string> DecodeImageFile(const ModuleKey& key,
                                           absl::string_view contents) {
  absl::string_view rest = contents;
  const auto magic = TakeLine(rest);
  const auto key_line = TakeLine(rest);
  const auto size_line = TakeLine(rest);
  const auto hash_line = TakeLine(rest);
  if (!hash_line.has_value() || *magic != kMagic ||
      *key_line != absl::StrCat("key ", key.Name())) {
    return std::nullopt;
  }
  uint64_t size = 0, hash = 0;
  absl::string_view size_text = *size_line, hash_text = *hash_line;
  if (!absl::ConsumePrefix(&size_text, "size ") ||
      !absl::ConsumePrefix(&hash_text, "fnv1a ") ||
      !absl::SimpleAtoi(size_text, &size) ||
      !absl::SimpleHexAtoi(hash_text, &hash) || size != rest.size() ||
      size == 0 || Fnv1a64(rest) != hash) {
    return std::nullopt;
  }
  return std::string(rest);
}

ImageCache::ImageCache(std::string dir)
    : dir_(dir.empty() ? "" : absl::StrCat(dir, "/cuda")) {}

std::string ImageCache::PathOf(const ModuleKey& key) const {
  return absl::StrCat(dir_, "/", key.Name(), ".cubin");
}

std::optional<std::string> ImageCache::Load(const ModuleKey& key) {
  if (!enabled()) return std::nullopt;
  std::ifstream in(PathOf(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream contents;
  contents << in.rdbuf();
  std::optional<std::string> image = DecodeImageFile(key, contents.str());
  if (!image.has_value()) ++corrupt_files_;
  return image;
}

absl::Status ImageCache::Store(const ModuleKey& key, absl::string_view image) {
  if (!enabled()) return absl::OkStatus();
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the image cache directory ", dir_, ": ",
                     error.message()));
  }
  const std::string path = PathOf(key);
  const std::string temporary = TemporaryName(path);
  const int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", temporary, ": ", strerror(errno)));
  }
  absl::Status written = WriteAll(fd, EncodeImageFile(key, image));
  if (close(fd) != 0 && written.ok()) {
    written = absl::InternalError(strerror(errno));
  }
  if (written.ok() && rename(temporary.c_str(), path.c_str()) != 0) {
    written = absl::InternalError(strerror(errno));
  }
  if (!written.ok()) {
    unlink(temporary.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path, ": ", written.message()));
  }
  return absl::OkStatus();
}

void ImageCache::Remove(const ModuleKey& key) {
  if (enabled()) unlink(PathOf(key).c_str());
}

ModuleCache::ModuleCache(CudaDriver& driver, ImageCache images)
    : driver_(driver), images_(std::move(images)) {}

ModuleCache::~ModuleCache() { Trim(0); }

absl::StatusOr<CUmodule> ModuleCache::Get(const ModuleKey& key,
                                          absl::string_view ptx) {
  auto it = modules_.find(key);
  if (it != modules_.end()) {
    ++stats_.memory_hits;
    it->second.last_use = ++clock_;
    return it->second.module;
  }
  absl::StatusOr<CUmodule> module = LoadOrCompile(key, ptx);
  if (module.ok()) modules_[key] = {*module, ++clock_};
  return module;
}

absl::StatusOr<CUmodule> ModuleCache::LoadOrCompile(const ModuleKey& key,
                                                    absl::string_view ptx) {
  if (std::optional<std::string> image = images_.Load(key)) {
    absl::StatusOr<CUmodule> module = LoadModule(driver_, *image);
    if (module.ok()) {
      ++stats_.disk_hits;
      return module;
    }
    // A file that passed its checks but that the driver refuses (a driver
    // update the key missed, or a bad write that kept its checksum): drop it
    // and compile again rather than fail.
    ++stats_.rejected_images;
    images_.Remove(key);
  }
  ++stats_.compiles;
  absl::StatusOr<std::string> image = CompilePtx(driver_, ptx);
  if (!image.ok()) return image.status();
  absl::StatusOr<CUmodule> module = LoadModule(driver_, *image);
  if (module.ok()) StoreImage(key, *image);
  return module;
}

void ModuleCache::StoreImage(const ModuleKey& key, absl::string_view image) {
  const absl::Status stored = images_.Store(key, image);
  // The cache only saves time: say so once, and go on without it.
  if (!stored.ok() && !warned_store_) {
    warned_store_ = true;
    std::fprintf(stderr,
                 "ptxdiff-worker: warning: not caching compiled kernels: %s\n",
                 std::string(stored.message()).c_str());
  }
}

void ModuleCache::Trim(size_t max_modules) {
  if (modules_.size() <= max_modules) return;
  std::vector<std::pair<uint64_t, ModuleKey>> by_age;
  by_age.reserve(modules_.size());
  for (const auto& [key, entry] : modules_)
    by_age.push_back({entry.last_use, key});
  std::sort(by_age.begin(), by_age.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  const size_t excess = modules_.size() - max_modules;
  for (size_t i = 0; i < excess; ++i) {
    auto it = modules_.find(by_age[i].second);
    // Unload failures are ignored: the module is gone from the cache either
    // way, and a failing context is reported by the next launch.
    (void)driver_.ModuleUnload(it->second.module);
    modules_.erase(it);
  }
}

}  // namespace ptxdiff
