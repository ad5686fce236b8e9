// Composing canonical spellings (isa/spelling.h), and the tables built
// from them once per process: every legal variant's spelling, the index
// back from it (isa/spelling_table.h) and stable ids. Not instrumented in
// the fuzz builds, unlike the parser in spelling.cc (see spelling_table.h).

#include "isa/spelling_table.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/fnv1a.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// The axis that spells each token of a family's syntax (`type`, `sat`,
// ...), resolved once; nullptr for a token no axis spells (written "?").
const std::vector<const AxisInfo*>& SyntaxAxes(Family f) {
  static const auto* all = [] {
    auto* by_family = new std::vector<std::vector<const AxisInfo*>>();
    for (const FamilyInfo& info : AllFamilies()) {
      std::vector<const AxisInfo*>& axes = by_family->emplace_back();
      for (absl::string_view token :
           absl::StrSplit(info.syntax, '.', absl::SkipEmpty())) {
        const AxisInfo* spelled_by = nullptr;
        for (const AxisInfo& axis : AllAxes()) {
          if (axis.token == token) spelled_by = &axis;
        }
        axes.push_back(spelled_by);
      }
    }
    return by_family;
  }();
  return (*all)[static_cast<int>(f)];
}

// `v` without what is written on its operands, not as opcode tokens: the
// selectors, vmad's negations and a SIMD video instruction's lane mask
// (`d.h0`). Its opcode part is the same as `v`'s.
Variant WithoutOperandDecoration(const Variant& v) {
  Variant key = v;
  key.asel = key.bsel = key.dsel = Sel::kNone;
  key.mask = SimdMask::kNone;
  if (key.vmad_form == VmadForm::kNegProduct ||
      key.vmad_form == VmadForm::kNegC) {
    key.vmad_form = VmadForm::kNone;
  }
  return key;
}

bool HasOperandDecoration(const Variant& v) {
  return WithoutOperandDecoration(v) != v;
}

// Appends `.suffix` unless it is empty. Composing every variant's spelling
// is start-up work for every process (each worker parses them), so the
// spelling is appended into one string rather than joined from pieces.
void AppendSuffix(std::string& out, absl::string_view suffix) {
  if (suffix.empty()) return;
  out.push_back('.');
  out.append(suffix.data(), suffix.size());
}

// "d.b1, -a.h1, b.b2, c": the destination and sources with their selectors
// and negations.
void AppendOperandList(const Variant& v, std::string& out) {
  out.push_back('d');
  AppendSuffix(out, DestinationSuffix(v));
  out.append(v.vmad_form == VmadForm::kNegProduct ? ", -a" : ", a");
  AppendSuffix(out, SpellSel(v.asel));
  out.append(", b");
  AppendSuffix(out, SpellSel(v.bsel));
  if (NumSources(v) > 2)
    out.append(v.vmad_form == VmadForm::kNegC ? ", -c" : ", c");
}

void AppendOpcodePart(const Variant& v, std::string& out) {
  const absl::string_view opcode = InfoOf(v.family).opcode;
  out.append(opcode.data(), opcode.size());
  for (const AxisInfo* axis : SyntaxAxes(v.family)) {
    AppendSuffix(out,
                 axis != nullptr ? axis->spell(v.family, axis->get(v)) : "?");
  }
}

std::string OpcodePart(const Variant& v) {
  std::string out;
  AppendOpcodePart(v, out);
  return out;
}

// What follows the opcode part: " d.b1, a, b, c", or nothing.
void AppendDecoratedOperands(const Variant& v, std::string& out) {
  if (!HasOperandDecoration(v)) return;
  out.push_back(' ');
  AppendOperandList(v, out);
}

void AppendSpelling(const Variant& v, std::string& out) {
  AppendOpcodePart(v, out);
  AppendDecoratedOperands(v, out);
}

std::string ComposeSpelling(const Variant& v) {
  std::string out;
  AppendSpelling(v, out);
  return out;
}

// Every legal variant's spelling, by VariantIndex, composed once: a campaign
// spells the variants of every batch, and stable ids and parsing index all
// of them. One buffer for all of them, and a view of each: composing them is
// start-up work for every process that spells or parses (each worker does).
struct SpellingTable {
  std::string text;
  std::vector<absl::string_view> spellings;
};

const std::vector<absl::string_view>& AllSpellings() {
  static const SpellingTable* table = [] {
    auto* t = new SpellingTable();
    std::vector<size_t> ends;
    ends.reserve(AllVariants().size());
    // Variants in a row differ mostly in their operand selectors (the last
    // axes turn fastest), so each opcode part is composed once per run.
    std::string opcode_part;
    std::optional<Variant> opcode_of;
    for (const Variant& v : AllVariants()) {
      const Variant key = WithoutOperandDecoration(v);
      if (key != opcode_of) {
        opcode_part.clear();
        AppendOpcodePart(v, opcode_part);
        opcode_of = key;
      }
      t->text.append(opcode_part);
      AppendDecoratedOperands(v, t->text);
      ends.push_back(t->text.size());
    }
    t->spellings.reserve(ends.size());
    size_t begin = 0;
    for (size_t end : ends) {
      t->spellings.push_back(
          absl::string_view(t->text).substr(begin, end - begin));
      begin = end;
    }
    return t;
  }();
  return table->spellings;
}

// Every legal variant's stable id, by VariantIndex, hashed once: the
// systematic source seeds each run of tuples with it, and the fuzz input
// decoder looks variants up by it.
const std::vector<uint64_t>& AllStableIds() {
  static const auto* ids = [] {
    auto* all = new std::vector<uint64_t>();
    all->reserve(AllSpellings().size());
    for (absl::string_view spelling : AllSpellings()) {
      all->push_back(Fnv1a64(spelling));
    }
    return all;
  }();
  return *ids;
}

}  // namespace

// The destination's selector (scalar video) or lane mask (SIMD): "h0", "".
absl::string_view DestinationSuffix(const Variant& v) {
  return v.mask != SimdMask::kNone ? SpellSimdMask(v.mask) : SpellSel(v.dsel);
}

// Every legal variant by its spelling: the keys are views of
// AllSpellings(), which is never changed once composed.
const absl::flat_hash_map<absl::string_view, const Variant*>& SpellingIndex() {
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<absl::string_view, const Variant*>();
    const std::vector<Variant>& all = AllVariants();
    const std::vector<absl::string_view>& spellings = AllSpellings();
    map->reserve(all.size());
    for (size_t i = 0; i < all.size(); ++i) map->emplace(spellings[i], &all[i]);
    return map;
  }();
  return *index;
}

std::string SpellOpcode(const Variant& v) { return OpcodePart(v); }

std::string Spell(const Variant& v) {
  const int index = VariantIndex(v);
  return index >= 0 ? std::string(AllSpellings()[index]) : ComposeSpelling(v);
}

absl::string_view SpellingInTable(const Variant& v) {
  const int index = VariantIndex(v);
  return index >= 0 ? AllSpellings()[index] : absl::string_view();
}

uint64_t StableId(const Variant& v) {
  const int index = VariantIndex(v);
  return index >= 0 ? AllStableIds()[index] : Fnv1a64(ComposeSpelling(v));
}

std::string SpellWithoutTables(const Variant& v) { return ComposeSpelling(v); }

uint64_t StableIdWithoutTables(const Variant& v) {
  return Fnv1a64(ComposeSpelling(v));
}

std::optional<Variant> VariantByStableId(uint64_t id) {
  // Indices into AllVariants(), sized once: the fuzz loop decodes its first
  // input with it, so building it is on the way to the first tuple.
  static const auto* by_id = [] {
    auto* m = new absl::flat_hash_map<uint64_t, int>();
    const std::vector<uint64_t>& ids = AllStableIds();
    m->reserve(ids.size());
    for (size_t i = 0; i < ids.size(); ++i)
      m->emplace(ids[i], static_cast<int>(i));
    return m;
  }();
  const auto it = by_id->find(id);
  if (it == by_id->end()) return std::nullopt;
  return AllVariants()[it->second];
}

}  // namespace ptxdiff
