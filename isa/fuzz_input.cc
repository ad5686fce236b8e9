#include "isa/fuzz_input.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"

namespace ptxdiff {
namespace {

uint64_t Load64(const char* p) {
  uint64_t x;
  std::memcpy(&x, p,
              8);  // little-endian hosts only (static_assert in protocol.cc)
  return x;
}

}  // namespace

absl::StatusOr<std::vector<Tuple>> DecodeFuzzInputInDefaultForm(
    absl::string_view bytes, bool runtime_by_default) {
  absl::StatusOr<std::vector<Tuple>> tuples = DecodeFuzzInput(bytes);
  if (tuples.ok() && !FuzzInputHasForms(bytes)) {
    for (Tuple& t : *tuples)
      t.runtime = DefaultForm(t.variant, runtime_by_default);
  }
  return tuples;
}

bool FuzzInputHasForms(absl::string_view bytes) {
  return bytes.size() >= 8 && Load64(bytes.data()) == kFuzzInputFormsTag;
}

absl::StatusOr<std::vector<Tuple>> DecodeFuzzInput(absl::string_view bytes) {
  const bool with_forms = FuzzInputHasForms(bytes);
  if (with_forms) bytes.remove_prefix(8);
  if (bytes.size() < 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("fuzz input of ", bytes.size() + (with_forms ? 8 : 0),
                     " bytes is truncated: it needs a variant id"));
  }
  const uint64_t id = Load64(bytes.data());
  const std::optional<Variant> v = VariantByStableId(id);
  if (!v) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fuzz input names no known variant (id 0x%016x): a "
                        "foreign file, or one "
                        "from a ptxdiff whose table lacks it",
                        id));
  }
  const size_t sources = NumSources(*v);
  const size_t record = 8 * sources + (with_forms ? 1 : 0);
  const uint8_t capable = RuntimeCapableSources(*v);
  std::vector<Tuple> tuples;
  for (size_t at = 8;
       at + record <= bytes.size() && tuples.size() < kMaxTuplesPerFuzzInput;
       at += record) {
    Tuple t{*v, {}};
    const char* operands = bytes.data() + at;
    if (with_forms) t.runtime = static_cast<uint8_t>(*operands++) & capable;
    for (size_t i = 0; i < sources; ++i) {
      t.operands.v[i] = Load64(operands + 8 * i) & SourceMask(*v, i);
    }
    tuples.push_back(t);
  }
  if (tuples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fuzz input is truncated: ", bytes.size() - 8,
        " bytes after the variant id, ", record, " needed for one tuple"));
  }
  return tuples;
}

namespace {

void AppendLe64(uint64_t x, std::string& out) {
  out.append(reinterpret_cast<const char*>(&x), 8);
}

}  // namespace

std::string EncodeFuzzInput(const Variant& v,
                            const std::vector<Operands>& tuples) {
  std::string out;
  AppendLe64(StableId(v), out);
  for (const Operands& o : tuples) {
    for (int i = 0; i < NumSources(v); ++i) AppendLe64(o.v[i], out);
  }
  return out;
}

std::string EncodeFuzzInput(const std::vector<Tuple>& tuples) {
  if (tuples.empty()) return "";
  const Variant& v = tuples[0].variant;
  const bool with_forms =
      std::any_of(tuples.begin(), tuples.end(),
                  [](const Tuple& t) { return t.runtime != 0; });
  std::string out;
  if (with_forms) AppendLe64(kFuzzInputFormsTag, out);
  AppendLe64(StableId(v), out);
  for (const Tuple& t : tuples) {
    if (with_forms) out.push_back(static_cast<char>(t.runtime));
    for (int i = 0; i < NumSources(v); ++i) AppendLe64(t.operands.v[i], out);
  }
  return out;
}

}  // namespace ptxdiff
