// Composing canonical spellings (isa/spelling.h), the tables composed from
// them (isa/isa_tables.h: every legal variant's spelling and stable id, and
// the way back from either), and the lookups in them. Not instrumented in
// the fuzz builds, unlike the parser in spelling.cc (see spelling_table.h).

#include "isa/spelling_table.h"

#include <bit>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "common/fnv1a.h"
#include "isa/family_table.h"
#include "isa/isa_tables.h"
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

}  // namespace

int IsaTables::FindByStableId(uint64_t id, absl::string_view spelling) const {
  const size_t mask = by_stable_id.size() - 1;
  const int bits = std::countr_zero(by_stable_id.size());
  for (size_t slot = IdSlot(id, bits);; slot = (slot + 1) & mask) {
    const uint32_t entry = by_stable_id[slot];
    if (entry == 0) return -1;
    const size_t i = entry - 1;
    if (stable_ids[i] == id &&
        (spelling.empty() || SpellingAt(i) == spelling)) {
      return static_cast<int>(i);
    }
  }
}

IsaTables ComputedIsaTables::View() const {
  return {variants, spelling_text, spelling_ends, stable_ids, by_stable_id};
}

ComputedIsaTables ComputeIsaTables() {
  ComputedIsaTables t;
  for (const FamilyInfo& info : AllFamilies()) {
    ForEachVariant(info.family,
                   [&](const Variant& v) { t.variants.push_back(v); });
  }
  // Variants in a row differ mostly in their operand selectors (the last
  // axes turn fastest), so each opcode part is composed once per run.
  std::string opcode_part;
  std::optional<Variant> opcode_of;
  for (const Variant& v : t.variants) {
    const Variant key = WithoutOperandDecoration(v);
    if (key != opcode_of) {
      opcode_part.clear();
      AppendOpcodePart(v, opcode_part);
      opcode_of = key;
    }
    const size_t begin = t.spelling_text.size();
    t.spelling_text.append(opcode_part);
    AppendDecoratedOperands(v, t.spelling_text);
    t.spelling_ends.push_back(static_cast<uint32_t>(t.spelling_text.size()));
    t.stable_ids.push_back(
        Fnv1a64(absl::string_view(t.spelling_text).substr(begin)));
  }
  // At most half full, so that a probe ends after a slot or two.
  const int bits = std::bit_width(2 * t.variants.size() - 1);
  t.by_stable_id.assign(size_t{1} << bits, 0);
  for (size_t i = 0; i < t.stable_ids.size(); ++i) {
    size_t slot = IdSlot(t.stable_ids[i], bits);
    while (t.by_stable_id[slot] != 0)
      slot = (slot + 1) & (t.by_stable_id.size() - 1);
    t.by_stable_id[slot] = static_cast<uint32_t>(i + 1);
  }
  return t;
}

namespace {

// The spelling of the variant at `index` (VariantIndex).
absl::string_view SpellingAt(int index) {
  return TheIsaTables().SpellingAt(index);
}

}  // namespace

// The destination's selector (scalar video) or lane mask (SIMD): "h0", "".
absl::string_view DestinationSuffix(const Variant& v) {
  return v.mask != SimdMask::kNone ? SpellSimdMask(v.mask) : SpellSel(v.dsel);
}

const Variant* VariantSpelled(absl::string_view spelling) {
  const IsaTables& tables = TheIsaTables();
  const int index = tables.FindByStableId(Fnv1a64(spelling), spelling);
  return index >= 0 ? &tables.variants[index] : nullptr;
}

std::string SpellOpcode(const Variant& v) { return OpcodePart(v); }

std::string Spell(const Variant& v) {
  const int index = VariantIndex(v);
  return index >= 0 ? std::string(SpellingAt(index)) : ComposeSpelling(v);
}

absl::string_view SpellingInTable(const Variant& v) {
  const int index = VariantIndex(v);
  return index >= 0 ? SpellingAt(index) : absl::string_view();
}

uint64_t StableId(const Variant& v) {
  const int index = VariantIndex(v);
  return index >= 0 ? TheIsaTables().stable_ids[index]
                    : Fnv1a64(ComposeSpelling(v));
}

std::string SpellWithoutTables(const Variant& v) { return ComposeSpelling(v); }

std::optional<Variant> VariantByStableId(uint64_t id) {
  const IsaTables& tables = TheIsaTables();
  const int index = tables.FindByStableId(id);
  if (index < 0) return std::nullopt;
  return tables.variants[index];
}

}  // namespace ptxdiff
