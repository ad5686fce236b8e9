// An instruction variant: one family plus a value on each of its axes.
//
// A Variant is a small value type (compare it, copy it, hash it). Which axis
// values a family accepts, and which combinations are legal, is decided by the
// family table (family_table.h); a Variant built by hand may be illegal, and
// IsLegal() says so. The stable identity of a variant is a hash of its
// canonical spelling (StableId), so corpora and crash files survive the table
// growing and the enums being reordered.

#ifndef PTXDIFF_ISA_VARIANT_H_
#define PTXDIFF_ISA_VARIANT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "isa/axes.h"

namespace ptxdiff {

// One value per axis of isa/axes.inc, in its order.
enum class Axis : uint8_t {
#define PTXDIFF_AXIS(Name, ...) k##Name,
#include "isa/axes.inc"
#undef PTXDIFF_AXIS
};
inline constexpr int kNumAxes = 0
#define PTXDIFF_AXIS(...) +1
#include "isa/axes.inc"
#undef PTXDIFF_AXIS
    ;

struct Variant {
  Family family = Family::kAdd;
  // One member per axis, kNone or false when absent. `type` is the `.type`
  // of the integer families, the `.dtype` of the video families and the
  // destination type of Intel vISA SHL; `atype`/`btype` are dp4a/dp2a/video
  // `.atype`/`.btype` and the vISA src0/src1 types.
#define PTXDIFF_AXIS(Name, field, Value, ...) Value field = Value{};
#include "isa/axes.inc"
#undef PTXDIFF_AXIS

  friend bool operator==(const Variant&, const Variant&) = default;

  // Hashed as its bytes, in one step (every member is one byte, and two
  // equal variants have equal bytes: see the static_assert below): the
  // campaign looks variants up several times per tuple.
  template <typename H>
  friend H AbslHashValue(H h, const Variant& v) {
    return H::combine_contiguous(
        std::move(h), reinterpret_cast<const unsigned char*>(&v), sizeof(v));
  }
};
static_assert(std::has_unique_object_representations_v<Variant>,
              "Variant is hashed as its bytes: no padding, no floats");

// The number of axes on which `a` and `b` differ (their families aside).
inline int DifferingAxes(const Variant& a, const Variant& b) {
  int n = 0;
#define PTXDIFF_AXIS(Name, field, ...) n += a.field != b.field;
#include "isa/axes.inc"
#undef PTXDIFF_AXIS
  return n;
}

// The most operands any variant has (bfi: a, b, c, d), not counting the
// destination.
inline constexpr int kMaxSources = 4;

// Operand values of one tuple (sources a, b, c, d in order), each in the low
// bits of a uint64_t, as wide as that source (see SourceWidth). Bits above a
// source's width and slots past NumSources are ignored.
struct Operands {
  uint64_t v[kMaxSources] = {};
};

// The identity of a variant that survives the table growing: FNV-1a 64 of its
// canonical spelling.
uint64_t StableId(const Variant& v);
// The legal variant with this stable id, if any.
std::optional<Variant> VariantByStableId(uint64_t id);

}  // namespace ptxdiff

#endif  // PTXDIFF_ISA_VARIANT_H_
