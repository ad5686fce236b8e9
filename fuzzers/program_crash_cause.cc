#include "fuzzers/program_crash_cause.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fuzzers/cause_frames.h"
#include "isa/spelling.h"
#include "program/filed_causes.h"
#include "program/program_cause.h"
#include "sass/sass_departure.h"

namespace ptxdiff {
namespace {

// The variant of a program of one instruction (and no moves or blocks):
// what it finds can only be that instruction's, as the campaign takes it
// (a tuple cause).
std::optional<Variant> OnlyInstruction(const Program& p) {
  if (CountSteps(p) != 1 || !BlockKinds(p).empty()) return std::nullopt;
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction) return s.variant;
  }
  return std::nullopt;
}

ProgramCrashCause InFamilyOf(FindingKind kind, const Variant& v,
                             std::string key) {
  return {.kind = kind,
          .keyed = ProgramCrashCause::kVariant,
          .family = v.family,
          .key = std::move(key)};
}

}  // namespace

ProgramCrashCause CauseOfMismatch(const Program& program,
                                  const ProgramMismatch& m, Reading reading) {
  constexpr FindingKind kKind = FindingKind::kValueMismatch;
  // One instruction: its tuple's crash state, wherever its code departs.
  if (const std::optional<Variant> only = OnlyInstruction(program))
    return InFamilyOf(kKind, *only, Spell(*only));
  // No cause is filed here: the key is the finding's own, as a run on an
  // empty triage directory files it.
  const CauseKey key = FiledCauses().KeyOf(AtMismatch(program, m), m, reading);
  if (key.assumed == kNoCulpritWords) {
    // A departure at a constant names no cause of its own (program_cause.h).
    return {.kind = kKind,
            .key = key.key.empty()
                       ? std::string(kNoCulpritWords)
                       : absl::StrCat(kNoCulpritWords, " (", key.key,
                                      ": a constant ptxas computed)")};
  }
  if (const absl::StatusOr<Variant> v = ParseVariant(key.key); v.ok())
    return InFamilyOf(kKind, *v, key.key);
  if (const std::optional<SassOp> op = DepartingOperation(key.key)) {
    return {.kind = kKind,
            .keyed = ProgramCrashCause::kDeparture,
            .op = *op,
            .key = key.key};
  }
  return {.kind = kKind,
          .key = absl::StrCat("no cause key: `", key.key,
                              "` names no variant or SASS operation")};
}

ProgramCrashCause CauseOfFault(const Program& program,
                               const ProgramFault& fault) {
  const FindingKind kind = fault.kind == CaseFault::kCrash ? FindingKind::kCrash
                                                           : FindingKind::kHang;
  if (const std::optional<Variant> only = OnlyInstruction(program))
    return InFamilyOf(kind, *only, Spell(*only));
  return {.kind = kind,
          .key = absl::StrCat("no cause key: a ", FindingKindName(kind),
                              " of a program of ", CountSteps(program),
                              " steps (not minimized in crash mode)")};
}

std::string CauseText(const ProgramCrashCause& c) {
  switch (c.keyed) {
    case ProgramCrashCause::kVariant:
      return cause::CauseText(c.kind, c.family);
    case ProgramCrashCause::kDeparture:
      return cause::DepartureCauseText(c.kind, c.op);
    case ProgramCrashCause::kUnkeyed:
      return cause::UnkeyedCauseText(c.kind);
  }
  return cause::UnkeyedCauseText(c.kind);  // not reached
}

std::vector<std::string> CauseFrameNames(const ProgramCrashCause& c) {
  std::string class_frame = cause::UnkeyedFrameName();
  if (c.keyed == ProgramCrashCause::kVariant)
    class_frame = cause::FamilyFrameName(c.family);
  if (c.keyed == ProgramCrashCause::kDeparture)
    class_frame = cause::DepartureFrameName(c.op);
  return {cause::KindFrameName(c.kind), class_frame};
}

void AbortWithProgramCause(const ProgramCrashCause& c,
                           absl::string_view first_line) {
  switch (c.keyed) {
    case ProgramCrashCause::kVariant:
      cause::AbortWithCauseInFrames(c.kind, c.family, first_line);
    case ProgramCrashCause::kDeparture:
      cause::AbortWithDepartureInFrames(c.kind, c.op, first_line);
    case ProgramCrashCause::kUnkeyed:
      break;
  }
  cause::AbortUnkeyedInFrames(c.kind, first_line);
}

}  // namespace ptxdiff
