#include "common/files.h"

#include <ftw.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace ptxdiff {
namespace {

absl::Status ErrnoError(absl::string_view what, absl::string_view path) {
  const std::string message =
      absl::StrCat(what, " ", path, ": ", std::strerror(errno));
  return errno == ENOENT ? absl::NotFoundError(message)
                         : absl::InternalError(message);
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError("cannot read", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return std::move(bytes).str();
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return ErrnoError("cannot write", path);
  return absl::OkStatus();
}

std::string ReadFileTail(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const bool cut = size > static_cast<std::streamoff>(max_bytes);
  in.seekg(cut ? size - static_cast<std::streamoff>(max_bytes) : 0);
  std::string tail(cut ? max_bytes : static_cast<size_t>(size), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  tail.resize(static_cast<size_t>(in.gcount()));
  return cut ? absl::StrCat("...", tail) : tail;
}

absl::StatusOr<std::unique_ptr<TempDir>> TempDir::Create(
    absl::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/",
                                  prefix, "-XXXXXX");
  if (mkdtemp(path.data()) == nullptr) {
    return ErrnoError("cannot create a temporary directory", path);
  }
  return std::unique_ptr<TempDir>(new TempDir(std::move(path)));
}

TempDir::~TempDir() {
  // Depth first, never following a symbolic link out of the directory.
  nftw(
      path_.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) {
        remove(path);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

std::string TempDir::File(absl::string_view name) const {
  return absl::StrCat(path_, "/", name);
}

}  // namespace ptxdiff
