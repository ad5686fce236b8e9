#include "program/filed_causes.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "isa/spelling.h"
#include "program/program_cause.h"

namespace ptxdiff {
namespace {

// The spellings of a program's instruction steps, in order.
std::vector<std::string> InstructionSpellings(const Program& p) {
  std::vector<std::string> out;
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction) out.push_back(Spell(s.variant));
  }
  return out;
}

// The last step of a program entry's `shape` ("abs.s32, cvt.sat.u16.s32
// (loops)"), "" for none.
std::string LastOfShape(const std::string& shape) {
  const std::vector<std::string> steps =
      absl::StrSplit(shape.substr(0, shape.find(" (")), ", ");
  return steps.empty() || steps.back() == "mov" ? "" : steps.back();
}

}  // namespace

void FiledCauses::Note(const EntryInfo& e, const std::string& backend) {
  const Signature& s = e.signature;
  if (s.kind != FindingKind::kValueMismatch || s.backend != backend ||
      NamesABatch(s)) {
    return;
  }
  const auto cause = e.meta.find("cause");
  if (!NamesAProgram(s)) {
    const std::string name =
        cause != e.meta.end() ? cause->second : s.spelling;
    tuple_cause_names_.try_emplace(s.spelling, name);
    entries_.try_emplace(name, e.name);
    spellings_.try_emplace(name, s.spelling);
    return;
  }
  if (cause == e.meta.end()) return;
  entries_.try_emplace(cause->second, e.name);
  const auto shape = e.meta.find("shape");
  spellings_.try_emplace(cause->second, ParseVariant(cause->second).ok()
                                            ? cause->second
                                        : shape == e.meta.end()
                                            ? ""
                                            : LastOfShape(shape->second));
}

void FiledCauses::NoteFiled(const std::string& key, const std::string& entry,
                            const Program& program) {
  if (key.empty()) return;
  entries_.try_emplace(key, entry);
  const std::vector<std::string> steps = InstructionSpellings(program);
  spellings_.try_emplace(key, ParseVariant(key).ok() ? key
                              : steps.empty()        ? ""
                                                     : steps.back());
}

std::string FiledCauses::TupleCauseName(const std::string& spelling) const {
  const auto known = tuple_cause_names_.find(spelling);
  return known != tuple_cause_names_.end() ? known->second : spelling;
}

CauseKey FiledCauses::KeyOf(const Program& p, const ProgramMismatch& m,
                            Reading reading, const AloneCheck* alone) const {
  if (!m.departure_cause.empty() && !DepartsAtAConstant(m.departure_cause))
    return {m.departure_cause, ""};
  if (const std::optional<WrongConstant> w =
          WrongConstantCause(p, m.claimed, reading, alone)) {
    return {TupleCauseName(w->key), w->words};
  }
  return {m.departure_cause, kNoCulpritWords};
}

std::optional<std::string> FiledCauses::EntryOf(const std::string& key) const {
  const auto entry = entries_.find(key);
  if (entry == entries_.end()) return std::nullopt;
  return entry->second;
}

void FiledCauses::CountRepeat(const std::string& key) {
  if (++repeats_[key] != kDiscourageAfter) return;
  const auto spelling = spellings_.find(key);
  if (spelling == spellings_.end() || spelling->second.empty() ||
      std::find(discouraged_.begin(), discouraged_.end(), spelling->second) !=
          discouraged_.end()) {
    return;
  }
  discouraged_.push_back(spelling->second);
}

}  // namespace ptxdiff
