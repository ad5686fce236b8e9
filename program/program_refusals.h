// What a tool refuses in programs, learned once (issue 62, item 4). A real
// parser refuses whole instructions, and a program holding one is refused
// whole: a campaign that keeps drawing it spends a run of each module, and
// of its halving, on programs nothing judges (docs/performance.md, "Programs
// on a tool that refuses").
//
// A program the tool refused alone (ProgramCheck::refused) names its
// suspects: its instructions not known to run in that input form (none of
// a program it ran) and not known refused. The campaign runs them alone,
// each at the operands it had, in one check; one refused alone is learned:
// it is no longer generated, and it is remembered in the tool's refusal
// memory (backends/ptx_cmd/refusal_memory.h), the file the tuple campaign
// on the same tool reads and writes, so that what one learns the other
// skips. A program refused with no suspect left (only a combination of
// instructions, or a block, is refused) is counted, and nothing is learned.
//
// The memory keeps the shape a variant was refused in (its operands as
// immediates or in registers); a program's steps have both, so a variant
// refused in either is not generated.

#ifndef PTXDIFF_PROGRAM_PROGRAM_REFUSALS_H_
#define PTXDIFF_PROGRAM_PROGRAM_REFUSALS_H_

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "backends/ptx_cmd/refusal_memory.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_ptx.h"

namespace ptxdiff {

// A generated variant the tool refuses, and what it said (one line).
struct RefusedStep {
  std::string spelling;
  std::string why;
  bool remembered = false;  // read from the memory, not learned by this run
};

// A program the tool refused alone, and the form it was refused in.
struct RefusedProgram {
  const Program* program;
  ProgramInputs form;
};

// What LearnFrom did: its checks, and what went wrong (the backend's
// failure, a refusal that could not be remembered).
struct RefusalLearning {
  int checks = 0;
  std::vector<std::string> errors;
};

class ProgramRefusals {
 public:
  // Without a memory (ptxas, a GPU; a test) it learns for the run only.
  explicit ProgramRefusals(std::optional<RefusalMemory> memory = std::nullopt);

  // The variants of `generated` (GeneratedSpellings) the memory holds
  // refused, by variant or by class, in either shape. An error if the
  // memory's file exists and cannot be read.
  absl::Status Load(const std::vector<std::string>& generated);
  // Re-checks what the memory holds (refusal_recheck.h): one of its
  // generated variants a message, run alone on `backend`; what the tool
  // runs now is forgotten, generated again, and returned. What went wrong
  // (the memory unwritable) is added to `errors`.
  std::vector<Forgotten> Recheck(ProgramBackend& backend,
                                 const std::vector<std::string>& generated,
                                 Reading reading, absl::Time deadline,
                                 std::vector<std::string>& errors);

  bool Refuses(const std::string& spelling) const;
  // The refused spellings: what the generator no longer draws.
  std::vector<std::string> Spellings() const;
  // Every refused variant, in the order known (remembered ones first).
  std::vector<RefusedStep> All() const;
  // The memory's file, or "" without one.
  std::string Where() const;

  // `p` was checked in `form`: if it ran (the tool gave outputs, crashed or
  // hung), its instructions are not refused there.
  void NoteChecked(const Program& p, ProgramInputs form,
                   const ProgramCheck& check);
  // The one-step programs of `p`'s suspects (see above), at the operands
  // they had at its witness; empty if none is left.
  std::vector<Program> Suspects(const Program& p, ProgramInputs form,
                                Reading reading) const;
  // The suspects of `refused`, each run alone on `backend` in the form its
  // program was refused in (one check a form, none past `deadline`); each
  // refused alone is learned, each that ran noted.
  RefusalLearning LearnFrom(ProgramBackend& backend,
                            std::span<const RefusedProgram> refused,
                            Reading reading, absl::Time deadline);
  // `alone` (one of Suspects) was refused alone in `form`: its variant is
  // learned, and remembered. An error only if the memory could not be
  // written (learned for the run all the same).
  absl::Status Learn(const Program& alone, ProgramInputs form,
                     const std::string& why);

 private:
  bool KnownLocked(const std::string& spelling, ProgramInputs form) const;
  // The variants of `generated` that `remembered` holds refused, kept as
  // remembered ones.
  void AddRememberedLocked(const Remembered& remembered,
                           const std::vector<std::string>& generated);

  std::optional<RefusalMemory> memory_;
  mutable std::mutex mu_;
  std::vector<RefusedStep> refused_;
  absl::flat_hash_set<std::string> refused_spellings_;
  // Spellings seen to run, per form (immediate, runtime).
  absl::flat_hash_set<std::string> ran_[2];
};

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_REFUSALS_H_
