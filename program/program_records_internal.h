// What the byte form's decoder (program_records_decoder.cc) and encoder
// (program_records_encoder.cc) share: the input type codes and the
// registers named by where they were set (program_encoding.h).

#ifndef PTXDIFF_PROGRAM_PROGRAM_RECORDS_INTERNAL_H_
#define PTXDIFF_PROGRAM_PROGRAM_RECORDS_INTERNAL_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "isa/family_table.h"
#include "isa/spelling.h"
#include "program/program.h"
#include "program/program_encoding.h"

namespace ptxdiff::program_records_internal {

// An input's or a move's type code, and back.
inline constexpr std::array<int, 4> kWidthOfType = {16, 32, 64, 1};
static_assert(kTidXInputType == kWidthOfType.size(),
              "a thread input's type codes follow the widths'");

inline std::optional<uint8_t> TypeOfWidth(int width) {
  for (uint8_t t = 0; t < kWidthOfType.size(); ++t) {
    if (kWidthOfType[t] == width) return t;
  }
  return std::nullopt;
}

// An input record's type code (read modulo kNumInputTypes), and back.
inline ThreadInput ThreadOfType(uint8_t type) {
  switch (type % kNumInputTypes) {
    case kTidXInputType:
      return ThreadInput::kTidX;
    case kLaneIdInputType:
      return ThreadInput::kLaneId;
    default:
      return ThreadInput::kNone;
  }
}

inline uint8_t TypeOfInput(const ProgramInput& in) {
  if (in.loaded) return kLoadedInputType + *TypeOfWidth(in.width);
  switch (in.thread) {
    case ThreadInput::kTidX:
      return kTidXInputType;
    case ThreadInput::kLaneId:
      return kLaneIdInputType;
    case ThreadInput::kNone:
      break;
  }
  return *TypeOfWidth(in.width);
}

// The registers set so far, in the order they were first set.
class RegisterFile {
 public:
  struct Register {
    std::string name;
    int width;
  };

  void Add(std::string name, int width) {
    index_[name] = registers_.size();
    registers_.push_back({std::move(name), width});
  }
  bool Has(const std::string& name) const { return index_.contains(name); }

  // The registers whose width `fits`, the most recently set first.
  std::vector<const Register*> Fitting(
      const std::function<bool(int)>& fits) const {
    std::vector<const Register*> out;
    for (auto it = registers_.rbegin(); it != registers_.rend(); ++it) {
      if (fits(it->width)) out.push_back(&*it);
    }
    return out;
  }

  // `name`'s pick among the registers whose width `fits`.
  absl::StatusOr<uint8_t> PickOf(const std::string& name,
                                 const std::function<bool(int)>& fits) const {
    const std::vector<const Register*> fitting = Fitting(fits);
    for (size_t k = 0; k < fitting.size(); ++k) {
      if (fitting[k]->name != name) continue;
      if (k > 127) {
        return absl::InvalidArgumentError(
            absl::StrCat("%", name, " is ", k,
                         " registers back; the byte form reaches 127"));
      }
      return static_cast<uint8_t>(k);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("%", name, " does not fit where it is used"));
  }

 private:
  std::vector<Register> registers_;
  absl::flat_hash_map<std::string, size_t> index_;
};

inline std::function<bool(int)> WidthIs(int width) {
  return [width](int w) { return w == width; };
}

// The trip count a loop may have inside loops of `outer` trips, so that
// the innermost runs at most kMaxLoopTrip times in all.
inline int TripCap(const std::vector<int>& outer) {
  int64_t runs = 1;
  for (int t : outer) runs *= std::max(t, 1);
  return static_cast<int>(std::max<int64_t>(0, kMaxLoopTrip / runs));
}

// A variant that can be a step: the one with this stable id, else the id
// wrapped around the table (so that any bytes name one); nullopt if it is
// not PTX.
inline std::optional<Variant> StepVariant(uint64_t id) {
  std::optional<Variant> v = VariantByStableId(id);
  if (!v) {
    const absl::Span<const Variant> all = AllVariants();
    v = all[id % all.size()];
  }
  if (InfoOf(v->family).isa != TargetIsa::kPtx) return std::nullopt;
  return v;
}

}  // namespace ptxdiff::program_records_internal

#endif  // PTXDIFF_PROGRAM_PROGRAM_RECORDS_INTERNAL_H_
