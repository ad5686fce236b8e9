// Fixtures of the triage store's tests (triage_store_test.cc and
// triage_store_damage_test.cc): a fresh directory, a mismatch to file, the
// names in a directory.

#ifndef PTXDIFF_TRIAGE_TESTING_STORE_FIXTURES_H_
#define PTXDIFF_TRIAGE_TESTING_STORE_FIXTURES_H_

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "isa/spelling.h"
#include "oracle/oracle.h"
#include "triage/finding.h"

namespace ptxdiff::store_testing {

inline std::string FreshDir(const std::string& name) {
  const std::string dir =
      ::testing::TempDir() + "/triage_" + name + "_" + std::to_string(getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

inline Finding Mismatch(const char* spelling, uint64_t a, uint64_t flip = 1) {
  Finding f;
  f.tuple = {*ParseVariant(spelling), {{a, 3, 5, 7}}};
  f.oracle = Evaluate(f.tuple.variant, f.tuple.operands);
  f.backend_bits = f.oracle.bits ^ flip;
  f.backend = "faulty";
  f.backend_identity = "faulty 1";
  f.raw_input = std::string("\x00\x01raw", 5);
  return f;
}

inline std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) names.insert(e->d_name);
  closedir(d);
  return names;
}

}  // namespace ptxdiff::store_testing

#endif  // PTXDIFF_TRIAGE_TESTING_STORE_FIXTURES_H_
