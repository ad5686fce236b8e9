#include "backends/ptxas/compile_log.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"

namespace ptxdiff {

const std::string& CompileLogPath() {
  static const std::string* path = [] {
    const char* base = std::getenv("PTXDIFF_COMPILE_LOG");
    return new std::string(base == nullptr || *base == '\0'
                               ? ""
                               : absl::StrCat(base, ".", getpid()));
  }();
  return *path;
}

namespace {

int CountKernels(absl::string_view ptx) {
  int n = 0;
  for (size_t at = ptx.find(".entry "); at != absl::string_view::npos;
       at = ptx.find(".entry ", at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace

void LogCompile(const CompileRecord& record, absl::string_view ptx,
                int opt_level, absl::Time start, absl::Duration took) {
  const std::string& path = CompileLogPath();
  if (!path.empty()) LogCompileTo(path, record, ptx, opt_level, start, took);
}

void LogCompileTo(const std::string& path, const CompileRecord& record,
                  absl::string_view ptx, int opt_level, absl::Time start,
                  absl::Duration took) {
  const std::string line = absl::StrFormat(
      "%.3f %s %d %d %d %d %.3f\n", absl::ToDoubleSeconds(start - absl::UnixEpoch()),
      record.purpose, opt_level, CountKernels(ptx), record.tuples,
      record.runtime_tuples, absl::ToDoubleMilliseconds(took));
  // O_APPEND: the lines of concurrent compiles do not interleave. A log
  // that cannot be written is left unwritten: it is a measuring aid.
  (void)AppendToFile(path, line);
}

}  // namespace ptxdiff
