// What the ptxas backend's tests share: a scratch directory, and the
// fixture of the tests that need ptxas (each skipped without it).

#ifndef PTXDIFF_BACKENDS_PTXAS_TESTING_PTXAS_BACKEND_FIXTURE_H_
#define PTXDIFF_BACKENDS_PTXAS_TESTING_PTXAS_BACKEND_FIXTURE_H_

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/ptxas/ptxas_backend.h"
#include "backends/ptxas/ptxas_toolchain.h"
#include "gtest/gtest.h"

namespace ptxdiff {

// A fresh directory, removed (with its files) at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string path = testing::TempDir() + "/ptxas-test-XXXXXX";
    path_ = mkdtemp(path.data()) ? path : "";
  }
  ~ScratchDir() {
    for (const std::string& f : Files()) unlink((path_ + "/" + f).c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> Files() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") {
          out.push_back(e->d_name);
        }
      }
      closedir(d);
    }
    return out;
  }

 private:
  std::string path_;
};

// With ptxas; every test is skipped without it.
class PtxasBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ptxas = FindPtxas({});
    if (!ptxas.ok()) GTEST_SKIP() << ptxas.status().message();
    ptxas_ = *ptxas;
  }

  // The backend as the folding research pins it: folds and claims only
  // (execute=0), unless a test asks for executed code.
  std::unique_ptr<Backend> Make(KeyValues options) {
    if (!OptionValue(options, "execute").has_value()) {
      options.push_back({"execute", "0"});
    }
    auto backend = MakePtxasBackend(options);
    EXPECT_TRUE(backend.ok()) << backend.status();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  std::string ptxas_;
};


}  // namespace ptxdiff

#endif  // PTXDIFF_BACKENDS_PTXAS_TESTING_PTXAS_BACKEND_FIXTURE_H_
