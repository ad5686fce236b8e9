#include "program/alone_checks.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/interrupt.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/program_ptx.h"

namespace ptxdiff {

AloneChecks::AloneChecks(Reading reading, absl::Time deadline)
    : reading_(reading), deadline_(deadline) {}

std::optional<bool> AloneChecks::RightAlone(ProgramBackend& backend,
                                            const Tuple& t) {
  const std::string key = absl::StrCat(
      Spell(t.variant), " ",
      absl::StrJoin(std::begin(t.operands.v), std::end(t.operands.v), ","));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto known = seen_.find(key); known != seen_.end())
      return known->second;
  }
  if (Interrupted() || absl::Now() >= deadline_) return std::nullopt;
  const Program alone = TupleAsProgram(t.variant, t.operands);
  const absl::StatusOr<std::vector<ProgramCheck>> checks = backend.Check(
      {&alone, 1}, ProgramInputs::kImmediate, reading_, deadline_);
  std::optional<bool> right;
  if (checks.ok() && checks->size() == 1 && (*checks)[0].judged &&
      !(*checks)[0].fault) {
    right = !(*checks)[0].mismatch.has_value();
  }
  std::lock_guard<std::mutex> lock(mu_);
  seen_.emplace(key, right);
  return right;
}

}  // namespace ptxdiff
