// Programs and their checks in the worker protocol's opaque fields
// (RUN_PROGRAMS, PROGRAM_RESULTS; protocol/protocol.h): a program as its
// text form (program.h, exact and any length), a ProgramCheck as the bytes
// below. The worker runs a batch with its ProgramBackend and answers with
// these; the harness reads them back (docs/worker-protocol.md, "Programs").

#ifndef PTXDIFF_PROGRAM_PROGRAM_WIRE_H_
#define PTXDIFF_PROGRAM_PROGRAM_WIRE_H_

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "oracle/errata.h"
#include "program/program.h"
#include "program/program_backend.h"
#include "program/program_ptx.h"
#include "protocol/protocol.h"

namespace ptxdiff {

// A batch as a worker is asked to check it: the programs parsed, the form
// and reading as enums, the time limit as a deadline from `now`.
struct ProgramBatch {
  std::vector<Program> programs;
  ProgramInputs form = ProgramInputs::kRuntime;
  Reading reading = Reading::kSpec;
  bool until_fault = false;
  absl::Time deadline = absl::InfiniteFuture();
};

ProgramRunRequest ProgramRequestOf(std::span<const Program> programs,
                                   ProgramInputs form, Reading reading,
                                   bool until_fault, absl::Time deadline,
                                   absl::Time now = absl::Now());
// InvalidArgument naming the program that does not parse.
absl::StatusOr<ProgramBatch> ProgramBatchOf(const ProgramRunRequest& request,
                                            absl::Time now = absl::Now());

std::string EncodeProgramCheck(const ProgramCheck& check);
// InvalidArgument naming what is wrong, never a crash: a worker's reply is
// untrusted.
absl::StatusOr<ProgramCheck> DecodeProgramCheck(absl::string_view bytes);

}  // namespace ptxdiff

#endif  // PTXDIFF_PROGRAM_PROGRAM_WIRE_H_
