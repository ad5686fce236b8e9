#include "isa/spelling.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "isa/family_table.h"
#include "isa/operand_text.h"
#include "isa/spelling_table.h"

namespace ptxdiff {
namespace {

std::string WithSuffix(absl::string_view name, absl::string_view suffix) {
  if (suffix.empty()) return std::string(name);
  return absl::StrCat(name, ".", suffix);
}

std::string WithSel(absl::string_view name, Sel s) {
  return WithSuffix(name, SpellSel(s));
}

// The destination with its selector or lane mask.
std::string Destination(const Variant& v, absl::string_view name) {
  return WithSuffix(name, DestinationSuffix(v));
}

// Plain operand names of a variant without decorations, in order.
std::string PlainOperandList(int num_sources, bool bfi) {
  static constexpr absl::string_view kNames[] = {"a", "b", "c", "d"};
  std::vector<absl::string_view> ops = {bfi ? "f" : "d"};
  for (int i = 0; i < num_sources; ++i) ops.push_back(kNames[i]);
  return absl::StrJoin(ops, ", ");
}

// The `.b0`..`.h1` selector at the end of an operand, or "". Any other
// `.suffix` is kept too, so that a misspelt selector fails to parse instead
// of being dropped.
absl::string_view SelectorSuffix(absl::string_view op) {
  const size_t dot = op.rfind('.');
  return dot == absl::string_view::npos ? "" : op.substr(dot);
}

// Operands in canonical form: the i-th operand renamed to the spec's name
// (d, a, b, c, d; bfi's destination is f), keeping its negation and
// selector, so that a PTX line with registers or immediates parses. vmad's
// `-b` becomes `-a`, and `-a, -b` cancels.
std::string NormalizeOperands(absl::string_view head,
                              absl::string_view operands) {
  static constexpr absl::string_view kNames[] = {"d", "a", "b", "c", "d"};
  std::vector<std::string> ops;
  for (absl::string_view op : absl::StrSplit(operands, ',')) {
    op = absl::StripAsciiWhitespace(op);
    const size_t i = ops.size();
    const bool negated = absl::ConsumePrefix(&op, "-");
    absl::string_view name = i < 5 ? kNames[i] : absl::string_view("?");
    if (i == 0 && absl::StartsWith(head, "bfi.")) name = "f";
    ops.push_back(absl::StrCat(negated ? "-" : "", name, SelectorSuffix(op)));
  }
  if (ops.size() >= 3) {
    const bool neg_a = absl::StartsWith(ops[1], "-");
    const bool neg_b = absl::StartsWith(ops[2], "-");
    if (neg_b) ops[2].erase(0, 1);
    if (neg_a && neg_b) ops[1].erase(0, 1);
    if (!neg_a && neg_b) ops[1].insert(0, "-");
  }
  return absl::StrJoin(ops, ", ");
}

// The input in canonical layout: "opcode.mods" or "opcode.mods d, a, b".
std::string Normalize(absl::string_view spelling) {
  absl::string_view s = absl::StripAsciiWhitespace(spelling);
  absl::ConsumeSuffix(&s, ";");
  s = absl::StripAsciiWhitespace(s);
  const size_t space = s.find_first_of(" \t");
  if (space == absl::string_view::npos) return std::string(s);
  const absl::string_view head = s.substr(0, space);
  return absl::StrCat(head, " ", NormalizeOperands(head, s.substr(space + 1)));
}

// The spec's own examples write `min.s16x2.relu` for `min.relu.s16x2`.
std::string MoveTrailingRelu(absl::string_view head) {
  if (!absl::ConsumeSuffix(&head, ".relu")) return std::string(head);
  const size_t dot = head.find('.');
  if (dot == absl::string_view::npos) return std::string(head);
  return absl::StrCat(head.substr(0, dot), ".relu", head.substr(dot));
}

const Variant* Lookup(const std::string& normalized) {
  if (const Variant* v = VariantSpelled(normalized)) return v;
  // An operand list with plain names only adds nothing to the variant.
  const size_t space = normalized.find(' ');
  if (space == std::string::npos) return nullptr;
  const Variant* head =
      VariantSpelled(absl::string_view(normalized).substr(0, space));
  if (head == nullptr) return nullptr;
  const Variant& v = *head;
  // CC.CF, the carry-in of addc/subc/madc, and the SIMD selector are not
  // written as operands.
  const bool plain =
      normalized.substr(space + 1) ==
      PlainOperandList(NumWrittenSources(v), v.family == Family::kBfi);
  return plain ? &v : nullptr;
}

int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitution = diagonal + (a[i - 1] != b[j - 1] ? 1 : 0);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

}  // namespace

namespace {

// The `.asel` and `.bsel` suffixes that the selector source's text (an
// immediate) spells; {"", ""} for a variant without a selector.
std::pair<std::string, std::string> SelectorSuffixes(
    const Variant& v, const std::vector<std::string>& sources) {
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!IsSelectorSource(v, static_cast<int>(i))) continue;
    const absl::StatusOr<uint64_t> sel =
        ParseOperand(sources[i], SourceWidth(v, static_cast<int>(i)));
    // The writers pass the selector's value; anything else is their bug,
    // and the default keeps the line assemblable for ptxas to say so.
    const uint32_t bits = static_cast<uint32_t>(
        sel.value_or(DefaultSimdSelector(SimdLanes(v.family))));
    return SpellSimdSelector(SimdLanes(v.family), bits);
  }
  return {"", ""};
}

}  // namespace

std::pair<std::string, std::string> SpellSimdSelector(int lanes, uint32_t sel) {
  const SimdSelector s{lanes, sel};
  std::string asel(1, lanes == 2 ? 'h' : 'b'), bsel = asel;
  for (int lane = lanes - 1; lane >= 0; --lane) {
    absl::StrAppend(&asel, s.AselPart(lane));
    absl::StrAppend(&bsel, s.BselPart(lane));
  }
  return {asel, bsel};
}

namespace {

// One `.hxy` / `.bxyzw` selector (without the dot) as the lane parts it
// picks, lane 0 first; nullopt if malformed.
std::optional<std::vector<int>> ParseSelectorParts(absl::string_view text,
                                                   int lanes) {
  const char kind = lanes == 2 ? 'h' : 'b';
  const int limit = lanes == 2 ? 3 : 7;
  if (text.size() != static_cast<size_t>(lanes) + 1 || text[0] != kind) {
    return std::nullopt;
  }
  std::vector<int> parts;
  for (size_t k = text.size() - 1; k >= 1; --k) {  // the last digit is lane 0
    const int digit = text[k] - '0';
    if (digit < 0 || digit > limit) return std::nullopt;
    parts.push_back(digit);
  }
  return parts;
}

// The suffix of operand `op` after its last dot ("" if none).
absl::string_view SuffixOf(absl::string_view op) {
  const size_t dot = op.rfind('.');
  return dot == absl::string_view::npos ? "" : op.substr(dot + 1);
}

// The operands of a normalized line ("head d, a.h01, b, c"), or none.
std::vector<std::string> NormalizedOperands(const std::string& normalized) {
  const size_t space = normalized.find(' ');
  if (space == std::string::npos) return {};
  return absl::StrSplit(normalized.substr(space + 1), ", ");
}

// A SIMD video line with its selectors taken off a and b and the default
// mask (`.h10`, `.b3210`) off d: the selectors are an operand's value, not
// part of the variant.
std::string WithoutSimdSelectors(const std::string& normalized) {
  const size_t space = normalized.find(' ');
  if (space == std::string::npos) return normalized;
  const std::string head = normalized.substr(0, space);
  const std::optional<Family> f =
      FamilyByOpcode(head.substr(0, head.find('.')));
  if (!f || !IsSimdVideo(*f)) return normalized;
  const absl::string_view all_lanes_mask = SimdLanes(*f) == 2 ? "h10" : "b3210";
  std::vector<std::string> ops = NormalizedOperands(normalized);
  for (size_t i = 0; i < ops.size() && i < 3; ++i) {
    const bool all_lanes = SuffixOf(ops[i]) == all_lanes_mask;
    if (i > 0 || all_lanes) ops[i] = ops[i].substr(0, ops[i].rfind('.'));
  }
  return absl::StrCat(head, " ", absl::StrJoin(ops, ", "));
}

}  // namespace

absl::StatusOr<uint32_t> SpelledSimdSelector(const Variant& v,
                                             absl::string_view spelling) {
  const int lanes = SimdLanes(v.family);
  if (lanes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(Spell(v), " is no SIMD video instruction: no selector"));
  }
  uint32_t sel = DefaultSimdSelector(lanes);
  const std::vector<std::string> ops = NormalizedOperands(Normalize(spelling));
  for (int source = 0; source < 2 && source + 1 < static_cast<int>(ops.size());
       ++source) {
    const std::string& op = ops[source + 1];
    if (op.find('.') == std::string::npos) continue;  // the default
    const std::optional<std::vector<int>> parts =
        ParseSelectorParts(SuffixOf(op), lanes);
    if (!parts) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad selector '", op, "' in '", absl::StripAsciiWhitespace(spelling),
          "': ",
          lanes == 2 ? ".hxy with x, y in 0..3" : ".bxyzw with x..w in 0..7"));
    }
    for (int lane = 0; lane < lanes; ++lane) {
      const int nibble = lane + source * lanes;
      sel = (sel & ~(0xfu << (4 * nibble))) |
            (static_cast<uint32_t>((*parts)[lane]) << (4 * nibble));
    }
  }
  return sel;
}

std::string PtxInstruction(const Variant& v, absl::string_view dest,
                           const std::vector<std::string>& sources) {
  const auto [asel, bsel] = SelectorSuffixes(v, sources);
  std::vector<std::string> ops = {Destination(v, dest)};
  for (size_t i = 0; i < sources.size(); ++i) {
    if (IsCarryInSource(v, static_cast<int>(i))) continue;   // CC.CF: implicit
    if (IsSelectorSource(v, static_cast<int>(i))) continue;  // a/b suffixes
    const bool negated = (i == 0 && v.vmad_form == VmadForm::kNegProduct) ||
                         (i == 2 && v.vmad_form == VmadForm::kNegC);
    const Sel sel = i == 0 ? v.asel : i == 1 ? v.bsel : Sel::kNone;
    std::string op = WithSel(sources[i], sel);
    if (i == 0 && !asel.empty()) op = WithSuffix(op, asel);
    if (i == 1 && !bsel.empty()) op = WithSuffix(op, bsel);
    ops.push_back(absl::StrCat(negated ? "-" : "", op));
  }
  return absl::StrCat(SpellOpcode(v), " ", absl::StrJoin(ops, ", "));
}

absl::StatusOr<Variant> ParseVariant(absl::string_view spelling) {
  // A canonical spelling (what Spell and every worker request write) as it is.
  if (const Variant* v = VariantSpelled(spelling)) return *v;
  std::string normalized = WithoutSimdSelectors(Normalize(spelling));
  if (const Variant* v = Lookup(normalized)) {
    if (IsSimdVideo(v->family)) {  // a misspelt selector is no variant
      const absl::Status selector = SpelledSimdSelector(*v, spelling).status();
      if (!selector.ok()) return selector;
    }
    return *v;
  }
  const size_t space = normalized.find(' ');
  std::string head = normalized.substr(0, space);
  std::string rest = space == std::string::npos ? "" : normalized.substr(space);
  if (const Variant* v = Lookup(MoveTrailingRelu(head) + rest)) return *v;

  std::vector<std::string> nearest = NearestSpellings(normalized, 3);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown instruction variant '", absl::StripAsciiWhitespace(spelling),
      "'", nearest.empty() ? "" : "; nearest valid spellings: '",
      absl::StrJoin(nearest, "', '"), nearest.empty() ? "" : "'"));
}

std::vector<std::string> NearestSpellings(absl::string_view spelling, int n) {
  // Two stages keep this fast (~2k heads, then a few hundred spellings): the
  // nearest opcode-and-modifier heads, then the nearest spellings among the
  // variants with those heads.
  static const auto* by_head = [] {
    auto* m = new absl::flat_hash_map<std::string, std::vector<std::string>>();
    for (const Variant& v : AllVariants())
      (*m)[SpellOpcode(v)].push_back(Spell(v));
    return m;
  }();
  const absl::string_view head = spelling.substr(0, spelling.find(' '));
  std::vector<std::pair<int, const std::string*>> heads;
  for (const auto& [h, spellings] : *by_head)
    heads.emplace_back(EditDistance(head, h), &h);
  const size_t keep_heads = std::min<size_t>(n, heads.size());
  std::partial_sort(heads.begin(), heads.begin() + keep_heads, heads.end(),
                    [](const auto& x, const auto& y) {
                      return x.first != y.first ? x.first < y.first
                                                : *x.second < *y.second;
                    });
  std::vector<std::pair<int, std::string>> scored;
  for (size_t i = 0; i < keep_heads; ++i) {
    for (const std::string& candidate : by_head->at(*heads[i].second)) {
      scored.emplace_back(EditDistance(spelling, candidate), candidate);
    }
  }
  const size_t keep = std::min<size_t>(n, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + keep, scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < keep; ++i) out.push_back(scored[i].second);
  return out;
}

std::string PtxRegister(int width, int n) {
  const char* prefix = width == 1    ? "%p"
                       : width <= 16 ? "%h"
                       : width == 64 ? "%rd"
                                     : "%r";
  return absl::StrCat(prefix, n);
}

std::string PtxSetRegister(int width, absl::string_view reg,
                           absl::string_view value) {
  if (width == 1)
    return absl::StrCat("  setp.ne.u32 ", reg, ", ", value, ", 0;\n");
  return absl::StrCat("  mov.b", std::max(width, 16), " ", reg, ", ", value,
                      ";\n");
}

std::string PtxParamType(int width) {
  return absl::StrCat(".b", PtxParamBytes(width) * 8);
}

int PtxParamBytes(int width) { return width == 1 ? 4 : std::max(width, 16) / 8; }

std::string PtxLoadParam(int width, absl::string_view reg,
                         absl::string_view param) {
  if (width ==
      1) {  // a predicate: its parameter's word, tested in a scope of its own
    return absl::StrCat("  { .reg .b32 %w; ld.param.b32 %w, [", param,
                        "]; setp.ne.u32 ", reg, ", %w, 0; }\n");
  }
  return absl::StrCat("  ld.param", PtxParamType(width), " ", reg, ", [", param,
                      "];\n");
}

}  // namespace ptxdiff
