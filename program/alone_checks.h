// One instruction run alone on a program backend, its operands as
// immediates: how a cause key tells a step that computes ptxas's constant
// wrong from one that only stores it (program_cause.h, AloneCheck).

#ifndef PTXDIFF_PROGRAM_ALONE_CHECKS_H_
#define PTXDIFF_PROGRAM_ALONE_CHECKS_H_

#include <mutex>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "isa/tuple.h"
#include "oracle/errata.h"
#include "program/program_backend.h"
#include "program/program_cause.h"

namespace ptxdiff {

// Thread-safe; each tuple is run once (a repeat of a cause asks again).
class AloneChecks {
 public:
  AloneChecks(ProgramBackend& backend, Reading reading, absl::Time deadline);

  // Whether the backend gives the oracle's value for `t` alone; nullopt
  // where it did not judge it (kept code, a fault, past the deadline).
  std::optional<bool> RightAlone(const Tuple& t);
  const AloneCheck& check() const { return check_; }

 private:
  ProgramBackend& backend_;
  const Reading reading_;
  const absl::Time deadline_;
  const AloneCheck check_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::optional<bool>> seen_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_ALONE_CHECKS_H_
