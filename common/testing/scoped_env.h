// ScopedEnv: sets (or, with nullptr, unsets) an environment variable for the
// lifetime of a test scope and restores its old value afterwards.

#ifndef PTXDIFF_COMMON_TESTING_SCOPED_ENV_H_
#define PTXDIFF_COMMON_TESTING_SCOPED_ENV_H_

#include <cstdlib>
#include <optional>
#include <string>

namespace ptxdiff {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ScopedEnv(const char* name, const std::string& value)
      : ScopedEnv(name, value.c_str()) {}
  ~ScopedEnv() {
    if (old_.has_value()) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_COMMON_TESTING_SCOPED_ENV_H_
