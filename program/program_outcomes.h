// A program lane's counts in the engine's outcome table
// (campaign/outcome_table.h, its `program-` forms): for each variant, the
// programs that held it, by how their check in each input form ended. A
// program's disagreement or fault is the program's: the table says a
// variant was in such a program, not that it caused it.

#ifndef PTXDIFF_PROGRAM_PROGRAM_OUTCOMES_H_
#define PTXDIFF_PROGRAM_PROGRAM_OUTCOMES_H_

#include <array>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "campaign/outcome_table.h"
#include "program/program.h"
#include "program/program_backend.h"

namespace ptxdiff {

// How a program's check in one form ended, as an outcome.
Outcome ProgramOutcomeOf(const ProgramCheck& check);

// Thread-safe: the engine's senders count at once while a snapshot adds.
class ProgramOutcomes {
 public:
  // `program`'s check in `form`: a count for each variant among its steps,
  // once however many steps have it.
  void Count(const Program& program, ProgramInputs form,
             const ProgramCheck& check);
  // Adds the counts to `table`'s program forms.
  void AddTo(OutcomeTable& table) const;

 private:
  using Counts = std::array<OutcomeCounts, 2>;  // immediate, runtime inputs
  mutable std::mutex mu_;
  // Sparse: programs draw from a few hundred variants.
  absl::flat_hash_map<int, Counts> by_variant_;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_OUTCOMES_H_
