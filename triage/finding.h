// A finding: one disagreement between the oracle and a backend, or a batch
// the backend could not survive, with what is needed to file and replay it.
//
// Its Signature is what deduplicates findings in the triage directory: one
// signature per root cause. It is read off the *minimized* finding
// (minimizer.h): the plainest variant that still shows the cause, the
// backend, the kind, and the trigger class of the operands (which operand
// classes the minimized tuple needs: "ge256", "all-ones_min", "in-range";
// semantic_classes.h; "-hw" is appended when judged against the hardware
// reading, oracle/errata.h; a case with runtime sources is prefixed by them,
// "runtime-a.ge256"). Which result bytes differ is not part of it: one
// cause shows in different bytes for different operands. Entry names are
// the signature, encoded so that they parse back (EntryName /
// ParseEntryName).

#ifndef PTXDIFF_TRIAGE_FINDING_H_
#define PTXDIFF_TRIAGE_FINDING_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/tuple.h"
#include "oracle/errata.h"
#include "oracle/oracle.h"
#include "protocol/fault_kind.h"

namespace ptxdiff {

enum class FindingKind : uint8_t {
  kValueMismatch,  // a value differs from a defined oracle result
  kCrash,          // the worker died on the batch, twice
  kHang,           // the worker did not answer in time, twice
  kProtocolError,  // the worker answered garbage, twice
  kDeviceFault,    // the device reported a sticky error (CUDA backend)
};
absl::string_view FindingKindName(FindingKind kind);  // "value-mismatch", ...
std::optional<FindingKind> ParseFindingKind(absl::string_view name);
FindingKind FromFault(FaultKind kind);
// "hang in bfind": a crash's or hang's cause named by its family, one
// cause across the family's variants and operands, a tuple's and a
// program's alike (entries are grouped by equal causes).
std::string FaultInFamilyCause(FindingKind kind, Family family);

struct Finding {
  FindingKind kind = FindingKind::kValueMismatch;
  Tuple tuple;                           // the (minimized) disagreeing tuple
  std::vector<Tuple> batch;              // for faults: the batch's tuples
  Result oracle;                         // the oracle's result under `reading`
  Reading reading = Reading::kSpec;      // what it was judged against
  std::optional<uint64_t> backend_bits;  // for value mismatches
  // With backend_bits: the backend's outgoing CC.CF, for a `.cc` variant
  // (HasCarryOut; false for the others). A mismatch may be in it alone.
  bool backend_carry = false;
  std::string backend;           // the backend's name ("ptxas")
  std::string backend_identity;  // WorkerIdentity::Describe()
  // With backend_bits: how the backend obtained them, where its reply said
  // (a value's note: ptxas's "executed: ...", with the SASS that ran).
  std::string backend_note;
  std::string detail;  // for faults: what the client saw
  // What the disagreement depends on, where a contrast tells it across
  // variants (one bug, one cause): "wrong only with 64-bit immediates (the
  // same operands in registers agree)" (the minimizer's contrast run).
  // Faults get theirs when filed (FaultCause). Entries of one kind and
  // backend with the same cause are one root cause (GroupByRootCause);
  // empty: the variant is the cause.
  std::string cause;
  std::string raw_input;  // the fuzzer input that found it, if any
  // How minimizing went.
  int64_t minimize_backend_calls = 0;
  double minimize_seconds = 0;
  bool flaky = false;  // the minimized case did not reproduce
  // How many times it was seen (a campaign files repeats in bulk), and the
  // spellings it was found as before minimizing (recorded in the entry).
  int64_t occurrences = 1;
  std::vector<std::string> found_as;
  // A fault of `batch` that could not be narrowed to one tuple (isolation
  // ran out of budget or time, or no worker could start to do it): its
  // class is "unisolated-<kind>" and its entry is named after the batch
  // (BatchName), not a variant; `tuple` is the batch's first, not known to
  // be at fault, and the case file holds every tuple of the batch.
  bool unisolated = false;
  // A program case's disagreement (program/, issue 31) in place of `tuple`:
  // the case brings its own files, and is named after its signature.
  struct ProgramCase {
    std::string name;  // "program-1f2e3d4c" (ProgramSignatureName)
    std::string form;  // the class: "immediate-fold" or "runtime-claim"
    std::string
        case_text;  // the minimized program, comments saying what differs
    std::string repro_ptx;  // a standalone module that shows it
    std::string what;       // one line for lists and summaries
    // Its steps' spellings in order, "(loops)" added when it has any: what
    // groups its entries into one root cause (GroupByRootCause).
    std::string shape;
    // What ptxas assumed, in words, where its cause key was read off a
    // constant (program/program_cause.h), or why no key was found; meta.txt's
    // `assumed`.
    std::string assumed;
  };
  std::optional<ProgramCase> program;
};

struct Signature {
  FindingKind kind;
  // The canonical spelling of the variant; for an unisolated fault, the
  // batch's name (BatchName).
  std::string spelling;
  std::string backend;
  std::string disagreement_class;  // the trigger class, or the fault kind

  friend bool operator==(const Signature&, const Signature&) = default;
};

Signature SignatureOf(const Finding& finding);

// "batch-1f2e3d4c": what an unisolated fault's entry is named after in
// place of a variant, a hash of the batch's distinct variants (whatever
// their order and operands): the same variants faulting unisolated again
// are counted in one entry, and no variant is blamed.
std::string BatchName(std::span<const Tuple> batch);
bool IsBatchName(absl::string_view name);
// True for a signature named after a batch, not a variant.
bool NamesABatch(const Signature& s);

// "program-1f2e3d4c": what a program case's entry is named after.
bool IsProgramName(absl::string_view name);
bool NamesAProgram(const Signature& s);

// Which bytes of the result differ ("bytes-0", "bytes-0-3"), for results up
// to 64 bits wide: shown in reports, not part of the signature.
std::string DisagreementClass(uint64_t oracle_bits, uint64_t backend_bits);

// The trigger class of a tuple the oracle evaluated to `oracle`
// (TriggerClassName of its trigger classes): a value mismatch's class.
std::string TriggerClassOf(const Tuple& t, const Result& oracle);

// "value-mismatch~ptxas~in-range~vadd.u32.u32.u32.sat%20d.b1%2C%20a%2C%20b%2C%20c":
// fields separated by `~`, the spelling percent-encoded so the name is a
// safe file name that parses back; "hang~ptxas~unisolated-hang~batch-1f2e3d4c"
// for an unisolated fault.
std::string EntryName(const Signature& s);
absl::StatusOr<Signature> ParseEntryName(absl::string_view name);

}  // namespace ptxdiff

#endif  // PTXDIFF_TRIAGE_FINDING_H_
