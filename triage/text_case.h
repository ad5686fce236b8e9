// The readable, replayable text case: a triage entry's case.txt, and what
// `ptxdiff repro` and `ptxdiff minimize` read.
//
//   # ptxdiff case 1
//   variant: vadd.u32.u32.u32.sat d.b1, a, b, c
//   operands: 0x00000100 0x00000000 0x11223344
//   runtime: a
//   instruction: vadd.u32.u32.u32.sat d.b1, %a, 0x00000000.h0, 0x11223344
//   oracle: 0x1122ff44 defined
//   backend: ptxas 1 (ptxas 13.0.88, sm_90)
//   backend-result: 0x1122ff45
//   differing-bits: 0x00000001
//   kind: value-mismatch
//
// Only `variant` and `operands` are needed to replay (a hand-written case
// may be just those two lines, without the header), and `runtime` where
// some sources are runtime values (isa/operand_form.h; the operands line
// then holds their witness values); the rest records what was seen.
// Lines starting with `#` are comments.
//
// A case of a batch (an unisolated fault: Finding::unisolated) goes on
// after these lines with a `batch:` line and a `variant:` and `operands:`
// (and `runtime:`) group for each of the batch's other tuples, in the
// order they were sent: replayed together, they are what faulted.

#ifndef PTXDIFF_TRIAGE_TEXT_CASE_H_
#define PTXDIFF_TRIAGE_TEXT_CASE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "triage/finding.h"

namespace ptxdiff {

inline constexpr absl::string_view kTextCaseHeader = "# ptxdiff case 1";

std::string FormatTextCase(const Finding& finding);

// The tuple of a text case, with or without its header. A line that is not
// `key: value`, a missing `variant:` or `operands:` line, an unknown
// variant, or operands that are too few, too many or do not fit are
// InvalidArgument naming the line.
absl::StatusOr<Tuple> ParseTextCase(absl::string_view text);

// Every tuple of a text case, in order: one for a case of one tuple, the
// batch's for a case of a batch. Each `variant:` line begins a tuple, whose
// `operands:` line must follow it; errors as ParseTextCase's.
absl::StatusOr<std::vector<Tuple>> ParseTextCaseTuples(absl::string_view text);

// True if `data` is a text case (as opposed to a raw fuzzer input): it starts
// with the header, or is text with a `variant:` line.
bool LooksLikeTextCase(absl::string_view data);

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_TEXT_CASE_H_
