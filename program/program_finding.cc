#include "program/program_finding.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "isa/spelling.h"
#include "program/program_minimizer.h"

namespace ptxdiff {
namespace {

// `text` as one line of at most kWhatChars characters: a finding's `what`
// goes into progress lines, summaries and meta.txt, and a tool's output
// tail in it can be thousands of characters (the whole of it stays in the
// entry's case.txt and repro.ptx).
constexpr size_t kWhatChars = 240;
std::string OneLine(absl::string_view text) {
  std::string line = absl::StrReplaceAll(text, {{"\n", " / "}});
  if (line.size() > kWhatChars) {
    line.resize(kWhatChars - 3);
    line += "...";
  }
  return line;
}

// "abs.s32, setp.lt.s32, selp.b32", "(loops)" or "(if/else)" added when it
// has any: the same steps around a branch may be another cause.
std::string Shape(const Program& p) {
  const std::string blocks = BlockKinds(p);
  const std::vector<std::string> steps = StepSpellings(p);
  return absl::StrCat(steps.empty() ? "no steps" : absl::StrJoin(steps, ", "),
                      blocks.empty() ? "" : absl::StrCat(" (", blocks, ")"));
}

// A hang of one instruction is caused by its family, as the tuple
// campaign's hangs are (FaultInFamilyCause); "" for another.
std::string HangCause(const Program& p) {
  const auto step = std::find_if(
      p.steps.begin(), p.steps.end(),
      [](const ProgramStep& s) { return s.kind == ProgramStep::kInstruction; });
  if (CountSteps(p) != 1 || step == p.steps.end()) return "";
  return FaultInFamilyCause(FindingKind::kHang, step->variant.family);
}

// The root cause of every hang of several steps: not minimized (each round
// would cost the tool's timeout) where no one instruction of it hangs
// alone, its steps are not known to be its cause, and so many hangs of one
// tool are one cause, not one each.
constexpr char kHangShape[] = "a hang (not minimized)";

// `text` as comment lines: its line breaks continued with `mark`.
std::string CommentLines(const std::string& text,
                         absl::string_view mark = "#") {
  return absl::StrReplaceAll(text, {{"\n", absl::StrCat("\n", mark, " ")}});
}

}  // namespace

std::vector<std::string> StepSpellings(const Program& p) {
  std::vector<std::string> out;
  for (const ProgramStep& s : p.steps) {
    if (s.kind == ProgramStep::kInstruction) out.push_back(Spell(s.variant));
    if (s.kind == ProgramStep::kMove) out.push_back("mov");
  }
  return out;
}

Finding ProgramFinding(const ProgramBackend& backend, Reading reading,
                       const Program& minimized, ProgramInputs form,
                       const ProgramCheck& check, const CauseKey& cause) {
  const Program p =
      check.mismatch ? AtMismatch(minimized, *check.mismatch) : minimized;
  const std::string disagreement =
      check.mismatch
          ? backend.Describe(p, *check.mismatch)
          : absl::StrCat(
                backend.Name() == "ptxas" ? "ptxas" : "the tool",
                check.fault->kind == CaseFault::kCrash ? " crashed" : " hung",
                " on it: ", check.fault->what);
  const int steps = CountSteps(p);
  Finding f;
  f.kind = !check.fault ? FindingKind::kValueMismatch
           : check.fault->kind == CaseFault::kCrash ? FindingKind::kCrash
                                                    : FindingKind::kHang;
  f.reading = reading;
  f.backend = backend.Name();
  f.backend_identity = backend.Identity();
  if (check.fault) f.detail = check.fault->what;
  f.cause = cause.key;
  if (f.kind == FindingKind::kHang) f.cause = HangCause(p);
  f.raw_input = backend.ReproInput(p);
  std::string text = FormatProgram(p);
  text.insert(
      text.find('\n') + 1,
      absl::StrCat("# ", CommentLines(disagreement), " (", ReadingName(reading),
                   " reading).\n# Replay: ptxdiff program case.txt ",
                   backend.ReplayFlags(), "\n"));
  f.program = Finding::ProgramCase{
      .name = ProgramSignatureName(ProgramSignature(p)),
      .form = check.mismatch ? backend.MismatchClass(*check.mismatch)
                             : backend.FindingClass(form),
      .case_text = std::move(text),
      .repro_ptx = absl::StrCat(
          "// ", CommentLines(disagreement, "//"), ".\n",
          check.mismatch && !check.mismatch->listing.empty()
              ? absl::StrCat("// The SASS that ran:\n// ",
                             CommentLines(check.mismatch->listing, "//"), "\n")
              : "",
          backend.ReproModule(p, form)),
      .what = OneLine(absl::StrCat(
          check.fault ? FindingKindName(f.kind)
                      : backend.MismatchName(*check.mismatch),
          ", ", steps, steps == 1 ? " step" : " steps",
          BlockKinds(p).empty() ? "" : absl::StrCat(" with ", BlockKinds(p)),
          " (", absl::StrJoin(StepSpellings(p), ", "), "): ", disagreement)),
      .shape =
          f.kind == FindingKind::kHang && steps > 1 ? kHangShape : Shape(p),
      .assumed = cause.assumed,
  };
  return f;
}

Finding UnisolatedHangFinding(const ProgramBackend& backend, Reading reading,
                              const std::vector<Program>& programs,
                              ProgramInputs form, const std::string& how) {
  std::string signatures;
  for (const Program& p : programs) signatures += ProgramSignature(p);
  const std::string what = absl::StrCat(
      "unisolated hang of a module of ", programs.size(), " programs (inputs ",
      form == ProgramInputs::kRuntime ? "runtime" : "immediate",
      "): the run ended before it found one that hangs alone; the module "
      "run: ",
      absl::StrReplaceAll(how, {{"\n", " / "}}));
  std::string text = FormatProgram(programs[0]);
  // The Replay line: `repro` of the entry runs its first program alone on
  // the backend it was found on, as it would any program entry.
  text.insert(text.find('\n') + 1,
              absl::StrCat("# ", CommentLines(what),
                           ".\n# The first of them; repro.ptx holds the "
                           "module, input.bin its input.\n# Replay: ptxdiff "
                           "program case.txt ",
                           backend.ReplayFlags(), "\n"));
  Finding f;
  f.kind = FindingKind::kHang;
  f.reading = reading;
  f.backend = backend.Name();
  f.backend_identity = backend.Identity();
  f.detail = how;
  f.raw_input = backend.ReproInputOf(programs);
  f.program = Finding::ProgramCase{
      .name = ProgramSignatureName(signatures),
      .form = "unisolated-hang",
      .case_text = std::move(text),
      .repro_ptx = absl::StrCat("// ", CommentLines(what, "//"), ".\n",
                                backend.ReproModuleOf(programs, form)),
      .what = OneLine(what),
      .shape = kHangShape,
  };
  return f;
}

}  // namespace ptxdiff
