#include "backends/ptx_cmd/refusal_classes.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "isa/family_table.h"
#include "isa/spelling.h"

namespace ptxdiff {
namespace {

// Axis fields by Axis, as a refusal file names them ("type", "mul_mode").
constexpr absl::string_view kAxisFields[kNumAxes] = {
#define PTXDIFF_AXIS(Name, field, ...) #field,
#include "isa/axes.inc"
#undef PTXDIFF_AXIS
};

bool HasSelector(const Variant& v) {
  return IsSimdVideo(v.family) ||
         (IsVideo(v.family) && (v.dsel != Sel::kNone || v.asel != Sel::kNone ||
                                v.bsel != Sel::kNone));
}

bool HasPackedType(const Variant& v) {
  return IsPacked(v.type) || IsPacked(v.atype) || IsPacked(v.btype);
}

int AxisValue(const Variant& v, Axis axis) {
  return AllAxes()[static_cast<int>(axis)].get(v);
}

// Hypotheses a sample disproved, per family, shape and message, after which
// none is tried: a tool that refuses a combination no feature names (a video
// variant with all three selectors `.b3`) would otherwise cost a run per
// feature of each such variant.
constexpr int kMaxDisprovedPerMessage = 3;

// `text` with each run of digits after ':' or "line " as '#'.
std::string WithoutLineNumbers(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const bool after_colon = i > 0 && text[i - 1] == ':';
    const bool after_line =
        i >= 5 && absl::EqualsIgnoreCase(text.substr(i - 5, 5), "line ");
    if ((after_colon || after_line) && absl::ascii_isdigit(text[i])) {
      while (i < text.size() && absl::ascii_isdigit(text[i])) ++i;
      out.push_back('#');
      continue;
    }
    out.push_back(text[i++]);
  }
  return out;
}

}  // namespace

std::vector<ClassFeature> FeaturesOf(const Variant& v) {
  std::vector<ClassFeature> features;
  if (HasSelector(v)) features.push_back({.kind = ClassFeature::kSelectors});
  if (HasCarryOut(v) || HasCarryIn(v))
    features.push_back({.kind = ClassFeature::kCarry});
  if (HasPackedType(v)) features.push_back({.kind = ClassFeature::kPacked});
  features.push_back({.kind = ClassFeature::kFamily});
  for (const AxisInfo& axis : AllAxes()) {
    if (const int value = axis.get(v); value != 0) {
      features.push_back(
          {.kind = ClassFeature::kAxis, .axis = axis.axis, .value = value});
    }
  }
  return features;
}

bool HasFeature(const Variant& v, const ClassFeature& f) {
  switch (f.kind) {
    case ClassFeature::kSelectors:
      return HasSelector(v);
    case ClassFeature::kCarry:
      return HasCarryOut(v) || HasCarryIn(v);
    case ClassFeature::kPacked:
      return HasPackedType(v);
    case ClassFeature::kFamily:
      return true;
    case ClassFeature::kAxis:
      return AxisValue(v, f.axis) == f.value;
  }
  return false;
}

std::string FeatureToken(Family family, const ClassFeature& f) {
  switch (f.kind) {
    case ClassFeature::kSelectors:
      return "selectors";
    case ClassFeature::kCarry:
      return "carry";
    case ClassFeature::kPacked:
      return "packed";
    case ClassFeature::kFamily:
      return "family";
    case ClassFeature::kAxis:
      break;
  }
  const AxisInfo& axis = AllAxes()[static_cast<int>(f.axis)];
  return absl::StrCat(kAxisFields[static_cast<int>(f.axis)], "=",
                      axis.spell(family, f.value));
}

std::optional<ClassFeature> ParseFeatureToken(Family family,
                                              absl::string_view token) {
  for (const ClassFeature::Kind kind :
       {ClassFeature::kSelectors, ClassFeature::kCarry, ClassFeature::kPacked,
        ClassFeature::kFamily}) {
    if (token == FeatureToken(family, {.kind = kind}))
      return ClassFeature{.kind = kind};
  }
  const std::pair<absl::string_view, absl::string_view> field_value =
      absl::StrSplit(token, absl::MaxSplits('=', 1));
  for (const AxisInfo& axis : AllAxes()) {
    if (kAxisFields[static_cast<int>(axis.axis)] != field_value.first)
      continue;
    for (const int value : axis.values(InfoOf(family))) {
      if (value != 0 && axis.spell(family, value) == field_value.second) {
        return ClassFeature{
            .kind = ClassFeature::kAxis, .axis = axis.axis, .value = value};
      }
    }
  }
  return std::nullopt;
}

std::string RefusalMessage(const Variant& v,
                           const std::vector<std::string>& error_lines,
                           absl::string_view output) {
  std::string said = absl::StrJoin(error_lines, " / ");
  if (said.empty()) {
    output = absl::StripTrailingAsciiWhitespace(output);
    said = std::string(output.substr(output.rfind('\n') + 1));
  }
  said = absl::StrReplaceAll(said, {{Spell(v), "<instruction>"}});
  // What comes before the first file name is the tool's name, or a cut
  // fragment of it (tool_run.h keeps a line from a little before its
  // "error", so where it starts varies with the file name's length).
  std::vector<absl::string_view> words;
  for (absl::string_view word : absl::StrSplit(said, ' ', absl::SkipEmpty())) {
    if (!absl::StrContains(word, '/')) {
      words.push_back(word);
    } else if (word != "/") {
      words.clear();
    }
  }
  return WithoutLineNumbers(absl::StrJoin(words, " "));
}

std::string RefusalClass::Describe() const {
  const absl::string_view opcode = OpcodeOf(family);
  std::string what;
  switch (feature.kind) {
    case ClassFeature::kSelectors:
      what = absl::StrCat(opcode, " with a video operand selector");
      break;
    case ClassFeature::kCarry:
      what = absl::StrCat(opcode, " with .cc or a carry-in");
      break;
    case ClassFeature::kPacked:
      what = absl::StrCat(opcode, " with a packed type");
      break;
    case ClassFeature::kFamily:
      what = absl::StrCat("every ", opcode);
      break;
    case ClassFeature::kAxis:
      what = absl::StrCat(opcode, " with ", FeatureToken(family, feature));
      break;
  }
  return absl::StrCat(what, written ? ", with immediates" : ", in registers");
}

RefusalClasses::RefusalClasses(std::function<bool(const Variant&)> runnable,
                               std::vector<RefusalClass> known)
    : runnable_(std::move(runnable)),
      classes_(std::move(known)),
      rng_(std::random_device{}()) {}

const RefusalClass* RefusalClasses::Find(const Variant& v,
                                         bool written) const {
  for (const RefusalClass& c : classes_) {
    if (c.Contains(v, written)) return &c;
  }
  return nullptr;
}

void RefusalClasses::Adopt(const RefusalClass& c) {
  const bool known = absl::c_any_of(classes_, [&](const RefusalClass& k) {
    return k.family == c.family && k.feature == c.feature &&
           k.written == c.written && k.message == c.message;
  });
  if (!known) classes_.push_back(c);
}

bool RefusalClasses::AnyRan(const RefusalClass& c) const {
  if (ran_.empty()) return false;
  for (const Variant& v : VariantsOf(c.family)) {
    if (HasFeature(v, c.feature) && ran_.contains({v, c.written})) return true;
  }
  return false;
}

std::string RefusalClasses::HypothesisKey(const RefusalClass& c) const {
  return absl::StrCat(OpcodeOf(c.family), "\t", FeatureToken(c.family, c.feature),
                      "\t", c.written, "\t", c.message);
}

std::vector<Variant> RefusalClasses::Sample(const RefusalClass& c,
                                            const Variant& evidence,
                                            int count) {
  std::vector<Variant> chosen = {evidence};
  std::vector<Variant> candidates;
  for (const Variant& v : VariantsOf(c.family)) {
    if (v != evidence && HasFeature(v, c.feature) && runnable_(v))
      candidates.push_back(v);
  }
  while (static_cast<int>(chosen.size()) <= count && !candidates.empty()) {
    // The candidate farthest from all chosen so far; ties at random.
    size_t best = 0;
    int best_distance = -1, ties = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      int distance = INT_MAX;
      for (const Variant& x : chosen)
        distance = std::min(distance, DifferingAxes(candidates[i], x));
      if (distance > best_distance) {
        best = i, best_distance = distance, ties = 1;
      } else if (distance == best_distance &&
                 std::uniform_int_distribution<int>(0, ties++)(rng_) == 0) {
        best = i;
      }
    }
    chosen.push_back(candidates[best]);
    candidates.erase(candidates.begin() + best);
  }
  chosen.erase(chosen.begin());
  return chosen;
}

std::optional<bool> RefusalClasses::Test(RefusalClass& c,
                                         const Variant& evidence,
                                         AloneRunner run) {
  // The same class confirmed in the other shape: one sample says whether
  // this shape is refused alike.
  const bool other_shape = absl::c_any_of(classes_, [&](const RefusalClass& k) {
    return k.family == c.family && k.feature == c.feature &&
           k.message == c.message && k.written != c.written;
  });
  const std::vector<Variant> samples =
      Sample(c, evidence, other_shape ? 1 : kSamples);
  if (samples.empty()) return false;  // the class is the variant alone
  for (const Variant& s : samples) {
    ++runs_;
    const AloneRun r = run(s, c.written);
    if (r.end == AloneRun::kUnknown) return std::nullopt;
    if (r.end != AloneRun::kRefused || r.message != c.message) return false;
    ++c.sampled;
  }
  return true;
}

std::optional<RefusalClass> RefusalClasses::Learn(const Variant& v,
                                                  bool written,
                                                  const std::string& message,
                                                  AloneRunner run) {
  if (message.empty() || Find(v, written) != nullptr) return std::nullopt;
  int& disproved = disproved_per_message_[absl::StrCat(
      OpcodeOf(v.family), "\t", written, "\t", message)];
  for (const ClassFeature& f : FeaturesOf(v)) {
    RefusalClass c{
        .family = v.family, .feature = f, .written = written, .message = message};
    const std::string key = HypothesisKey(c);
    if (disproved_.contains(key)) continue;
    if (AnyRan(c)) {  // disproved already, without a run
      disproved_.insert(key);
      continue;
    }
    if (disproved >= kMaxDisprovedPerMessage) return std::nullopt;
    const std::optional<bool> confirmed = Test(c, v, run);
    if (!confirmed.has_value()) return std::nullopt;
    if (*confirmed) {
      classes_.push_back(c);
      return c;
    }
    disproved_.insert(key);
    ++disproved;
  }
  return std::nullopt;
}

std::optional<RefusalClass> RefusalClasses::Recheck(AloneRunner run) {
  if (classes_.empty()) return std::nullopt;
  const size_t k =
      std::uniform_int_distribution<size_t>(0, classes_.size() - 1)(rng_);
  RefusalClass& c = classes_[k];
  std::vector<Variant> members;
  for (const Variant& v : VariantsOf(c.family)) {
    if (HasFeature(v, c.feature) && runnable_(v)) members.push_back(v);
  }
  if (members.empty()) return std::nullopt;
  const Variant& v = members[std::uniform_int_distribution<size_t>(
      0, members.size() - 1)(rng_)];
  ++runs_;
  const AloneRun r = run(v, c.written);
  if (r.end == AloneRun::kUnknown) return std::nullopt;
  if (r.end == AloneRun::kRefused && r.message == c.message) {
    ++c.sampled;
    return std::nullopt;
  }
  RefusalClass dropped = std::move(c);
  classes_.erase(classes_.begin() + k);
  disproved_.insert(HypothesisKey(dropped));
  return dropped;
}

}  // namespace ptxdiff
