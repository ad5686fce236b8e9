// The structure-aware mutator and crossover of the differential fuzzer.
//
// Inputs are fuzz_input.h's format (a variant's stable id, then tuples).
// A mutation changes the variant along its family's axes (or jumps to
// another family), replaces operands with interesting values (edge_operands.h:
// 0, 1, -1, MIN/MAX per width, powers of two +-1, shift/position/length
// values, byte and half-word sign patterns), flips operand bits, or adds,
// duplicates or drops a tuple, or (where the backend runs operand forms)
// makes a source a runtime value or an immediate again. Everything is drawn
// from a PRNG seeded with libFuzzer's seed, so a run replays. The output always
// decodes. In a campaign, an input whose variant has had its share of the
// fuzz stage goes to a variant still under its budget instead (FuzzSteer).

#ifndef PTXDIFF_FUZZERS_MUTATOR_H_
#define PTXDIFF_FUZZERS_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "isa/variant.h"

namespace ptxdiff {

// Which variants a campaign fuzzes (its families, or all).
struct VariantFilter {
  std::vector<Family> include;  // empty: all families
  std::vector<Family> exclude;
  // The backend runs operand forms (WorkerIdentity::forms): a mutation may
  // make a source a runtime value, or an immediate again.
  bool runtime_forms = false;
  // An input without forms runs in the worker's default form
  // (WorkerIdentity::runtime_by_default, which implies forms; DefaultForm):
  // mutations start from it, and an input whose tuples are all in it is
  // written without forms.
  bool runtime_by_default = false;
  bool Allows(Family f) const;
};

// Where a campaign wants its fuzz inputs (campaign/exploration_budget.h):
// libFuzzer's corpus holds a small share of the variants, and mutation alone
// keeps most inputs there.
class FuzzSteer {
 public:
  virtual ~FuzzSteer() = default;
  // True if `v` has had its share of fuzz-input tuples for now.
  virtual bool HadItsShare(const Variant& v) = 0;
  // The next variant still under its share; nullopt if none.
  virtual std::optional<Variant> NextToExplore() = 0;
};

// Mutates the input in `data` (of `size` bytes, room for `max_size`) and
// returns the new size. An input that does not decode is replaced by a fresh
// random one. With a `steer`, an input whose variant had its share moves to
// NextToExplore's variant, each tuple's operands masked to it and one of
// them mutated.
size_t MutateFuzzInput(uint8_t* data, size_t size, size_t max_size,
                       unsigned seed, const VariantFilter& filter = {},
                       FuzzSteer* steer = nullptr);

// The variant of `a` with tuples from both `a` and `b` (operands re-masked to
// the variant's widths, forms to its sources and the filter's
// runtime_forms), written to `out` (room for `max_out`). With a `steer`,
// where that variant had its share, NextToExplore's variant instead.
size_t CrossOverFuzzInputs(const uint8_t* a, size_t a_size, const uint8_t* b,
                           size_t b_size, uint8_t* out, size_t max_out,
                           unsigned seed, const VariantFilter& filter = {},
                           FuzzSteer* steer = nullptr);

// A fresh valid input: a random allowed variant and edge-operand tuples.
std::string RandomFuzzInput(std::mt19937_64& rng, const VariantFilter& filter,
                            size_t tuples);

}  // namespace ptxdiff

#endif  // PTXDIFF_FUZZERS_MUTATOR_H_
