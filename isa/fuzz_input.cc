#include "isa/fuzz_input.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isa/family_table.h"
#include "oracle/bits.h"

namespace ptxdiff {
namespace {

uint64_t Load64(const char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);  // little-endian hosts only (static_assert in protocol.cc)
  return x;
}

}  // namespace

absl::StatusOr<std::vector<Tuple>> DecodeFuzzInput(absl::string_view bytes) {
  if (bytes.size() < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fuzz input of ", bytes.size(), " bytes is truncated: it needs a variant id"));
  }
  const uint64_t id = Load64(bytes.data());
  const std::optional<Variant> v = VariantByStableId(id);
  if (!v) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fuzz input names no known variant (id 0x%016x): a foreign file, or one "
        "from a ptxdiff whose table lacks it",
        id));
  }
  const size_t sources = NumSources(*v);
  std::vector<Tuple> tuples;
  for (size_t at = 8; at + 8 * sources <= bytes.size() &&
                      tuples.size() < kMaxTuplesPerFuzzInput;
       at += 8 * sources) {
    Tuple t{*v, {}};
    for (size_t i = 0; i < sources; ++i) {
      t.operands.v[i] = Load64(bytes.data() + at + 8 * i) & SourceMask(*v, i);
    }
    tuples.push_back(t);
  }
  if (tuples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fuzz input is truncated: ", bytes.size() - 8, " bytes after the variant id, ",
        8 * sources, " needed for one tuple"));
  }
  return tuples;
}

std::string EncodeFuzzInput(const Variant& v, const std::vector<Operands>& tuples) {
  const uint64_t id = StableId(v);
  std::string out(8, '\0');
  std::memcpy(out.data(), &id, 8);
  for (const Operands& o : tuples) {
    for (int i = 0; i < NumSources(v); ++i) {
      out.append(reinterpret_cast<const char*>(&o.v[i]), 8);
    }
  }
  return out;
}

}  // namespace ptxdiff
