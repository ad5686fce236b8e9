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

// Thread-safe; each tuple is run once (a repeat of a cause asks again),
// whichever backend (a campaign's worker) it is asked on.
class AloneChecks {
 public:
  AloneChecks(Reading reading, absl::Time deadline);

  // Whether `backend` gives the oracle's value for `t` alone; nullopt where
  // it did not judge it (kept code, a fault, past the deadline).
  std::optional<bool> RightAlone(ProgramBackend& backend, const Tuple& t);
  // RightAlone on `backend`, as a cause key asks it (it must not outlive
  // `backend`).
  AloneCheck On(ProgramBackend& backend) {
    return [this, &backend](const Tuple& t) { return RightAlone(backend, t); };
  }

 private:
  const Reading reading_;
  const absl::Time deadline_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::optional<bool>> seen_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_ALONE_CHECKS_H_
