// The byte format of a differential fuzz input, and so of a libFuzzer crash
// file (crash-<sha1>), which `ptxdiff repro` and `ptxdiff minimize` read:
//
//   bytes 0..7   the variant's stable id (StableId: FNV-1a of its spelling),
//                little-endian
//   then         tuples: NumSources operands of 8 bytes each, little-endian,
//                masked to each source's width; a partial tuple at the end is
//                ignored
//
// A stable id survives the instruction table growing, so crash files and
// corpora stay valid across ptxdiff versions.
//
// An input with operand forms (isa/operand_form.h) opens with the 8 bytes of
// kFuzzInputFormsTag before the variant id, and each of its tuples with one
// byte: its Tuple::runtime, masked to the sources that may be runtime
// values. An input of all-immediate tuples is written without them, so it
// is the same bytes as before forms existed.
//
// An input without the tag says nothing of forms: it runs in the worker's
// default form (DefaultForm: all immediates, or, for a worker that runs
// code, every source a runtime value), so a corpus costs a backend its
// cheapest shape. An input with the tag says each tuple's form exactly.

#ifndef PTXDIFF_ISA_FUZZ_INPUT_H_
#define PTXDIFF_ISA_FUZZ_INPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "isa/tuple.h"

namespace ptxdiff {

inline constexpr size_t kMaxTuplesPerFuzzInput = 256;
// "PXDFORM1", little-endian; no variant's stable id (a test checks).
inline constexpr uint64_t kFuzzInputFormsTag = 0x314d524f46445850;

// The tuples of an input. InvalidArgument names what is wrong: too short,
// an unknown variant id, no complete tuple.
absl::StatusOr<std::vector<Tuple>> DecodeFuzzInput(absl::string_view bytes);

// True if `bytes` opens with kFuzzInputFormsTag: its tuples' forms are given.
bool FuzzInputHasForms(absl::string_view bytes);

// DecodeFuzzInput, with the tuples of an input that gives no forms in the
// default form, DefaultForm(v, runtime_by_default).
absl::StatusOr<std::vector<Tuple>> DecodeFuzzInputInDefaultForm(
    absl::string_view bytes, bool runtime_by_default);

// The bytes of an input holding `tuples` of one variant, all immediates.
std::string EncodeFuzzInput(const Variant& v,
                            const std::vector<Operands>& tuples);
// The bytes of an input holding `tuples` (all of one variant, at least
// one), with their forms.
std::string EncodeFuzzInput(const std::vector<Tuple>& tuples);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_FUZZ_INPUT_H_
