// The triage directory's entries grouped by root cause (triage_store.h):
// entries of one backend naming one cause, and the words a list says of
// each group.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "triage/entry_files.h"
#include "triage/triage_store.h"

namespace ptxdiff {

using triage_internal::AddCounts;

bool RootCause::explained() const {
  for (const EntryInfo* e : entries) {
    if (!e->explained()) return false;
  }
  return true;
}

namespace {
// Entries of one variant, kind and backend.
std::string VariantKey(const Signature& s) {
  return absl::StrCat(FindingKindName(s.kind), "\t", s.backend, "\t",
                      s.spelling);
}

// What names an entry's cause: its own (finding.h; for a program, where its
// executed code departs), else a program's steps (programs of one shape
// that differ in a constant's class are one cause), else the cause other
// entries of its variant name (`causes`: an entry filed without one, not
// minimized or filed before causes were, joins its variant's), else its
// variant.
std::string CauseName(const EntryInfo& e,
                      const std::map<std::string, std::string>& causes) {
  if (const auto cause = e.meta.find("cause"); cause != e.meta.end())
    return cause->second;
  const auto shape = e.meta.find("shape");
  if (NamesAProgram(e.signature) && shape != e.meta.end()) {
    return absl::StrCat("program: ", shape->second);
  }
  const auto known = causes.find(VariantKey(e.signature));
  return known != causes.end() ? known->second : e.signature.spelling;
}
}  // namespace

std::vector<RootCause> GroupByRootCause(const std::vector<EntryInfo>& entries) {
  std::map<std::string, std::string> variant_causes;
  for (const EntryInfo& e : entries) {
    if (const auto cause = e.meta.find("cause"); cause != e.meta.end())
      variant_causes.try_emplace(VariantKey(e.signature), cause->second);
  }
  std::vector<RootCause> causes;
  for (const EntryInfo& e : entries) {
    const Signature& s = e.signature;
    const std::string name = CauseName(e, variant_causes);
    auto it =
        std::find_if(causes.begin(), causes.end(), [&](const RootCause& c) {
          return c.kind == s.kind && c.backend == s.backend &&
                 c.spelling == name;
        });
    if (it == causes.end()) {
      it = causes.insert(
          causes.end(),
          {.kind = s.kind, .backend = s.backend, .spelling = name});
    }
    it->entries.push_back(&e);
    it->count = AddCounts(it->count, e.count());
  }
  return causes;
}

namespace {
// An entry's `assumed` (program/program_cause.h) without its preamble:
// "`bfe.s32` of 0x0, 0x55, 0x1 (field-past-top) were 0xffffffff (the
// oracle: 0x0)"; "" for none.
std::string AssumedOf(const RootCause& c) {
  constexpr absl::string_view kPreamble =
      "ptxas's constant is what the program gives if ";
  for (const EntryInfo* e : c.entries) {
    const auto assumed = e->meta.find("assumed");
    if (assumed == e->meta.end()) continue;
    absl::string_view words = assumed->second;
    if (absl::ConsumePrefix(&words, kPreamble)) return std::string(words);
  }
  return "";
}

// True if an entry of `c` records a search for a cause key that found none
// (its `assumed` says so: program/program_cause.h's kNoCulpritWords);
// entries filed before keys existed have no `assumed` at all.
bool KeySearchFoundNone(const RootCause& c) {
  for (const EntryInfo* e : c.entries) {
    const auto assumed = e->meta.find("assumed");
    if (assumed != e->meta.end() &&
        absl::StartsWith(assumed->second, "no cause key"))
      return true;
  }
  return false;
}

// The trigger classes its tuple entries were filed in: "field-past-top,
// runtime-a.field-past-top".
std::string TupleClassesOf(const RootCause& c) {
  std::vector<std::string> classes;
  for (const EntryInfo* e : c.entries) {
    const std::string& cls = e->signature.disagreement_class;
    if (!NamesAProgram(e->signature) &&
        std::find(classes.begin(), classes.end(), cls) == classes.end()) {
      classes.push_back(cls);
    }
  }
  return absl::StrJoin(classes, ", ");
}
}  // namespace

std::string CauseInWords(const RootCause& c) {
  absl::string_view name = c.spelling;
  if (absl::ConsumePrefix(&name, "executed code that departs first at ")) {
    return absl::StrCat("miscompiled: the optimized code first goes wrong at ",
                        name, " (a value its -O0 code never computes)");
  }
  if (absl::ConsumePrefix(&name, "program: ")) {
    if (c.kind != FindingKind::kValueMismatch)
      return absl::StrCat("programs of the steps ", name);
    if (KeySearchFoundNone(c))
      return absl::StrCat("no cause key found: programs of the steps ", name);
    return absl::StrCat(
        "filed before cause keys (none was searched for): programs of the "
        "steps ",
        name);
  }
  if (c.kind != FindingKind::kValueMismatch ||
      absl::StrContains(c.spelling, ' ')) {
    return c.spelling;  // a contrast's or a fault's cause, already words
  }
  const std::string assumed = AssumedOf(c);
  const std::string classes = TupleClassesOf(c);
  return absl::StrCat(
      "a wrong value of `", c.spelling, "`",
      classes.empty() ? "" : absl::StrCat(" (", classes, ")"),
      assumed.empty() ? ""
                      : absl::StrCat(": ptxas's constant is as if ", assumed));
}

std::string EntriesAndCauses(size_t entries, size_t causes) {
  return absl::StrCat(entries, entries == 1 ? " entry, " : " entries, ", causes,
                      causes == 1 ? " root cause" : " root causes");
}

}  // namespace ptxdiff
