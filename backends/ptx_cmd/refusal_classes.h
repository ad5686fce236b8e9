// Refusals learned at the level a tool refuses (issue 62, item 1). A real
// parser refuses whole feature classes (every video variant with operand
// selectors, every `.cc`, every packed type) and names one error a run:
// learned one variant at a time, its ~78k refused variants cost a run each.
//
// A refusal of one variant, with what the tool said (RefusalMessage), is a
// hypothesis about each class the variant belongs to: its family's variants
// sharing one feature of it (ClassFeature: selectors, the carry, a packed
// type, the whole family, or one axis value such as `.sat` or `.type u16`).
// A hypothesis is tested, the broadest feature first, on kSamples variants of
// the class run alone, each the most unlike the refused one and the samples
// before it (those tell a class that is too broad soonest); a class whose
// samples are all refused with the same message is confirmed, and its
// variants are refused from then on without a run. A hypothesis a sample
// disproves is not tested again, nor one holding a variant that ran (Ran),
// and after kMaxDisprovedPerMessage disproved for a family, shape and
// message none is tried. A class confirmed in one shape (operands in
// registers, or as written) is tested in the other on one sample. A small
// random re-check (Recheck) runs a variant of a confirmed class now and
// then and drops the class if it is not refused as the class says: a wrong
// generalization is found.

#ifndef PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_CLASSES_H_
#define PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_CLASSES_H_

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "isa/variant.h"

namespace ptxdiff {

// What the variants of a class share besides their family.
struct ClassFeature {
  enum Kind : uint8_t {
    kSelectors,  // a video operand selector (`.b0`..`.h1`), or SIMD video
    kCarry,      // `.cc` or a carry-in (addc, subc, madc)
    kPacked,     // a packed type (`.u16x2`, `.s16x2`) on any type axis
    kFamily,     // every variant of the family
    kAxis,       // one value of one axis: `axis` is `value` (AxisInfo::get)
  } kind = kFamily;
  Axis axis = Axis::kType;
  int value = 0;
  friend bool operator==(const ClassFeature&, const ClassFeature&) = default;
};

// `v`'s features, the broadest first: the derived ones it has, the family,
// then each axis value it has (an absent one is no feature).
std::vector<ClassFeature> FeaturesOf(const Variant& v);
bool HasFeature(const Variant& v, const ClassFeature& f);
// A feature as a refusal file keeps it: "selectors", "carry", "packed",
// "family", or an axis's field and value ("type=u16x2", "sat=sat").
std::string FeatureToken(Family family, const ClassFeature& f);
std::optional<ClassFeature> ParseFeatureToken(Family family,
                                              absl::string_view token);

// What the tool said of a refusal of `v`, as classes compare it: its error
// lines (else the last line of its output) from after the last file name (a
// word with a '/'), without line numbers (after ':' or "line ") or `v`'s
// spelling; "" if it said nothing (a silent refusal is learned variant by
// variant).
std::string RefusalMessage(const Variant& v,
                           const std::vector<std::string>& error_lines,
                           absl::string_view output);

// A class the tool refuses in one shape.
struct RefusalClass {
  Family family = Family::kAdd;
  ClassFeature feature;
  bool written = false;  // operands as written (immediates), or registers
  std::string message;   // RefusalMessage, shared by all its samples
  int sampled = 0;       // its variants run alone and refused (not the first)

  bool Contains(const Variant& v, bool shape_written) const {
    return v.family == family && shape_written == written &&
           HasFeature(v, feature);
  }
  // "vadd with a video operand selector, in registers"
  std::string Describe() const;
};

// A variant run alone to test a hypothesis.
struct AloneRun {
  enum End : uint8_t {
    kRefused,     // with `message` (RefusalMessage)
    kNotRefused,  // it ran, crashed or hung: not this class
    kUnknown,     // not run to its end (the batch's time): test it later
  } end = kUnknown;
  std::string message;
};
using AloneRunner =
    absl::FunctionRef<AloneRun(const Variant& v, bool written)>;

class RefusalClasses {
 public:
  static constexpr int kSamples = 3;

  // `runnable`: whether the backend runs a variant at all (its target), so
  // that no sample is one it would not send.
  RefusalClasses(std::function<bool(const Variant&)> runnable,
                 std::vector<RefusalClass> known);

  // The confirmed class `v` in shape `written` is in, if any.
  const RefusalClass* Find(const Variant& v, bool written) const;
  const std::vector<RefusalClass>& classes() const { return classes_; }
  // Adds a class another learner confirmed (a worker beside this one),
  // unless it is known.
  void Adopt(const RefusalClass& c);
  // Drops the classes confirmed with `message` (a re-check at a run's start
  // found the tool accepting it: refusal_recheck.h).
  void Forget(const std::string& message) {
    std::erase_if(classes_,
                  [&](const RefusalClass& c) { return c.message == message; });
  }
  // `v` ran in shape `written` (the tool gave its values): a hypothesis
  // whose class holds it is disproved without a run.
  void Ran(const Variant& v, bool written) { ran_.insert({v, written}); }

  // After `v` alone, in shape `written`, was refused saying `message`: tests
  // the hypotheses it is evidence for (see the top of the file) and returns
  // the class confirmed, if one was. Stops at the first kUnknown run.
  std::optional<RefusalClass> Learn(const Variant& v, bool written,
                                    const std::string& message, AloneRunner run);

  // Runs one random variant of one random class: a class it disproves is
  // dropped and returned. Nothing without classes.
  std::optional<RefusalClass> Recheck(AloneRunner run);

  // The tool runs spent testing hypotheses and re-checking.
  int64_t runs() const { return runs_; }

 private:
  // Up to `count` variants of `c` other than `evidence`, each the most
  // unlike `evidence` and the ones before it.
  std::vector<Variant> Sample(const RefusalClass& c, const Variant& evidence,
                              int count);
  // True if every sample is refused with `c.message`; nullopt if a run did
  // not end.
  std::optional<bool> Test(RefusalClass& c, const Variant& evidence,
                           AloneRunner run);
  std::string HypothesisKey(const RefusalClass& c) const;
  bool AnyRan(const RefusalClass& c) const;

  std::function<bool(const Variant&)> runnable_;
  std::vector<RefusalClass> classes_;
  absl::flat_hash_set<std::string> disproved_;
  // Per family, shape and message: see kMaxDisprovedPerMessage.
  absl::flat_hash_map<std::string, int> disproved_per_message_;
  absl::flat_hash_set<std::pair<Variant, bool>> ran_;
  std::mt19937_64 rng_;
  int64_t runs_ = 0;
};

}  // namespace ptxdiff

#endif  // PTXDIFF_WORKER_BACKENDS_PTX_CMD_REFUSAL_CLASSES_H_
