// Two readings of the oracle: the specification's and the hardware's.
//
// The spec reading is Evaluate() (oracle.h), unchanged: what the PTX ISA text
// says, with results it leaves open marked undefined. The hardware reading is
// the spec reading corrected by a short table of errata: documented places
// where NVIDIA hardware gives a known value that the spec leaves open, or a
// different value from the one the spec gives. Each erratum carries its scope
// (variants and operand condition), the hardware result, and the evidence;
// docs/spec-notes.md ("Errata: the hardware reading") lists the same table,
// and a test holds the two together.
//
// A mismatch between a backend and the spec reading whose backend value is
// what the hardware reading gives is a spec deviation matching known hardware
// behaviour, not an implementation bug: ErratumExplaining() says so.

#ifndef PTXDIFF_ORACLE_ERRATA_H_
#define PTXDIFF_ORACLE_ERRATA_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "absl/strings/string_view.h"
#include "isa/variant.h"
#include "oracle/oracle.h"

namespace ptxdiff {

enum class Reading : uint8_t {
  kSpec,      // Evaluate(): the PTX ISA text
  kHardware,  // Evaluate() corrected by AllErrata()
};
inline constexpr std::array<Reading, 2> kAllReadings = {Reading::kSpec,
                                                        Reading::kHardware};

inline namespace PTXDIFF_ORACLE_COPY {
// "spec" / "hardware".
absl::string_view ReadingName(Reading reading);
// The inverse of ReadingName; nullopt for anything else.
std::optional<Reading> ParseReading(absl::string_view name);
}  // namespace PTXDIFF_ORACLE_COPY

// One hardware erratum. The table is data: the conditions and values are
// small functions, the rest is text for reports and the docs.
struct Erratum {
  // Stable, short, kebab-case ("bfe-bfi-64-unmasked"); used in findings and
  // as the heading of its entry in docs/spec-notes.md.
  absl::string_view id;
  // The variants and the operand condition, in words.
  absl::string_view scope;
  // What the hardware gives there, in words.
  absl::string_view hardware_result;
  // Where this comes from: sources read (repository paths, URLs), GPU,
  // toolkit, and what could not be confirmed.
  absl::string_view evidence;
  // How sure the hardware value is, in a word or a sentence.
  absl::string_view confidence;
  // Short citations of the sources; each must appear in the erratum's entry
  // in docs/spec-notes.md (ErrataDocTest checks it).
  std::array<absl::string_view, 4> sources;

  // True if the erratum concerns variant `v` at all (for some operands).
  bool (*covers)(const Variant& v);
  // The operand condition; called only for variants it covers.
  bool (*triggers)(const Variant& v, const Operands& o);
  // The hardware's result bits (zero-extended from ResultWidth), where the
  // erratum applies.
  uint64_t (*hardware_value)(const Variant& v, const Operands& o);

  bool Applies(const Variant& v, const Operands& o) const {
    return covers(v) && triggers(v, o);
  }
};

// A result under a reading, and the erratum that produced it (nullptr where
// the result is the spec reading's).
struct ReadResult {
  Result result;
  const Erratum* erratum = nullptr;
};

inline namespace PTXDIFF_ORACLE_COPY {

// Every erratum of the hardware reading, in a fixed order. At most one
// applies to any tuple.
std::span<const Erratum> AllErrata();

// The erratum with this id, or nullptr.
const Erratum* FindErratum(absl::string_view id);

// The erratum that applies to this tuple, or nullptr.
const Erratum* ErratumFor(const Variant& v, const Operands& o);

// kSpec: Evaluate(v, o), erratum nullptr. kHardware: where an erratum
// applies, its hardware value, marked defined, and the erratum; elsewhere
// Evaluate(v, o).
ReadResult Read(Reading reading, const Variant& v, const Operands& o);

// Read(reading, v, o).result.
Result EvaluateWithReading(Reading reading, const Variant& v,
                           const Operands& o);

// EvaluateBatch under a reading. `results` must be at least as long as
// `operands`.
void EvaluateBatchWithReading(Reading reading, const Variant& v,
                              std::span<const Operands> operands,
                              std::span<Result> results);

// For classifying a mismatch against the spec reading: the erratum that
// applies to this tuple if the backend's `backend_bits` (zero-extended from
// ResultWidth) equal the hardware reading's value and differ from the spec
// reading's value or the spec leaves it open; otherwise nullptr. A non-null
// answer means "spec deviation matching known hardware behaviour".
const Erratum* ErratumExplaining(const Variant& v, const Operands& o,
                                 uint64_t backend_bits);

}  // namespace PTXDIFF_ORACLE_COPY
}  // namespace ptxdiff

#endif  // PTXDIFF_ORACLE_ERRATA_H_
