#include "triage/finding.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/fnv1a.h"
#include "harness/semantic_classes.h"
#include "isa/family_table.h"
#include "isa/operand_form.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

constexpr absl::string_view kUnisolatedPrefix = "unisolated-";
constexpr absl::string_view kBatchPrefix = "batch-";

constexpr FindingKind kAllKinds[] = {
    FindingKind::kValueMismatch, FindingKind::kCrash, FindingKind::kHang,
    FindingKind::kProtocolError, FindingKind::kDeviceFault};

// The fault a finding kind other than a value mismatch files.
FaultKind ToFault(FindingKind kind) {
  switch (kind) {
    case FindingKind::kHang:
      return FaultKind::kHang;
    case FindingKind::kProtocolError:
      return FaultKind::kProtocol;
    case FindingKind::kDeviceFault:
      return FaultKind::kDeviceFault;
    case FindingKind::kCrash:
      return FaultKind::kCrash;
    case FindingKind::kValueMismatch:
      return FaultKind::kCrash;  // not a fault; never asked
  }
  return FaultKind::kCrash;
}

bool SafeInName(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == '-';
}

std::string PercentEncode(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (SafeInName(c)) {
      out += c;
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

absl::StatusOr<std::string> PercentDecode(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int value = 0;
    if (i + 2 >= s.size())
      return absl::InvalidArgumentError("truncated %-escape");
    for (int k = 1; k <= 2; ++k) {
      const char c = s[i + k];
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) {
        return absl::InvalidArgumentError("bad %-escape");
      }
      value = value * 16 + (absl::ascii_isdigit(static_cast<unsigned char>(c))
                                ? c - '0'
                                : absl::ascii_tolower(c) - 'a' + 10);
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

}  // namespace

absl::string_view FindingKindName(FindingKind kind) {
  // A fault's finding is named as the client names the fault: one table.
  if (kind == FindingKind::kValueMismatch) return "value-mismatch";
  return FaultKindName(ToFault(kind));
}

std::optional<FindingKind> ParseFindingKind(absl::string_view name) {
  for (FindingKind kind : kAllKinds) {
    if (FindingKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

FindingKind FromFault(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCrash:
      return FindingKind::kCrash;
    case FaultKind::kHang:
      return FindingKind::kHang;
    case FaultKind::kProtocol:
      return FindingKind::kProtocolError;
    case FaultKind::kDeviceFault:
      return FindingKind::kDeviceFault;
    case FaultKind::kEnvironment:  // never filed: its command stops first
      return FindingKind::kProtocolError;
  }
  return FindingKind::kCrash;
}

std::string DisagreementClass(uint64_t oracle_bits, uint64_t backend_bits) {
  const uint64_t diff = oracle_bits ^ backend_bits;
  std::string out = "bytes";
  for (int byte = 0; byte < 8; ++byte) {
    if ((diff >> (8 * byte)) & 0xff) absl::StrAppend(&out, "-", byte);
  }
  return diff == 0 ? "none" : out;
}

std::string TriggerClassOf(const Tuple& t, const Result& oracle) {
  return TriggerClassName(TriggerClasses(SemanticClasses(t, oracle)));
}

Signature SignatureOf(const Finding& f) {
  if (f.program) {
    return {f.kind, f.program->name, f.backend,
            absl::StrCat(f.program->form,
                         f.reading == Reading::kHardware ? "-hw" : "")};
  }
  std::string cls = f.kind == FindingKind::kValueMismatch
                        ? TriggerClassOf(f.tuple, f.oracle)
                        : absl::StrCat(f.unisolated ? kUnisolatedPrefix : "",
                                       FindingKindName(f.kind));
  if (f.reading == Reading::kHardware) cls += "-hw";
  // A cause with runtime sources is not the same as one with immediates: a
  // compiler's claim about every value is another code path than its fold.
  if (f.tuple.runtime != 0 && !f.unisolated) {
    // "runtime-a-c.": characters an entry name keeps as they are.
    cls = absl::StrCat(
        "runtime-",
        absl::StrReplaceAll(
            RuntimeSourceNames(f.tuple.variant, f.tuple.runtime), {{",", "-"}}),
        ".", cls);
  }
  return {f.kind, f.unisolated ? BatchName(f.batch) : Spell(f.tuple.variant),
          f.backend, std::move(cls)};
}

std::string BatchName(std::span<const Tuple> batch) {
  std::vector<std::string> spellings;
  absl::flat_hash_set<Variant> seen;
  for (const Tuple& t : batch) {
    if (seen.insert(t.variant).second) spellings.push_back(Spell(t.variant));
  }
  std::sort(spellings.begin(), spellings.end());
  const uint64_t hash = Fnv1a64(absl::StrJoin(spellings, "\n"));
  return absl::StrCat(kBatchPrefix,
                      absl::Hex(hash & 0xffffffff, absl::kZeroPad8));
}

namespace {
// `prefix` and then 8 lowercase hex digits.
bool IsHashName(absl::string_view name, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&name, prefix) || name.size() != 8) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
           (c >= 'a' && c <= 'f');
  });
}
}  // namespace

bool IsBatchName(absl::string_view name) {
  return IsHashName(name, kBatchPrefix);
}

bool IsProgramName(absl::string_view name) {
  return IsHashName(name, "program-");
}

bool NamesAProgram(const Signature& s) { return IsProgramName(s.spelling); }

std::string FaultInFamilyCause(FindingKind kind, Family family) {
  return absl::StrCat(FindingKindName(kind), " in ", InfoOf(family).opcode);
}

bool NamesABatch(const Signature& s) {
  return absl::StartsWith(s.disagreement_class, kUnisolatedPrefix) &&
         IsBatchName(s.spelling);
}

std::string EntryName(const Signature& s) {
  return absl::StrCat(FindingKindName(s.kind), "~", PercentEncode(s.backend),
                      "~", PercentEncode(s.disagreement_class), "~",
                      PercentEncode(s.spelling));
}

absl::StatusOr<Signature> ParseEntryName(absl::string_view name) {
  std::vector<absl::string_view> fields = absl::StrSplit(name, '~');
  if (fields.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", name,
        "' is not a triage entry name (kind~backend~class~spelling)"));
  }
  const auto kind = ParseFindingKind(fields[0]);
  if (!kind) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown finding kind '", fields[0], "' in '", name, "'"));
  }
  Signature s{*kind, "", "", ""};
  for (auto [field, out] : {std::pair{fields[1], &s.backend},
                            std::pair{fields[2], &s.disagreement_class},
                            std::pair{fields[3], &s.spelling}}) {
    auto decoded = PercentDecode(field);
    if (!decoded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "': ", decoded.status().message()));
    }
    *out = *decoded;
  }
  if (!NamesABatch(s) && !NamesAProgram(s) && !ParseVariant(s.spelling).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", name, "' names an unknown variant '", s.spelling, "'"));
  }
  return s;
}

}  // namespace ptxdiff
