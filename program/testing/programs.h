// Test helpers for program cases: one from the lines after the header, and
// one from program/testdata.

#ifndef PTXDIFF_PROGRAM_TESTING_PROGRAMS_H_
#define PTXDIFF_PROGRAM_TESTING_PROGRAMS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "program/program.h"

namespace ptxdiff {

// The program whose text is `body` after the header; a test failure (and
// an empty program) if it does not parse.
inline Program ProgramOf(const std::string& body) {
  absl::StatusOr<Program> p =
      ParseProgram(absl::StrCat(kProgramHeader, "\n", body));
  EXPECT_TRUE(p.ok()) << p.status() << "\n" << body;
  return p.ok() ? *std::move(p) : Program{};
}

// program/testdata/`name`, parsed.
inline absl::StatusOr<Program> TestdataProgram(const std::string& name) {
  absl::StatusOr<std::string> text =
      ReadFile(absl::StrCat(PTXDIFF_SOURCE_DIR, "/program/testdata/", name));
  if (!text.ok()) return text.status();
  return ParseProgram(*text);
}

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_TESTING_PROGRAMS_H_
