#include "program/program_refusals.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "backends/ptx_cmd/refusal_recheck.h"
#include "common/status_macros.h"
#include "isa/spelling.h"
#include "program/program_minimizer.h"
#include "program/program_tool.h"

namespace ptxdiff {
namespace {

// The tool's error lines in a run's `why` (after kToolSaid, up to its
// output's end), and that end.
std::pair<std::vector<std::string>, std::string> SaidIn(absl::string_view why) {
  constexpr absl::string_view kEnds = "; its output ends:\n";
  std::vector<std::string> errors;
  std::string output;
  if (const size_t ends = why.find(kEnds); ends != absl::string_view::npos) {
    output = std::string(why.substr(ends + kEnds.size()));
    why = why.substr(0, ends);
  }
  if (const size_t said = why.find(kToolSaid); said != absl::string_view::npos) {
    errors = absl::StrSplit(why.substr(said + strlen(kToolSaid)), '\n',
                            absl::SkipEmpty());
  }
  return {errors, output.empty() ? std::string(why) : output};
}

// A tool's refusal as one line of at most kWhyChars: its output tail can be
// kilobytes, and the summary lists each refused variant.
constexpr size_t kWhyChars = 200;
std::string ShortWhy(absl::string_view why) {
  std::string line = absl::StrReplaceAll(
      absl::StripAsciiWhitespace(why), {{"\n", " / "}, {"\t", " "}});
  if (line.size() > kWhyChars) line = absl::StrCat(line.substr(0, kWhyChars - 3), "...");
  return line;
}

// A re-check's operands (refusal_recheck.h): none 0, none small, as the
// tuple campaign's samples.
constexpr Operands kRecheckOperands = {{0x12345678, 0x3f5, 0x2a1, 0x1c3}};

int FormIndex(ProgramInputs form) {
  return form == ProgramInputs::kImmediate ? 0 : 1;
}

// The variant of a one-step program (TupleAsProgram), if it has one.
const ProgramStep* OnlyInstruction(const Program& p) {
  const ProgramStep* found = nullptr;
  for (const ProgramStep& s : p.steps) {
    if (s.kind != ProgramStep::kInstruction) continue;
    if (found != nullptr) return nullptr;
    found = &s;
  }
  return found;
}

// Why `v` is refused, in either shape, by what `remembered` holds; nullopt
// if it is not. A class's message first (the tool's words, with the run's
// names taken out), then a variant's as written (a program's), then in
// registers (the tuple campaign's, which may be the whole failure).
std::optional<std::string> RememberedWhy(const Remembered& remembered,
                                         const Variant& v) {
  for (const RefusalClass& c : remembered.classes) {
    if (c.Contains(v, false) || c.Contains(v, true)) {
      return absl::StrCat(c.Describe(), ": ", c.message);
    }
  }
  for (bool written : {true, false}) {
    if (auto it = remembered.variants.find(RefusalKey{v, written});
        it != remembered.variants.end()) {
      return it->second;
    }
  }
  return std::nullopt;
}

}  // namespace

ProgramRefusals::ProgramRefusals(std::optional<RefusalMemory> memory)
    : memory_(std::move(memory)) {}

absl::Status ProgramRefusals::Load(const std::vector<std::string>& generated) {
  if (!memory_) return absl::OkStatus();
  PTXDIFF_ASSIGN_OR_RETURN(const Remembered remembered, memory_->Load());
  std::lock_guard<std::mutex> lock(mu_);
  AddRememberedLocked(remembered, generated);
  return absl::OkStatus();
}

void ProgramRefusals::AddRememberedLocked(
    const Remembered& remembered, const std::vector<std::string>& generated) {
  for (const std::string& spelling : generated) {
    const absl::StatusOr<Variant> v = ParseVariant(spelling);
    if (!v.ok() || refused_spellings_.contains(spelling)) continue;
    if (std::optional<std::string> why = RememberedWhy(remembered, *v)) {
      refused_.push_back({spelling, ShortWhy(*why), /*remembered=*/true});
      refused_spellings_.insert(spelling);
    }
  }
}

std::vector<Forgotten> ProgramRefusals::Recheck(
    ProgramBackend& backend, const std::vector<std::string>& generated,
    Reading reading, absl::Time deadline, std::vector<std::string>& errors) {
  if (!memory_) return {};
  absl::StatusOr<Remembered> remembered = memory_->Load();
  if (!remembered.ok()) return {};  // Load says it
  const absl::flat_hash_set<std::string> drawn(generated.begin(),
                                               generated.end());
  const auto run = [&](const Variant& v, bool written) -> AloneRun {
    const ProgramInputs form =
        written ? ProgramInputs::kImmediate : ProgramInputs::kRuntime;
    const std::vector<Program> alone = {TupleAsProgram(v, kRecheckOperands)};
    const absl::StatusOr<std::vector<ProgramCheck>> checks =
        backend.Check(alone, form, reading, deadline);
    if (!checks.ok() || checks->size() != 1) return {};
    const ProgramCheck& c = checks->front();
    if (c.refused) return {.end = AloneRun::kRefused};
    if (c.judged || c.mismatch || c.fault || c.nothing_defined)
      return {.end = AloneRun::kNotRefused};
    return {};  // cut, or not judged for a reason of the harness's
  };
  absl::Status unwritten;
  std::vector<Forgotten> forgotten = RecheckRemembered(
      *memory_, *remembered,
      [&](const Variant& v) { return drawn.contains(Spell(v)); }, run,
      NowInThisRun(), &unwritten);
  if (!unwritten.ok()) {
    errors.push_back(absl::StrCat("could not remember what the tool runs now: ",
                                  unwritten.message()));
  }
  if (forgotten.empty()) return forgotten;
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(refused_, [&](const RefusedStep& r) {
    if (r.remembered) refused_spellings_.erase(r.spelling);
    return r.remembered;
  });
  AddRememberedLocked(*remembered, generated);
  return forgotten;
}

bool ProgramRefusals::Refuses(const std::string& spelling) const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_spellings_.contains(spelling);
}

std::vector<std::string> ProgramRefusals::Spellings() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const RefusedStep& r : refused_) out.push_back(r.spelling);
  return out;
}

std::vector<RefusedStep> ProgramRefusals::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refused_;
}

std::string ProgramRefusals::Where() const {
  return memory_ ? memory_->path() : "";
}

void ProgramRefusals::NoteChecked(const Program& p, ProgramInputs form,
                                  const ProgramCheck& check) {
  const bool ran = check.judged || check.mismatch || check.fault ||
                   check.nothing_defined;
  if (!ran) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction)
      ran_[FormIndex(form)].insert(Spell(s.variant));
  }
}

bool ProgramRefusals::KnownLocked(const std::string& spelling,
                                  ProgramInputs form) const {
  return refused_spellings_.contains(spelling) ||
         ran_[FormIndex(form)].contains(spelling);
}

std::vector<Program> ProgramRefusals::Suspects(const Program& p,
                                               ProgramInputs form,
                                               Reading reading) const {
  std::vector<Program> out;
  absl::flat_hash_set<std::string> seen;  // one operand set a variant
  for (Program& alone : InstructionsAlone(p, reading)) {
    const ProgramStep* step = OnlyInstruction(alone);
    if (step == nullptr) continue;
    const std::string spelling = Spell(step->variant);
    std::lock_guard<std::mutex> lock(mu_);
    if (!KnownLocked(spelling, form) && seen.insert(spelling).second)
      out.push_back(std::move(alone));
  }
  return out;
}

RefusalLearning ProgramRefusals::LearnFrom(
    ProgramBackend& backend, std::span<const RefusedProgram> refused,
    Reading reading, absl::Time deadline) {
  RefusalLearning learning;
  for (ProgramInputs form :
       {ProgramInputs::kImmediate, ProgramInputs::kRuntime}) {
    // After the immediate form's learning: what it learned is no suspect.
    std::vector<Program> alone;
    absl::flat_hash_set<std::string> seen;
    for (const RefusedProgram& r : refused) {
      if (r.form != form) continue;
      for (Program& s : Suspects(*r.program, form, reading)) {
        if (seen.insert(Spell(OnlyInstruction(s)->variant)).second)
          alone.push_back(std::move(s));
      }
    }
    if (alone.empty() || absl::Now() >= deadline) continue;
    ++learning.checks;
    const absl::StatusOr<std::vector<ProgramCheck>> checks =
        backend.Check(alone, form, reading, deadline);
    if (!checks.ok()) {
      learning.errors.push_back(absl::StrCat(backend.Name(),
                                             " on instructions alone: ",
                                             checks.status().message()));
      return learning;
    }
    for (size_t k = 0; k < checks->size(); ++k) {
      const ProgramCheck& c = (*checks)[k];
      if (!c.refused) {
        NoteChecked(alone[k], form, c);
        continue;
      }
      if (absl::Status s = Learn(alone[k], form, c.why_not); !s.ok()) {
        learning.errors.push_back(
            absl::StrCat("could not remember a refusal: ", s.message()));
      }
    }
  }
  return learning;
}

absl::Status ProgramRefusals::Learn(const Program& alone, ProgramInputs form,
                                    const std::string& why) {
  const ProgramStep* step = OnlyInstruction(alone);
  if (step == nullptr) {
    return absl::InvalidArgumentError("not a program of one instruction");
  }
  const std::string spelling = Spell(step->variant);
  // As the tuple campaign keeps it: the tool's words, without the run's
  // file names and line numbers.
  const auto [errors, output] = SaidIn(why);
  std::string message = RefusalMessage(step->variant, errors, output);
  if (message.empty()) message = ShortWhy(why);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!refused_spellings_.insert(spelling).second) return absl::OkStatus();
    refused_.push_back({spelling, ShortWhy(message), /*remembered=*/false});
  }
  if (!memory_) return absl::OkStatus();
  return memory_->Remember(
      RefusalKey{step->variant, form == ProgramInputs::kImmediate}, message);
}

}  // namespace ptxdiff
